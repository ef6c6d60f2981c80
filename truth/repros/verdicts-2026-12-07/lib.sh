# shared helpers for repro scripts
set -u
export CARGO_NET_OFFLINE=true
JUDGE=${JUDGE:-/tmp/judge}
SC=${SC:-$JUDGE/sc}
export XDG_STATE_HOME=${XDG_STATE_HOME:-$JUDGE/state}
# sections of a binary's code/data, path-independent enough
secs() { # bin -> digest of the stripped binary (no debug info, no build-id notes)
  local b="$1" t; t=$(mktemp)
  objcopy --strip-all -R .note.gnu.build-id -R .note.go.buildid "$b" "$t" 2>/dev/null || cp "$b" "$t"
  sha256sum < "$t" | cut -c1-16; rm -f "$t"
}
# scratch PROJ "rm-list" "build cmd" BIN : build same sources from scratch at the same path, compare
# prints STALE or FRESH
scratch() {
  local p="$1" rml="$2" cmd="$3" bin="$4"
  local inc="$p.__inc"
  mv "$p" "$inc"; cp -a "$inc" "$p"
  ( cd "$p" && eval "rm -rf $rml" && eval "$cmd" ) >"$p.__scratch.log" 2>&1 || { echo "SCRATCH-BUILD-FAILED"; cat "$p.__scratch.log" | tail -5; rm -rf "$p"; mv "$inc" "$p"; return; }
  local a="" b="" x
  for x in $bin; do a="$a $(secs "$inc/$x")"; b="$b $(secs "$p/$x")"; done
  rm -rf "$p"; mv "$inc" "$p"
  if [ "$a" = "$b" ]; then echo FRESH; else echo STALE; fi
}
# run sc check; print summary of error findings (rule + first subject)
scj() { # path [extra args]
  local p="$1"; shift
  "$SC" check "$p" --format json "$@" 2>/dev/null | python3 -c '
import json,sys
try: d=json.load(sys.stdin)
except Exception as e: print("NOJSON",e); sys.exit()
for f in d.get("findings",[]):
    print(f.get("severity"), f.get("rule"), f.get("system",""), (f.get("subjects") or [""])[0] if isinstance(f.get("subjects"),list) else f.get("subjects"))
'
}
sc_errors() { scj "$@" | grep '^error' || true; }
# judge: needs P (project dir), BUILD (incremental build cmd run in P), RML (rm list for scratch), SBUILD (scratch build cmd, default BUILD), BIN (relative), CHANGED (file name substring expected in an error), functions setup and edit
judge() {
  local name="$1"
  rm -rf "$P" "$P.__inc"; mkdir -p "$(dirname "$P")"
  setup >/dev/null 2>&1 || { echo "$name: setup failed"; return 2; }
  ( cd "$P" && eval "$BUILD" ) >$JUDGE/last-build.log 2>&1 || { echo "$name: first build failed"; tail $JUDGE/last-build.log; return 2; }
  [ "${PRECHECK:-1}" = 1 ] && "$SC" check "$P" >/dev/null 2>&1
  sleep 1.05
  ( cd "$P" && edit ) >$JUDGE/last-edit.log 2>&1
  ( cd "$P" && eval "$BUILD" ) >$JUDGE/last-build2.log 2>&1 || echo "(incremental build failed)"
  local findings errs truth
  local t0=$(date +%s.%N)
  findings=$(scj "$P" ${SCARGS:-})
  local t1=$(date +%s.%N); CHECK_S=$(python3 -c "print(round($t1-$t0,2))")
  errs=$(echo "$findings" | grep '^error' || true)
  truth=$(scratch "$P" "$RML" "${SBUILD:-$BUILD}" "$BIN")
  echo "== $name: truth=$truth (check ${CHECK_S}s)"
  echo "$findings" | sed 's/^/   sc: /'
  local v=RIGHT
  if [ "$truth" = STALE ]; then
    if [ -z "$errs" ]; then v=MISSED
    elif ! echo "$errs" | grep -q -- "${CHANGED:-@@}"; then v=WRONG-REASON; fi
  elif [ "$truth" = FRESH ]; then
    [ -n "$errs" ] && v=FALSE-ERROR
  else v=UNKNOWN; fi
  echo "   verdict: $v"
  [ "$v" = RIGHT ]
}
