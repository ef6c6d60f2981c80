#!/bin/bash
# Meson: executable('app') linking shared_library('shl'). Edit the body of shl/s.c (exported symbols unchanged),
# `meson compile -C build`: libshl.so is relinked; Meson's symbol-extractor edge (libshl.so.p/libshl.so.symbols,
# rule SHSYM, restat = 1) keeps the .symbols file's old mtime so app is not relinked, as intended. `ninja -n`:
# "no work to do"; app and libshl.so equal a scratch build. stalecheck: error[pending-rebuild] on build/libshl.so
# ("the next build redoes libshl.so.p/libshl.so.symbols: what is on disk is old"). Every Meson project with a
# shared library gets this error after any edit of the library. Same cause as 03 (restat). Exits 1 while wrong.
. "$(dirname "$0")/lib.sh"
W=/tmp/judge2/repro-w/04; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P/shl; cd $P
printf "project('app', 'c')\nshl = shared_library('shl', 'shl/s.c')\nexecutable('app', 'main.c', link_with: shl)\n" > meson.build
echo 'int shf(void){return 1000;}' > shl/s.c
printf '#include <stdio.h>\nint shf(void);\nint main(){printf("%%d\\n",shf());return 0;}\n' > main.c
meson setup build; }
BUILD='meson compile -C build'; SBUILD='meson setup build && meson compile -C build'; RML=build; BIN='build/app build/libshl.so'
edit(){ sed -i 's/1000/1001/' shl/s.c; }; CHANGED=s.c
judge meson-shared-lib-body-edit || { (cd $P && ninja -C build -n | tail -1); exit 1; }
