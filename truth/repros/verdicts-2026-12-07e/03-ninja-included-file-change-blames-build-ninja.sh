#!/bin/bash
# Hand-written Ninja: build.ninja does `include flags.ninja`, which sets cflags = -O2 -DV=1. flags.ninja edited
# to -DV=2, ninja NOT run. Truth: stale (ninja -n redoes main.o). stalecheck's verdict (error pending-rebuild)
# is right, but it names build.ninja (`--> build.ninja`, "as build.ninja shows"), which did not change: the user
# must look at flags.ninja. (The Ninja neighbour of round 4's 09, Make's included config.mk.)
set -u
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep03.XXXX); export XDG_STATE_HOME=$T/state
P=$T/p; mkdir -p $P; cd $P
printf '#include <stdio.h>\nint main(void){ printf("%%d\\n", V); return 0; }\n' > main.c
echo 'cflags = -O2 -DV=1' > flags.ninja
cat > build.ninja <<'N'
include flags.ninja
rule cc
  command = gcc $cflags -MD -MF $out.d -c $in -o $out
  depfile = $out.d
  deps = gcc
rule link
  command = gcc $in -o $out
build main.o: cc main.c
build app: link main.o
N
ninja >/dev/null; "$SC" check $P >/dev/null
sleep 1.1; sed -i 's/V=1/V=2/' flags.ninja
out=$("$SC" check $P); rc=$?
echo "stalecheck says (exit $rc):"; echo "$out" | grep -E '^\s+(error|warning)|-->|fix:' | sed 's/^/   /'
echo "should say: error[pending-rebuild] naming flags.ninja (--> flags.ninja), the included file whose edit changed main.o's command"
rm -rf $T
echo "$out" | grep -q -- '--> .*flags.ninja' && exit 0 || exit 1
