package ninja

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestManifestSyntaxAgainstNinja parses a manifest using escapes, continuations, includes, subninja
// scopes, builddir and paths with spaces, and compares every edge with ninja's -t query and commands.
func TestManifestSyntaxAgainstNinja(t *testing.T) {
	need(t, "ninja")
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"rules.ninja": "rule cp\n  command = cp $in $out $\n    && echo $flags\n  depfile = $out.d\n  deps = gcc\n",
		"sub.ninja":   "flags = sub\nrule touch2\n  command = touch $out\nbuild sub$ out: touch2 a$ b.txt\n",
		"build.ninja": "# comment\nbuilddir = bd\nflags = -O2\ninclude rules.ninja\n" +
			"build ./x/../o1 | o1.extra: cp a$ b.txt $\n    c$:d.txt | imp.h || ord\n  flags = $flags -g\n\n" +
			"build ord: phony\nsubninja sub.ninja\nbuild o2: cp o1\n  depfile = custom.d\ndefault o2\n",
	})
	m, err := ParseManifest(dir, "build.ninja")
	if err != nil {
		t.Fatal(err)
	}
	if m.Builddir != "bd" || len(m.Files) != 3 || !reflect.DeepEqual(m.Defaults, []string{"o2"}) {
		t.Fatalf("%+v", m)
	}
	byOut := map[string]*ManifestEdge{}
	for _, e := range m.Edges {
		byOut[e.Outputs[0]] = e
	}
	o1 := byOut["o1"]
	if o1 == nil || !reflect.DeepEqual(o1.Explicit, []string{"a b.txt", "c:d.txt"}) || !reflect.DeepEqual(o1.ImplicitOutputs, []string{"o1.extra"}) ||
		o1.Command != "cp 'a b.txt' 'c:d.txt' o1 && echo -O2 -g" || o1.Depfile != "o1.d" || o1.Deps != "gcc" {
		t.Fatalf("o1: %+v", o1)
	}
	if s := byOut["sub out"]; s == nil || s.Command != "touch 'sub out'" {
		t.Fatalf("subninja edge: %+v", s)
	}
	if o2 := byOut["o2"]; o2.Depfile != "custom.d" || o2.Command != "cp o1 o2 && echo -O2" {
		t.Fatalf("o2: %+v", o2)
	}
	b := &Build{Dir: dir, Manifest: m}
	for _, e := range m.Edges {
		if e.Rule != "phony" {
			b.Edges = append(b.Edges, &Edge{ManifestEdge: e})
		}
	}
	tool, err := FindTool(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b.Tool = tool
	crossCheck(t, b)
}

func TestManifestErrorsNameFileAndLine(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"rule cc\n  command = cc\nbuild a.o: nosuch a.c\n": "build.ninja:3: unknown build rule \"nosuch\"",
		"build a.o\n":                "build.ninja:1: build line without ':'",
		"x = ${a\n":                  "build.ninja:1: bad ${name}",
		"include missing.ninja\n":    "missing.ninja",
		"  indented = 1\n":           "build.ninja:1: indented line",
		"rule r\n  command = $(x)\n": "build.ninja:2: bad '$' escape",
		"x = 1\nrule cc\n":           "build.ninja:2: rule \"cc\" has no command",
		"rule cc\n  depfile = $out.d\nbuild a.o: cc a.c\n": "build.ninja:1: rule \"cc\" has no command",
	} {
		os.WriteFile(filepath.Join(dir, "build.ninja"), []byte(body), 0o644)
		_, err := ParseManifest(dir, "build.ninja")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want %q, got %v", body, want, err)
		}
	}
	os.Remove(filepath.Join(dir, "build.ninja"))
	if _, err := ParseManifest(dir, "build.ninja"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing build.ninja: %v", err)
	}
}

func TestParseCompileWords(t *testing.T) {
	c := ParseCompile(`cd sub && ccache /usr/bin/nvcc -forward-unknown-to-host-compiler -I../inc -isystem /opt/x "-I/a b" -MD -MT o -MF "d d.d" -x cu -c ../k.cu -o k.o`, "/b")
	if c == nil || c.Dir != "/b/sub" || c.Source != "/b/k.cu" || c.Object != "k.o" || filepath.Base(c.Compiler) != "nvcc" {
		t.Fatalf("%+v", c)
	}
	if !reflect.DeepEqual(c.Includes, []IncludeDir{{"/b/inc", "-I"}, {"/opt/x", "-isystem"}, {"/a b", "-I"}}) {
		t.Fatalf("includes %+v", c.Includes)
	}
	if !reflect.DeepEqual(c.DepFlags, []string{"-MD", "-MF d d.d"}) {
		t.Fatalf("dep flags %q", c.DepFlags)
	}
	if ParseCompile("cc main.o -o main", "/b") != nil || ParseCompile("ar qc x.a a.o", "/b") != nil {
		t.Fatal("a link or archive taken for a compile")
	}
}

// An include cycle is an error naming the file, by its full path and without a line of 0.
func TestManifestIncludeCycle(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"build.ninja": "include a.ninja\n", "a.ninja": "include b.ninja\n", "b.ninja": "include a.ninja\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := ParseManifest(dir, DefaultManifest)
	var me *ManifestError
	if !errors.As(err, &me) || !filepath.IsAbs(me.File) || strings.Contains(err.Error(), ":0:") || !strings.Contains(err.Error(), "nested") {
		t.Fatalf("include cycle: %v", err)
	}
}
