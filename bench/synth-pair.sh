#!/usr/bin/env bash
# Two stalecheck binaries on the synthetic 28,905-unit tree (../shared/bench/make-synth.sh), in
# interleaved rounds: each round times `check --no-cache --format json` of OLD, then of NEW (each with
# a warm state folder of its own), then the stat floor (`find target -printf '%s %T@\n'`); printed
# are every round's seconds and peak RSS (KB, /usr/bin/time's %M) and the medians. With FRESH=1 the
# checks are the cache's cold path instead: `check --format json` with an empty state folder each time
# (the recording, the read cache and the store included).
#
#   bench/synth-pair.sh OLD NEW [ROUNDS] [SYNTH_DIR]      # SYNTH_DIR: make-synth.sh's folder (/tmp/synth)
set -euo pipefail
old=$1 new=$2 rounds=${3:-7} dir=${4:-/tmp/synth}
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
cd "$dir"
args=(check --no-cache --format json)
[ "${FRESH:-}" = 1 ] && args=(check --format json)
if [ "${FRESH:-}" != 1 ]; then
  # Warm each state folder (the read cache, content evidence) and the page cache first, untimed.
  XDG_STATE_HOME="$state/A" "$old" "${args[@]}" >/dev/null 2>&1 || true
  XDG_STATE_HOME="$state/B" "$new" "${args[@]}" >/dev/null 2>&1 || true
fi
for i in $(seq "$rounds"); do
  for which in A B; do
    bin=$old
    [ "$which" = B ] && bin=$new
    [ "${FRESH:-}" = 1 ] && rm -rf "${state:?}/$which"
    XDG_STATE_HOME="$state/$which" /usr/bin/time -f "$which %e %M" "$bin" "${args[@]}" 2>&1 >/dev/null | grep "^$which " || true
  done
  /usr/bin/time -f "F %e 0" find target -printf '%s %T@\n' 2>&1 >/dev/null | grep "^F " || true
done | awk '
  { t[$1] = t[$1] " " $2; m[$1] = m[$1] " " $3; n[$1]++; v[$1, n[$1]] = $2; r[$1, n[$1]] = $3 }
  function median(a, k, c,   i, j, x, s) {
    for (i = 1; i <= c; i++) s[i] = a[k, i]
    for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (s[j] + 0 < s[i] + 0) { x = s[i]; s[i] = s[j]; s[j] = x }
    return c % 2 ? s[(c + 1) / 2] : (s[c / 2] + s[c / 2 + 1]) / 2
  }
  END {
    name["A"] = "old"; name["B"] = "new"; name["F"] = "floor"
    for (k in t) printf "%-5s s:%s | rss KB:%s\n", name[k], t[k], m[k]
    fa = median(v, "F", n["F"])
    for (k in name) if (k != "F" && n[k]) printf "%-5s median %.2f s (%.2fx the floor %.2f s), median peak RSS %d MB\n", name[k], median(v, k, n[k]), median(v, k, n[k]) / fa, fa, median(r, k, n[k]) / 1024
  }'
