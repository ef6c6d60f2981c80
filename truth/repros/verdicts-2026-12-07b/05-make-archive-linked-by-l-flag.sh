#!/bin/bash
# Make links a static archive through -L/-l words of the recipe (`$(CC) -o app main.o -Llib -lz`) without
# naming lib/libz.a as a prerequisite of app. Edit lib/util.c, `make`: libz.a is rebuilt, app is not relinked,
# so app keeps x*3 (scratch: x*4). stalecheck: "No findings: every binary ... is built from the sources on
# disk" (exit 0) and `stalecheck which app` says "its Make link step (app) links no static library": the
# -L/-l pair is not resolved to lib/libz.a, so binary-older-than-input never fires. Variant sub: the archive is
# built by a recursive make (.PHONY lib: ; $(MAKE) -C lib, app: main.o | lib): same miss.
# Variant ninja: `build app: link main.o || lib/libz.a` with `libs = -Llib -lz`: same miss.
# usage: $0 [L|sub|ninja] (default L). Exits 1 while missed.
. "$(dirname "$0")/lib.sh"
V=${1:-L}
W=/tmp/judge2/repro-w/05-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/lib; cd $P
printf 'int util(int x){return x*3;}\n' > lib/util.c
printf '#include <stdio.h>\nint util(int);\nint main(int c,char**v){printf("%%d\\n",util(c));return 0;}\n' > main.c
case $V in
L) printf 'CFLAGS = -O2 -MMD -MP\nall: lib/libz.a app\napp: main.o\n\t$(CC) -o $@ main.o -Llib -lz\nlib/libz.a: lib/util.o\n\tar crs $@ $^\n-include main.d lib/util.d\n' > Makefile;;
sub) printf 'CFLAGS = -O2 -MMD -MP\nlibz.a: util.o\n\tar crs $@ $^\n-include util.d\n' > lib/Makefile
     printf 'CFLAGS = -O2 -MMD -MP\nall: app\n.PHONY: all lib\nlib:\n\t$(MAKE) -C lib\napp: main.o | lib\n\t$(CC) -o $@ main.o -Llib -lz\n-include main.d\n' > Makefile;;
ninja) printf 'rule cc\n  command = gcc -O2 -MD -MF $out.d -c $in -o $out\n  depfile = $out.d\n  deps = gcc\nrule ar\n  command = rm -f $out; ar crs $out $in\nrule link\n  command = gcc $in -o $out $libs\nbuild main.o: cc main.c\nbuild lib/util.o: cc lib/util.c\nbuild lib/libz.a: ar lib/util.o\nbuild app: link main.o || lib/libz.a\n  libs = -Llib -lz\n' > build.ninja;;
esac
}
BUILD=make; RML='*.o *.d app lib/*.o lib/*.d lib/*.a'; BIN=app; CHANGED=util
[ $V = ninja ] && { BUILD=ninja; RML='*.o *.d app lib/*.o lib/*.a .ninja_log .ninja_deps'; }
edit(){ sed -i 's/x\*3/x*4/' lib/util.c; }
judge make-archive-by-l-flag-$V || { "$SC" which "$P/app" 2>&1 | tail -1; exit 1; }
