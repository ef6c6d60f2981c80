#!/bin/bash
# Cargo: after `cargo build`, the user edits .cargo/config.toml and does not rebuild:
#   rustflags: appends `rustflags = ["--cfg", "fast"]` to [build]   (main.rs: #[cfg(fast)] fn v() -> 2, else 1)
#   env:       [env] LEVEL = "1" -> "2"                              (main.rs: env!("LEVEL"))
# The next `cargo build` recompiles app and the binary differs from the one on disk. Truth: stale.
# stalecheck: "No findings: every binary in .../target is built from the sources on disk" (exit 0). (A changed
# rerun-if-env-changed variable in the environment is judged: verdicts-2026-12-07c/03.) Should say: error, .cargo/config.toml changed the
# rustflags / [env] value the unit was built with, fix `cargo build`. usage: $0 [rustflags|env]. Exits 1 while missed.
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
V=${1:-rustflags}; W=$JUDGE/repro-w/05-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/src $P/.cargo; cd $P
printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n[lints.rust]\nunexpected_cfgs = "allow"\n' > Cargo.toml
printf '[build]\njobs = 1\n' > .cargo/config.toml
case $V in
rustflags) printf '#[cfg(fast)] fn v() -> i32 { 2 }\n#[cfg(not(fast))] fn v() -> i32 { 1 }\nfn main() { println!("{}", v()); }\n' > src/main.rs;;
env) printf '[env]\nLEVEL = "1"\n' >> .cargo/config.toml; printf 'fn main() { println!("{}", env!("LEVEL")); }\n' > src/main.rs;;
esac; }
case $V in
rustflags) edit(){ printf 'rustflags = ["--cfg", "fast"]\n' >> .cargo/config.toml; touch .e; };;
env) edit(){ sed -i 's/LEVEL = "1"/LEVEL = "2"/' .cargo/config.toml; touch .e; };;
esac
BUILD='[ -e .e ] || cargo build -q'; SBUILD='cargo build -q'; RML='target .e'; BIN=target/debug/app; CHANGED=config
judge cargo-config-$V; r=$?
echo "   next cargo build says: $(cd $P && cargo build 2>&1 | grep -m1 -E 'Compiling|Fresh|Finished' | sed 's/^ *//')"
exit $([ $r = 0 ] && echo 0 || echo 1)
