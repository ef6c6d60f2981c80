#!/bin/bash
# Cargo: after `cargo build`, the user edits Cargo.toml in a way that changes how the binary is compiled, and does not rebuild:
#   profile:  [profile.dev] opt-level = 0 -> 2
#   features: [features] default = ["fast"] -> default = []   (main.rs prints "fast"/"slow" by cfg!(feature = "fast"))
# The next `cargo build` recompiles app (`Compiling app`), the binary differs from the one on disk. Truth: stale.
# stalecheck: "No findings: every binary in .../target is built from the sources on disk" (exit 0). Should say: error
# (pending-rebuild: Cargo.toml changed the unit's profile / feature set recorded in its fingerprint), fix `cargo build`.
# usage: $0 [profile|features]. Exits 1 while missed.
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
V=${1:-profile}; W=$JUDGE/repro-w/04-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/src; cd $P
case $V in
profile) printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n[profile.dev]\nopt-level = 0\n' > Cargo.toml
  printf 'fn main() { let mut s = 0u64; for i in 0..std::env::args().count() as u64 * 1000 { s += i * i; } println!("{}", s); }\n' > src/main.rs;;
features) printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n[features]\ndefault = ["fast"]\nfast = []\n' > Cargo.toml
  printf 'fn main() { if cfg!(feature = "fast") { println!("fast") } else { println!("slow") } }\n' > src/main.rs;;
esac; }
case $V in
profile) edit(){ sed -i 's/opt-level = 0/opt-level = 2/' Cargo.toml; touch .e; };;
features) edit(){ sed -i 's/default = \["fast"\]/default = []/' Cargo.toml; touch .e; };;
esac
BUILD='[ -e .e ] || cargo build -q -j1'; SBUILD='cargo build -q -j1'; RML='target .e'; BIN=target/debug/app; CHANGED=Cargo.toml
judge cargo-manifest-$V; r=$?
echo "   next cargo build says: $(cd $P && cargo build -j1 2>&1 | grep -m1 -E 'Compiling|Fresh|Finished' | sed 's/^ *//')"
exit $([ $r = 0 ] && echo 0 || echo 1)
