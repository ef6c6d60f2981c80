#!/bin/bash
# Cargo package built with `cargo build --release --target-dir ../out` (a target folder outside the package).
# (a) src/main.rs edited, no rebuild; `stalecheck check --target-dir ../out .`: the error is right, but its fix is
#     `cargo build --release`, which builds into ./target and leaves ../out/release/k8 stale (the error stays).
# (b) fresh build, `stalecheck run -- ../out/release/k8` from the package folder: exit 125, "nothing has been
#     built here yet: no build folder at <pkg>/target ... run cargo build first", without running the fresh binary
#     (README: run finds the workspace from the program's folder; ../out/release is a Cargo target folder).
set -u
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep12.XXXX); export XDG_STATE_HOME=$T/state CARGO_NET_OFFLINE=true
P=$T/k8; mkdir -p $P/src; cd $P
printf '[package]\nname = "k8"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
echo 'fn main(){ println!("v1"); }' > src/main.rs
cargo build -q --release --target-dir ../out || exit 2
bad=0
"$SC" run -q -- ../out/release/k8 >$T/o 2>$T/e; rc=$?
echo "(b) fresh: stalecheck run -- ../out/release/k8: exit $rc, printed '$(cat $T/o)' $(head -c 200 $T/e)"
[ $rc -eq 0 ] || bad=1
sleep 1.1; sed -i 's/v1/v2/' src/main.rs
fix=$("$SC" check --target-dir ../out . --format json | python3 -c 'import json,sys
for f in json.load(sys.stdin)["findings"]:
  if f["severity"]=="error": print(f["fix"]); break')
echo "(a) stale: stalecheck check --target-dir ../out . fix: $fix"
sh -c "$fix" >/dev/null 2>&1
echo "    after the fix ../out/release/k8 prints $(../out/release/k8) (source says v2); check exits $("$SC" check --target-dir ../out . >/dev/null; echo $?)"
[ "$(../out/release/k8)" = v2 ] || bad=1
echo "should say: (a) fix cargo build --release --target-dir ../out; (b) run the fresh binary (exit 0, prints v1)"
rm -rf $T; exit $bad
