#!/bin/bash
# CMake "Unix Makefiles" configured with -DCMAKE_C_FLAGS=-DV=1 and built; then reconfigured with
# -DCMAKE_C_FLAGS=-DV=2 (cache only, no CMakeLists edit), no build. Truth: stale, and the next make redoes
# main.c.o (flags.make is its prerequisite). stalecheck's verdict is right (a correct pending-rebuild on
# flags.make), but its first error says "CMakeFiles/app.dir/depend.make changed the command of main.c.o ...
# Make compares mtimes only, ... so the next build will not redo" it, `--> depend.make`: depend.make did not
# change the command (it holds only a comment) and make does redo the object.
set -u
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep08.XXXX); export XDG_STATE_HOME=$T/state
P=$T/p; mkdir -p $P; cd $P
printf '#include <stdio.h>\nint main(void){ printf("%%d\\n", V); return 0; }\n' > main.c
printf 'cmake_minimum_required(VERSION 3.20)\nproject(p C)\nadd_executable(app main.c)\n' > CMakeLists.txt
{ cmake -S . -B build -G "Unix Makefiles" -DCMAKE_C_FLAGS=-DV=1 && cmake --build build; } >/dev/null
"$SC" check $P/build >/dev/null
sleep 1.1; cmake -S . -B build -DCMAKE_C_FLAGS=-DV=2 >/dev/null
echo "make -n would run: $(make -C build -n 2>/dev/null | grep -c 'main.c.o -c') compile(s) of main.c.o"
out=$("$SC" check $P/build); rc=$?
echo "stalecheck says (exit $rc):"; echo "$out" | grep -E '^\s+(error|warning)|-->' | cut -c1-260 | sed 's/^/   /'
echo "should say: error[pending-rebuild] naming the configuration (flags.make / CMakeCache.txt's CMAKE_C_FLAGS), no claim that depend.make changed the command or that make will not redo main.c.o"
rm -rf $T
echo "$out" | grep -q -- '--> .*depend.make' && exit 1 || exit 0
