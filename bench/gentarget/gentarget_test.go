package gentarget

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// The ar writer must produce what binutils' `ar rcs` (deterministic, Debian's default) writes.
func TestWriteArMatchesBinutils(t *testing.T) {
	arPath, err := exec.LookPath("ar")
	if err != nil {
		t.Skip("no ar")
	}
	objs, err := buildTemplates("", 40)
	if err != nil || !objs.elf {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	var members []arMember
	var names []string
	for _, n := range []string{"kernel.o", "0123456789abcdef-ops.o", "unit_007.c.o"} {
		stem := strings.TrimSuffix(strings.TrimSuffix(n, ".o"), ".c")
		if i := strings.IndexByte(stem, '-'); i >= 0 {
			stem = stem[i+1:]
		}
		tpl, unit := objs.stems[stem], ""
		if tpl == nil {
			tpl, unit = objs.stems[unitPH], stem
		}
		data, syms := objs.object(tpl, "/some/package/root", "00112233aabbccdd", "ffeeddccbbaa9988", unit)
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
		members = append(members, arMember{Name: n, Data: data, Symbols: syms})
		names = append(names, n)
	}
	cmd := exec.Command(arPath, append([]string{"rcsD", "want.a"}, names...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ar: %v: %s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(dir, "want.a"))
	if err != nil {
		t.Fatal(err)
	}
	if got := writeAr(members); !bytes.Equal(got, want) {
		t.Fatalf("writeAr differs from `ar rcsD`: %d vs %d bytes", len(got), len(want))
	}
}

func generate(t testing.TB, opt Options) *Result {
	t.Helper()
	if opt.Units == 0 {
		opt.Units = 250
	}
	if opt.Files == 0 {
		opt.Files = 6000
	}
	if opt.BinRodataKB == 0 {
		opt.BinRodataKB = 256
	}
	res, err := Run(filepath.Join(t.TempDir(), "tree"), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func readGraph(t testing.TB, res *Result) *graph.Graph {
	t.Helper()
	env := map[string]string{"CARGO_HOME": res.CargoHome, "HOME": filepath.Dir(res.CargoHome)}
	l, err := cargo.Locate(res.Workspace, cargo.LocateOptions{Getenv: func(k string) string { return env[k] }, Cwd: res.Workspace})
	if err != nil {
		t.Fatal(err)
	}
	g, err := cargo.Read(l, cargo.ReadOptions{CargoHome: res.CargoHome})
	if err != nil {
		t.Fatal(err)
	}
	evidence.Annotate(g, "") // as `stalecheck check` does (no cache)
	return g
}

// The records are what Cargo 1.95 writes: every hash file 16 hex, every JSON a fingerprint whose deps
// hashes (LE hex) name existing hash files, every dep-info decodable, archives readable, and the files
// a dep-info or rerun-if-changed list names exist and are not newer than the reference.
func TestRecordsAreFaithful(t *testing.T) {
	res := generate(t, Options{})
	if res.Files < 6000 || res.Units < 250 {
		t.Fatalf("files %d units %d", res.Files, res.Units)
	}
	rel := filepath.Join(res.TargetDir, profile)
	fps, err := filepath.Glob(filepath.Join(rel, ".fingerprint", "*", "*.json"))
	if err != nil || len(fps) != res.Units {
		t.Fatalf("%d fingerprint JSON files, %d units (%v)", len(fps), res.Units, err)
	}
	hashes := map[string]bool{}
	for _, j := range fps {
		h, err := cargo.ReadHashFile(strings.TrimSuffix(j, ".json"))
		if err != nil || h == "" {
			t.Fatalf("%s: %q %v", j, h, err)
		}
		hashes[h] = true
	}
	for _, j := range fps {
		data, _ := os.ReadFile(j)
		fp, err := cargo.ParseFingerprint(data)
		if err != nil {
			t.Fatalf("%s: %v", j, err)
		}
		for _, d := range fp.Deps {
			if !hashes[cargo.HashHex(d.Hash)] {
				t.Errorf("%s: dep %s hash %s names no hash file", j, d.Name, cargo.HashHex(d.Hash))
			}
		}
		ref := strings.TrimSuffix(j, ".json")
		for _, l := range fp.Local {
			switch {
			case l.CheckDepInfo != nil:
				p := filepath.Join(res.TargetDir, l.CheckDepInfo.DepInfo)
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				di, err := cargo.ParseDepInfo(data)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				refT := mtime(t, p)
				for _, f := range di.Files {
					if f.PackageRelative {
						continue // checked through stalecheck below
					}
					if ft := mtime(t, filepath.Join(res.TargetDir, f.Path)); ft.After(refT) {
						t.Errorf("%s: %s is newer than the dep-info", p, f.Path)
					}
				}
			case l.RerunIfChanged != nil:
				ref = filepath.Join(res.TargetDir, l.RerunIfChanged.Output)
				if _, err := os.Stat(ref); err != nil {
					t.Error(err)
				}
			}
		}
	}
	archives, _ := filepath.Glob(filepath.Join(rel, "build", "*", "out", "lib*.a"))
	rlibs, _ := filepath.Glob(filepath.Join(rel, "deps", "*.rlib"))
	if len(archives) == 0 || len(rlibs) == 0 {
		t.Fatalf("%d archives, %d rlibs", len(archives), len(rlibs))
	}
	for _, a := range append(archives, rlibs...) {
		ar, err := binfmt.OpenArchive(a)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if !res.ELF || strings.HasSuffix(a, ".rlib") {
			continue
		}
		for _, m := range ar.Members {
			sr, c, err := ar.Open(m)
			if err != nil {
				t.Fatal(err)
			}
			cus, err := binfmt.CompileUnits(sr)
			c.Close()
			if err != nil || len(cus) != 1 {
				t.Fatalf("%s(%s): %d compile units, %v", a, m.Name, len(cus), err)
			}
			src := filepath.Join(cus[0].CompDir, cus[0].Name)
			if _, err := os.Stat(src); err != nil {
				t.Errorf("%s(%s): DWARF names %s: %v", a, m.Name, src, err)
			}
		}
	}
	// Uplifted artifacts are hard links of their deps/ files.
	ents, _ := os.ReadDir(rel)
	links := 0
	for _, e := range ents {
		if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), ".d") && !strings.HasPrefix(e.Name(), ".") {
			st, _ := os.Stat(filepath.Join(rel, e.Name()))
			if n := nlink(st); n != 2 {
				t.Errorf("%s: link count %d", e.Name(), n)
			}
			links++
		}
	}
	if links != res.Roots {
		t.Errorf("%d uplifted artifacts, %d roots", links, res.Roots)
	}
}

func mtime(t testing.TB, p string) time.Time {
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime()
}

// On the clean tree stalecheck reads every unit, ties every root by inode, finds the same edges and
// live units as the generator made, and reports no error and no unreadable record.
func TestStalecheckOnCleanTree(t *testing.T) {
	res := generate(t, Options{})
	g := readGraph(t, res)
	if len(g.Problems) > 0 {
		t.Errorf("unreadable records: %v", g.Problems)
	}
	if len(g.Steps) != res.Units {
		t.Errorf("stalecheck read %d units, the generator wrote %d", len(g.Steps), res.Units)
	}
	if len(g.Roots) != res.Roots {
		t.Errorf("stalecheck found %d roots, the generator made %d", len(g.Roots), res.Roots)
	}
	for _, r := range g.Roots {
		if r.TiedBy != "inode" {
			t.Errorf("root %s tied by %q", r.File.Path, r.TiedBy)
		}
	}
	compareEdges(t, res, g, false)
	// Content evidence: every binary holds the copy its own configuration links (the generator linked
	// exactly the archives of the runs its unit reaches).
	if res.LinkedBins {
		matched := 0
		for _, cm := range g.Content {
			if cm.Outcome != "matched" {
				continue
			}
			matched++
			for _, m := range cm.Matched {
				run := ""
				for _, s := range g.Steps {
					if s.Kind == graph.ScriptRun && strings.HasPrefix(m, s.Script().OutDir+"/") {
						run = s.ID
					}
				}
				reached := false
				for _, s := range cm.Root.Reach() {
					reached = reached || s.ID == run
				}
				if !reached {
					t.Errorf("%s holds %s by content, which its unit does not reach", cm.Root.File.Path, m)
				}
			}
		}
		if matched == 0 {
			t.Errorf("no content match on a tree with duplicated libraries and linked binaries")
		}
	}
	findings := check.Run(g, check.Options{})
	rules := map[string]int{}
	for _, f := range findings {
		rules[f.Rule]++
		if f.Severity == check.Error || f.Rule == "unreadable-record" {
			t.Errorf("%s %s: %s", f.Severity, f.Rule, f.Message)
		}
	}
	for _, r := range []string{"duplicate-native-artifact", "orphaned-build-dir", "rerun-scan-disabled"} {
		if rules[r] == 0 {
			t.Errorf("no %s finding on a tree built to have them", r)
		}
	}
	t.Logf("findings by rule: %v", rules)
}

// compareEdges checks that stalecheck's graph has the generator's edges and live units. With soft,
// mismatches are logged, not failed.
func compareEdges(t *testing.T, res *Result, g *graph.Graph, soft bool) int {
	bad := 0
	report := t.Errorf
	if soft {
		report = t.Logf
	}
	for _, s := range g.Steps {
		var got []string
		for _, d := range s.Deps {
			got = append(got, d.ID)
		}
		want := append([]string(nil), res.Edges[s.ID]...)
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			bad++
			report("%s deps:\n got  %v\n want %v", s.ID, got, want)
		}
		if s.Live() != res.Live[s.ID] {
			bad++
			report("%s: live %v, generator says %v", s.ID, s.Live(), res.Live[s.ID])
		}
	}
	return bad
}

// Two build-script runs of different packages with the same hash file content, both the `links`
// dependency of other build scripts: the run → run edge can only be resolved by the deps entry's
// package id, which internal/cargo resolveDeps learns from the untied edges. A wrong edge would give
// false binary-older-than-input errors.
func TestTieAcrossLinksDependencies(t *testing.T) {
	res := generate(t, Options{TieLinks: true})
	if res.Tie[0] == "" {
		t.Skip("no tie in this tree")
	}
	g := readGraph(t, res)
	bad := compareEdges(t, res, g, false)
	var errs []string
	for _, f := range check.Run(g, check.Options{}) {
		if f.Severity == check.Error {
			errs = append(errs, f.Rule+": "+f.Message)
		}
	}
	if bad > 0 || len(errs) > 0 {
		t.Errorf("%d edge mismatches, %d error findings on a clean tree whose runs %s and %s share a hash", bad, len(errs), res.Tie[0], res.Tie[1])
		for _, e := range errs {
			t.Log(e)
		}
	}
}

// The docs §3 history: build, build --features simd, build again (a no-op that re-uplifts). Every
// binary holds the default copy, which is what Cargo would build now, yet the toggled copy is newer:
// linked-copy-not-newest is then a warning (records and bytes agree), never an error.
func TestToggleAfterDefaultBuild(t *testing.T) {
	res := generate(t, Options{ToggleAfter: true})
	g := readGraph(t, res)
	compareEdges(t, res, g, false)
	n := 0
	for _, f := range check.Run(g, check.Options{}) {
		if f.Severity == check.Error {
			n++
			t.Logf("%s: %s", f.Rule, f.Message)
		}
	}
	if n > 0 {
		t.Errorf("%d error findings after a feature toggle and a no-op rebuild", n)
	}
}

// Touched native sources give error findings that name them.
func TestStalecheckOnStaleTree(t *testing.T) {
	res := generate(t, Options{Stale: 10})
	if len(res.Touched) == 0 {
		t.Fatal("nothing touched")
	}
	g := readGraph(t, res)
	named := map[string]string{}
	for _, f := range check.Run(g, check.Options{}) {
		if f.Severity == check.Error {
			for _, s := range f.Subjects {
				named[s] = f.Rule
			}
			for _, e := range f.Evidence {
				if e.Kind == "input" {
					named[e.Path] = f.Rule
				}
			}
		}
	}
	for _, p := range res.Touched {
		if named[p] == "" {
			t.Errorf("no error finding names %s", p)
		} else {
			t.Logf("%s: %s", named[p], p)
		}
	}
}
