#!/bin/bash
# Out-of-tree make: objects and app in build/, built with `make -C build -f ../Makefile` (VPATH to src/),
# no depfiles. Edit src/inc/f.h, rebuild: make redoes nothing, build/app keeps FACTOR 3 (scratch: 5).
# `stalecheck check .` : "No findings, but nothing to judge either" (exit 0): the Makefile folder has no
# built objects beside it and build/ has no Makefile, so the build is never read. `stalecheck check build`
# exits 2 with a Cargo-only message ("no Cargo.toml ... not a Cargo target folder").
# (With -MMD depfiles the incremental build is right, but stalecheck still judges nothing.) Exits 1 while missed.
. "$(dirname "$0")/lib.sh"
W=/tmp/judge2/repro-w/02; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/src/inc $P/build; cd $P
echo '#define FACTOR 3' > src/inc/f.h
printf '#include "f.h"\nint util(int x){return x*FACTOR;}\n' > src/util.c
printf '#include <stdio.h>\nint util(int);\nint main(int c,char**v){printf("%%d\\n",util(c));return 0;}\n' > src/main.c
cat > Makefile <<'M'
SRC := $(dir $(lastword $(MAKEFILE_LIST)))src
VPATH = $(SRC)
CFLAGS = -O2 -I$(SRC)/inc
app: main.o util.o
	$(CC) -o $@ $^
M
}
BUILD='make -C build -f ../Makefile'; RML='build/*'; BIN=build/app; CHANGED=f.h
edit(){ sed -i 's/FACTOR 3/FACTOR 5/' src/inc/f.h; }
judge make-out-of-tree-build || { "$SC" check "$P" 2>&1 | tail -1; exit 1; }
