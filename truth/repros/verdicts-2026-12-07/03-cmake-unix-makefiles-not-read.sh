#!/bin/bash
# CMake with the "Unix Makefiles" generator: a new header util.h is added in inc0/, which comes before inc/
# in the include path. `cmake --build build` rebuilds nothing (CMake's depfiles list inc/util.h only),
# so the binary keeps FACTOR 3 while a scratch build gets FACTOR 7. The same edit under CMake+Ninja,
# plain Make and Ninja is reported (path-lookup-changed); here stalecheck says "No findings, but nothing to
# judge either" and exits 0. Exits 1 while missed.
. "$(dirname "$0")/lib.sh"
W=/tmp/judge/repro-w/03; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/inc $P/inc0; echo '#define FACTOR 3
int util(int x);' > $P/inc/util.h
echo '#include "util.h"
int util(int x) { return x * FACTOR + 1; }' > $P/util.c
printf '#include <stdio.h>\n#include "util.h"\nint main(int c, char **v) { printf("%%d %%d\\n", util(c), FACTOR); return 0; }\n' > $P/main.c
cat > $P/CMakeLists.txt <<'M'
cmake_minimum_required(VERSION 3.20)
project(app C)
add_executable(app main.c util.c)
target_include_directories(app PRIVATE ${CMAKE_SOURCE_DIR}/inc0 ${CMAKE_SOURCE_DIR}/inc)
M
cd $P && cmake -G "Unix Makefiles" -S . -B build; }
BUILD='cmake --build build'; SBUILD='cmake -G "Unix Makefiles" -S . -B build && cmake --build build'; RML=build; BIN=build/app
edit(){ sed 's/FACTOR 3/FACTOR 7/' inc/util.h > inc0/util.h; }; CHANGED=inc0/util.h
judge cmake-unix-makefiles-header-shadow || { "$SC" check "$P" 2>&1 | tail -2; exit 1; }
