#!/usr/bin/env bash
# stalecheck's ground-truth harness: real Cargo workspaces with native code, real edits, judged against
# a from-scratch build and against Cargo's own Dirty set. `truth/run.sh --quick` (a few minutes) runs in
# the tests; `truth/run.sh` runs every shape with random sequences (≥ 1,000 states) as a benchmark.
# Flags: --seed N, --random N, --shapes a,b, -j N, --details FILE, --pure, --list, --layout new, --coverage
# (truth/cmd/truth).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_NET_OFFLINE=true
bin=$(mktemp -d)/stalecheck
go build -o "$bin" ./cmd/stalecheck
exec go run ./truth/cmd/truth --stalecheck "$bin" "$@"
