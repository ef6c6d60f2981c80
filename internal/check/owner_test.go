package check

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// owner finds the first step in graph order whose output is the path or whose folder holds it, as a
// walk up every parent folder does; a path of a million bytes (a hostile depfile) costs no more than
// its length.
func TestOwnerIndex(t *testing.T) {
	a := &graph.Step{ID: "a", RecordDir: "/t/a", Outputs: []graph.FileInfo{{Path: "/t/out/x.o"}}}
	b := &graph.Step{ID: "b", RecordDir: "/t", ScriptData: &graph.ScriptDetails{RunDir: "/t/build/b", OutDir: "/t/build/b/out"}}
	c := &graph.Step{ID: "c", RecordDir: "/"}
	x := newOwnerIndex(&graph.Graph{Steps: []*graph.Step{a, b, c}})
	walk := func(p string) *graph.Step { // the plain walk up every parent
		best := -1
		for d := p; ; d = filepath.Dir(d) {
			if i, ok := x.dirs[d]; ok && (best < 0 || i < best) {
				best = i
			}
			if filepath.Dir(d) == d {
				break
			}
		}
		if s := x.outputs[p]; s != nil {
			return s
		}
		if best < 0 {
			return nil
		}
		return x.steps[best]
	}
	for _, p := range []string{"/t/out/x.o", "/t/a/f", "/t/a", "/t/build/b/out/lib.a", "/t/build/bb", "/u/v", "/", "/t",
		"rel/x", "/t/a/" + strings.Repeat("d/", 300) + "x.h"} {
		if got, want := x.owner(p), walk(p); got != want {
			t.Errorf("owner(%.40s): %v, want %v", p, got, want)
		}
	}
	long := "/t/a/" + strings.Repeat("d/", 500_000) + "x.h"
	if got := x.owner(long); got != a {
		t.Errorf("owner of a 1 MB path under /t/a: %v", got)
	}
}

// A record two readers could not read (a make depfile both the data base and the depfile reader
// tried) is one unreadable-record finding, with the roots of both.
func TestUnreadableRecordOnce(t *testing.T) {
	r1 := &graph.Root{File: graph.FileInfo{Path: "/w/app1"}}
	r2 := &graph.Root{File: graph.FileInfo{Path: "/w/app2"}}
	s1 := &graph.Step{ID: "1", Roots: []*graph.Root{r1}}
	s2 := &graph.Step{ID: "2", Roots: []*graph.Root{r2}}
	g := &graph.Graph{Workspace: "/w", Steps: []*graph.Step{s1, s2}, Problems: []graph.Problem{
		{Path: "/w/main.d", Err: "open /w/main.d: too many levels of symbolic links", Step: s1},
		{Path: "/w/main.d", Err: "stat /w/main.d: too many levels of symbolic links", Step: s2},
		{Path: "/w/other.d", Err: "too many levels of symbolic links", Step: s2},
	}}
	fs := unreadableRecord(g)
	if len(fs) != 2 || len(fs[0].Roots) != 2 || fs[0].Roots[0] != "/w/app1" || fs[0].Roots[1] != "/w/app2" {
		t.Fatalf("want main.d once with both roots, then other.d: %+v", fs)
	}
}
