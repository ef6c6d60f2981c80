#!/bin/bash
# A compile without a depfile, built with -g: inc/f.h holds only a macro (#define FACTOR 3) that util.c uses.
# Edit it, rebuild incrementally: make/ninja redo nothing (headers are not prerequisites), so app keeps
# FACTOR 3 while a scratch build has 5. stalecheck reports only warning[missing-depfile], no error.
# Without -g the same edit is error[untracked-input-changed] on inc/f.h, and the ninja variant (same flags) is caught:
# with DWARF present make's include scan seems skipped, and a macro-only header is in no DWARF line table.
# Variant cargo: a build.rs that runs `cc -O2 -g -Icsrc/include -c csrc/x.c` itself (std::process::Command)
# and prints only rerun-if-changed=build.rs: the header edit is only warning[untracked-input-changed] (the
# package-folder clue); the same project without -g gets error[untracked-input-changed] on the header.
# usage: $0 [make|ninja|cargo]  (default make; ninja is caught, shown for contrast). Exits 1 while missed.
. "$(dirname "$0")/lib.sh"
V=${1:-make}
W=/tmp/judge2/repro-w/01-$V; rm -rf $W; mkdir -p $W; P=$W/proj
common(){ mkdir -p $P/inc; cd $P
echo '#define FACTOR 3' > inc/f.h
printf '#include "f.h"\nint util(int x){return x*FACTOR;}\n' > util.c
printf '#include <stdio.h>\nint util(int);\nint main(int c,char**v){printf("%%d\\n",util(c));return 0;}\n' > main.c; }
case $V in
make) setup(){ common; printf 'CFLAGS = -O2 -g -Iinc\napp: main.o util.o\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n' > Makefile; }
  BUILD=make; RML='*.o app';;
ninja) setup(){ common; printf 'rule cc\n  command = gcc -O2 -g -Iinc -c $in -o $out\nrule link\n  command = gcc $in -o $out\nbuild main.o: cc main.c\nbuild util.o: cc util.c\nbuild app: link main.o util.o\n' > build.ninja; }
  BUILD=ninja; RML='*.o app .ninja_log .ninja_deps';;
cargo) setup(){ mkdir -p $P/src $P/csrc/include; cd $P
printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
cat > build.rs <<'B'
use std::process::Command;
fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    let o = format!("{}/x.o", out);
    assert!(Command::new("cc").args(["-O2", "-g", "-fPIC", "-Icsrc/include", "-c", "csrc/x.c", "-o"]).arg(&o).status().unwrap().success());
    assert!(Command::new("ar").arg("crs").arg(format!("{}/libnative.a", out)).arg(&o).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out);
    println!("cargo:rustc-link-lib=static=native");
    println!("cargo:rerun-if-changed=build.rs");
}
B
echo '#define FACTOR 3' > csrc/include/f.h
printf '#include "f.h"\nint util(int x){return x*FACTOR;}\n' > csrc/x.c
printf 'extern "C" { fn util(x: i32) -> i32; }\nfn main() { println!("{}", unsafe { util(3) }); }\n' > src/main.rs; }
  BUILD='cargo build -q'; RML=target;;
esac
BIN=app; CHANGED=f.h
[ $V = cargo ] && BIN=target/debug/app
edit(){ sed -i 's/FACTOR 3/FACTOR 5/' inc/f.h 2>/dev/null || sed -i 's/FACTOR 3/FACTOR 5/' csrc/include/f.h; }
judge debuginfo-macro-header-$V || exit 1
