#!/bin/bash
# Make: the Makefile says CFLAGS = -O2 -g; the user built with `make CFLAGS="-O0 -g"` (a command-line override), then runs plain
# `make` ("'app' is up to date") and `stalecheck check`. The objects' DWARF records the compile options (DW_AT_producer
# "... -g -O0"), the Makefile's recipe now expands to -O2 -g. Truth: stale against the Makefile (scratch `make` builds -O2; the
# binaries differ). stalecheck: only warning[missing-depfile] on main.o (exit 0). Should say: at least a warning (the objects were
# compiled with other flags than the rule's command gives: a plain `make` will not redo them; fix `make -B` or `rm main.o && make`),
# as it does for a Go binary built with CGO_CFLAGS other than the environment's (verdicts-2026-12-07c/04).
# usage: $0 [warn|error]: exits 1 while there is no finding at least as severe (default warn).
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
V=${1:-warn}; W=$JUDGE/repro-w/08; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P; cd $P
printf '#include <stdio.h>\nint main(int c,char**v){int s=0;for(int i=0;i<c*100;i++)s+=i;printf("%%d\\n",s);return 0;}\n' > main.c
printf 'CFLAGS = -O2 -g\napp: main.o\n\t$(CC) -o $@ $^\n' > Makefile; }
edit(){ touch .e; }
BUILD='[ -e .e ] || make CFLAGS="-O0 -g"'; SBUILD='make'; RML='*.o app .e'; BIN=app; CHANGED=main
judge make-cmdline-override; r=$?
echo "   producer: $(readelf --debug-dump=info $P/main.o 2>/dev/null | grep -m1 DW_AT_producer | sed 's/.*: //')"
echo "   make -n: $(cd $P && make -n 2>&1 | head -1)"
if [ $V = warn ]; then "$SC" check $P --fail-on warning 2>/dev/null | grep -v missing-depfile | grep -q -E '^ *(warning|error)\[' && exit 0 || exit 1; fi
exit $([ $r = 0 ] && echo 0 || echo 1)
