#!/bin/bash
# Conservative/undecidable case (documented: no content baseline without a check before the edit).
# Build, `touch` a header the build system does not watch (Make without depfiles), rebuild (nothing happens),
# and run stalecheck for the first time: error[untracked-input-changed] on inc/util.h although the binary
# equals a scratch build. Its message does not say the content could not be compared.
# usage: $0 [make|cargo]. Exits 1 while the error stands.
. "$(dirname "$0")/lib.sh"
export XDG_STATE_HOME=/tmp/judge/repro-w/07-state; rm -rf $XDG_STATE_HOME
V=${1:-make}; W=/tmp/judge/repro-w/07-$V; rm -rf $W; mkdir -p $W; P=$W/proj
if [ $V = make ]; then
setup(){ mkdir -p $P/inc; echo '#define FACTOR 3
int util(int x);' > $P/inc/util.h; echo '#include "util.h"
int util(int x) { return x * FACTOR + 1; }' > $P/util.c
printf '#include <stdio.h>\n#include "util.h"\nint main(int c, char **v) { printf("%%d\\n", util(c)); return 0; }\n' > $P/main.c
printf 'CFLAGS = -O2 -Iinc\napp: main.o util.o\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n' > $P/Makefile; }
BUILD=make; RML='*.o app'; BIN=app; edit(){ touch inc/util.h; }
else
setup(){ mkdir -p $P/src $P/csrc $P/.cargo; printf '[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n' > $P/.cargo/config.toml
  printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n[build-dependencies]\ncc = "1.0"\n' > $P/Cargo.toml
  echo 'int k(int x) { return x * 3; }' > $P/csrc/k.c
  printf 'fn main() {\n    cc::Build::new().file("csrc/k.c").compile("k");\n    println!("cargo:rerun-if-changed=build.rs");\n}\n' > $P/build.rs
  printf 'extern "C" { fn k(x: i32) -> i32; }\nfn main() { println!("{}", unsafe { k(2) }); }\n' > $P/src/main.rs
  (cd $P && cargo generate-lockfile --offline -q); }
BUILD='cargo build --release -q'; RML=target; BIN=target/release/app; edit(){ touch csrc/k.c; }
fi
PRECHECK=0 judge touch-no-prior-check-$V || exit 1
