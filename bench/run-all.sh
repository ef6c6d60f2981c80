#!/usr/bin/env bash
# Every pairing of issue 12's target table, as interleaved A/B pairs (A, B, A, B, …), medians of wall
# and CPU (user+system) time, and the ratio B/A, on the real workspace make-real.sh builds.
#
#   bench/run-all.sh REAL_DIR                 # REAL_DIR: the folder given to ../shared/bench/make-real.sh
#   RUNS=21 bench/run-all.sh REAL_DIR         # pairs per row (default 11)
#   BIG=bench/out/which/big bench/run-all.sh REAL_DIR   # also the >= 1 GiB ELF rows (bench/which/run.sh
#                                                        # generates it; big.stripped beside it)
#   TREE=bench/out/tree bench/run-all.sh REAL_DIR       # also the generated-tree row (bench/run.sh)
#   STALECHECK=/path/to/stalecheck ...                  # a prebuilt binary instead of go build
#   SKIP_LEDGER=1 ...                                   # leave out the ledger rows (e.g. for an old
#                                                        # build whose `runs` takes minutes there)
#   SHARED_STATE=~/.local/state/stalecheck ...          # also the first check after a rebuild with a copy
#                                                        # of that state folder's files (other workspaces')
#
# Rows (target in brackets): check vs the stat floor find -printf [<= 3x]; check vs Cargo's no-op
# `cargo build --release --workspace` [<= 0.5x]; `run -q -- true` vs `true` [<= +30 ms]; after a
# one-line edit and rebuild of the app crate (NO_EDIT=1 skips these), the first check vs the floor
# [<= 2x], the second [a cache hit; <= 2x], run vs true [<= +100 ms], with SHARED_STATE the first check
# again with a copy of that state folder [<= 2x]; which on the
# workspace's debug binary (target/debug/app, ~58 MB) vs cat [<= 3x cat + 10 ms]; which on BIG and
# BIG.stripped vs cat [<= 2x]; check on TREE vs its floor [<= 1.5x]; the ledger: bytes per record of
# 10,000 runs of 20 builds and `runs` over them [<= 4 KB, <= 100 ms]. Warm page cache and warm state
# folder (XDG_STATE_HOME=bench/out/state-all, kept apart from the user's). Results also in
# bench/out/run-all.txt. Nothing else is built in REAL_DIR: cargo's no-op build there must find nothing to do.
set -euo pipefail
[ $# -eq 1 ] || { sed -n '2,20p' "$0"; exit 2; }
REAL=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$repo/bench/out
mkdir -p "$out"
RUNS=${RUNS:-11}
export CARGO_NET_OFFLINE=true XDG_STATE_HOME=$out/state-all
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR CARGO_BUILD_BUILD_DIR STALECHECK_LEDGER
sc=${STALECHECK:-$out/stalecheck}
if [ -z "${STALECHECK:-}" ]; then
	(cd "$repo" && CGO_ENABLED=0 go build -o "$sc" ./cmd/stalecheck && go build -o "$out/ledgerfill" ./bench/ledgerfill)
fi
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)"; exit 2; }

