#!/bin/bash
# Cargo workspace (members = ["app"]): app/build.rs reads ../shared/cfg.txt (a file of the workspace, outside the package folder),
# passes its value to rustc (cargo:rustc-env=CFGV) and declares only rerun-if-changed=build.rs. Edit shared/cfg.txt, `cargo build`:
# Cargo says Fresh, app still prints 3. Truth: stale (scratch prints 4). stalecheck: "No findings: every binary ... is built from
# the sources on disk" (exit 0). With the file inside the package (variant `in`: app/cfg.txt read as "cfg.txt") stalecheck is right:
# error[untracked-input-changed] on app/cfg.txt. Should say the same for ../shared/cfg.txt (error, fix: add
# println!("cargo:rerun-if-changed=../shared/cfg.txt") to app/build.rs). usage: $0 [out|in]. Exits 1 while the verdict is wrong.
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
V=${1:-out}; W=$JUDGE/repro-w/03-$V; rm -rf $W; mkdir -p $W; P=$W/proj
F=../shared/cfg.txt; [ $V = in ] && F=cfg.txt
setup(){ mkdir -p $P/app/src $P/shared; cd $P
mkdir -p .cargo; printf '[build]\njobs = 1\n' > .cargo/config.toml
printf '[workspace]\nmembers = ["app"]\nresolver = "2"\n' > Cargo.toml
printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n' > app/Cargo.toml
printf 'fn main(){ let v = std::fs::read_to_string("%s").unwrap(); println!("cargo:rustc-env=CFGV={}", v.trim()); println!("cargo:rerun-if-changed=build.rs"); }\n' $F > app/build.rs
printf '3\n' > app/$F
printf 'fn main() { println!("{}", env!("CFGV")); }\n' > app/src/main.rs; }
edit(){ printf '4\n' > app/$F; }
BUILD='cargo build -q'; RML='target'; BIN=target/debug/app; CHANGED=cfg.txt
judge cargo-build-rs-reads-$V || exit 1
