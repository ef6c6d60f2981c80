#!/bin/bash
# Go: after `go build -o app .` the user edits Go source (or an embedded file) that is not in a cgo package, and does not rebuild:
#   sub:    internal/u/u.go (an imported package of the module) edited
#   trim:   same, built with -trimpath
#   main:   main.go of a pure-Go main package edited
#   embed:  data.txt named by //go:embed edited
#   replace: dep/dep.go of a nested module (replace example.com/dep => ./dep) edited
#   cgosub: the main package uses cgo (it is judged), the imported pure-Go package internal/u is edited
# `go build` would relink; app prints the old value. Truth: stale (scratch build differs). stalecheck: "No findings: the one binary
# judged (-v names it) is built from the sources on disk, as far as the records show." (exit 0). An edit of a .go file OF a cgo
# package is caught (pending-rebuild naming it), so only cgo packages' files are compared. Should say: error (pending-rebuild naming
# the edited file), fix `go build -o app .`; or, if pure-Go inputs are out of scope, not claim the binary is built from the sources
# on disk. usage: $0 [sub|trim|main|embed|replace|cgosub]. Exits 1 while missed.
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
V=${1:-sub}; W=$JUDGE/repro-w/06-$V; rm -rf $W; mkdir -p $W; P=$W/proj
export GOCACHE=$JUDGE/gocache GOFLAGS=-mod=mod GOTOOLCHAIN=local
TP=; [ $V = trim ] && TP=-trimpath
setup(){ mkdir -p $P/internal/u; cd $P
printf 'module example.com/app\n\ngo 1.21\n' > go.mod
printf 'package u\n\nfunc K(x int) int { return x * 3 }\n' > internal/u/u.go
case $V in
sub|trim|main) printf 'package main\n\nimport (\n\t"fmt"\n\t"os"\n\t"example.com/app/internal/u"\n)\n\nfunc main() { fmt.Println(u.K(len(os.Args))) }\n' > main.go;;
cgosub) printf 'package main\n\n// static int one(void){ return 1; }\nimport "C"\nimport (\n\t"fmt"\n\t"example.com/app/internal/u"\n)\n\nfunc main() { fmt.Println(u.K(int(C.one()))) }\n' > main.go;;
embed) printf 'package main\n\nimport (\n\t_ "embed"\n\t"fmt"\n)\n\n//go:embed data.txt\nvar data string\n\nfunc main() { fmt.Print(data) }\n' > main.go; printf 'one\n' > data.txt;;
replace) mkdir -p dep; printf 'module example.com/dep\n\ngo 1.21\n' > dep/go.mod; printf 'package dep\n\nfunc K(x int) int { return x * 3 }\n' > dep/dep.go
  printf 'module example.com/app\n\ngo 1.21\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ./dep\n' > go.mod
  printf 'package main\n\nimport (\n\t"fmt"\n\t"os"\n\t"example.com/dep"\n)\n\nfunc main() { fmt.Println(dep.K(len(os.Args))) }\n' > main.go;;
esac; }
edit(){ case $V in
sub|trim|cgosub) sed -i 's/x \* 3/x * 4/' internal/u/u.go; CH=u.go;;
main) sed -i 's/len(os.Args))/len(os.Args)+1)/' main.go;;
embed) printf 'two\n' > data.txt;;
replace) sed -i 's/x \* 3/x * 4/' dep/dep.go;;
esac; touch .e; }
case $V in sub|trim|cgosub) CHANGED=u.go;; main) CHANGED=main.go;; embed) CHANGED=data.txt;; replace) CHANGED=dep.go;; esac
BUILD="[ -e .e ] || go build $TP -o app ."; SBUILD="go build $TP -o app ."; RML='app .e'; BIN=app
judge go-pure-go-edit-$V || exit 1
