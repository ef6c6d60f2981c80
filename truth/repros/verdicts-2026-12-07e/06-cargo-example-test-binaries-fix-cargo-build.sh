#!/bin/bash
# Cargo package with a lib, a bin, an example and an integration test; `cargo build --all-targets`; src/lib.rs
# edited; `cargo build` (rebuilds lib and bin only). target/debug/examples/ex and the test binaries are stale
# (ex prints 1, the source says 2). stalecheck's errors on them are right, but every fix is `cargo build`, which
# does not build examples or tests: after running it the same errors remain. The example's errors also point
# (-->) at target/debug/.fingerprint/k4-<hash> instead of src/lib.rs.
set -u
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep06.XXXX); export XDG_STATE_HOME=$T/state CARGO_NET_OFFLINE=true
P=$T/k4; mkdir -p $P/src $P/examples $P/tests; cd $P
printf '[package]\nname = "k4"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
echo 'pub fn v() -> u32 { 1 }' > src/lib.rs
echo 'fn main(){ println!("main {}", k4::v()); }' > src/main.rs
echo 'fn main(){ println!("ex {}", k4::v()); }' > examples/ex.rs
echo '#[test] fn t(){ assert!(k4::v() > 0); }' > tests/it.rs
cargo build -q --all-targets || exit 2
"$SC" check $P >/dev/null
sleep 1.1; sed -i 's/1 }/2 }/' src/lib.rs
cargo build -q
"$SC" check $P --format json > $T/j1; rc1=$?
cargo build -q    # the fix stalecheck prints for every finding
echo "after the printed fix, examples/ex prints: $(target/debug/examples/ex)   (src/lib.rs says 2)"
out=$("$SC" check $P --format json); rc=$?
echo "stalecheck says after the fix (exit $rc):"
echo "$out" | python3 -c 'import json,sys
for f in json.load(sys.stdin)["findings"]:
  if f["severity"]=="error": print("  ",f["rule"],"on",[r.split("/target/")[-1] for r in f["roots"]],"--> "+f["subjects"][0].split("/k4/")[-1],"| fix:",f.get("fix"))'
echo "should say: the same errors, with a fix that rebuilds these binaries (cargo build --examples / --example ex, cargo test --no-run or cargo build --all-targets), --> src/lib.rs"
bad=0; echo "$out" | grep -q '"fix": "cargo build"' && bad=1
rm -rf $T; exit $bad
