package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The files a command names, found in its text: whole arguments, words of argument strings (shell,
// hyperfine, Python literals, --opt=PATH), scripts run by an interpreter or through #!, the scripts they
// run (relative to the working folder or their own folder); a variable path is reported, not guessed;
// a file that is not regular (a FIFO) or too large is not read.
func TestCommandCandidates(t *testing.T) {
	dir := t.TempDir()
	w := func(rel, content string, mode os.FileMode) string {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	w("target/debug/app", "\x7fELF\x00", 0o755)
	w("target/release/app", "\x7fELF\x00", 0o755)
	w("tools/inner.sh", "#!/bin/sh\nexec ../target/release/app \"$@\"\n", 0o755)
	w("bench.py", "import subprocess\nsubprocess.run([\"./target/debug/app\", \"5\"])  # comment\n", 0o644)
	w("run.sh", "#!/bin/sh\n# ./target/nope\n./tools/inner.sh 3\n\"$OUT\"/app\n", 0o755)
	w("big.sh", "#!/bin/sh\n"+strings.Repeat("# padding\n", maxScriptBytes/10+1)+"./target/debug/app\n", 0o755)
	fifo := filepath.Join(dir, "fifo.sh")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	abs := func(rel string) string { return filepath.Join(dir, rel) }
	for _, tc := range []struct {
		argv []string
		want []string // workspace files expected among the candidates, with where they were found
		not  []string
		vars string // a variable word expected
	}{
		{[]string{"sh", "-c", "./target/debug/app 5 && echo done"}, []string{"target/debug/app@an argument string"}, []string{"target/release/app"}, ""},
		{[]string{"hyperfine", "--warmup=3", "target/release/app 1", "--export-json=out.json"}, []string{"target/release/app@an argument string"}, nil, ""},
		{[]string{"app", "--bin=target/debug/app"}, []string{"target/debug/app@"}, nil, ""},
		{[]string{"python3", "bench.py"}, []string{"bench.py@", "target/debug/app@" + abs("bench.py")}, nil, ""},
		{[]string{abs("run.sh")}, []string{"tools/inner.sh@" + abs("run.sh"), "target/release/app@" + abs("tools/inner.sh")}, []string{"target/nope"}, "$OUT/app"},
		{[]string{"sh", "big.sh"}, nil, []string{"target/debug/app"}, ""},
		{[]string{"sh", "fifo.sh"}, nil, []string{"target/debug/app"}, ""},
		{[]string{"cat", "bench.py"}, nil, []string{"target/debug/app"}, ""}, // not an interpreter, no #!
	} {
		prog, err := resolveProgram(tc.argv[0], dir, os.Getenv("PATH"))
		if err != nil {
			prog = abs(tc.argv[0])
		}
		cands, vars := commandCandidates(prog, tc.argv, dir, "/home/u")
		got := map[string]string{}
		for _, c := range cands {
			got[c.path] = c.from
		}
		for _, wnt := range tc.want {
			rel, from, _ := strings.Cut(wnt, "@")
			if f, ok := got[abs(rel)]; !ok || f != from {
				t.Errorf("%q: %s found %v (from %q), want from %q; all: %v", tc.argv, rel, ok, f, from, cands)
			}
		}
		for _, n := range tc.not {
			if _, ok := got[abs(n)]; ok {
				t.Errorf("%q: %s is a candidate: %v", tc.argv, n, cands)
			}
		}
		if tc.vars != "" && !slices.Contains(vars, tc.vars) {
			t.Errorf("%q: variable words %q lack %q", tc.argv, vars, tc.vars)
		}
	}
}
