#!/bin/bash
# Go cgo program whose C code uses a macro given only by the environment: built with CGO_CFLAGS=-DVAL=1, then the user's shell has
# CGO_CFLAGS=-DVAL=2 exported and no rebuild. The binary's build info records `build CGO_CFLAGS=-DVAL=1` (go version -m), and the
# next `go build` in this environment rebuilds (app prints 2 instead of 1). Truth: stale in this environment.
# stalecheck (run with CGO_CFLAGS=-DVAL=2): "No findings: the one binary judged ... is built from the sources on disk" (exit 0).
# Should say: error (or at least a warning) that CGO_CFLAGS differs from the value the binary was built with. Exits 1 while missed.
JUDGE=${JUDGE:-/tmp/judge3}; mkdir -p "$JUDGE"; . "$(dirname "$0")/../verdicts-2026-12-07/lib.sh"
W=/tmp/judge3/repro-w/04; rm -rf $W; mkdir -p $W; P=$W/proj
export GOCACHE=$W/gocache CGO_CFLAGS=-DVAL=2
setup(){ mkdir -p $P; cd $P
printf 'module example.com/app\n\ngo 1.21\n' > go.mod
printf 'package main\n\n// static int val(void){ return VAL; }\nimport "C"\nimport "fmt"\n\nfunc main() { fmt.Println(int(C.val())) }\n' > main.go; }
edit(){ touch .e; }
BUILD='[ -e .e ] || CGO_CFLAGS=-DVAL=1 go build -o app .'
SBUILD="rm -rf $W/gocache; go build -o app ."; RML='app .e'; BIN=app; CHANGED=pending-rebuild # an env finding names the binary
judge go-cgo-cflags-env || { echo "   app prints $($P/app); build info: $(go version -m $P/app | grep CGO_CFLAGS | tr -s '\t ' ' ')"; exit 1; }
