#!/bin/bash
# Make with CFLAGS = -MMD (no -MP) and -include main.d. main.c stops including old.h, and old.h is deleted.
# `make` now fails: "No rule to make target 'old.h', needed by 'main.o'" (main.d still names it), so app is
# stale. stalecheck's errors are right, but both fixes are `make -C DIR`, which fails the same way; the second
# says "Make will try to remake main.o on the next build". A working fix: rm main.d (or add -MP), then make.
set -u
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep09.XXXX); export XDG_STATE_HOME=$T/state
P=$T/p; mkdir -p $P; cd $P
printf '#include <stdio.h>\n#include "old.h"\nint main(void){ printf("%%d\\n", OLD); return 0; }\n' > main.c
echo '#define OLD 1' > old.h
printf 'CFLAGS = -O2 -g -MMD\napp: main.o\n\t$(CC) -o $@ $^\n-include main.d\n' > Makefile
make >/dev/null; "$SC" check $P >/dev/null
sleep 1.1
printf '#include <stdio.h>\nint main(void){ printf("%%d\\n", 2); return 0; }\n' > main.c; rm old.h
make >/dev/null 2>&1; echo "make: exit $?"
out=$("$SC" check $P --format json); rc=$?
echo "stalecheck says (exit $rc):"
echo "$out" | python3 -c 'import json,sys
for f in json.load(sys.stdin)["findings"]: print("  ",f["severity"],f["rule"],f["subjects"][0].split("/")[-1],"| fix:",f.get("fix"))'
ok=1
for fix in $(echo "$out" | python3 -c 'import json,sys
for f in json.load(sys.stdin)["findings"]:
  if f["severity"]=="error": print(f["fix"].replace(" ","\x01"))' | sort -u); do
  fix=${fix//$'\x01'/ }
  ( sh -c "$fix" >/dev/null 2>&1 ) && echo "   fix '$fix' works" || { echo "   fix '$fix' fails: $(sh -c "$fix" 2>&1 | grep -m1 "No rule")"; ok=0; }
done
echo "should say: the same errors with a fix that works, e.g. rm main.d && make -C DIR (main.d names the deleted old.h; -MP avoids it)"
rm -rf $T
[ $ok = 1 ] && exit 0 || exit 1
