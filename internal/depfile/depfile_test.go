package depfile

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseEscapes(t *testing.T) {
	in := "out/a\\ b.o: src/a\\ b.c \\\n  inc/x\\#1.h cost$$.h\r\nsrc/a\\ b.c:\n\n# env-dep:OUT_DIR=/t/out\n"
	f, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Targets: []string{"out/a b.o"}, Prereqs: []string{"src/a b.c", "inc/x#1.h", "cost$.h"}},
		{Targets: []string{"src/a b.c"}},
	}
	if d := cmp.Diff(want, f.Rules); d != "" {
		t.Fatalf("rules (-want +got):\n%s", d)
	}
	if f.Env["OUT_DIR"] != "/t/out" {
		t.Fatalf("env-dep not read: %v", f.Env)
	}
}

func TestParseRejectsLineWithoutColon(t *testing.T) {
	_, err := Parse(strings.NewReader("a.o: a.c\njust words here\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("want an error naming line 2, got %v", err)
	}
}

// TestParseGccOutput reads what a real gcc -MMD writes for a source including a header with a space in its name.
func TestParseGccOutput(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatal("cc is required:", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "my header.h"), []byte("#define K 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "q.c"), []byte("#include \"my header.h\"\nint q(void){return K;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cc, "-MMD", "-c", "q.c", "-o", "q.o")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	f, err := ParseFile(filepath.Join(dir, "q.d"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"q.c", "my header.h"}, f.Inputs()); d != "" {
		t.Fatalf("inputs (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"q.o"}, f.Rules[0].Targets); d != "" {
		t.Fatalf("targets (-want +got):\n%s", d)
	}
}

// splitWords' fast path (a line without backslashes or dollars) splits as the escape-aware path does.
func TestSplitWordsFastPathSame(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	pieces := []string{"a", "b.rs", "/x/y.c", ":", " ", "  ", "\t", "C:", "é", "x:"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := rng.Intn(12); j > 0; j-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		s := b.String()
		if got, want := splitWords(s), splitEscaped(s); !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
			t.Fatalf("%q: fast %v, escape-aware %v", s, got, want)
		}
	}
}
