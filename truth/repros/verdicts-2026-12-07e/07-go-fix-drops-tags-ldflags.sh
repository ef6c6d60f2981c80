#!/bin/bash
# Go cgo program built with `go build -tags fast` (variant tags, default), or `-trimpath -ldflags "-X main.ver=9"`
# (variant ldflags). Variant goflags (GOFLAGS=-tags=fast exported) is right: the fix works while GOFLAGS stays set. A source it compiles is
# edited, no rebuild. stalecheck's error is right, but its fix is `go build -a -o ./app example.com/g`, which
# drops the flags the binary's build info records (-tags=fast / -ldflags / -trimpath): following it builds
# another program (val 100 instead of 2, or ver "dev" instead of 9), and stalecheck then calls that fresh.
set -u
V=${1:-tags}
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep07.XXXX); export XDG_STATE_HOME=$T/state GOFLAGS=-mod=mod
P=$T/g; mkdir -p $P; cd $P
go mod init example.com/g >/dev/null 2>&1
cat > main.go <<'G'
package main
// int k(void) { return 7; }
import "C"
import "fmt"
var ver = "dev"
func main(){ fmt.Println(int(C.k()), ver, val()) }
G
printf '//go:build fast\n\npackage main\nfunc val() int { return 1 }\n' > fast.go
printf '//go:build !fast\n\npackage main\nfunc val() int { return 100 }\n' > slow.go
case $V in
  tags) build() { go build -tags fast -o "$1" .; }; B="go build -tags fast -o app .";;
  ldflags) build() { go build -tags fast -trimpath -ldflags "-X main.ver=9" -o "$1" .; }; B='go build -tags fast -trimpath -ldflags "-X main.ver=9" -o app .';;
  goflags) export GOFLAGS="-mod=mod -tags=fast"; build() { go build -o "$1" .; }; B="GOFLAGS=-tags=fast go build -o app . (right: the fix works while GOFLAGS stays set)";;
esac
build app || exit 2
"$SC" check $P >/dev/null
sleep 1.1; sed -i 's/return 1 /return 2 /' fast.go
build $T/scratch.app
want=$($T/scratch.app)
out=$("$SC" check $P --format json); rc=$?
fix=$(echo "$out" | python3 -c 'import json,sys
for f in json.load(sys.stdin)["findings"]:
  if f["severity"]=="error": print(f["fix"]); break')
echo "stalecheck says (exit $rc): fix: $fix"
sh -c "$fix" >/dev/null 2>&1
got=$(./app)
echo "after that fix ./app prints: '$got'; the intended build ($B) prints: '$want'"
echo "stalecheck check after the fix: exit $("$SC" check $P >/dev/null; echo $?)"
echo "should say: a fix with the flags the binary was built with (e.g. go build -tags fast -o ./app .), so that the fixed binary prints '$want'"
rm -rf $T
[ "$got" = "$want" ] && exit 0 || exit 1