# one CMD...: runs it once, prints "WALL_US CPU_MS".
one() {
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -o "$out/.time" -f '%U %S' "$@" >/dev/null 2>&1 || true
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000)) $(awk '{printf "%d", ($1 + $2) * 1000}' "$out/.time")"
}
med() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# pair LABEL TARGET_KIND LIMIT :: A... :: B... : interleaved pairs; a row of the table.
# TARGET_KIND: ratio (B/A <= LIMIT), plus (B - A <= LIMIT ms), catplus (B <= 3 A + LIMIT ms).
rows=()
prep=""
pair() {
	local label=$1 kind=$2 limit=$3
	shift 4
	local a=() b=()
	while [ "$1" != "::" ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	"${a[@]}" >/dev/null 2>&1 || true; "${b[@]}" >/dev/null 2>&1 || true # warm
	local i wa=() wb=() ca=() cb=() w c
	for ((i = 0; i < RUNS; i++)); do
		read -r w c < <(one "${a[@]}"); wa+=("$w"); ca+=("$c")
		[ -z "$prep" ] || "$prep" # untimed: what the row measures B after (an edit and a rebuild)
		read -r w c < <(one "${b[@]}"); wb+=("$w"); cb+=("$c")
	done
	local ma mb mca mcb
	ma=$(printf '%s\n' "${wa[@]}" | med); mb=$(printf '%s\n' "${wb[@]}" | med)
	mca=$(printf '%s\n' "${ca[@]}" | med); mcb=$(printf '%s\n' "${cb[@]}" | med)
	rows+=("$(awk -v l="$label" -v k="$kind" -v lim="$limit" -v a="$ma" -v b="$mb" -v ca="$mca" -v cb="$mcb" 'BEGIN {
		a /= 1000; b /= 1000; r = (a > 0) ? b / a : 0
		if (k == "ratio") { t = sprintf("<= %sx", lim); ok = (r <= lim) }
		else if (k == "plus") { t = sprintf("<= +%s ms", lim); ok = (b - a <= lim) }
		else { t = sprintf("<= 3x + %s ms", lim); ok = (b <= 3 * a + lim) }
		printf "%-44s %9.1f %9.1f %7.2f %7d %7d %7.2f  %-14s %s", l, a, b, r, ca, cb, (ca > 0) ? cb / ca : 0, t, ok ? "ok" : "OVER" }')")
	echo "${rows[-1]}" >&2
}

cd "$REAL"
[ -d target/release ] || { echo "$REAL has no target/release: build it with make-real.sh"; exit 2; }
echo "warming the page cache and the state folder" >&2
for _ in 1 2; do find target -printf '%s %T@\n' >/dev/null; "$sc" check --format json . >/dev/null || true; done
cargo build --release --workspace -q 2>/dev/null || true

pair "check --format json vs stat floor" ratio 3 :: find target -printf '%s %T@\n' :: "$sc" check --format json .
pair "check --format json vs cargo no-op build" ratio 0.5 :: cargo build --release --workspace -q :: "$sc" check --format json .
truebin=$(type -P true)
"$sc" run -q -- "$truebin" >/dev/null 2>&1 || true
pair "run -q -- true vs true" plus 30 :: "$truebin" :: "$sc" run -q -- "$truebin"
# After a one-line edit of the app crate and `cargo build --release --workspace` (each pair's B runs
# after its own edit and rebuild, untimed; the file is put back and rebuilt at the end): the first
# check (it reads what changed), the second (a cache hit), and run's pre-run check. Skipped with NO_EDIT=1.
main_rs=crates/app/src/main.rs
if [ "${NO_EDIT:-0}" != 1 ] && [ -f "$main_rs" ]; then
	cp "$main_rs" "$out/main.rs.orig"
	trap 'cp "$out/main.rs.orig" "$REAL/$main_rs"; (cd "$REAL" && cargo build --release --workspace -q 2>/dev/null) || true' EXIT
	edit_rebuild() {
		echo "// bench edit $(date +%s%N)" >>"$main_rs"
		cargo build --release --workspace -q 2>/dev/null
		sleep 0.2 # past the verdict cache's racy window, as a person's next command is
	}
	edit_rebuild_check() { edit_rebuild; "$sc" check --format json . >/dev/null 2>&1 || true; }
	prep=edit_rebuild
	pair "first check after edit+rebuild vs stat floor" ratio 2 :: find target -printf '%s %T@\n' :: "$sc" check --format json .
	prep=edit_rebuild_check
	pair "second check after edit+rebuild vs stat floor" ratio 2 :: find target -printf '%s %T@\n' :: "$sc" check --format json .
	prep=edit_rebuild
	pair "run -q -- true after edit+rebuild vs true" plus 100 :: "$truebin" :: "$sc" run -q -- "$truebin"
	if [ -n "${SHARED_STATE:-}" ]; then
		# The same first check with a state folder that holds other workspaces' baselines and caches
		# (a copy of SHARED_STATE's files, verdicts and ledger left out): what a user's shared
		# $XDG_STATE_HOME/stalecheck costs a check that misses the verdict cache.
		rm -rf "$out/state-shared" && mkdir -p "$out/state-shared/stalecheck"
		find "$SHARED_STATE" -maxdepth 1 -type f ! -name 'ledger.db*' ! -name '*.lock' -exec cp {} "$out/state-shared/stalecheck/" \;
		mb=$(du -sm "$out/state-shared/stalecheck" | cut -f1)
		XDG_STATE_HOME=$out/state-shared pair "first check after edit+rebuild, shared state folder (${mb} MB) vs stat floor" ratio 2 :: find target -printf '%s %T@\n' :: "$sc" check --format json .
	fi
	prep=""
fi
if [ -f target/debug/app ]; then
	pair "which target/debug/app ($(($(stat -c %s target/debug/app) >> 20)) MiB) vs cat" catplus 10 :: cat target/debug/app :: "$sc" which target/debug/app
fi
if [ -n "${BIG:-}" ]; then
	fx=$repo/testdata/cuda
	for f in "$BIG" "$BIG.stripped"; do
		[ -f "$f" ] || continue
		pair "which $(basename "$f") ($(($(stat -c %s "$f") >> 20)) MiB) vs cat" ratio 2 :: cat "$f" :: \
			"$sc" which "$f" --candidate "$fx/linkorder/a/libgroth16_cuda.a" --candidate "$fx/linkorder/b/libgroth16_cuda.a"
	done
fi
if [ -n "${TREE:-}" ] && [ -d "$TREE/ws/target" ]; then
	pair "check generated tree vs its stat floor" ratio 1.5 :: find "$TREE/ws/target" -printf '%s %T@\n' :: \
		env CARGO_HOME="$TREE/cargo-home" "$sc" check --format json "$TREE/ws"
fi

# Ledger: size of 10,000 runs of 20 builds, and `runs` over them (against the 100 ms target).
led=$out/ledger-10k.db
if [ "${SKIP_LEDGER:-0}" = 1 ]; then :; else
if [ ! -f "$led" ]; then "${LEDGERFILL:-$out/ledgerfill}" -ledger "$led" -n 10000 -builds 20 >"$out/ledger-10k.txt"; fi
bpr=$(sed -n 's/.*bytes_per_record=\([0-9]*\).*/\1/p' "$out/ledger-10k.txt")
pair "runs over 10,000 records vs true (+100 ms)" plus 100 :: "$truebin" :: "$sc" runs --ledger "$led"
rows+=("$(printf '%-44s %9s %9d %7s %7s %7s %7.2f  %-14s %s' "ledger bytes per record (10,000 runs, 20 builds)" - "$bpr" - - - "$(awk -v b="$bpr" 'BEGIN {print b / 4096}')" "<= 4096 B" "$([ "$bpr" -le 4096 ] && echo ok || echo OVER)")")
fi

{
	echo "$("$sc" --version 2>/dev/null | head -1 || true); $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS interleaved pairs per row; $REAL"
	printf '%-44s %9s %9s %7s %7s %7s %7s  %-14s %s\n' "pairing (A vs B)" "A ms" "B ms" "B/A" "A cpu" "B cpu" "cpu B/A" "target" "verdict"
	printf '%s\n' "${rows[@]}"
} | tee "$out/run-all.txt"
