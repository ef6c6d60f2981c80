#!/bin/bash
# Meson (option('level') -> configure_file config.h, plus a custom_target gen.c from table.txt). After a full build the user runs
# `meson configure build -Dlevel=1` (the value it already has) and does not build. Meson rewrites build/meson-private/coredata.dat,
# so ninja will regenerate build.ninja, but then has nothing to rebuild (checked below: app's mtime unchanged, `ninja -n` after that
# says "no work to do"). Truth: fresh (app equals a scratch build).
# stalecheck: error[pending-rebuild] on coredata.dat: "the next build redoes build.ninja: what is on disk is old" (exit 1), and
# `stalecheck run -- ./build/app` refuses with 125. Should say: a warning (regeneration pending, cannot tell) or nothing; an error only when
# the regenerated commands differ. (With -Dlevel=4 the error is right.) usage: $0 [same|other]. Exits 1 while the verdict is wrong.
JUDGE=${JUDGE:-/tmp/judge3}; mkdir -p "$JUDGE"; . "$(dirname "$0")/../verdicts-2026-12-07/lib.sh"
V=${1:-same}; L=1; [ $V = other ] && L=4
W=/tmp/judge3/repro-w/02-$V; rm -rf $W; mkdir -p $W; P=$W/proj
setup(){ mkdir -p $P; cd $P
cat > meson.build <<'M'
project('app', 'c')
conf = configuration_data()
conf.set('LEVEL', get_option('level'))
configure_file(output: 'config.h', configuration: conf)
gen = custom_target('gen', input: 'table.txt', output: 'gen.c', command: [find_program('python3'), files('gen.py'), '@INPUT@', '@OUTPUT@'])
executable('app', 'main.c', gen)
M
printf "option('level', type: 'integer', value: 1)\n" > meson_options.txt
printf '3\n' > table.txt
printf 'import sys\nv=open(sys.argv[1]).read().strip()\nopen(sys.argv[2],"w").write("int tv(void){return %%s;}\\n"%%v)\n' > gen.py
printf '#include <stdio.h>\n#include "config.h"\nint tv(void);\nint main(){printf("%%d %%d\\n",LEVEL,tv());return 0;}\n' > main.c
meson setup build; }
edit(){ meson configure build -Dlevel=$L; touch .edited; }
BUILD='[ -e .edited ] || ninja -C build -j1'; SBUILD="meson setup -Dlevel=$L build && ninja -C build -j1"; RML='build .edited'; BIN=build/app; CHANGED=coredata
judge meson-reconfigure-$V; r=$?
"$SC" run -- $P/build/app; echo "stalecheck run exit: $?"
m0=$(stat -c %Y $P/build/app); ( cd $P && ninja -C build -j1 >/dev/null ); echo "after ninja: app mtime $([ $m0 = $(stat -c %Y $P/build/app) ] && echo unchanged || echo changed); $(cd $P && ninja -C build -n | tail -1)"
exit $([ $r = 0 ] && echo 0 || echo 1)
