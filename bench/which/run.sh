#!/usr/bin/env bash
# Speed of `stalecheck which` on a generated ELF of at least 1 GiB with a symbol table (200,000
# functions with distinct strings), a large .nv_fatbin section (70%: real nvcc 13 containers relabelled
# with other SM architectures, as a fat binary for many GPUs) and bulk read-only strings (15%); against
# the read floor `cat FILE >/dev/null`, warm. The fixture archives' own kernel.o is linked in too.
# The same binary stripped is measured too. Prints the ratios and peak RSS.
# Usage: bench/which/run.sh [SIZE_MIB]   (default 1100)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
fx="$repo/testdata/cuda"
size_mib=${1:-1300}
out="$repo/bench/out/which"
mkdir -p "$out"
cd "$out"
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)"; exit 1; }

(cd "$repo" && CGO_ENABLED=0 go build -o "$out/stalecheck" ./cmd/stalecheck)

if [ ! -f big ] || [ "$(stat -c %s big)" -lt $((size_mib * 1024 * 1024)) ] || [ "${REGEN:-}" = 1 ]; then
  echo "generating a ${size_mib} MiB ELF in $out ..."
  # 200,000 functions, each with its own string literal.
  awk 'BEGIN { for (i = 0; i < 200000; i++) printf "const char *f%d(void) { return \"bench string %d of the symbol table\"; }\n", i, i }' > syms.c
  cc -c -O1 -ffunction-sections syms.c -o syms.o
  # A fat binary for many GPUs: real nvcc 13 containers relabelled with other SM architectures (70% of
  # the file), plus bulk read-only data shaped like string tables (15%).
  (cd "$repo" && go run ./bench/which/genfatbin -from "$fx/multi/kernel.o" -bytes $(( size_mib * 1024 * 1024 * 70 / 100 )) -o "$out/big.fatbin")
  head -c $(( size_mib * 1024 * 1024 * 15 / 100 * 3 / 4 )) /dev/urandom | base64 -w 0 | tr '+' '\000' > bulk.bin
  cat > big.s <<ASM
	.section .nv_fatbin,"a"
	.balign 8
	.incbin "big.fatbin"
	.section .rodata.bulk,"a"
	.incbin "bulk.bin"
ASM
  printf '\t.section .note.GNU-stack,"",@progbits\n' >> big.s
  cc -c big.s -o big.o
  cat > main.c <<'C'
#include <stdio.h>
int groth16_run(int n);
const char *f0(void);
int main(int argc, char **argv) { (void)argv; if (argc > 5) return groth16_run(1); puts(f0()); return 0; }
C
  cat > stubs.c <<'C'
#include <stddef.h>
static void *h;
void **__cudaRegisterFatBinary(void *f) { (void)f; return &h; }
void __cudaRegisterFatBinaryEnd(void **x) { (void)x; }
void __cudaUnregisterFatBinary(void **x) { (void)x; }
void __cudaRegisterFunction(void) {}
int __cudaPushCallConfiguration(void) { return 0; }
int __cudaPopCallConfiguration(void) { return 0; }
int __cudaLaunchKernel(void) { return 0; }
int __cudaGetKernel(void) { return 0; }
int cudaMalloc(void **p, size_t n) { (void)p; (void)n; return 1; }
int cudaFree(void *p) { (void)p; return 0; }
int cudaMemcpy(void) { return 0; }
int cudaMemset(void) { return 0; }
C
  cc -O1 main.c syms.o big.o stubs.c -L "$fx/linkorder/b" -lgroth16_cuda -lstdc++ -o big -Wl,--no-gc-sections
  strip -o big.stripped big
  rm -f bulk.bin big.fatbin syms.c
fi
ls -l big big.stripped

a="$fx/linkorder/a/libgroth16_cuda.a"; b="$fx/linkorder/b/libgroth16_cuda.a"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timeit() { # runs "$@" 7 times, prints the median wall ms
  for i in 1 2 3 4 5 6 7; do
    s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 ))
  done | median
}
for f in big big.stripped; do
  cat "$f" >/dev/null; cat "$f" >/dev/null   # warm the page cache
  floor=$(timeit cat "$f")
  which_ms=$(timeit ./stalecheck which "$f" --candidate "$a" --candidate "$b")
  rss=$( { /usr/bin/time -v ./stalecheck which "$f" --candidate "$a" --candidate "$b" >/dev/null; } 2>&1 | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}')
  # Peak anonymous memory (heap, stacks), sampled: mapped file pages count in RSS but are page cache.
  ./stalecheck which "$f" --candidate "$a" --candidate "$b" >/dev/null & pid=$!
  anon=0
  while kill -0 $pid 2>/dev/null; do
    v=$(awk '/RssAnon/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0); [ "${v:-0}" -gt "$anon" ] && anon=$v; sleep 0.005
  done
  answer=$(./stalecheck which "$f" --candidate "$a" --candidate "$b" | sed -n 3p)
  printf '%-13s size %5d MiB  cat %5d ms  which %5d ms  ratio %.2f  peak RSS %d MiB (mapped file included), peak anonymous %d MiB\n   %s\n' \
    "$f" $(( $(stat -c %s "$f") / 1048576 )) "$floor" "$which_ms" "$(echo "$which_ms / $floor" | bc -l)" $((rss / 1024)) $((anon / 1024)) "$answer"
done
