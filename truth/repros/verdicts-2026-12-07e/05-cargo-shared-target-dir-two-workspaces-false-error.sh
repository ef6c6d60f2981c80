#!/bin/bash
# Two unrelated Cargo workspaces a/ and b/ share one CARGO_TARGET_DIR (a common setup to share build caches).
# Both built, nothing edited afterwards: every binary is fresh. `stalecheck check b` says error[pending-rebuild]
# on shared/debug/a: it resolves a's dep-info path src/main.rs against b's workspace (b/src/main.rs is newer
# than a's build). `stalecheck check a` says error[changed-with-older-mtime] on shared/debug/b (a/src/main.rs is
# another file than b's). Exit 1 on both; should be exit 0, no error.
set -u
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep05.XXXX); export XDG_STATE_HOME=$T/state CARGO_NET_OFFLINE=true
export CARGO_TARGET_DIR=$T/shared
for n in a b; do
  mkdir -p $T/$n/src
  printf '[package]\nname = "%s"\nversion = "0.1.0"\nedition = "2021"\n[workspace]\n' $n > $T/$n/Cargo.toml
  echo "fn main(){ println!(\"$n\"); }" > $T/$n/src/main.rs
done
( cd $T/a && cargo build -q ) && sleep 1.1 && ( cd $T/b && cargo build -q ) || exit 2
( cd $T/a && cargo build -q && cd $T/b && cargo build -q )   # both Fresh
bad=0
for n in b a; do
  out=$("$SC" check $T/$n); rc=$?
  echo "stalecheck check $n (exit $rc):"; echo "$out" | grep -E '^\S|error|-->' | grep -v '^stalecheck' | sed 's/^/   /'
  [ $rc -eq 0 ] || bad=1
done
echo "should say: no error for either workspace (both binaries are built from their own sources; cargo build says Fresh for both)"
[ -n "${KEEP:-}" ] || rm -rf $T
exit $bad
