#!/bin/bash
# Go cgo: build, edit include/ext.h (reached via #cgo CFLAGS -I${SRCDIR}/include; Go's cache does not hash it),
# `go build -o app .` again (Go reuses the cached object and only touches app's mtime), THEN run stalecheck
# for the first time. Truth: app is stale (prints 5, scratch prints 6). stalecheck: "No findings ... built from
# the sources on disk" -- and it records the edited header as the baseline of the old build ID, so every later
# check also says no findings. (Make/Ninja/Cargo flag the same edit without a prior check.) Exits 1 while missed.
. "$(dirname "$0")/lib.sh"
export XDG_STATE_HOME=/tmp/judge/repro-w/05-state; rm -rf $XDG_STATE_HOME
export GOFLAGS=-mod=mod GOPROXY=off
W=/tmp/judge/repro-w/05; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/include; cd $P; echo 'module example.com/app
go 1.26' > go.mod; echo '#define EXTV 5' > include/ext.h
cat > main.go <<'G'
package main

/*
#cgo CFLAGS: -O2 -I${SRCDIR}/include
#include "ext.h"
static int ext(void) { return EXTV; }
*/
import "C"
import "fmt"

func main() { fmt.Println(C.ext()) }
G
}
BUILD='go build -o app .'; SBUILD='GOCACHE=$(mktemp -d) go build -o app .'; RML=app; BIN=app
edit(){ sed -i 's/EXTV 5/EXTV 6/' include/ext.h; }; CHANGED=ext.h
PRECHECK=0 judge go-header-edit-no-prior-check; r=$?
echo "   second check: $("$SC" check $P 2>&1 | grep -cE '^ *error') error(s)"
exit $([ $r = 0 ] && echo 0 || echo 1)
