package depfile

import (
	"bufio"
	"io"
	"iter"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stalecheck/stalecheck/internal/testutil/mutate"
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

// scannerLines are the lines bufio.Scanner splits r into, as Parse read them before it split one
// string: the reference for the split.
func scannerLines(r io.Reader) iter.Seq[string] {
	return func(yield func(string) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if !yield(sc.Text()) {
				return
			}
		}
	}
}

// Parse gives what the line-scanner parse gave, errors included, for gcc's, nvcc's and rustc's shapes
// and 20,000 mutations of them (continuations, escapes, CRs, comments).
func TestParseMatchesLineScanner(t *testing.T) {
	seeds := []string{
		"obj/a.o: src/a.c include/a.h \\\n  include/b.h\n\ninclude/a.h:\n\ninclude/b.h:\n",
		"/t/release/deps/app-1.d: crates/app/src/main.rs crates/app/src/x.rs\r\n\r\n# env-dep:CARGO_PKG_NAME=app\r\n# env-dep:OUT_DIR\r\ncrates/app/src/main.rs:\r\n",
		"a\\ b.o: c\\#d.c $$x.h \\\\ e.h\n",
		"C:\\x\\a.o: C:\\x\\a.c\n",
		"no colon here\n",
		"a.o: b.c \\\r\n c.h\\\r\r\n d.h",
		"x.o:\\\n\\\n  y.c\n#c\n z\n",
		"",
		"\n\n",
	}
	inputs := append(seeds, mutate.Strings(2, seeds, 20000, 3, []string{" ", ":", "\\", "\r", "\n", "#", "$", "a", ".", "\t", "="}, " :\\\r\n#$a.\t=")...)
	parsed := 0
	for _, in := range inputs {
		want, werr := parseLines(scannerLines(strings.NewReader(in)))
		got, err := Parse(strings.NewReader(in))
		if (werr == nil) != (err == nil) || werr != nil && werr.Error() != err.Error() {
			t.Fatalf("Parse(%q) error %v, the line scanner's %v", in, err, werr)
		}
		if werr != nil {
			continue
		}
		parsed++
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("Parse(%q) (-line scanner +Parse):\n%s", in, d)
		}
	}
	if parsed < 5000 {
		t.Fatalf("only %d of %d inputs parsed: the mutations test too little", parsed, len(inputs))
	}
}

// A NUL byte: GNU make ignores the rest of its line (a continuation there ends too), Ninja takes it for
// a separator; no name holds one either way.
func TestNUL(t *testing.T) {
	p := filepath.Join(t.TempDir(), "main.d")
	write := func(text string) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.o: main.c\x00\nx.o: x.c\n")
	for name, parse := range map[string]func(string) (*File, error){"make": ParseFile, "ninja": ParseNinjaFile} {
		if f, err := parse(p); err != nil || !slices.Equal(f.Inputs(), []string{"main.c", "x.c"}) {
			t.Errorf("%s: %v, want [main.c x.c]", name, err)
		}
	}
	write("main.o: main.c\x00 b.h \\\n a.h\nx.o: x.c\n")
	if f, err := ParseNinjaFile(p); err != nil || !slices.Equal(f.Inputs(), []string{"main.c", "b.h", "a.h", "x.c"}) {
		t.Errorf("ninja: %v, want [main.c b.h a.h x.c]", err)
	}
	// make drops " b.h \" with the NUL, so " a.h" is a line of its own, without ':' (make's "missing
	// separator").
	if f, err := ParseFile(p); err == nil {
		t.Errorf("make: want the error of a line without ':', got %q", f.Inputs())
	}
}
