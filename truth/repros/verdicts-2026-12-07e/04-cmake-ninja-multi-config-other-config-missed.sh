#!/bin/bash
# CMake -G "Ninja Multi-Config": Debug and Release built; main.c edited; `cmake --build build --config Debug` only.
# build/Release/app is stale (prints v1; a scratch build prints v2; `cmake --build build --config Release`
# rebuilds it). stalecheck reads build.ninja (the default config) only and says "No findings: every binary in
# build is built from the sources on disk" (exit 0). `run -- build/Release/app` says there is no build for it.
set -u
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep04.XXXX); export XDG_STATE_HOME=$T/state
P=$T/p; mkdir -p $P; cd $P
printf '#include <stdio.h>\nint main(void){ printf("v1\\n"); return 0; }\n' > main.c
printf 'cmake_minimum_required(VERSION 3.20)\nproject(p C)\nadd_executable(app main.c)\n' > CMakeLists.txt
{ cmake -S . -B build -G "Ninja Multi-Config" && cmake --build build --config Debug && cmake --build build --config Release; } >/dev/null
"$SC" check $P/build >/dev/null
sleep 1.1; sed -i 's/v1/v2/' main.c
cmake --build build --config Debug >/dev/null
echo "build/Release/app prints: $(build/Release/app)   (main.c says v2)"
out=$("$SC" check $P/build); rc=$?
echo "stalecheck check build says (exit $rc):"; echo "$out" | sed 's/^/   /'
"$SC" run -- build/Release/app >/dev/null 2>$T/err; echo "stalecheck run -- build/Release/app: exit $?: $(head -c 160 $T/err)"
echo "should say: error on build/Release/app (main.c changed since it was built), fix cmake --build build --config Release"
rm -rf $T
[ $rc -ne 0 ] && echo "$out" | grep -q 'Release/app' && exit 0 || exit 1
