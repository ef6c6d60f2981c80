#!/usr/bin/env bash
# Speed benchmark of `stalecheck check`.
#
#   bench/run.sh                 # build, generate (once), measure, print the table
#   UNITS=2000 FILES=200000 RUNS=10 REGEN=0 bench/run.sh
#   NO_BUILD=1 NO_INSTALL=1 bench/run.sh   # a machine without Go or network: prebuilt bench/out binaries
#
# 1. Builds stalecheck and the generator into bench/out/ (git-ignored).
# 2. Generates a synthetic Cargo 1.95 workspace + target/release (bench/gentarget) once into
#    bench/out/tree; it is reused while the parameters and the generator's sources are unchanged.
# 3. Warms the page cache, then times, warm, `stalecheck check --format json WS >/dev/null` against
#    the stat floor `find TARGET -printf '%s %T@\n' >/dev/null` (hyperfine when installed, else a
#    loop timed with `date +%s%N`, the median of RUNS >= 10 runs) and prints the ratio (target <= 2x).
# 4. Peak RSS of the check (`/usr/bin/time -v`; target <= 200 MB).
# 5. The real example examples/seed-two-copies, built in a temporary copy: `stalecheck check` against a
#    no-op `cargo build --release` (target: no slower).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/bench/out
UNITS=${UNITS:-2000}
FILES=${FILES:-200000}
SEED=${SEED:-1}
RUNS=${RUNS:-10}
[ "$RUNS" -ge 10 ] || RUNS=10
mkdir -p "$OUT"
ORIG_CARGO_HOME=${CARGO_HOME:-}
cargo_env() { if [ -n "$ORIG_CARGO_HOME" ]; then export CARGO_HOME=$ORIG_CARGO_HOME; else unset CARGO_HOME; fi; }

say() { printf '%s\n' "$*" >&2; }

have_root() { [ "$(id -u)" = 0 ]; }
ensure_tool() { # ensure_tool CMD PACKAGE
	command -v "$1" >/dev/null 2>&1 && return 0
	if [ "${NO_INSTALL:-0}" != 1 ] && have_root && command -v apt-get >/dev/null 2>&1; then
		say "installing $2 (apt-get)"
		apt-get install -y "$2" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y "$2" >/dev/null 2>&1; } || true
	fi
	command -v "$1" >/dev/null 2>&1
}

# --- 1. build -------------------------------------------------------------------------------------
if [ "${NO_BUILD:-0}" = 1 ] || ! command -v go >/dev/null 2>&1; then
	# A machine without Go: use binaries built elsewhere (CGO_ENABLED=0 go build -o bench/out/...).
	[ -x "$OUT/stalecheck" ] && [ -x "$OUT/gentarget" ] || { say "no go and no prebuilt bench/out/{stalecheck,gentarget}"; exit 2; }
	say "using the prebuilt $OUT/stalecheck and $OUT/gentarget"
else
	say "building stalecheck and gentarget"
	CGO_ENABLED=0 go build -o "$OUT/stalecheck" ./cmd/stalecheck
	go build -o "$OUT/gentarget" ./bench/gentarget/cmd/gentarget
fi
SC=$OUT/stalecheck

# --- 2. generate (cached) -------------------------------------------------------------------------
TREE=$OUT/tree
STAMP="units=$UNITS files=$FILES seed=$SEED gen=$(sha256sum "$OUT/gentarget" | cut -c1-16)"
if [ "${REGEN:-0}" = 1 ] || [ ! -f "$OUT/tree.stamp" ] || [ "$(cat "$OUT/tree.stamp")" != "$STAMP" ]; then
	say "generating the tree ($UNITS units, $FILES files) into $TREE"
	rm -rf "$TREE" "$OUT/tree.stamp"
	"$OUT/gentarget" -out "$TREE" -units "$UNITS" -files "$FILES" -seed "$SEED" >"$OUT/tree.txt"
	echo "$STAMP" >"$OUT/tree.stamp"
else
	say "reusing $TREE ($STAMP)"
fi
cat "$OUT/tree.txt" >&2
WS=$TREE/ws
TARGET=$WS/target
export CARGO_HOME=$TREE/cargo-home # registry sources of the generated tree
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR CARGO_BUILD_BUILD_DIR

# --- timing helpers -------------------------------------------------------------------------------
HF=""
if ensure_tool hyperfine hyperfine; then HF=hyperfine; fi
ensure_tool /usr/bin/time time || true

