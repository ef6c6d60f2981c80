package graph

import (
	"strings"
	"testing"
)

// A build-script run that links the archive a nested build writes drives it: the nested steps get the
// run as Driver and its roots, an input only the nested system watches stops counting as watched, the
// run's package-folder candidates the nested build records and the files it writes leave the run, and
// the archive is no root of its own.
func TestAttachDriven(t *testing.T) {
	pkg := "/w/p"
	fi := func(p string, ns int64) FileInfo { return FileInfo{Path: p, MTimeNS: ns, Exists: true} }
	run := &Step{System: "cargo", ID: "run", Kind: ScriptRun, Package: "p", PackageRoot: pkg, Reference: fi("/w/t/out", 10),
		ScriptData: &ScriptDetails{Links: []Link{{Kind: "static", Name: "m", Path: pkg + "/csrc/libm.a"}}},
		Inputs: []*Input{
			{File: fi(pkg+"/csrc/a.c", 5), How: []How{Declared}, Watched: true, WatchedBy: "rerun-if-changed=csrc/a.c"},
			{File: fi(pkg+"/csrc/lib.h", 5), How: []How{PackageFolder}},
			{File: fi(pkg+"/csrc/a.o", 11), How: []How{"build-script-source"}},
		}}
	bin := &Step{System: "cargo", ID: "bin", Kind: Compile, Package: "p", Deps: []*Step{run}, Reference: fi("/w/t/app", 20)}
	run.Dependents = []*Step{bin}
	g := &Graph{Steps: []*Step{run, bin}, Roots: []*Root{{File: fi("/w/t/app", 20), Kind: "bin", Step: bin}}}
	g.MarkLive()

	obj := &Step{System: "make", ID: "make:a.o", Kind: Compile, Label: "a.o", Reference: fi(pkg+"/csrc/a.o", 11), Outputs: []FileInfo{fi(pkg+"/csrc/a.o", 11)},
		Inputs: []*Input{
			{File: fi(pkg+"/csrc/a.c", 5), How: []How{Declared}, Watched: true},
			{File: fi(pkg+"/csrc/lib.h", 5), How: []How{Depfile}, Watched: true},
		}}
	ar := &Step{System: "make", ID: "make:libm.a", Kind: Compile, Label: "libm.a", Reference: fi(pkg+"/csrc/libm.a", 12),
		Outputs: []FileInfo{fi(pkg+"/csrc/libm.a", 12)}, Deps: []*Step{obj},
		Inputs: []*Input{{File: fi(pkg+"/csrc/a.o", 11), How: []How{Declared}, Watched: true}}}
	obj.Dependents = []*Step{ar}
	nested := &Graph{Steps: []*Step{obj, ar}, Roots: []*Root{{File: ar.Reference, Kind: "lib", Step: ar}}}

	if d := AttachDriven(g, &Graph{Steps: []*Step{{ID: "other", Reference: fi("/elsewhere/libx.a", 1), Outputs: []FileInfo{fi("/elsewhere/libx.a", 1)}}}}, "/elsewhere"); d != nil {
		t.Fatalf("a build nothing links was attached to %v", d)
	}
	drivers := AttachDriven(g, nested, pkg+"/csrc")
	if len(drivers) != 1 || drivers[0] != run {
		t.Fatalf("drivers %v, want the run", drivers)
	}
	if obj.Driver != run || ar.Driver != run || len(nested.Roots) != 0 {
		t.Fatalf("Driver %v %v, nested roots %d", obj.Driver, ar.Driver, len(nested.Roots))
	}
	m := &Graph{Steps: append(g.Steps, nested.Steps...), Roots: g.Roots}
	m.MarkLive()
	if !obj.Live() || obj.Roots[0].File.Path != "/w/t/app" {
		t.Fatalf("the program does not reach the nested object: %v", obj.Roots)
	}
	if !obj.Inputs[0].Watched || obj.Inputs[1].Watched || !obj.Inputs[1].SystemWatched {
		t.Errorf("a.c (the run declares it) should stay watched, lib.h (make's depfile only) should not: %+v %+v", obj.Inputs[0], obj.Inputs[1])
	}
	if len(run.Inputs) != 1 || run.Inputs[0].File.Path != pkg+"/csrc/a.c" {
		var ps []string
		for _, in := range run.Inputs {
			ps = append(ps, in.File.Path)
		}
		t.Errorf("the run keeps %v, want only its declared a.c", ps)
	}
	w := obj.Words()
	if w.Tool != "The build system" || !strings.Contains(w.NotWatched, "runs only when") || !strings.Contains(w.NotWatched, "build script of p") {
		t.Errorf("driven words: %+v", w)
	}
}
