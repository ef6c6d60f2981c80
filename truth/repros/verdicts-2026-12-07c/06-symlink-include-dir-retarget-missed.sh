#!/bin/bash
# Make, -MMD -MP -Iinc, where inc is a symlink to a versioned header folder (inc -> v1). v1/val.h says VAL 1, v2/val.h VAL 2; both exist
# before the first build. Edit: `ln -sfn v2 inc` (switch the "current" folder). main.d names inc/val.h, which now resolves to
# v2/val.h, a file older than main.o, so `make` does nothing (`make -n`: up to date). app prints 1; a scratch build prints 2. Truth: stale.
# stalecheck: "No findings: every binary ... is built from the sources on disk" (exit 0), also with --no-cache, also when a check
# ran before the edit (it had the content baseline of inc/val.h then). Variant ninja: same with deps = gcc.
# Should say: error (inc/val.h has other content than when main.o was compiled; mtime older than main.o, like changed-with-older-mtime).
# usage: $0 [make|ninja]. Exits 1 while missed.
JUDGE=${JUDGE:-/tmp/judge3}; mkdir -p "$JUDGE"; . "$(dirname "$0")/../verdicts-2026-12-07/lib.sh"
V=${1:-make}
W=/tmp/judge3/repro-w/06-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/v1 $P/v2; cd $P
printf '#define VAL 1\n' > v1/val.h; printf '#define VAL 2\n' > v2/val.h; ln -s v1 inc
printf '#include <stdio.h>\n#include "val.h"\nint main(){printf("%%d\\n",VAL);return 0;}\n' > main.c
printf 'CFLAGS = -O2 -MMD -MP -Iinc\napp: main.o\n\t$(CC) -o $@ $^\n-include main.d\n' > Makefile
printf 'rule cc\n  command = gcc -O2 -Iinc -MD -MF $out.d -c $in -o $out\n  depfile = $out.d\n  deps = gcc\nrule link\n  command = gcc $in -o $out\nbuild main.o: cc main.c\nbuild app: link main.o\n' > build.ninja
[ $V = make ] && rm build.ninja || rm Makefile; }
edit(){ ln -sfn v2 inc; }
BUILD=make; RML='*.o *.d app'; BIN=app; CHANGED=val.h
[ $V = ninja ] && { BUILD=ninja; RML='*.o *.d app .ninja_log .ninja_deps'; }
judge symlink-retarget-$V || { echo "   app prints $($P/app)"; exit 1; }
