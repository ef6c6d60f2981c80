#!/bin/bash
# Make: lib/libval.so built by a recursive make (-C lib); app linked with -Llib -lval -Wl,-rpath,'$ORIGIN/lib' and the .so is not a
# prerequisite of app (app: main.o | lib). Edit lib/val.c (return 1 -> 2), `make`: libval.so is rebuilt, app is not relinked.
# app loads lib/libval.so at run time and prints 2, and both app and libval.so equal a from-scratch build. Truth: fresh.
# stalecheck: error[binary-older-than-input] on app: "before lib/libval.so was written ... by content it holds other code: ... data
# section .data of libval.so ... not inside in this form" -- it looks for the shared library's sections inside app as if it were
# statically linked, while `stalecheck which app` says "links no static library, only shared ones (libval.so)". `stalecheck run -- ./app`
# refuses (125). Should say: nothing (a dynamically linked library rebuilt later does not make the program stale).
# Variant ninja: `build app: link main.o || lib/libval.so` with -L/-l/-rpath: checks the same shape under Ninja.
# usage: $0 [make|ninja]. Exits 1 while the verdict is wrong.
JUDGE=${JUDGE:-/tmp/judge3}; mkdir -p "$JUDGE"; . "$(dirname "$0")/../verdicts-2026-12-07/lib.sh"
V=${1:-make}
W=/tmp/judge3/repro-w/05-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/lib; cd $P
printf 'int val(void){return 1;}\n' > lib/val.c
printf '#include <stdio.h>\nint val(void);\nint main(){printf("%%d\\n",val());return 0;}\n' > main.c
if [ $V = make ]; then
printf 'CFLAGS = -O2 -fPIC -MMD -MP\nlibval.so: val.o\n\t$(CC) -shared -o $@ $^\n-include val.d\n' > lib/Makefile
printf 'CFLAGS = -O2 -MMD -MP\nall: app\n.PHONY: all lib\nlib:\n\t$(MAKE) -C lib\napp: main.o | lib\n\t$(CC) -o $@ main.o -Llib -lval -Wl,-rpath,\x27$$ORIGIN/lib\x27\n-include main.d\n' > Makefile
else
cat > build.ninja <<'M'
rule cc
  command = gcc -O2 -fPIC -MD -MF $out.d -c $in -o $out
  depfile = $out.d
  deps = gcc
rule so
  command = gcc -shared -o $out $in
rule link
  command = gcc $in -o $out -Llib -lval -Wl,-rpath,'$$ORIGIN/lib'
build main.o: cc main.c
build lib/val.o: cc lib/val.c
build lib/libval.so: so lib/val.o
build app: link main.o || lib/libval.so
M
fi; }
edit(){ sed -i 's/1;/2;/' lib/val.c; }
BUILD=make; RML='*.o *.d app lib/*.o lib/*.d lib/*.so'; BIN='app lib/libval.so'; CHANGED=val
[ $V = ninja ] && { BUILD=ninja; RML='*.o *.d app lib/*.o lib/*.d lib/*.so .ninja_log .ninja_deps'; }
judge so-rpath-$V; r=$?
echo "   app prints: $($P/app)"; "$SC" which $P/app 2>&1 | tail -1; "$SC" run -- $P/app >/dev/null 2>&1; echo "   stalecheck run exit: $?"
exit $r