# measure NAME CMD... : prints "MEDIAN_MS CPU_MS": the median wall time of RUNS runs (after 2 warm-up
# runs) and the mean user+system CPU time ("n/a" without hyperfine). $PREPARE, when set, runs before
# each run, untimed.
measure() {
	local name=$1
	shift
	if [ -n "$HF" ]; then
		local js=$OUT/hf-$name.json prep=()
		[ -n "${PREPARE:-}" ] && prep=(--prepare "$PREPARE")
		hyperfine -N --warmup 2 --runs "$RUNS" "${prep[@]}" --export-json "$js" -i -n "$name" "$(printf '%q ' "$@")" >&2
		awk '
			match($0, /"median": *[0-9.e+-]+/) { split(substr($0, RSTART, RLENGTH), a, ":"); med = a[2] }
			match($0, /"user": *[0-9.e+-]+/)   { split(substr($0, RSTART, RLENGTH), a, ":"); usr = a[2] }
			match($0, /"system": *[0-9.e+-]+/) { split(substr($0, RSTART, RLENGTH), a, ":"); sys = a[2] }
			END { printf "%.1f %.1f\n", med * 1000, (usr + sys) * 1000 }' "$js"
		return
	fi
	local i t0 t1 ts=()
	for ((i = 0; i < RUNS + 2; i++)); do
		[ -n "${PREPARE:-}" ] && bash -c "$PREPARE"
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		t1=$(date +%s%N)
		[ "$i" -ge 2 ] && ts+=($(((t1 - t0) / 1000)))
	done
	printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {m = (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%.1f n/a\n", m/1000}'
}

peak_mb() { # peak RSS in MB of one run
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {printf "%.1f\n", $2/1024}'
	else
		echo "n/a"
	fi
}

num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
ratio() { if num "$1" && num "$2"; then awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; else echo "n/a"; fi; }
verdict() { if num "$1"; then awk -v v="$1" -v lim="$2" 'BEGIN { if (v + 0 <= lim + 0) print "ok"; else print "OVER" }'; else echo "?"; fi; }

# --- 3. synthetic tree: check vs the stat floor ---------------------------------------------------
say "warming the page cache"
export XDG_STATE_HOME=$OUT/state # stalecheck's content-evidence cache, kept apart from the user's
for _ in 1 2; do
	find "$TREE" -printf '%s %T@\n' >/dev/null
	"$SC" check --format json "$WS" >/dev/null || true
done
NFILES=$(find "$TARGET" -type f | wc -l)
set +e
"$SC" check --format json "$WS" >"$OUT/check.json"
CHECK_RC=$?
set -e
ERRORS=$(grep -c '"severity": "error"' "$OUT/check.json" || true)
SUMMARY=$(tr -d '\n ' <"$OUT/check.json" | grep -o '"summary":{[^}]*}' || true)

say "timing the stat floor: find $TARGET -printf '%s %T@\\n'"
read -r FLOOR FLOOR_CPU < <(measure floor find "$TARGET" -printf '%s %T@\n')
say "timing stalecheck check --format json $WS (content-evidence cache warm: the usual case)"
read -r CHECK CHECK_CPU < <(export XDG_STATE_HOME=$OUT/state && measure check "$SC" check --format json "$WS")
say "timing the same with no content-evidence cache (a first run)"
read -r COLD COLD_CPU < <(export XDG_STATE_HOME=$OUT/state-cold PREPARE="rm -rf '$OUT/state-cold'" && measure check-cold "$SC" check --format json "$WS")
say "timing stalecheck check --no-native (no archive, object or binary is opened)"
read -r NONAT NONAT_CPU < <(export XDG_STATE_HOME=$OUT/state && measure check-no-native "$SC" check --no-native --format json "$WS")
RSS=$(export XDG_STATE_HOME=$OUT/state && peak_mb "$SC" check --format json "$WS")
RSS_COLD=$(rm -rf "$OUT/state-cold" && export XDG_STATE_HOME=$OUT/state-cold && peak_mb "$SC" check --format json "$WS")
LOAD=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

# --- 5. the real example --------------------------------------------------------------------------
EX_CHECK="n/a" EX_CARGO="n/a" EX_RSS="n/a" EX_FIND="n/a" EX_CHECK_CPU="n/a" EX_CARGO_CPU="n/a" EX_COLD="n/a"
if command -v cargo >/dev/null 2>&1; then
	EXDIR=$(mktemp -d /tmp/stalecheck-bench-example.XXXXXX)
	trap 'rm -rf "$EXDIR"' EXIT
	cp -r examples/seed-two-copies "$EXDIR/ws"
	say "building examples/seed-two-copies in $EXDIR/ws"
	if (cd "$EXDIR/ws" && cargo_env && CARGO_NET_OFFLINE=true cargo build --release -q); then
		(cd "$EXDIR/ws" && cargo_env && CARGO_NET_OFFLINE=true cargo build --release -q) # the next builds are no-ops
		read -r EX_FIND _ < <(measure ex-floor find "$EXDIR/ws/target" -printf '%s %T@\n')
		read -r EX_CHECK EX_CHECK_CPU < <(cargo_env && measure ex-check "$SC" check --format json "$EXDIR/ws")
		read -r EX_COLD _ < <(cargo_env && export XDG_STATE_HOME=$OUT/state-cold PREPARE="rm -rf '$OUT/state-cold'" && measure ex-check-cold "$SC" check --format json "$EXDIR/ws")
		read -r EX_CARGO EX_CARGO_CPU < <(cd "$EXDIR/ws" && cargo_env && export CARGO_NET_OFFLINE=true && measure ex-cargo cargo build --release -q)
		EX_RSS=$(cargo_env && peak_mb "$SC" check --format json "$EXDIR/ws")
	else
		say "the example did not build; skipping it"
	fi
fi

# --- table ----------------------------------------------------------------------------------------
R1=$(ratio "$CHECK" "$FLOOR")
R1C=$(ratio "$COLD" "$FLOOR")
R1N=$(ratio "$NONAT" "$FLOOR")
R3=$(ratio "$EX_CHECK" "$EX_CARGO")
R3C=$(ratio "$EX_COLD" "$EX_CARGO")
{
	echo
	echo "stalecheck check benchmark  ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, load $LOAD, timer: ${HF:-date loop}, median of $RUNS warm runs)"
	echo "synthetic tree: $(grep -o 'packages.*' "$OUT/tree.txt" | head -1)"
	echo "                $NFILES files under $TARGET"
	echo "                check exit status $CHECK_RC, error findings $ERRORS, $SUMMARY"
	echo
	printf '%-48s %10s %10s %10s %7s %7s\n' "measure" "wall" "cpu" "target" "ratio" "verdict"
	printf '%-48s %10s %10s %10s %7s %7s\n' "------------------------------------------------" "----------" "----------" "----------" "-------" "-------"
	printf '%-48s %7s ms %7s ms %10s %7s %7s\n' "find -printf '%s %T@' (stat floor)" "$FLOOR" "$FLOOR_CPU" "" "1.00" ""
	printf '%-48s %7s ms %7s ms %10s %7s %7s\n' "stalecheck check --format json" "$CHECK" "$CHECK_CPU" "<= 2x" "$R1" "$(verdict "$R1" 2)"
	printf '%-48s %7s ms %7s ms %10s %7s %7s\n' "  same, no content-evidence cache (first run)" "$COLD" "$COLD_CPU" "<= 2x" "$R1C" "$(verdict "$R1C" 2)"
	printf '%-48s %7s ms %7s ms %10s %7s %7s\n' "  same, --no-native" "$NONAT" "$NONAT_CPU" "" "$R1N" ""
	printf '%-48s %7s MB %10s %10s %7s %7s\n' "stalecheck peak RSS (cache warm)" "$RSS" "" "<= 200 MB" "" "$(verdict "$RSS" 200)"
	printf '%-48s %7s MB %10s %10s %7s %7s\n' "stalecheck peak RSS (no cache)" "$RSS_COLD" "" "<= 200 MB" "" "$(verdict "$RSS_COLD" 200)"
	printf '%-48s %7s ms %10s %10s %7s %7s\n' "example: find -printf (stat floor)" "$EX_FIND" "" "" "" ""
	printf '%-48s %7s ms %7s ms %10s %7s %7s\n' "example: no-op cargo build --release" "$EX_CARGO" "$EX_CARGO_CPU" "" "1.00" ""
	printf '%-48s %7s ms %7s ms %10s %7s %7s\n' "example: stalecheck check --format json" "$EX_CHECK" "$EX_CHECK_CPU" "<= 1x" "$R3" "$(verdict "$R3" 1)"
	printf '%-48s %7s ms %10s %10s %7s %7s\n' "  same, no content-evidence cache" "$EX_COLD" "" "<= 1x" "$R3C" "$(verdict "$R3C" 1)"
	printf '%-48s %7s MB %10s %10s %7s %7s\n' "example: stalecheck peak RSS" "$EX_RSS" "" "<= 200 MB" "" "$(verdict "$EX_RSS" 200)"
	if [ "$ERRORS" != 0 ]; then
		echo
		echo "WARNING: stalecheck reported $ERRORS error finding(s) on the clean generated tree; see $OUT/check.json"
	fi
} | tee "$OUT/result.txt"
