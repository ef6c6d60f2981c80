#!/bin/bash
# A comment-only edit of a file the build system does not watch (header without depfile under Make/Ninja,
# a .c outside rerun-if-changed under Cargo). Nothing rebuilds and the code is identical to a scratch build
# (stalecheck had checked the build before the edit, so it holds a content baseline). stalecheck reports
# error[untracked-input-changed]. usage: $0 [make|ninja|cargo] (default make). Exits 1 while the false error stands.
. "$(dirname "$0")/lib.sh"
V=${1:-make}; W=/tmp/judge/repro-w/06-$V; rm -rf $W; mkdir -p $W; P=$W/proj
csrc(){ mkdir -p $P/inc; echo '#define FACTOR 3
int util(int x);' > $P/inc/util.h; echo '#include "util.h"
int util(int x) { return x * FACTOR + 1; }' > $P/util.c
printf '#include <stdio.h>\n#include "util.h"\nint main(int c, char **v) { printf("%%d\\n", util(c)); return 0; }\n' > $P/main.c; }
case $V in
make) setup(){ csrc; printf 'CFLAGS = -O2 -Iinc\napp: main.o util.o\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n' > $P/Makefile; }; BUILD=make; RML='*.o app'; BIN=app; edit(){ echo '/* a comment */' >> inc/util.h; };;
ninja) setup(){ csrc; printf 'rule cc\n  command = gcc -O2 -Iinc -c $in -o $out\nrule link\n  command = gcc $in -o $out\nbuild main.o: cc main.c\nbuild util.o: cc util.c\nbuild app: link main.o util.o\n' > $P/build.ninja; }; BUILD=ninja; RML='*.o app .ninja_*'; BIN=app; edit(){ echo '/* a comment */' >> inc/util.h; };;
cargo) setup(){ mkdir -p $P/src $P/csrc $P/.cargo; printf '[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n' > $P/.cargo/config.toml
  printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n[build-dependencies]\ncc = "1.0"\n' > $P/Cargo.toml
  echo 'int k(int x) { return x * 3; }' > $P/csrc/k.c
  printf 'fn main() {\n    cc::Build::new().file("csrc/k.c").compile("k");\n    println!("cargo:rerun-if-changed=build.rs");\n}\n' > $P/build.rs
  printf 'extern "C" { fn k(x: i32) -> i32; }\nfn main() { println!("{}", unsafe { k(2) }); }\n' > $P/src/main.rs
  (cd $P && cargo generate-lockfile --offline -q); }
  BUILD='cargo build --release -q'; RML=target; BIN=target/release/app; edit(){ echo '/* a comment */' >> csrc/k.c; };;
esac
judge comment-only-$V || exit 1
