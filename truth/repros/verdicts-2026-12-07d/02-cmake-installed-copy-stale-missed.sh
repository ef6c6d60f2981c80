#!/bin/bash
# CMake (Ninja, also Unix Makefiles) with install(TARGETS app DESTINATION bin) and CMAKE_INSTALL_PREFIX=<project>/inst: built and
# installed (build/install_manifest.txt lists inst/bin/app). The user edits main.c and runs `cmake --build build` without
# installing, then runs the installed inst/bin/app. Truth: inst/bin/app is stale (it differs from a scratch build+install; it differs
# from build/app, which is fresh). stalecheck: `check PROJECT` says "No findings: every binary in .../build is built from the sources
# on disk" (exit 0); `run -- inst/bin/app` refuses with 125 saying "no Cargo workspace, and no Make, Ninja or Go build, for
# inst/bin/app ... no Cargo.toml at or above" although the Ninja build in build/ installed it. Should say: an error (or at least a
# warning) that inst/bin/app, installed from build/app per install_manifest.txt, differs from it / is older than its sources, fix
# `cmake --install build`; `run` should name the CMake build that installed it. usage: $0 [Ninja|make]. Exits 1 while missed.
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
V=${1:-Ninja}; G=Ninja; [ $V = make ] && G="Unix Makefiles"
W=$JUDGE/repro-w/02-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P; cd $P
printf 'cmake_minimum_required(VERSION 3.16)\nproject(p C)\nadd_executable(app main.c)\ninstall(TARGETS app DESTINATION bin)\n' > CMakeLists.txt
printf '#include <stdio.h>\nint main(int c,char**v){printf("%%d\\n",c*3);return 0;}\n' > main.c
cmake -S . -B build -G "$G" -DCMAKE_INSTALL_PREFIX=$P/inst; }
edit(){ sed -i 's/c\*3/c*4/' main.c; }
BUILD='[ -e inst ] && cmake --build build -j1 || { cmake --build build -j1 && cmake --install build; }'
SBUILD="cmake -S . -B build -G \"$G\" -DCMAKE_INSTALL_PREFIX=$P/inst && cmake --build build -j1 && cmake --install build"
RML='build inst'; BIN=inst/bin/app; CHANGED=app
judge cmake-installed-copy-$V; r=$?
echo "   inst/bin/app prints $($P/inst/bin/app), build/app prints $($P/build/app)"
( cd $P && "$SC" run -- inst/bin/app ) >/dev/null 2>$W/run.err; echo "   stalecheck run -- inst/bin/app: exit $?: $(head -c 300 $W/run.err)"
exit $([ $r = 0 ] && echo 0 || echo 1)
