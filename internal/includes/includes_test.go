package includes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/graph"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// step is a live compile of src/a.c with -Ioverride -Iinclude whose depfile names the headers given.
func step(dir string, read ...string) *graph.Step {
	s := &graph.Step{Label: "a.o", Reference: graph.FileInfo{Path: filepath.Join(dir, "a.o"), Exists: true}}
	s.Roots = []*graph.Root{{File: graph.FileInfo{Path: filepath.Join(dir, "app")}}}
	s.OwnCmd().Compiles = []graph.CompilerRun{{Source: filepath.Join(dir, "src/a.c"), Dir: dir,
		Dirs: []string{filepath.Join(dir, "override"), filepath.Join(dir, "include")}}}
	s.Inputs = append(s.Inputs, &graph.Input{File: graph.FileInfo{Path: filepath.Join(dir, "src/a.c"), Exists: true}, How: []graph.How{graph.Depfile}})
	for _, r := range read {
		s.Inputs = append(s.Inputs, &graph.Input{File: graph.FileInfo{Path: filepath.Join(dir, r), Exists: true}, How: []graph.How{graph.Depfile}})
	}
	return s
}

func TestShadowedHeader(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "src/a.c"), "#include \"lib.h\"\n#include <stdio.h>\nint a;\n")
	write(t, filepath.Join(dir, "include/lib.h"), "#include \"detail.h\"\n#define X 1\n")
	write(t, filepath.Join(dir, "include/detail.h"), "#define D 1\n")
	s := step(dir, "include/lib.h", "include/detail.h")
	g := &graph.Graph{Steps: []*graph.Step{s}}
	Annotate(g)
	if len(s.Cmd().Lookups) != 0 {
		t.Fatalf("nothing shadows yet, got %+v", s.Cmd().Lookups)
	}
	// A copy with the same bytes in the folder searched first changes nothing the compiler makes.
	write(t, filepath.Join(dir, "override/lib.h"), "#include \"detail.h\"\n#define X 1\n")
	Annotate(g)
	if len(s.Cmd().Lookups) != 0 {
		t.Fatalf("an identical header is no shadow, got %+v", s.Cmd().Lookups)
	}
	// Another detail.h beside the new lib.h: found first for the include inside it, too.
	write(t, filepath.Join(dir, "override/lib.h"), "#include \"detail.h\"\n#define X 2\n")
	Annotate(g)
	if len(s.Cmd().Lookups) != 1 {
		t.Fatalf("want one shadowed search, got %+v", s.Cmd().Lookups)
	}
	l := s.Cmd().Lookups[0]
	if !l.Recorded || l.Kind != graph.LookupInclude || l.Name != "lib.h" || l.Then != filepath.Join(dir, "include/lib.h") ||
		l.Now != filepath.Join(dir, "override/lib.h") || l.From != filepath.Join(dir, "src/a.c") {
		t.Errorf("lookup = %+v", l)
	}
}

func TestNoRecordsNoShadowButScan(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "src/a.c"), "#include \"lib.h\"\nint a;\n")
	write(t, filepath.Join(dir, "include/lib.h"), "#include \"detail.h\"\n")
	write(t, filepath.Join(dir, "include/detail.h"), "#define D 1\n")
	s := step(dir)
	s.Inputs = nil // no depfile: the records name no header
	g := &graph.Graph{Steps: []*graph.Step{s}}
	Annotate(g)
	if len(s.Cmd().Lookups) != 0 {
		t.Errorf("no read records, no recorded lookup: %+v", s.Cmd().Lookups)
	}
	var scanned []string
	for _, in := range s.Inputs {
		if !in.Has(graph.IncludeScan) || in.Watched {
			t.Errorf("input %s: want an unwatched include-scan input", in.File.Path)
		}
		scanned = append(scanned, in.File.Path)
	}
	want := []string{filepath.Join(dir, "include/lib.h"), filepath.Join(dir, "include/detail.h")}
	if len(scanned) != 2 || scanned[0] != want[0] || scanned[1] != want[1] {
		t.Errorf("scanned %v, want %v", scanned, want)
	}
	Annotate(g) // a second pass adds nothing
	if len(s.Inputs) != 2 {
		t.Errorf("after a second pass: %d inputs", len(s.Inputs))
	}
}

// A depfile that does not list a header an unconditional #include "…" of a listed file finds (damaged,
// or another compile's): the header becomes an include-scan input, unwatched, naming the depfile; a
// conditional include, an <…> include and a depfile that lists the header add nothing.
func TestDepfileOmitsHeader(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "src/a.c"), "#include \"lib.h\"\n#include <sys.h>\n#ifdef EXTRA\n#include \"extra.h\"\n#endif\nint a;\n")
	write(t, filepath.Join(dir, "include/lib.h"), "#include \"detail.h\"\n")
	write(t, filepath.Join(dir, "include/detail.h"), "#define D 1\n")
	write(t, filepath.Join(dir, "include/extra.h"), "#define E 1\n")
	write(t, filepath.Join(dir, "include/sys.h"), "#define S 1\n")
	added := func(s *graph.Step) []string {
		var out []string
		for _, in := range s.Inputs {
			if in.Has(graph.IncludeScan) {
				out = append(out, in.File.Path)
				if in.Watched || !strings.Contains(in.Detail[0], "does not list it") {
					t.Errorf("%s: watched %v, detail %q", in.File.Path, in.Watched, in.Detail[0])
				}
			}
		}
		return out
	}
	s := step(dir, "include/lib.h", "include/detail.h")
	Annotate(&graph.Graph{Steps: []*graph.Step{s}})
	if got := added(s); len(got) != 0 {
		t.Errorf("a complete depfile: added %v", got)
	}
	s = step(dir, "include/lib.h") // detail.h dropped
	Annotate(&graph.Graph{Steps: []*graph.Step{s}})
	if got := added(s); len(got) != 1 || got[0] != filepath.Join(dir, "include/detail.h") {
		t.Errorf("a depfile without detail.h: added %v, want detail.h only", got)
	}
	s = step(dir) // the source alone
	Annotate(&graph.Graph{Steps: []*graph.Step{s}})
	if got := added(s); len(got) != 1 || got[0] != filepath.Join(dir, "include/lib.h") {
		t.Errorf("a depfile of the source alone: added %v, want lib.h (what detail.h hangs on is not known read)", got)
	}
}
