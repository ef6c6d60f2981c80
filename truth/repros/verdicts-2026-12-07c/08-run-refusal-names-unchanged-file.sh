#!/bin/bash
# Make -MMD -MP -Iinc1 -Iinc2; config.h only in inc2. Edit: add inc1/config.h (shadows it; make does not rebuild). Truth: stale.
# `stalecheck check` is right (error[path-lookup-changed] on inc1/config.h), and `stalecheck run -- ./app` rightly refuses with 125,
# but its summary line says "changed since the build: main.c" -- main.c was never touched; what changed is inc1/config.h (a new file).
# Should name inc1/config.h. Exits 1 while the run refusal names main.c (or run does not refuse).
JUDGE=${JUDGE:-/tmp/judge3}; mkdir -p "$JUDGE"; . "$(dirname "$0")/../verdicts-2026-12-07/lib.sh"
W=/tmp/judge3/repro-w/08; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/inc1 $P/inc2; cd $P
printf '#define VAL 1\n' > inc2/config.h
printf '#include <stdio.h>\n#include "config.h"\nint main(){printf("%%d\\n",VAL);return 0;}\n' > main.c
printf 'CFLAGS = -O2 -MMD -MP -Iinc1 -Iinc2\napp: main.o\n\t$(CC) -o $@ $^\n-include main.d\n' > Makefile; }
edit(){ printf '#define VAL 2\n' > inc1/config.h; }
BUILD=make; RML='*.o *.d app'; BIN=app; CHANGED=config.h
judge shadow-header-run
out=$(cd $P && "$SC" run -- ./app 2>&1); rc=$?
echo "$out" | grep 'refusing' | sed 's/^/   /'; echo "   run exit $rc; main.c mtime $(stat -c %y $P/main.c), app mtime $(stat -c %y $P/app)"
[ $rc = 125 ] && ! echo "$out" | grep 'refusing' | grep -q 'main.c'
