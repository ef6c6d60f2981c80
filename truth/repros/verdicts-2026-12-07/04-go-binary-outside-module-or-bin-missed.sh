#!/bin/bash
# Go cgo program built with `go build -o build/app .` (a common output folder; not the module folder or bin/).
# include/ext.h (reached through #cgo CFLAGS -I${SRCDIR}/include, which Go's cache does not hash) is edited;
# `go build -o build/app .` reuses the cached object, so build/app keeps EXTV 5 while a scratch build has 6.
# stalecheck check: "No findings, but nothing to judge either" (exit 0); `stalecheck run --binary build/app`
# runs the stale binary instead of refusing (exit 125). The same edit with -o app or -o bin/app is caught.
# Exits 1 while missed.
. "$(dirname "$0")/lib.sh"
export GOFLAGS=-mod=mod GOPROXY=off
W=/tmp/judge/repro-w/04; rm -rf $W; mkdir -p $W; P=$W/proj
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
BUILD='go build -o build/app .'; SBUILD='GOCACHE=$(mktemp -d) go build -o build/app .'; RML=build; BIN=build/app
edit(){ sed -i 's/EXTV 5/EXTV 6/' include/ext.h; }; CHANGED=ext.h
judge go-output-in-build-folder; r=$?
"$SC" check $P 2>&1 | tail -1
(cd $P && "$SC" run -q --binary build/app -- ./build/app >/dev/null 2>&1); rr=$?
echo "   stalecheck run --binary build/app exit: $rr (125 = refused as stale)"
[ $r = 0 ] && [ $rr = 125 ] || exit 1
