package clean_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/clean"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// twin makes a cp -a copy of a project (mtimes and hard links kept: Cargo judges it as the original).
func twin(t *testing.T, p *testutil.Project) *testutil.Project {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "twin")
	if out, err := exec.Command("cp", "-a", p.Dir, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return &testutil.Project{T: t, Dir: dst, NewLayout: p.NewLayout}
}

// verbs returns what `cargo build -v` did per package ("Compiling cc", "Fresh app"), sorted, and
// whether it compiled a build script.
func verbs(out string) (lines []string, scriptCompiled bool) {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && (f[0] == "Compiling" || f[0] == "Fresh") {
			lines = append(lines, f[0]+" "+f[1])
		}
		if strings.Contains(l, "--crate-name build_script_build") {
			scriptCompiled = true
		}
	}
	sort.Strings(lines)
	return lines, scriptCompiled
}

// orphansOf returns the build folders check reports as orphaned-build-dir.
func orphansOf(fs []check.Finding) []string {
	var out []string
	for _, f := range testutil.Rule(fs, "orphaned-build-dir") {
		out = append(out, f.Subjects...)
	}
	sort.Strings(out)
	return out
}

// buildDirItems returns the build folders a plan removes.
func buildDirItems(plan *clean.Plan) []string {
	var out []string
	for _, it := range plan.Items {
		if it.Kind == clean.KindBuildDir {
			out = append(out, it.Path)
		}
	}
	sort.Strings(out)
	return out
}

// runUnit returns fastmath-sys's build-script run unit of a profile (the only one there).
func runUnit(t *testing.T, g *graph.Graph, prof string) *graph.Step {
	t.Helper()
	var found *graph.Step
	for _, s := range g.Steps {
		if s.Package == "fastmath-sys" && s.Kind == graph.ScriptRun && s.ProfileDir == prof {
			if found != nil {
				t.Fatalf("two runs of fastmath-sys in %s: %s, %s", prof, found.ID, s.ID)
			}
			found = s
		}
	}
	if found == nil {
		t.Fatalf("no run of fastmath-sys in %s", prof)
	}
	return found
}

// Repro 05: a C syntax error makes the build script fail (Cargo empties the run's hash file, and those
// of its dependants). The failed run, its build-script compile and cc are the live configuration's:
// check calls none of them orphaned, clean plans nothing, and after clean --yes and the fix, cargo does
// exactly what it does on an uncleaned copy (cc Fresh, the build script not recompiled).
func TestCleanKeepsFailedBuildScriptRun(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	p.Cargo("build")
	p.Edit("fastmath-sys/native/x.c", "int x_compute", "this is not C;\nint x_compute")
	if out, err := p.CargoErr("build"); err == nil || !strings.Contains(out, "failed to run custom build command") {
		t.Fatalf("the build with a C syntax error did not fail in the build script (err %v):\n%s", err, out)
	}
	fs, g := p.Check()
	run := runUnit(t, g, "debug")
	if run.Failed == "" || !run.Live() {
		t.Fatalf("the failed run %s: failed %q, live %v; want failed and live", run.ID, run.Failed, run.Live())
	}
	for _, s := range g.Steps {
		if !s.Live() && (s.Package == "cc" || s.Package == "fastmath-sys") {
			t.Errorf("%s is not live after the failed build", s.ID)
		}
	}
	if o := orphansOf(fs); len(o) != 0 {
		t.Fatalf("check calls live folders orphaned: %v\n%s", o, testutil.Dump(fs))
	}
	plan := runClean(t, p, clean.Request{})
	if strings.Join(plan.Profiles, ",") != "debug" || len(plan.Items) != 0 {
		t.Fatalf("profiles judged %v (want [debug]); planned %v", plan.Profiles, rels(plan, clean.Planned))
	}
	uncleaned := twin(t, p)
	if done := runClean(t, p, clean.Request{Yes: true}); len(rels(done, clean.Removed)) != 0 {
		t.Fatalf("clean --yes removed %v", rels(done, clean.Removed))
	}
	for _, q := range []*testutil.Project{p, uncleaned} {
		q.Edit("fastmath-sys/native/x.c", "this is not C;\n", "")
	}
	got, compiled := verbs(p.Cargo("build", "-v"))
	want, _ := verbs(uncleaned.Cargo("build", "-v"))
	if strings.Join(got, ",") != strings.Join(want, ",") || compiled {
		t.Fatalf("after clean, cargo did %v (build script compiled: %v); on the uncleaned copy %v", got, compiled, want)
	}
	if !strings.Contains(strings.Join(got, ","), "Fresh cc") {
		t.Fatalf("cc is not Fresh after the fix: %v", got)
	}
}

