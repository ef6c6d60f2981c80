package cargo_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// layoutWorkspace is CCSys (a bin on a -sys crate whose build.rs compiles C with Debian's cc crate, a
// registry dependency) with an integration test target.
func layoutWorkspace(t *testing.T) map[string]string {
	files := testutil.CCSys(t)
	files["app/tests/t.rs"] = "#[test] fn t() { assert_eq!(fastmath_sys::compute(1) % 1000, 3); }\n"
	return files
}

func readGraph(t *testing.T, p *testutil.Project) *graph.Graph {
	t.Helper()
	return readGraphWith(t, p, cargo.ReadOptions{})
}

// readGraphWith is readGraph with the read's options.
func readGraphWith(t *testing.T, p *testutil.Project, opt cargo.ReadOptions) *graph.Graph {
	t.Helper()
	l, err := cargo.Locate(p.Dir, cargo.LocateOptions{Getenv: func(k string) string {
		if strings.HasPrefix(k, "CARGO_") {
			return ""
		}
		return os.Getenv(k)
	}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := cargo.Read(l, opt)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// shape is what a graph says, with paths relative to the target folder: equal for both layouts but
// for the record paths, which are checked against unit.Paths.
type shape struct {
	Steps    []string // ID kind package label live failed
	Edges    []string // ID -> ID
	Roots    []string // kind tied-by step ID
	Dirs     []string // build folders: package hash steps
	Problems []graph.Problem
}

func shapeOf(g *graph.Graph) shape {
	var s shape
	ws := filepath.Dir(g.TargetDir)
	rel := func(p string) string {
		if r, err := filepath.Rel(ws, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return p
	}
	for _, st := range g.Steps {
		u := unit.Of(st)
		s.Steps = append(s.Steps, strings.Join([]string{st.ID, string(st.Kind), st.Package, st.Label, map[bool]string{true: "live", false: "orphan"}[st.Live()], map[bool]string{true: "failed", false: "ok"}[st.Failed != ""],
			"root=" + rel(st.PackageRoot), "source=" + u.Source, "version=" + u.Version, "script=" + rel(st.Script().ScriptSource), fmt.Sprintf("inputs=%d outputs=%d", len(st.Inputs), len(st.Outputs))}, " "))
		for _, d := range st.Deps {
			s.Edges = append(s.Edges, st.ID+" -> "+d.ID)
		}
	}
	for _, r := range g.Roots {
		id := "-"
		if r.Step != nil {
			id = r.Step.ID
		}
		s.Roots = append(s.Roots, r.Kind+" "+r.TiedBy+" "+id)
	}
	for _, d := range g.BuildDirs {
		var ids []string
		for _, st := range d.Steps {
			ids = append(ids, st.ID)
		}
		s.Dirs = append(s.Dirs, d.Package+" "+d.Hash+" "+strings.Join(ids, ","))
	}
	s.Problems = g.Problems
	for _, l := range [][]string{s.Steps, s.Edges, s.Roots, s.Dirs} {
		sort.Strings(l)
	}
	return s
}

// One workspace built, tested and cross-built the same way in both layouts: the graphs have the same
// steps (IDs, kinds, liveness), fingerprint edges, roots and build folders; each record path lies where
// unit.Paths puts it in its layout, and the layout is detected from disk per profile folder.
func TestReadBothLayouts(t *testing.T) {
	testutil.NeedDebianCrates(t)
	build := func(p *testutil.Project) {
		p.Cargo("build")
		p.Cargo("test", "--no-run")
		p.Cargo("build", "--release", "--features", "app/fast")
	}
	old := testutil.NewProject(t, layoutWorkspace(t))
	old.NewLayout = false // the legacy side, whatever CargoLayoutEnv says
	build(old)
	var fresh *testutil.Project
	testutil.InNewLayout(t, func(t *testing.T) {
		fresh = testutil.NewProject(t, layoutWorkspace(t))
		build(fresh)
	})
	go1, g2 := readGraph(t, old), readGraph(t, fresh)
	if d := cmp.Diff(shapeOf(go1), shapeOf(g2)); d != "" {
		t.Fatalf("the layouts read differently (-legacy +new):\n%s", d)
	}
	if len(g2.Steps) < 10 || len(g2.Roots) < 5 {
		t.Fatalf("too little read from the new layout: %d steps, %d roots", len(g2.Steps), len(g2.Roots))
	}
	for _, c := range []struct {
		g         *graph.Graph
		newLayout bool
	}{{go1, false}, {g2, true}} {
		for _, prof := range c.g.ProfileDirs {
			legacy, nl := cargo.ProfileLayouts(c.g.BuildDir, prof)
			if legacy == c.newLayout || nl != c.newLayout {
				t.Errorf("%s %s: ProfileLayouts = legacy %v, new %v", c.g.BuildDir, prof, legacy, nl)
			}
		}
		for _, s := range c.g.Steps {
			p := unit.PathsOf(c.g.BuildDir, s)
			if p.New != c.newLayout || unit.Of(s).FingerprintDir != p.Fingerprint {
				t.Errorf("%s: fingerprint folder %s, paths %+v", s.ID, unit.Of(s).FingerprintDir, p)
			}
			if _, err := os.Stat(filepath.Join(p.Fingerprint, unit.Of(s).Target)); err != nil {
				t.Errorf("%s: no hash file where unit.Paths says: %v", s.ID, err)
			}
			switch s.Kind {
			case graph.ScriptRun:
				if s.Script().RunDir != p.Run || s.Script().OutDir != p.Out || s.Reference.Path != p.Stdout || !s.Reference.Exists {
					t.Errorf("%s: run %s out %s reference %+v, want %+v", s.ID, s.Script().RunDir, s.Script().OutDir, s.Reference, p)
				}
				if want := map[bool]string{false: "output", true: "stdout"}[c.newLayout]; filepath.Base(s.Reference.Path) != want {
					t.Errorf("%s: reference %s, want the %s file", s.ID, s.Reference.Path, want)
				}
				if len(s.Outputs) == 0 || !strings.HasPrefix(s.Outputs[0].Path, p.Out+"/") {
					t.Errorf("%s: OUT_DIR files %v not under %s", s.ID, s.Outputs, p.Out)
				}
			case graph.ScriptCompile:
				if s.Script().ScriptSource == "" || !strings.HasSuffix(s.Script().ScriptSource, "fastmath-sys/build.rs") && !strings.HasSuffix(s.Script().ScriptSource, "build.rs") {
					t.Errorf("%s: script source %q (from the .d file in %s)", s.ID, s.Script().ScriptSource, p.ScriptArtifacts)
				}
			case graph.Compile:
				if s.Live() && (!s.Reference.Exists || !strings.HasPrefix(s.Reference.Path, p.Fingerprint+"/dep-")) {
					t.Errorf("%s: dep-info reference %+v, want under %s", s.ID, s.Reference, p.Fingerprint)
				}
			}
		}
		for _, r := range c.g.Roots {
			if r.Step == nil {
				t.Errorf("root %s is not tied", r.File.Path)
			}
		}
	}
	// The new layout keeps no .fingerprint/ or deps/ folder.
	for _, dir := range []string{"debug/.fingerprint", "debug/deps", "release/.fingerprint", "release/deps"} {
		if _, err := os.Stat(fresh.Path(filepath.Join("target", dir))); !os.IsNotExist(err) {
			t.Errorf("new layout: %s exists (%v)", dir, err)
		}
	}
}

// A profile folder built without, then with the flag holds both layouts: each unit is read in its own,
// IDs stay unique, and the legacy units (which cargo no longer uses) are orphaned while the new ones
// are live.
func TestReadMixedLayouts(t *testing.T) {
	testutil.NeedDebianCrates(t)
	p := testutil.NewProject(t, layoutWorkspace(t))
	p.NewLayout = false // first the legacy layout, whatever CargoLayoutEnv says
	p.Cargo("build")
	p.NewLayout = true
	p.Cargo("build")
	g := readGraph(t, p)
	legacy, nl := cargo.ProfileLayouts(g.BuildDir, "debug")
	if !legacy || !nl {
		t.Fatalf("ProfileLayouts(debug) = %v %v, want both", legacy, nl)
	}
	ids := map[string]bool{}
	var nOld, nNew int
	for _, s := range g.Steps {
		if ids[s.ID] {
			t.Errorf("duplicate step ID %s", s.ID)
		}
		ids[s.ID] = true
		if unit.PathsOf(g.BuildDir, s).New {
			nNew++
			if !s.Live() {
				t.Errorf("new-layout unit %s is not live", s.ID)
			}
			if !strings.Contains(s.ID, "/build/") {
				t.Errorf("new-layout unit %s of a mixed profile lacks its folder in its ID", s.ID)
			}
		} else {
			nOld++
			if s.Live() {
				t.Errorf("legacy unit %s is live, but the uplifted binary is the new build's", s.ID)
			}
		}
	}
	if nOld == 0 || nNew != nOld {
		t.Fatalf("%d legacy and %d new-layout units, want the same non-zero number", nOld, nNew)
	}
	var orphanNew int
	for _, d := range g.OrphanedBuildDirs() {
		if !strings.Contains(d.Path, "/build/"+d.Package+"-"+d.Hash) {
			orphanNew++
		}
	}
	if orphanNew != 0 || len(g.OrphanedBuildDirs()) != 2 {
		t.Fatalf("orphaned build folders: want the 2 legacy build-script folders, got %d (%d new-layout)", len(g.OrphanedBuildDirs()), orphanNew)
	}
}

// Damaged new-layout records: a fingerprint that is a file, a unit folder holding only an empty out/
// (Cargo leaves one for a doctest unit), a package folder with a non-hash entry. Each is named or
// passed over; nothing panics, and the profile with an unreadable record is not judged.
func TestReadNewLayoutOddRecords(t *testing.T) {
	testutil.NeedDebianCrates(t)
	var p *testutil.Project
	testutil.InNewLayout(t, func(t *testing.T) {
		p = testutil.NewProject(t, layoutWorkspace(t))
		p.Cargo("build")
	})
	build := p.Path("target/debug/build")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(build, "app", "0123456789abcdef", "out"), 0o755))
	must(os.MkdirAll(filepath.Join(build, "app", "not-a-hash", "fingerprint"), 0o755))
	g := readGraph(t, p)
	if len(g.Problems) != 0 {
		t.Fatalf("problems: %v", g.Problems)
	}
	for _, d := range g.BuildDirs {
		if d.Hash == "0123456789abcdef" {
			t.Errorf("an empty out/ folder is listed as a build folder: %+v", d)
		}
	}
	if ok, why := g.Judged("debug"); !ok {
		t.Fatalf("debug not judged: %s", why)
	}
	odd := filepath.Join(build, "cc", "fedcba9876543210", "fingerprint")
	must(os.MkdirAll(filepath.Dir(odd), 0o755))
	must(os.WriteFile(odd, []byte("x"), 0o644))
	g = readGraph(t, p)
	var named bool
	for _, pr := range g.Problems {
		if pr.Path == odd && strings.Contains(pr.Err, "not a folder") {
			named = true
		}
	}
	if !named {
		t.Fatalf("the fingerprint file is not named as a problem: %v", g.Problems)
	}
	if ok, _ := g.Judged("debug"); ok {
		t.Fatal("a profile with an unreadable record is judged")
	}
}
