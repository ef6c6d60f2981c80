#!/bin/bash
# Cargo: .cargo/config.toml sets [env] SCALE = "1"; build.rs declares rerun-if-env-changed=SCALE and passes it
# on (rustc-env). Built; nothing edited; `cargo build -v` says Fresh. stalecheck warns on this fresh build:
# warning[pending-rebuild] "the build script of k7 last ran with SCALE "1" and it is not set in this environment
# ... the next build here redoes k7-<hash>", fix `cargo build` (which does nothing: the warning stays forever,
# exit 1 with --fail-on warning). stalecheck reads .cargo/config.toml already (it knows env.SCALE), so it can
# tell that Cargo's [env] sets SCALE = "1" for the build.
set -u
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep11.XXXX); export XDG_STATE_HOME=$T/state CARGO_NET_OFFLINE=true
unset SCALE
P=$T/k7; mkdir -p $P/src $P/.cargo; cd $P
printf '[package]\nname = "k7"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
printf '[env]\nSCALE = "1"\n' > .cargo/config.toml
printf 'fn main() { println!("cargo:rerun-if-env-changed=SCALE"); println!("cargo:rustc-env=S={}", std::env::var("SCALE").unwrap_or_default()); }\n' > build.rs
echo 'fn main(){ println!("{}", env!("S")); }' > src/main.rs
cargo build -q || exit 2
cargo build -q    # the printed fix; Fresh
echo "cargo build -v says: $(cargo build -v 2>&1 | grep -m1 -oE '(Fresh|Dirty).*')"
out=$("$SC" check $P --fail-on warning); rc=$?
echo "stalecheck check --fail-on warning says (exit $rc):"; echo "$out" | grep -E '^\s+(error|warning)|fix:' | cut -c1-300 | sed 's/^/   /'
echo "should say: no finding, exit 0 (Cargo's [env] gives SCALE the value the script last ran with)"
rm -rf $T
exit $rc
