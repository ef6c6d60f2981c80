package check_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// runInput returns the input of the package's live build-script run with that path (nil when none).
func runInput(g *graph.Graph, pkg, path string) *graph.Input {
	for _, s := range g.Steps {
		if s.Kind != graph.ScriptRun || s.Package != pkg || !s.Live() {
			continue
		}
		for _, in := range s.Inputs {
			if in.File.Path == path {
				return in
			}
		}
	}
	return nil
}

func includeDetail(in *graph.Input) string {
	for i, h := range in.How {
		if h == graph.IncludeScan {
			return in.Detail[i]
		}
	}
	return ""
}

// Repro 01: a header in the cc crate's -I folder is edited; Cargo says Fresh and the binary is stale.
// The running: line holds -I native/include, so the include scan ties the header to the step: an
// error, not a candidate warning. Transitive and conditional includes are followed; system headers
// are not inputs.
func TestIncludeScanHeaderInIncludeFolder(t *testing.T) {
	testutil.NeedDebianCrates(t)
	p := testutil.NewProject(t, testutil.CcIncludeWorkspace())
	p.Cargo("build", "--release")
	fs, g := p.Check()
	if bad := testutil.AtLeast(fs, check.Warning); len(bad) != 0 {
		t.Fatalf("healthy build: want no warning or error (check --fail-on warning exits 0), got:\n%s", testutil.Dump(bad))
	}
	for _, h := range []struct {
		rel  string
		cond bool
		via  string
	}{
		{"native/include/x.h", false, `includes "x.h", found in -I fastmath-sys/native/include`},
		{"native/include/cfg.h", false, `includes <cfg.h>, found in -I fastmath-sys/native/include`},
		{"native/include/detail.h", false, `fastmath-sys/native/include/x.h line 3 includes "detail.h", found beside the including file`},
		{"native/include/fast.h", true, `includes "fast.h"`},
	} {
		in := runInput(g, "fastmath-sys", p.Path("fastmath-sys/"+h.rel))
		if in == nil || !in.Has(graph.IncludeScan) || in.Watched {
			t.Fatalf("%s: want an unwatched include-scan input, got %+v", h.rel, in)
		}
		d := includeDetail(in)
		if !strings.Contains(d, h.via) || !strings.Contains(d, "running: line in") {
			t.Errorf("%s: detail %q lacks %q and the running: line", h.rel, d, h.via)
		}
		if got := strings.Contains(d, "reached through a conditional #include"); got != h.cond {
			t.Errorf("%s: conditional note %v, want %v: %q", h.rel, got, h.cond, d)
		}
	}
	for _, s := range g.Steps {
		for _, in := range s.Inputs {
			if strings.HasPrefix(in.File.Path, "/usr/") {
				t.Errorf("a system header is an input of %s: %s (%v)", s.ID, in.File.Path, in.How)
			}
		}
	}

	bin := p.Path("target/release/app")
	for _, edit := range []struct{ rel, old, new string }{
		{"native/include/x.h", "banner v1", "banner v2"},
		{"native/include/detail.h", "X_SCALE 3", "X_SCALE 4"}, // reached through x.h
		{"native/include/fast.h", "1000", "2000"},             // conditional: over-approximated, still reported
	} {
		p.Edit("fastmath-sys/"+edit.rel, edit.old, edit.new)
		if out := p.Cargo("build", "--release", "-v"); !strings.Contains(out, "Fresh fastmath-sys") {
			t.Fatalf("the premise fails: cargo rebuilt fastmath-sys after editing %s:\n%s", edit.rel, out)
		}
		fs, _ := p.Check()
		f := one(t, fs, "untracked-input-changed")
		path := p.Path("fastmath-sys/" + edit.rel)
		if f.Severity != check.Error || f.Subjects[0] != path || !strings.Contains(evidenceHow(f, "input"), "include-scan") {
			t.Fatalf("after editing %s: want an error naming it, known by include-scan:\n%s", edit.rel, testutil.Dump(fs))
		}
		if !testutil.HasSubject(check.Finding{Subjects: f.Roots}, bin) || !strings.Contains(f.Fix, "rerun-if-changed=native/include") {
			t.Errorf("roots %v or fix %q", f.Roots, f.Fix)
		}
		if edit.rel == "native/include/fast.h" && !strings.Contains(testutil.Dump([]check.Finding{f}), "reached through a conditional #include") {
			t.Errorf("the evidence does not say the scan over-approximates:\n%s", testutil.Dump([]check.Finding{f}))
		}
		// Every undeclared header is tied to the step by the scan, so the disabled package scan is
		// housekeeping (info): an edit is reported as the error above.
		if w := one(t, fs, "rerun-scan-disabled"); w.Severity != check.Info || !strings.Contains(w.Message, "untracked-input-changed error") {
			t.Errorf("rerun-scan-disabled should be info when the records tie every source:\n%s", testutil.Dump([]check.Finding{w}))
		}
		// Back to fresh for the next edit: the fix the finding gives (touch build.rs, rebuild).
		p.Write("fastmath-sys/build.rs", readAll(t, p.Path("fastmath-sys/build.rs")))
		p.Cargo("build", "--release")
	}
	if !fileContains(t, bin, "banner v2") {
		t.Fatal("after the rebuilds the binary lacks the edited banner")
	}

	// Declared: Cargo watches the folder, so an edit is pending-rebuild, not untracked.
	p.Edit("fastmath-sys/build.rs", `println!("cargo:rerun-if-changed=native/x.c");`, `println!("cargo:rerun-if-changed=native");`)
	p.Cargo("build", "--release")
	fs, _ = p.Check()
	if bad := testutil.AtLeast(fs, check.Warning); len(bad) != 0 {
		t.Fatalf("declared build: want no warning, got:\n%s", testutil.Dump(bad))
	}
	p.Edit("fastmath-sys/native/include/detail.h", "X_SCALE 4", "X_SCALE 5")
	fs, _ = p.Check()
	none(t, fs, "untracked-input-changed")
	var header bool
	for _, f := range testutil.Rule(fs, "pending-rebuild") {
		header = header || f.Subjects[0] == p.Path("fastmath-sys/native/include/detail.h") && strings.Contains(evidenceHow(f, "input"), "include-scan")
	}
	if !header {
		t.Fatalf("want a pending-rebuild naming detail.h known by include-scan:\n%s", testutil.Dump(fs))
	}
	if out := p.Cargo("build", "--release", "-v"); !strings.Contains(out, "Running `") || strings.Contains(out, "Fresh fastmath-sys") {
		t.Fatalf("the oracle disagrees: cargo did not rerun the build script:\n%s", out)
	}
}

func readAll(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
