#!/usr/bin/env bash
# stalecheck's ground-truth harness (truth/cmd/truth). Two corpora, run side by side by default:
#   - events: every build system (Make with and without depfiles, Ninja, CMake, Meson, Go cgo, Cargo build
#     scripts with the cc crate, the cmake crate and nvcc, a -sys crate chain with a test binary, and
#     Make/Go programs linking a Cargo staticlib), each edit judged from a saved fresh state against a
#     from-scratch build, scored by reason (docs/TRUTH.md);
#   - sequences: Cargo workspaces through seeded edit sequences, judged against a from-scratch build and
#     against Cargo's own Dirty set.
# `truth/run.sh --quick` (the event corpus, each edit kind once per build system; about 2.5 minutes here,
# in /dev/shm when it has room) and `--corpus sequences --quick` (one Cargo shape's fixed sequence, about
# 1 minute alone) are what the tests run (TestEventsQuick, TestQuick); `truth/run.sh -j 2` a full run.
# Flags: --corpus all|events|sequences, --seed N, --pairs N, --repeat N, --random N, --shapes a,b,
# --projects a,b, -j N, --details FILE, --pure, --list, --layout new, --coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_NET_OFFLINE=true
bin=$(mktemp -d)/stalecheck
go build -o "$bin" ./cmd/stalecheck
exec go run ./truth/cmd/truth --stalecheck "$bin" "$@"
