#!/usr/bin/env bash
# The founding story in one command: build stalecheck, copy this example to a temporary folder (the
# clone stays clean, so the demo can run again), build it without and with the `timing` feature, edit
# the native source as the story's engineer did, rebuild (Cargo says Fresh), and run `stalecheck check`.
# Uses nvcc and groth16_cuda.cu when nvcc is on PATH, else cc and the C stand-in groth16_cuda.c.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/stalecheck-demo.XXXXXX")
export CARGO_NET_OFFLINE=true
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR CARGO_BUILD_BUILD_DIR
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "building stalecheck into $work"
(cd "$repo" && go build -o "$work/stalecheck" ./cmd/stalecheck)
cp -r "$repo/examples/seed-two-copies" "$work/ws"
rm -rf "$work/ws/target"
cd "$work/ws"
src=prover-sys/cuda/groth16_cuda.c
if command -v nvcc >/dev/null && [ -z "${STALECHECK_DEMO_NO_NVCC:-}" ]; then
  src=prover-sys/cuda/groth16_cuda.cu
  echo "nvcc found: build.rs compiles $src"
else
  echo "no nvcc: build.rs compiles the C stand-in $src"
fi

step "1. baseline: cargo build --release"
cargo build --release
step "2. instrumented: cargo build --release --features timing (a second prover-sys-<hash> folder appears)"
cargo build --release --features timing
ls -d target/release/build/prover-sys-*/out/libgroth16_cuda.a

step "3. edit the native source, as the story did (a new TIMING_V2 print)"
sleep 0.05
sed -i 's|^#ifdef CUZK_TIMING$|#ifdef CUZK_TIMING\n    fprintf(stderr, "TIMING_V2 msm phase split\\n");|' "$src"
grep -n TIMING_V2 "$src"

step "4. rebuild: cargo build --release --features timing (Cargo says Fresh: build.rs declares only itself)"
cargo build -v --release --features timing 2>&1 | grep -E 'Fresh|Compiling|Finished' 
echo "binary holds TIMING_V2: $(grep -c TIMING_V2 target/release/gpu-prover || true) time(s)"

step "5. stalecheck check"
status=0
"$work/stalecheck" check || status=$?
echo "(exit status $status: 1 means error findings)"

step "6. stalecheck check --format json: rules found"
"$work/stalecheck" check --format json | grep -o '"rule": "[^"]*"' | sort | uniq -c || true
echo
echo "The copy stays in $work/ws; rerun: $work/stalecheck check $work/ws"
