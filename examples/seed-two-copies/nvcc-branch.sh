#!/usr/bin/env bash
# Exercises the example's nvcc branch on a GPU machine that has nvcc but no cargo: the build script,
# compiled here with rustc, runs as Cargo would run it (OUT_DIR, CARGO_FEATURE_TIMING) without and with
# the timing feature; a host program links each copy of libgroth16_cuda.a and runs on the GPU; then
# stalecheck proves which copy each program holds. Not part of CI (no GPU there).
#
#   On the build machine:  examples/seed-two-copies/nvcc-branch.sh prepare   (writes bench/out/device/)
#   On the GPU machine:    examples/seed-two-copies/nvcc-branch.sh run OUT   (needs bench/out/device/)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
d="$repo/bench/out/device"
case "${1:-}" in
prepare)
  mkdir -p "$d"
  rustc --edition 2021 -O "$repo/examples/seed-two-copies/prover-sys/build.rs" -o "$d/build-script"
  (cd "$repo" && CGO_ENABLED=0 go build -o "$d/stalecheck" ./cmd/stalecheck)
  printf '#include <stdio.h>\n#include <stdint.h>\nuint64_t groth16_prove(uint32_t n);\nint main(void) { printf("proof digest %%016llx\\n", (unsigned long long)groth16_prove(1u << 20)); return 0; }\n' > "$d/main.c"
  ;;
run)
  out=${2:?usage: nvcc-branch.sh run OUT}
  nvcc --version | tail -2
  cd "$repo/examples/seed-two-copies/prover-sys"
  for cfg in plain timing; do
    o="$out/$cfg"; mkdir -p "$o"
    if [ "$cfg" = timing ]; then export CARGO_FEATURE_TIMING=1; else unset CARGO_FEATURE_TIMING; fi
    OUT_DIR="$o" "$d/build-script" > "$o/output"
    cat "$o/output"
    cuobjdump -lelf -lptx "$o/libgroth16_cuda.a"
    gcc -c "$d/main.c" -o "$o/main.o"
    g++ "$o/main.o" "$o/libgroth16_cuda.a" -L"$(dirname "$(command -v nvcc)")/../lib64" -lcudart -o "$o/app"
    (cd "$o" && ./app)
  done
  for cfg in plain timing; do
    "$d/stalecheck" which "$out/$cfg/app" --candidate "$out/plain/libgroth16_cuda.a" --candidate "$out/timing/libgroth16_cuda.a"
    "$d/stalecheck" verify "$out/$cfg/app" --contains CUZK_TIMING || true
  done
  ;;
*) echo "usage: $0 prepare | run OUT" >&2; exit 2 ;;
esac
