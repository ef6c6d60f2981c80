package graph

import (
	"slices"
	"testing"
)

// MarkLive walks Deps and KeepsLive from each root; AddDep, after it, extends the roots of a consumer to
// a producer found later and to what that producer depends on, and Kept follows.
func TestMarkLiveAndAddDep(t *testing.T) {
	app := &Step{ID: "app"}
	obj := &Step{ID: "a.o"}
	gen := &Step{ID: "config.h", Key: "k-gen"}
	tmpl := &Step{ID: "config.h.in-tool"}
	other := &Step{ID: "other", Key: "k-gen"} // shares gen's key: kept once gen is live
	orphan := &Step{ID: "orphan"}
	app.Deps = []*Step{obj}
	gen.KeepsLive = []*Step{tmpl}
	r := &Root{Step: app}
	g := &Graph{Steps: []*Step{app, obj, gen, tmpl, other, orphan}, Roots: []*Root{r}}
	g.MarkLive()
	for _, s := range []*Step{app, obj} {
		if !s.Live() {
			t.Errorf("%s: not live after MarkLive", s.ID)
		}
	}
	for _, s := range []*Step{gen, tmpl, orphan} {
		if s.Live() {
			t.Errorf("%s: live before any edge reaches it", s.ID)
		}
	}
	if g.Kept(other) {
		t.Error("other: kept before gen is live")
	}
	// An include scan finds that a.o reads config.h, which gen makes.
	g.AddDep(obj, gen)
	g.AddDep(obj, gen) // a second time changes nothing
	if !slices.Equal(obj.Deps, []*Step{gen}) || !slices.Equal(gen.Dependents, []*Step{obj}) {
		t.Errorf("edges: deps %v, dependents %v", obj.Deps, gen.Dependents)
	}
	for _, s := range []*Step{gen, tmpl} {
		if !slices.Equal(s.Roots, []*Root{r}) {
			t.Errorf("%s: roots %v, want the app's root once", s.ID, s.Roots)
		}
	}
	if !g.Kept(other) {
		t.Error("other: shares a live step's key, not kept")
	}
	if orphan.Live() || g.Kept(orphan) {
		t.Error("orphan: reached by nothing")
	}
	g.AddDep(obj, obj) // a step is never its own dependency
	if len(obj.Deps) != 1 {
		t.Errorf("self edge added: %v", obj.Deps)
	}
}

func TestCommandProgram(t *testing.T) {
	for cmd, want := range map[string]string{
		"cc -c a.c -o a.o":                  "cc",
		"CCACHE_DIR=/c cc -c a.c":           "cc",
		"/usr/bin/cc -c a.c":                "",
		"\"cc\" -c a.c":                     "",
		"$(CC) -c a.c":                      "",
		"ar crs libk.a a.o":                 "ar",
		"sed 's/@V@//' in > out":            "sed",
		"":                                  "",
		"cd build && cc -c a.c":             "cd",
		"x86_64-linux-gnu-gcc-12 -c a.c":    "x86_64-linux-gnu-gcc-12",
		"FOO=a=b BAR=1 nvcc -c k.cu -o k.o": "nvcc",
	} {
		if got := CommandProgram(cmd); got != want {
			t.Errorf("CommandProgram(%q) = %q, want %q", cmd, got, want)
		}
	}
}
