#!/bin/bash
# Go workspace: go.work at the project root uses ./app and ./clib; app (module example.com/app) imports example.com/clib, a cgo
# package with k.c. Built with `cd app && go build -o app .`, then clib/k.c edited and not rebuilt.
# Truth: app/app is stale (scratch prints 12, app prints 9). stalecheck at the go.work root: exit 2, "several unrelated builds under
# ., which share no file: go at .../app; go at .../clib; check one of them" - but they are one build: app links clib (go list -deps
# from app names example.com/clib in ./clib). `stalecheck check app` is right (error pending-rebuild naming clib/k.c). Should say:
# the go.work root is one Go build (its `use` modules), and report the error on clib/k.c for app/app.
# Exits 1 while check at the root does not exit 1 with an error naming clib/k.c.
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
W=$JUDGE/repro-w/11; rm -rf $W; mkdir -p $W; P=$W/proj
export GOCACHE=$JUDGE/gocache GOTOOLCHAIN=local GOFLAGS=
setup(){ mkdir -p $P/app $P/clib; cd $P
printf 'go 1.21\n\nuse (\n\t./app\n\t./clib\n)\n' > go.work
printf 'module example.com/clib\n\ngo 1.21\n' > clib/go.mod
printf 'package clib\n\n// int kf(int x);\nimport "C"\n\nfunc K(x int) int { return int(C.kf(C.int(x))) }\n' > clib/clib.go
printf 'int kf(int x){return x*3;}\n' > clib/k.c
printf 'module example.com/app\n\ngo 1.21\n\nrequire example.com/clib v0.0.0\n' > app/go.mod
printf 'package main\n\nimport (\n\t"fmt"\n\t"example.com/clib"\n)\n\nfunc main() { fmt.Println(clib.K(3)) }\n' > app/main.go; }
edit(){ sed -i 's/x\*3/x*4/' clib/k.c; touch .e; }
BUILD='[ -e .e ] || (cd app && go build -o app .)'; SBUILD='cd app && go build -o app .'; RML='app/app .e'; BIN=app/app; CHANGED=k.c
judge go-work-root; r=$?
"$SC" check $P >/dev/null 2>$W/err; echo "   check ROOT: exit $?: $(head -c 300 $W/err)"
echo "   check ROOT/app: $(scj $P/app | grep ^error)"
exit $([ $r = 0 ] && echo 0 || echo 1)
