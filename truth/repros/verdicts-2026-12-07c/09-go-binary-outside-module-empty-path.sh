#!/bin/bash
# Repo layout proj/go.work-less: module in proj/app (go.mod), cgo header in proj/include, binary built with `go build -o ../bin/app .`
# (a common layout: binaries in the repo's bin/). Edit include/val.h; go does not hash it; bin/app prints 1, scratch 2. Truth: stale.
# stalecheck check proj (or proj/app): "No findings, but nothing to judge either: the records in  declare no build step" -- an empty
# path in the sentence; with -v: "no Go binary of module ... found in proj/app or proj/app/bin". `stalecheck check proj/bin` and
# `stalecheck which proj/bin/app` answer with Cargo wording ("no Cargo.toml at or above ...bin"). Exit 0 for a stale binary.
# Should: name the folder in the message, and offer a way to point at the binary (or find ELF Go binaries with this module's build
# info one folder up, as README says Make/Ninja programs are looked up "up to four folders above"). Exits 1 while the message has
# the empty "in  declare" or the stale binary gets no finding.
JUDGE=${JUDGE:-/tmp/judge3}; mkdir -p "$JUDGE"; . "$(dirname "$0")/../verdicts-2026-12-07/lib.sh"
W=/tmp/judge3/repro-w/09; rm -rf $W; mkdir -p $W; P=$W/proj
export GOCACHE=$W/gocache
setup(){ mkdir -p $P/app $P/include $P/bin; cd $P
printf '#define VAL 1\n' > include/val.h
printf 'module example.com/app\n\ngo 1.21\n' > app/go.mod
printf 'package main\n\n// #cgo CFLAGS: -I${SRCDIR}/../include\n// #include "val.h"\n// static int val(void){ return VAL; }\nimport "C"\nimport "fmt"\n\nfunc main() { fmt.Println(int(C.val())) }\n' > app/main.go; }
edit(){ printf '#define VAL 2\n' > include/val.h; }
BUILD='cd app && go build -o ../bin/app .'; SBUILD="rm -rf $W/gocache; $BUILD"; RML='bin/app'; BIN=bin/app; CHANGED=val.h
judge go-bin-outside-module; r=$?
out=$("$SC" check $P 2>&1); echo "$out" | tail -1 | sed 's/^/   /'
"$SC" which $P/bin/app 2>&1 | sed 's/^/   which: /'
echo "   bin/app prints $($P/bin/app)"
echo "$out" | grep -q 'in  declare' && exit 1; exit $r
