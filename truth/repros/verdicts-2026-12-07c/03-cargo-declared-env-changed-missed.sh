#!/bin/bash
# Cargo, build.rs prints cargo:rerun-if-env-changed=LEVEL and writes OUT_DIR/level.rs (const LEVEL) from $LEVEL. Built with LEVEL=1;
# then the user's shell has LEVEL=2 exported and no rebuild happens. Cargo's fingerprint records the value
# (target/debug/.fingerprint/app-*/run-build-script-build-script-build.json: "RerunIfEnvChanged":{"var":"LEVEL","val":"1"}),
# so the next `cargo build` reruns the script and app prints 2 instead of 1. Truth: stale in this environment.
# stalecheck (run with LEVEL=2): "No findings: every binary ... is built from the sources on disk" (exit 0).
# Should say: error[pending-rebuild] naming LEVEL (its README has untracked-env-changed for UNdeclared variables and records
# rerun-if-env-changed variables in run ledgers, but a declared variable's new value is not compared). Exits 1 while missed.
JUDGE=${JUDGE:-/tmp/judge3}; mkdir -p "$JUDGE"; . "$(dirname "$0")/../verdicts-2026-12-07/lib.sh"
W=/tmp/judge3/repro-w/03; rm -rf $W; mkdir -p $W; P=$W/proj
export LEVEL=2
setup(){ mkdir -p $P/src $P/.cargo; cd $P
printf '[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n' > .cargo/config.toml
printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
cat > build.rs <<'M'
fn main() {
    println!("cargo:rerun-if-env-changed=LEVEL");
    let l = std::env::var("LEVEL").unwrap_or("0".into());
    std::fs::write(std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("level.rs"), format!("const LEVEL: u32 = {};\n", l)).unwrap();
}
M
printf 'include!(concat!(env!("OUT_DIR"), "/level.rs"));\nfn main(){ println!("{}", LEVEL); }\n' > src/main.rs; }
edit(){ touch .e; }
BUILD='[ -e .e ] || LEVEL=1 cargo build -j1'; SBUILD='cargo build -j1'; RML='target .e'; BIN='target/debug/app'; CHANGED=pending-rebuild # an env finding names the run
judge cargo-declared-env || { echo "   app prints $($P/target/debug/app); fingerprint: $(grep -o '"RerunIfEnvChanged[^}]*}' $P/target/debug/.fingerprint/app-*/run-build-script-build-script-build.json)"; exit 1; }
