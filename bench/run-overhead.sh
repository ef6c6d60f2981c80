#!/usr/bin/env bash
# What `stalecheck run -- true` costs over `true` alone, on the example workspace with a warm digest cache
# (issue 5: at most 50 ms).
#
#   bench/run-overhead.sh          # 50 interleaved pairs
#   RUNS=200 bench/run-overhead.sh
#   STALECHECK=/path/to/stalecheck WS=/path/to/built/workspace bench/run-overhead.sh   # no go, no cargo
#
# 1. Builds stalecheck (unless STALECHECK names a binary), copies examples/seed-two-copies to a temporary
#    folder, makes it a git work tree (so `git status` is part of the cost, as for a real user) and builds
#    it with `cargo build --release` (unless WS names a workspace already built).
# 2. Two `stalecheck run -- true` warm the digest cache, the run cache (tool versions, native
#    fingerprints) and create the SQLite ledger, all in a private XDG_STATE_HOME.
# 3. Times RUNS interleaved pairs, wall clock from bash's EPOCHREALTIME: the true executable alone, and
#    `stalecheck run -q -- true` (locate, read the build folder, check, identity, run, insert a record
#    with fsync). Prints the median and mean of each and the overhead; exits 1 when the median overhead
#    is over LIMIT_MS (50).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-50}
LIMIT_MS=${LIMIT_MS:-50}
work=$(mktemp -d "${TMPDIR:-/tmp}/stalecheck-run-overhead.XXXXXX")
trap 'rm -rf "$work"' EXIT
export CARGO_NET_OFFLINE=true XDG_STATE_HOME="$work/state"
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR CARGO_BUILD_BUILD_DIR STALECHECK_LEDGER

sc=${STALECHECK:-$work/stalecheck}
[ -n "${STALECHECK:-}" ] || (cd "$repo" && go build -o "$sc" ./cmd/stalecheck)
if [ -n "${WS:-}" ]; then
  cd "$WS"
else
  cp -r "$repo/examples/seed-two-copies" "$work/ws"
  rm -rf "$work/ws/target"
  cd "$work/ws"
  printf '/target\n' > .gitignore
  git init -q && git add -A && git -c user.name=bench -c user.email=bench@example.com commit -qm bench
  cargo build --release -q
fi

truebin=$(type -P true)
"$sc" run -q -- "$truebin"  # warm-up: caches and ledger
"$sc" run -q -- "$truebin"

us() { local s=${1%.*} f=${1#*.}; echo $((10#$s * 1000000 + 10#$f)); }
: > "$work/alone"
: > "$work/run"
for ((i = 0; i < RUNS; i++)); do
  t0=$EPOCHREALTIME; "$truebin"; t1=$EPOCHREALTIME
  echo $(($(us "$t1") - $(us "$t0"))) >> "$work/alone"
  t0=$EPOCHREALTIME; "$sc" run -q -- "$truebin"; t1=$EPOCHREALTIME
  echo $(($(us "$t1") - $(us "$t0"))) >> "$work/run"
done

stats() { sort -n "$1" | awk '{v[NR] = $1; s += $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f\n", m / 1000, s / NR / 1000}'; }
read -r alone_med alone_mean < <(stats "$work/alone")
read -r run_med run_mean < <(stats "$work/run")
records=$("$sc" runs --format json | grep -c '"stale": false' || true)
over_med=$(awk -v a="$run_med" -v b="$alone_med" 'BEGIN {printf "%.2f", a - b}')
over_mean=$(awk -v a="$run_mean" -v b="$alone_mean" 'BEGIN {printf "%.2f", a - b}')

printf 'workspace: %s; %d pairs; %d records in the ledger; %s CPUs, load %s\n' "$PWD" "$RUNS" "$records" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s median %8s ms   mean %8s ms\n' "$truebin alone" "$alone_med" "$alone_mean"
printf '%-34s median %8s ms   mean %8s ms\n' "stalecheck run -q -- $truebin" "$run_med" "$run_mean"
printf '%-34s median %8s ms   mean %8s ms   (target <= %s ms)\n' "overhead" "$over_med" "$over_mean" "$LIMIT_MS"
awk -v o="$over_med" -v l="$LIMIT_MS" 'BEGIN {exit !(o <= l)}' && echo "PASS" || { echo "FAIL: over ${LIMIT_MS} ms"; exit 1; }
