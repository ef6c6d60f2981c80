#!/bin/bash
# Go module whose cgo preamble says `#cgo pkg-config: vallib` (PKG_CONFIG_PATH=proj/third/pc; vallib.pc: Cflags -I${prefix}/include);
# the macro VAL comes from third/include/vallib.h. Edit vallib.h (VAL 1 -> 2), `go build -o app .`: go does not hash that header,
# app still prints 1. Truth: stale.
# stalecheck: only warning[unreadable-record] "could not read .: #cgo pkg-config: vallib: the flags pkg-config adds are not read
# (pkg-config is not run)", listed under "Not tied to a current binary" (it is about the Go binary app), with the fix
# "remove the folder that holds it (or touch the package's sources), then cargo build: Cargo rewrites a record ..." -- Cargo advice
# for a Go build, and "remove the folder that holds it" would delete the project. Exit 0.
# Should say: run pkg-config (it already runs go list) and give untracked-input-changed on vallib.h as it does for `#cgo CFLAGS: -I...`
# (a warning that cannot tell is acceptable), with a Go-appropriate fix and tied to app. Exits 1 while the fix text names cargo
# or the stale binary gets neither an error nor a warning tied to it.
JUDGE=${JUDGE:-/tmp/judge3}; mkdir -p "$JUDGE"; . "$(dirname "$0")/../verdicts-2026-12-07/lib.sh"
W=/tmp/judge3/repro-w/07; rm -rf $W; mkdir -p $W; P=$W/proj
export GOCACHE=$W/gocache PKG_CONFIG_PATH=$P/third/pc
setup(){ mkdir -p $P/third/pc $P/third/include; cd $P
printf '#define VAL 1\n' > third/include/vallib.h
printf "prefix=$P/third\nName: vallib\nDescription: x\nVersion: 1.0\nCflags: -I\${prefix}/include\nLibs:\n" > third/pc/vallib.pc
printf 'module example.com/app\n\ngo 1.21\n' > go.mod
printf 'package main\n\n// #cgo pkg-config: vallib\n// #include "vallib.h"\n// static int val(void){ return VAL; }\nimport "C"\nimport "fmt"\n\nfunc main() { fmt.Println(int(C.val())) }\n' > main.go; }
edit(){ printf '#define VAL 2\n' > third/include/vallib.h; }
BUILD="go build -o app ."; SBUILD="rm -rf $W/gocache; $BUILD"; RML="app"; BIN=app; CHANGED=vallib.h
judge go-pkgconfig; r=$?
out=$("$SC" check $P --no-cache 2>&1); echo "$out" | sed -n '/warning\[/,/fix:/p' | sed 's/^/   /'
echo "   app prints $($P/app)"
echo "$out" | grep -q 'fix:.*cargo' && exit 1
[ $r != 0 ] && ! echo "$out" | grep -q 'vallib.h' && exit 1
exit 0