// Repro 08: an unreadable (non-hex) hash file of the live build-script run. check reports it and
// judges no orphan there; clean leaves the whole profile alone and says why, naming the file; after
// clean --yes cargo only reruns the script, as on an uncleaned copy.
func TestCleanLeavesProfileWithUnreadableRecord(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	p.Cargo("build")
	_, g := p.Check()
	run := runUnit(t, g, "debug")
	hashFile := filepath.Join(unit.Of(run).FingerprintDir, unit.Of(run).Target)
	if err := os.WriteFile(hashFile, []byte("zzzzzzzzzzzzzzzz"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, g := p.Check()
	requireUnreadable(t, fs, hashFile)
	if o := orphansOf(fs); len(o) != 0 {
		t.Fatalf("check judges orphans in a profile with an unreadable record: %v", o)
	}
	if !runUnit(t, g, "debug").Live() {
		t.Errorf("the run with the unreadable hash file is not live")
	}
	plan := runClean(t, p, clean.Request{Options: clean.Options{Profile: "dev"}})
	if len(plan.Items) != 0 || len(plan.Profiles) != 0 {
		t.Fatalf("clean judges %v and plans %v", plan.Profiles, rels(plan, clean.Planned))
	}
	if len(plan.Notes) != 1 || !strings.Contains(plan.Notes[0], "profile debug is not cleaned") || !strings.Contains(plan.Notes[0], hashFile) {
		t.Fatalf("notes %q: want one saying profile debug is not cleaned because of %s", plan.Notes, hashFile)
	}
	var text strings.Builder
	if err := clean.WriteText(&text, plan); err != nil || !strings.Contains(text.String(), "no profile folder could be judged") {
		t.Fatalf("text (err %v):\n%s", err, text.String())
	}
	uncleaned := twin(t, p)
	runClean(t, p, clean.Request{Yes: true, Options: clean.Options{Profile: "dev"}})
	got, compiled := verbs(p.Cargo("build", "-v"))
	want, _ := verbs(uncleaned.Cargo("build", "-v"))
	if strings.Join(got, ",") != strings.Join(want, ",") || compiled || !strings.Contains(strings.Join(got, ","), "Fresh cc") {
		t.Fatalf("after clean, cargo did %v (build script compiled: %v); on the uncleaned copy %v", got, compiled, want)
	}
}

// check's orphaned-build-dir and clean's plan are one notion of live: after a feature toggle they name
// the same build folders (the other configuration's run and compile); and when the orphaned run's hash
// file holds the live run's hash (a tie, as two memchr runs had in a 175-crate workspace), neither
// calls it orphaned.
func TestCheckAndCleanAgreeOnOrphans(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	p.Cargo("build", "--release")
	p.Cargo("build", "--release", "--features", "app/fast")
	fs, g := p.Check()
	orphans := orphansOf(fs)
	if len(orphans) != 2 {
		t.Fatalf("check reports %d orphaned build folders, want 2 (the default run and compile): %v", len(orphans), orphans)
	}
	if got := buildDirItems(runClean(t, p, clean.Request{})); strings.Join(got, "\n") != strings.Join(orphans, "\n") {
		t.Fatalf("clean plans build folders\n%s\ncheck reports\n%s", strings.Join(got, "\n"), strings.Join(orphans, "\n"))
	}
	var live, dead *graph.Step
	for _, s := range g.Steps {
		if s.Package == "fastmath-sys" && s.Kind == graph.ScriptRun {
			if s.Live() {
				live = s
			} else {
				dead = s
			}
		}
	}
	if live == nil || dead == nil {
		t.Fatal("want a live and an orphaned run of fastmath-sys")
	}
	if err := os.WriteFile(filepath.Join(unit.Of(dead).FingerprintDir, unit.Of(dead).Target), []byte(unit.Of(live).FingerprintHash), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, _ = p.Check()
	orphans = orphansOf(fs)
	for _, o := range orphans {
		if o == dead.Script().RunDir || o == live.Script().RunDir {
			t.Fatalf("check calls the tied run %s orphaned", o)
		}
	}
	if got := buildDirItems(runClean(t, p, clean.Request{})); strings.Join(got, "\n") != strings.Join(orphans, "\n") {
		t.Fatalf("with a tie, clean plans build folders\n%s\ncheck reports\n%s", strings.Join(got, "\n"), strings.Join(orphans, "\n"))
	}
}

// A live unit's fingerprint folder replaced by a symlink to elsewhere, by a regular file, or left
// empty: the record cannot be read, so check says so and clean leaves the profile alone (a newcomer's
// attack found clean --yes deleting the live OUT_DIR and cc's rlib).
func TestCleanLeavesProfileWithOddFingerprintFolder(t *testing.T) {
	for _, kind := range []string{"symlink", "file", "empty"} {
		t.Run(kind, func(t *testing.T) {
			p := testutil.NewProject(t, testutil.CCSys(t))
			p.Cargo("build")
			_, g := p.Check()
			dir := unit.Of(runUnit(t, g, "debug")).FingerprintDir
			aside := filepath.Join(t.TempDir(), filepath.Base(dir))
			if err := os.Rename(dir, aside); err != nil {
				t.Fatal(err)
			}
			var err error
			switch kind {
			case "symlink":
				err = os.Symlink(aside, dir)
			case "file":
				err = os.WriteFile(dir, []byte("x"), 0o644)
			case "empty":
				err = os.Mkdir(dir, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
			fs, _ := p.Check()
			requireUnreadable(t, fs, dir)
			plan := runClean(t, p, clean.Request{Yes: true, Options: clean.Options{Profile: "dev"}})
			if len(plan.Items) != 0 {
				t.Fatalf("clean removed %v", rels(plan, clean.Planned))
			}
			if _, err := os.Stat(filepath.Join(aside)); err != nil {
				t.Fatalf("the folder outside was touched: %v", err)
			}
		})
	}
}

// requireUnreadable fails the test unless an unreadable-record finding names path.
func requireUnreadable(t *testing.T, fs []check.Finding, path string) {
	t.Helper()
	for _, f := range testutil.Rule(fs, "unreadable-record") {
		if testutil.HasSubject(f, path) {
			return
		}
	}
	t.Fatalf("no unreadable-record for %s:\n%s", path, testutil.Dump(fs))
}
