#!/bin/bash
# Make: libz.a: $(OBJS) with `ar rcs $@ $^`, OBJS = a.o b.o; main.c calls g (b.c) and f (a.c). The user drops b.c: deletes it,
# removes b.o from OBJS and the call of g from main.c; `make`: main.o and app are rebuilt, libz.a is not (a.o is older), so it still
# holds b.o, but nothing references g any more: app equals a scratch build. Truth: fresh.
# stalecheck: error[untracked-input-changed] (make) on Makefile: "Makefile changed the command of libz.a since it was built ...:
# the command now differs from the one it ran; Make compares mtimes only, not commands, so the next build will not redo libz.a"
# (exit 1), listed under app (bin) - while its own warning[archive-member-without-rule] on the same archive says b.o is only
# something whatever links libz.a "may still get". Should say: a warning (the archive differs from what its rule would write now, but
# no member that app links is affected), as it does for the stale member itself. (The neighbour where g moves to a new c.c and
# app takes the old b.o's g from the archive is an error[archive-member-without-rule], and right.)
# Exits 1 while the false error stays.
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
W=$JUDGE/repro-w/07; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P; cd $P
printf 'int f(int x){return x+1;}\n' > a.c
printf 'int g(int x){return x*3;}\n' > b.c
printf '#include <stdio.h>\nint f(int);int g(int);\nint main(int c,char**v){printf("%%d\\n",g(f(c)));return 0;}\n' > main.c
printf 'OBJS = a.o b.o\napp: main.o libz.a\n\t$(CC) -o $@ main.o libz.a\nlibz.a: $(OBJS)\n\tar rcs $@ $^\n%%.o: %%.c\n\t$(CC) -O2 -c $< -o $@\n' > Makefile; }
edit(){ rm b.c; sed -i 's/a.o b.o/a.o/' Makefile; sed -i 's/g(f(c))/f(c)/' main.c; }
BUILD=make; RML='*.o *.a app'; BIN=app; CHANGED=@@
judge make-archive-removed-unused-member; r=$?
"$SC" check $P 2>/dev/null | grep -A1 -E 'error\[|archive-member' | grep -v -- '-->'
exit $([ $r = 0 ] && echo 0 || echo 1)
