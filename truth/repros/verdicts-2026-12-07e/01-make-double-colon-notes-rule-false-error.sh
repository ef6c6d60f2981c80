#!/bin/bash
# Make double-colon rules: `app:: main.o` links, `app:: notes.txt` only echoes. notes.txt edited, make run
# (it runs only the echo recipe, as it will on every make from now on). app is the same as a scratch build.
# stalecheck must not say error (its fix `make -C DIR` never clears it).
set -u
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep01.XXXX); export XDG_STATE_HOME=$T/state
P=$T/p; mkdir -p $P; cd $P
printf '#include <stdio.h>\nint main(void){ printf("hi\\n"); return 0; }\n' > main.c
echo a > notes.txt
printf 'CFLAGS = -O2 -g -MMD\napp:: main.o\n\t$(CC) -o $@ $^\napp:: notes.txt\n\t@echo "notes changed"\n-include main.d\n' > Makefile
make >/dev/null; "$SC" check $P >/dev/null
sleep 1.1; echo b > notes.txt
make >/dev/null; make >/dev/null      # make, then the fix stalecheck prints (make -C DIR) once more
cp -a $P $T/s; ( cd $T/s && rm -f *.o *.d app && make >/dev/null )   # scratch build in a copy
cmp -s <(objcopy -O binary --only-section=.text $P/app /dev/stdout) <(objcopy -O binary --only-section=.text $T/s/app /dev/stdout) && truth=FRESH || truth=STALE
echo "truth (scratch build's .text vs incremental): $truth"
out=$("$SC" check $P); rc=$?
echo "stalecheck says (exit $rc):"; echo "$out" | grep -E '^\s+(error|warning)|fix:' | sed 's/^/   /'
"$SC" run -q -- $P/app >/dev/null 2>&1; echo "   (stalecheck run -- ./app exits $?: it refuses the fresh binary)"
echo "should say: no error, exit 0 (app is built from the sources on disk; notes.txt only feeds an echo recipe of the second double-colon rule)"
rm -rf $T
[ "$truth" = FRESH ] && [ $rc -eq 0 ] && exit 0 || exit 1
