#!/bin/bash
# Recursive make with the common FORCE idiom (lib/libutil.a: FORCE ; $(MAKE) -C lib).
# Edit lib/util.c, run `make` (rebuilds correctly). stalecheck reports error[pending-rebuild] on "FORCE"
# although the binary equals a from-scratch build. Variant `phony`: the other common idiom
# (.PHONY: sublib / app: main.o sublib / sublib: ; $(MAKE) -C lib) with a header edit: error[pending-rebuild] on
# "sublib". usage: $0 [force|phony]. Exits 1 while the verdict is wrong.
V=${1:-force}
. "$(dirname "$0")/lib.sh"
W=/tmp/judge/repro-w/02; rm -rf $W; mkdir -p $W
P=$W/proj
setup(){ mkdir -p $P/lib/inc
cat > $P/lib/inc/util.h <<'H'
#define FACTOR 3
int util(int x);
H
echo '#include "util.h"
int util(int x) { return x * FACTOR + 1; }' > $P/lib/util.c
echo '#include <stdio.h>
#include "util.h"
int main(int c, char **v) { printf("%d\n", util(c)); return 0; }' > $P/main.c
cat > $P/lib/Makefile <<'M'
CFLAGS = -O2 -g -Iinc
libutil.a: util.o
	$(AR) rcs $@ $^
%.o: %.c
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<
-include util.d
M
cat > $P/Makefile <<'M'
CFLAGS = -O2 -g -Ilib/inc
app: main.o lib/libutil.a
	$(CC) -o $@ main.o -Llib -lutil
lib/libutil.a: FORCE
	$(MAKE) -C lib
.PHONY: FORCE
FORCE:
%.o: %.c
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<
-include main.d
M
if [ "$V" = phony ]; then
printf 'CFLAGS = -O2 -g -Ilib/inc\n.PHONY: all sublib\nall: app\nsublib:\n\t$(MAKE) -C lib\napp: main.o sublib\n\t$(CC) -o $@ main.o -Llib -lutil\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<\n-include main.d\n' > $P/Makefile
fi
}
BUILD=make; RML='*.o *.d app lib/*.o lib/*.d lib/*.a'; BIN=app
edit(){ sed -i 's/+ 1/+ 4/' lib/util.c; }; CHANGED=util.c
[ "$V" = phony ] && edit(){ sed -i 's/FACTOR 3/FACTOR 5/' lib/inc/util.h; }
judge make-recursive-$V || exit 1
