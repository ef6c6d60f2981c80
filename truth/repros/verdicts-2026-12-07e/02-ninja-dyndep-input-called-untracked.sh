#!/bin/bash
# Ninja dyndep: main.o's header data.h is an implicit input declared only through a dyndep file (main.dd,
# written by a scan edge). No depfile. data.h edited, ninja NOT run: `ninja -n` redoes main.o (ninja -t query
# main.o lists `| data.h`). Truth: stale, and a plain `ninja` fixes it.
# stalecheck says error[untracked-input-changed] "Ninja will not rebuild main.o" with a fix to add a depfile and
# rm main.o; and after a plain ninja (fresh) still warns missing-depfile. Should be pending-rebuild, fix `ninja -C DIR`.
set -u
SC=${SC:-/tmp/r5/sc}; T=$(mktemp -d /tmp/r5-rep02.XXXX); export XDG_STATE_HOME=$T/state
P=$T/p; mkdir -p $P; cd $P
printf '#include <stdio.h>\n#include "data.h"\nint main(void){ printf("%%d\\n", D); return 0; }\n' > main.c
echo '#define D 1' > data.h
cat > scan.sh <<'S'
#!/bin/sh
{ echo "ninja_dyndep_version = 1"; printf 'build %s: dyndep |' "$2"; grep '^#include "' "$1" | grep -o '"[^"]*"' | tr -d '"' | sed 's/^/ /' | tr -d '\n'; echo; } > "$3"
S
chmod +x scan.sh
cat > build.ninja <<'N'
rule cc
  command = gcc -O2 -g -c $in -o $out
rule scan
  command = ./scan.sh $in main.o $out
rule link
  command = gcc $in -o $out
build main.dd: scan main.c
build main.o: cc main.c || main.dd
  dyndep = main.dd
build app: link main.o
N
ninja >/dev/null; "$SC" check $P >/dev/null
sleep 1.1; sed -i 's/D 1/D 2/' data.h
echo "ninja -n says: $(ninja -n | head -1)"
out=$("$SC" check $P --format json); rc=$?
echo "stalecheck says (exit $rc):"
echo "$out" | python3 -c 'import json,sys
for f in json.load(sys.stdin)["findings"]: print("  ",f["severity"],f["rule"],f["subjects"][0],"| fix:",f.get("fix"))'
bad=0
echo "$out" | grep -q '"rule": "untracked-input-changed"' && bad=1
echo "$out" | grep -q '"rule": "pending-rebuild"' || bad=1
ninja >/dev/null; out2=$("$SC" check $P --format json)
echo "after ninja (fresh): $(echo "$out2" | python3 -c 'import json,sys; print([f["severity"]+" "+f["rule"] for f in json.load(sys.stdin)["findings"]])')"
echo "$out2" | grep -q '"rule": "missing-depfile"' && bad=1
echo "should say: error[pending-rebuild] on data.h (Ninja watches it through the dyndep file), fix ninja -C DIR; after ninja, no missing-depfile warning"
rm -rf $T
exit $bad
