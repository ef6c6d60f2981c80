#!/bin/bash
# Make: Makefile has `CFLAGS = -O2` and `include config.mk`; config.mk holds `CFLAGS += -DVAL=1`. After a build (and a check, so a
# baseline exists) the user edits config.mk to -DVAL=2 and runs make: "'app' is up to date" (no rule has config.mk as a prerequisite).
# Truth: stale (scratch build prints 2, app prints 1). stalecheck: error[untracked-input-changed] (right verdict) but the message
# says "the environment (a variable Makefile reads) changed the command of main.o" with `--> Makefile` and "touching Makefile is
# not enough"; the environment did not change, and Makefile was not edited. Should say: config.mk (included by Makefile at line 2)
# changed the command of main.o, `--> config.mk`. (Without an earlier check - no baseline - it says nothing at all, exit 0, though
# config.mk is newer than main.o: see variant nobase.) usage: $0 [base|nobase]. Exits 1 while the message does not name config.mk.
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
V=${1:-base}; W=$JUDGE/repro-w/09-$V; rm -rf $W; mkdir -p $W; P=$W/proj
[ $V = nobase ] && { PRECHECK=0; export XDG_STATE_HOME=$W/state; }
setup(){ mkdir -p $P; cd $P
printf 'CFLAGS += -DVAL=1\n' > config.mk
printf '#include <stdio.h>\nint main(){printf("%%d\\n",VAL);return 0;}\n' > main.c
printf 'CFLAGS = -O2\ninclude config.mk\napp: main.o\n\t$(CC) -o $@ $^\n' > Makefile; }
edit(){ printf 'CFLAGS += -DVAL=2\n' > config.mk; }
BUILD=make; RML='*.o app'; BIN=app; CHANGED='proj/config\.mk'
judge make-included-config-mk-$V; r=$?
"$SC" check $P 2>/dev/null | grep -A1 'error\['
exit $([ $r = 0 ] && echo 0 || echo 1)
