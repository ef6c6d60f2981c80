#!/bin/bash
# A stale program that the build's DEFAULT target does not build: both programs link util (util.o / libk.a / crate common); both
# were built; the user edits util.c (common/src/lib.rs) and runs the plain build (ninja / make / cmake --build / cargo build), which
# only builds the default goal (`default app1`; first target app1; app2 EXCLUDE_FROM_ALL; workspace default-members = ["a"]), so
# app2 (target/debug/b) keeps x*3. Truth: stale (scratch build differs). stalecheck: error[binary-older-than-input] on app2 - right - but its text says
# "Ninja will relink it on the next build" and its fix is the plain build (`ninja -C DIR` / `make -C DIR` / `cmake --build DIR`),
# which answers "no work to do": after running the fix the same error remains. (Cargo: error[pending-rebuild] "Cargo will
# rebuild b-..." and error[binary-older-than-input] on target/debug/b, both with fix `cargo build`, which builds only a.)
# Should say: the fix names the target (`ninja -C DIR app2`, `make -C DIR app2`, `cmake --build DIR --target app2`,
# `cargo build -p b` or `--workspace`), and not claim the next (default) build relinks it.
# usage: $0 [ninja|make|cmake|cargo] (default ninja). Exits 1 while the fix printed does not clear the error (or the verdict is wrong).
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
V=${1:-ninja}; W=$JUDGE/repro-w/01-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P; cd $P
printf 'int util(int x){return x*3;}\n' > util.c
printf '#include <stdio.h>\nint util(int);\nint main(int c,char**v){printf("%%d\\n",util(c));return 0;}\n' > m1.c
printf '#include <stdio.h>\nint util(int);\nint main(int c,char**v){printf("%%d\\n",util(c)+1);return 0;}\n' > m2.c
case $V in
ninja) printf 'rule cc\n  command = gcc -O2 -MD -MF $out.d -c $in -o $out\n  depfile = $out.d\n  deps = gcc\nrule link\n  command = gcc $in -o $out\nbuild util.o: cc util.c\nbuild m1.o: cc m1.c\nbuild m2.o: cc m2.c\nbuild app1: link m1.o util.o\nbuild app2: link m2.o util.o\ndefault app1\n' > build.ninja;;
make) printf 'CFLAGS = -O2 -MMD -MP\napp1: m1.o util.o\n\t$(CC) -o $@ $^\napp2: m2.o util.o\n\t$(CC) -o $@ $^\n-include *.d\n' > Makefile;;
cmake) printf 'cmake_minimum_required(VERSION 3.16)\nproject(p C)\nadd_library(k STATIC util.c)\nadd_executable(app1 m1.c)\ntarget_link_libraries(app1 k)\nadd_executable(app2 EXCLUDE_FROM_ALL m2.c)\ntarget_link_libraries(app2 k)\n' > CMakeLists.txt
       cmake -S . -B build -G Ninja;;
cargo) rm -f *.c; mkdir -p a/src b/src common/src
       printf '[workspace]\nmembers = ["a","b","common"]\ndefault-members = ["a"]\nresolver = "2"\n' > Cargo.toml
       printf '[package]\nname = "common"\nversion = "0.1.0"\nedition = "2021"\n' > common/Cargo.toml
       printf 'pub fn k(x: i32) -> i32 { x*3 }\n' > common/src/lib.rs
       for c in a b; do printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\ncommon = { path = "../common" }\n' $c > $c/Cargo.toml
       printf 'fn main() { println!("{}", common::k(std::env::args().count() as i32)); }\n' > $c/src/main.rs; done;;
esac; }
edit(){ if [ $V = cargo ]; then sed -i 's/x\*3/x*4/' common/src/lib.rs; else sed -i 's/x\*3/x*4/' util.c; fi; touch .e; }
case $V in
ninja) BUILD='[ -e .e ] && ninja -j1 || ninja -j1 app1 app2'; SBUILD='ninja -j1 app1 app2'; RML='*.o *.d app1 app2 .ninja_log .ninja_deps .e'; BIN=app2;;
make) BUILD='[ -e .e ] && make || make app1 app2'; SBUILD='make app1 app2'; RML='*.o *.d app1 app2 .e'; BIN=app2;;
cmake) BUILD='[ -e .e ] && cmake --build build -j1 || cmake --build build -j1 --target app1 app2'; SBUILD='cmake -S . -B build -G Ninja && cmake --build build -j1 --target app1 app2'; RML='build .e'; BIN=build/app2;;
cargo) BUILD='[ -e .e ] && cargo build -q -j1 || cargo build -q -j1 --workspace'; SBUILD='cargo build -q -j1 --workspace'; RML='target .e'; BIN=target/debug/b;;
esac
CHANGED=app2; [ $V = cargo ] && CHANGED=common
judge default-target-$V; r=$?
"$SC" check $P 2>/dev/null | grep -A3 'error\[' | grep -v '^ *-->'
fix=$("$SC" check $P 2>/dev/null | grep -A3 'error\[' | grep 'fix:' | head -1); fix=${fix#*fix: }
( cd $P && eval "$fix" ) >/dev/null 2>&1
if "$SC" check $P >/dev/null 2>&1; then echo "   after running the fix ($fix): no error"; else echo "   after running the fix ($fix): still stale, error remains"; r=1; fi
exit $([ $r = 0 ] && echo 0 || echo 1)
