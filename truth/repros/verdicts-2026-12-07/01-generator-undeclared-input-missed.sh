#!/bin/bash
# A code generator reads table.in, which its rule does not list as an input (a custom command without
# DEPENDS on it). Edit table.in, rebuild incrementally: nothing regenerates, the binary keeps TABLE 7
# while a scratch build has TABLE 9. stalecheck reports no error.
# usage: $0 [cmake-ninja|cmake-make|make|ninja|ninja-traced]   (default cmake-ninja). Exits 1 while missed.
. "$(dirname "$0")/lib.sh"
V=${1:-cmake-ninja}
W=/tmp/judge/repro-w/01-$V; rm -rf $W; mkdir -p $W; P=$W/proj
common(){ mkdir -p $P/inc; echo '#define FACTOR 3
int util(int x);' > $P/inc/util.h
echo '#include "util.h"
int util(int x) { return x * FACTOR + 1; }' > $P/util.c
echo 7 > $P/table.in
printf 'echo "#define TABLE $(cat "$1")" > "$2"\n' > $P/gen.sh
printf '#include <stdio.h>\n#include "util.h"\n#include "table.h"\nint main(int c, char **v) { printf("%%d\\n", util(c)+TABLE); return 0; }\n' > $P/main.c; }
case $V in
cmake-*) GEN=Ninja; [ $V = cmake-make ] && GEN="Unix Makefiles"
 setup(){ common; cat > $P/CMakeLists.txt <<'M'
cmake_minimum_required(VERSION 3.20)
project(app C)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/table.h
  COMMAND sh ${CMAKE_SOURCE_DIR}/gen.sh ${CMAKE_SOURCE_DIR}/table.in ${CMAKE_BINARY_DIR}/table.h)
add_executable(app main.c util.c ${CMAKE_BINARY_DIR}/table.h)
target_include_directories(app PRIVATE ${CMAKE_SOURCE_DIR}/inc ${CMAKE_BINARY_DIR})
M
 cd $P && cmake -G "$GEN" -S . -B build; }
 BUILD='cmake --build build'; SBUILD='cmake -G "$GEN" -S . -B build && cmake --build build'; RML=build; BIN=build/app;;
make) setup(){ common; cat > $P/Makefile <<'M'
CFLAGS = -O2 -g -Iinc -I.
app: main.o util.o
	$(CC) -o $@ $^
main.o: table.h
table.h: gen.sh
	sh gen.sh table.in table.h
%.o: %.c
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<
-include *.d
M
}; BUILD=make; RML='*.o *.d app table.h'; BIN=app;;
ninja|ninja-traced) setup(){ common; cat > $P/build.ninja <<'M'
cflags = -O2 -g -Iinc -I.
rule cc
  command = gcc $cflags -MD -MF $out.d -c $in -o $out
  depfile = $out.d
  deps = gcc
rule gen
  command = sh gen.sh table.in $out
rule link
  command = gcc $in -o $out
build table.h: gen gen.sh
build main.o: cc main.c || table.h
build util.o: cc util.c
build app: link main.o util.o
M
}; BUILD=ninja; [ $V = ninja-traced ] && BUILD='$SC trace -- ninja'; SBUILD=ninja; RML='*.o *.d app table.h .ninja_log .ninja_deps'; BIN=app;;
esac
edit(){ echo 9 > table.in; }; CHANGED=table.in
judge generator-input-$V || exit 1
