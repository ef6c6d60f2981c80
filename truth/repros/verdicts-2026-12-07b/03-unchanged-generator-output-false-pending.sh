#!/bin/bash
# Hand-written Ninja, a generator edge with restat = 1 whose script rewrites gen.h only when it changes
# (cmp -s || mv). Edit spec.txt so that gen.h's content stays the same, run ninja: gen runs, gen.h keeps its
# old mtime, restat prunes the compile, .ninja_log records the newer time; `ninja -n` says "no work to do"
# and app equals a scratch build. stalecheck: error[pending-rebuild] on spec.txt ("modified after gen.h
# was built ... the next build redoes gen.h: what is on disk is old"). Variants cmake-ninja / cmake-make: the
# same generator as add_custom_command(... COMMAND cmake -E copy_if_different ...) with DEPENDS tab.txt (CMake's
# Ninja generator gives custom commands restat = 1): same error; under Unix Makefiles make does rerun the
# generator every time, but the binary is not stale either. usage: $0 [ninja|cmake-ninja|cmake-make].
# Exits 1 while the verdict is wrong.
. "$(dirname "$0")/lib.sh"
V=${1:-ninja}
W=/tmp/judge2/repro-w/03-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P; cd $P
printf 'v=7\n' > spec.txt
printf 'v=$(grep ^v= spec.txt | cut -d= -f2); echo "#define SPEC $v" > gen.h.tmp; cmp -s gen.h.tmp gen.h && rm gen.h.tmp || mv gen.h.tmp gen.h\n' > gen.sh
printf '#include <stdio.h>\n#include "gen.h"\nint main(){printf("%%d\\n",SPEC);return 0;}\n' > main.c
cat > build.ninja <<'M'
rule gen
  command = sh gen.sh
  restat = 1
rule cc
  command = gcc -O2 -MMD -MF $out.d -c $in -o $out
  depfile = $out.d
  deps = gcc
rule link
  command = gcc $in -o $out
build gen.h: gen spec.txt gen.sh
build main.o: cc main.c || gen.h
build app: link main.o
M
}
BUILD=ninja; RML='*.o *.d app gen.h .ninja_log .ninja_deps'; BIN=app; CHANGED=spec.txt
case $V in cmake-*) GEN=Ninja; [ $V = cmake-make ] && GEN="Unix Makefiles"
setup(){ mkdir -p $P; cd $P
cat > CMakeLists.txt <<'M'
cmake_minimum_required(VERSION 3.20)
project(app C)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/gen.h
  COMMAND sh ${CMAKE_SOURCE_DIR}/gen.sh ${CMAKE_SOURCE_DIR}/spec.txt ${CMAKE_BINARY_DIR}/gen.h.tmp
  COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CMAKE_BINARY_DIR}/gen.h.tmp ${CMAKE_BINARY_DIR}/gen.h
  DEPENDS ${CMAKE_SOURCE_DIR}/gen.sh ${CMAKE_SOURCE_DIR}/spec.txt)
add_executable(app main.c ${CMAKE_BINARY_DIR}/gen.h)
target_include_directories(app PRIVATE ${CMAKE_BINARY_DIR})
M
printf 'v=7\n' > spec.txt
printf 'v=$(grep ^v= $1 | cut -d= -f2); echo "#define SPEC $v" > $2\n' > gen.sh
printf '#include <stdio.h>\n#include "gen.h"\nint main(){printf("%%d\\n",SPEC);return 0;}\n' > main.c
cmake -G "$GEN" -S . -B build; }
BUILD='cmake --build build'; SBUILD='cmake -G "$GEN" -S . -B build && cmake --build build'; RML=build; BIN=build/app;;
esac
edit(){ printf '# a comment\nv=7\n' > spec.txt; }
judge restat-unchanged-output-$V || exit 1
