#!/usr/bin/env bash
# The regression question on the bundled example (docs/walkthrough.md shows one run of it): a release
# build and an instrumented one (--features timing), each timed ten times with `stalecheck run`, the
# second while two CPU hogs load the machine; then `stalecheck diff` of the two builds and the report
# page. The clone stays clean: everything happens in a temporary copy.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/stalecheck-walk.XXXXXX")
export CARGO_NET_OFFLINE=true XDG_STATE_HOME="$work/state" STALECHECK_LEDGER="$work/ledger.db"
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR CARGO_BUILD_BUILD_DIR
step() { printf '\n== %s\n' "$*"; }
(cd "$repo" && go build -o "$work/stalecheck" ./cmd/stalecheck)
sc="$work/stalecheck"
cp -r "$repo/examples/seed-two-copies" "$work/ws"
rm -rf "$work/ws/target"
cd "$work/ws"
n=${WALK_N:-3000000}

step "1. cargo build --release, then ten timed runs on a quiet machine"
cargo build -q --release
"$sc" run -q --name prove --warmup 1 --repeat 10 --output null -- ./target/release/gpu-prover "$n"
"$sc" runs --group-by build | head -3

step "2. cargo build --release --features timing, then ten timed runs while two CPU hogs run"
cargo build -q --release --features timing
(timeout 60 sh -c 'while :; do :; done' & timeout 60 sh -c 'while :; do :; done' & wait) &
hogs=$!
sleep 1
"$sc" run -q --name prove --warmup 1 --repeat 10 --output null -- ./target/release/gpu-prover "$n"
pkill -P "$hogs" timeout 2>/dev/null || true
kill "$hogs" 2>/dev/null || true
"$sc" runs --group-by build | tail -3

step "3. stalecheck diff of the two builds"
keys=$("$sc" runs --group-by build --format json | python3 -c 'import json,sys; print(" ".join(b["build"] for b in json.load(sys.stdin)["builds"]))')
# shellcheck disable=SC2086
"$sc" diff $keys || true

step "4. stalecheck report"
"$sc" report -o "$work/report.html"
echo "page: $work/report.html"
