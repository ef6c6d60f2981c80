#!/bin/bash
# CMake, file(GLOB SRCS src/*.c) without CONFIGURE_DEPENDS feeding an OBJECT library; src/weak.c has a weak val() returning 1.
# Edit: add src/extra.c with a strong val() returning 2, then `cmake --build build` (no re-glob: nothing rebuilt, build.ninja unchanged).
# Truth: stale (app prints 1; a from-scratch configure+build compiles extra.c and prints 2).
# stalecheck: "No findings: every binary ... is built from the sources on disk" (exit 0), under both Ninja and Unix Makefiles.
# Should say: at least a warning (cannot tell) that a new source appeared in a folder CMake globbed at configure time
# (cmake records the glob's folder only with CONFIGURE_DEPENDS; otherwise CMakeLists.txt names the pattern), or an error.
# usage: $0 [Ninja|make]. Exits 1 while missed.
JUDGE=${JUDGE:-/tmp/judge3}; mkdir -p "$JUDGE"; . "$(dirname "$0")/../verdicts-2026-12-07/lib.sh"
V=${1:-Ninja}; GEN=Ninja; [ $V = make ] && GEN="Unix Makefiles"
W=/tmp/judge3/repro-w/01-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/src; cd $P
cat > CMakeLists.txt <<'M'
cmake_minimum_required(VERSION 3.20)
project(app C)
file(GLOB SRCS ${CMAKE_SOURCE_DIR}/src/*.c)
add_library(objs OBJECT ${SRCS})
add_executable(app main.c $<TARGET_OBJECTS:objs>)
M
printf '__attribute__((weak)) int val(void){return 1;}\n' > src/weak.c
printf '#include <stdio.h>\nint val(void);\nint main(){printf("%%d\\n",val());return 0;}\n' > main.c
cmake -G "$GEN" -S . -B build; }
edit(){ printf 'int val(void){return 2;}\n' > src/extra.c; }
BUILD='cmake --build build'; SBUILD='cmake -G "$GEN" -S . -B build && cmake --build build'; RML=build; BIN=build/app; CHANGED=extra.c
judge cmake-glob-$V || exit 1
