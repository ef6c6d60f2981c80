#!/bin/bash
# Cargo build.rs (std::process::Command, no cc crate) compiles csrc/unix/io.c into OUT_DIR/io.o -> libnative.a and
# prints only rerun-if-changed=build.rs. csrc/win/io.c (the other platform's file of the same name) is never
# compiled. Edit csrc/win/io.c (or csrc/win/win.h, which only it includes), cargo build: nothing reruns and the
# binary equals a scratch build. stalecheck: error[untracked-input-changed] on csrc/win/io.c ("Cargo does not
# watch it ... will not rebuild libnative.a"), known by archive-member, output-stem and build-script-source:
# all match by the name io alone, though build.rs names csrc/unix/io.c. usage: $0 [src|hdr]. Exits 1 while the verdict is wrong.
. "$(dirname "$0")/lib.sh"
V=${1:-src}
W=/tmp/judge2/repro-w/06-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/src $P/csrc/unix $P/csrc/win; cd $P
printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
cat > build.rs <<'B'
use std::process::Command;
fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    let o = format!("{}/io.o", out);
    assert!(Command::new("cc").args(["-O2", "-fPIC", "-c", "csrc/unix/io.c", "-o"]).arg(&o).status().unwrap().success());
    assert!(Command::new("ar").arg("crs").arg(format!("{}/libnative.a", out)).arg(&o).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out);
    println!("cargo:rustc-link-lib=static=native");
    println!("cargo:rerun-if-changed=build.rs");
}
B
printf 'int io_write(int x){return x*3;}\n' > csrc/unix/io.c
echo '#define WINV 1' > csrc/win/win.h
printf '#include "win.h"\nint io_write(int x){return x*WINV;}\n' > csrc/win/io.c
printf 'extern "C" { fn io_write(x: i32) -> i32; }\nfn main() { println!("{}", unsafe { io_write(3) }); }\n' > src/main.rs; }
BUILD='cargo build -q'; RML=target; BIN=target/debug/app; CHANGED=@@
case $V in
src) edit(){ sed -i 's/x\*WINV/x*WINV+1/' csrc/win/io.c; };;
hdr) edit(){ sed -i 's/WINV 1/WINV 2/' csrc/win/win.h; };;
esac
judge cargo-same-stem-uncompiled-$V || exit 1
