#!/bin/bash
# Ninja (hand-written): the cc rule passes its flags through a response file: command = gcc @$out.rsp ..., rspfile = $out.rsp,
# rspfile_content = -O2 -DVAL=1. The user changes rspfile_content to -DVAL=2 in build.ninja and does not run ninja. Ninja hashes
# rspfile_content with the command, so `ninja -n` says it redoes main.o and app. Truth: stale (scratch prints 2, app prints 1).
# stalecheck: "No findings: every binary in ... is built from the sources on disk" (exit 0). Changing -O0 to -O2 in the `command`
# itself is caught (pending-rebuild on build.ninja: "command line changed"). Should say the same for rspfile_content.
# Exits 1 while missed.
JUDGE=${JUDGE:-/tmp/judge4}; mkdir -p "$JUDGE"; LIB=${LIB:-$(dirname "$0")/../verdicts-2026-12-07/lib.sh}; . "$LIB"
W=$JUDGE/repro-w/10; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P; cd $P
printf '#include <stdio.h>\nint main(){printf("%%d\\n",VAL);return 0;}\n' > main.c
printf 'rule cc\n  command = gcc @$out.rsp -MD -MF $out.d -c $in -o $out\n  rspfile = $out.rsp\n  rspfile_content = -O2 -DVAL=1\n  depfile = $out.d\n  deps = gcc\nrule link\n  command = gcc $in -o $out\nbuild main.o: cc main.c\nbuild app: link main.o\n' > build.ninja; }
edit(){ sed -i 's/-DVAL=1/-DVAL=2/' build.ninja; touch .e; }
BUILD='[ -e .e ] || ninja -j1'; SBUILD='ninja -j1'; RML='*.o *.d *.rsp app .ninja_log .ninja_deps .e'; BIN=app; CHANGED=build.ninja
judge ninja-rspfile-content; r=$?
echo "   ninja -n: $(cd $P && ninja -n | tr '\n' ' ')"
exit $([ $r = 0 ] && echo 0 || echo 1)
