#!/bin/bash
# Make, VPATH = src:lib, pattern rule, -MMD -MP. After the build (and with NO earlier stalecheck check, so no content baseline),
# `touch lib/util.h` and do not rebuild. Truth: fresh (same content; make would rebuild identical objects; app equals scratch).
# stalecheck: error[pending-rebuild] on lib/util.h (twice, one per object). With a check run before the touch it is info
# ("content is the same"), which is right. Without a baseline it cannot know the content is unchanged, so this is probably by
# design, but then it is "cannot tell" (a warning), not "stale" (error); `stalecheck run` refuses the fresh program.
# Exits 1 while the verdict is an error.
JUDGE=${JUDGE:-/tmp/judge3}; mkdir -p "$JUDGE"; . "$(dirname "$0")/../verdicts-2026-12-07/lib.sh"
W=/tmp/judge3/repro-w/10; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/src $P/lib; cd $P
printf '#define K 3\nint util(int);\n' > lib/util.h
printf '#include "util.h"\nint util(int x){return x*K;}\n' > lib/util.c
printf '#include <stdio.h>\n#include "util.h"\nint main(int c,char**v){printf("%%d\\n",util(c));return 0;}\n' > src/main.c
printf 'VPATH = src:lib\nCFLAGS = -O2 -MMD -MP -Ilib\napp: main.o util.o\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n-include main.d util.d\n' > Makefile; }
edit(){ touch lib/util.h .e; }
PRECHECK=0; BUILD='[ -e .e ] || make'; SBUILD=make; RML='*.o *.d app .e'; BIN=app; CHANGED=util.h
judge touch-no-baseline || { (cd $P && "$SC" run -- ./app >/dev/null 2>&1); echo "   stalecheck run exit: $?"; exit 1; }
