package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// After a failed build script (its hash file emptied), the units Cargo would reuse are tied by name
// and configuration: the run made under other RUSTFLAGS is not one of them, so it stays orphaned and no
// finding about it names the current binary.
func TestFailedRunReuseIgnoresOtherRustflags(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	p.Cargo("build")
	p.Env = append(p.Env, "RUSTFLAGS=--cfg truth_rf")
	p.Cargo("build")
	p.Env = p.Env[:len(p.Env)-1]
	p.Cargo("build")
	p.Edit("fastmath-sys/native/x.c", "return v * X_SCALE;", "return v * X_SCALE; }\n#error broken\nint dummy(void) {")
	if _, err := p.CargoErr("build"); err == nil {
		t.Fatal("the premise fails: the broken build succeeded")
	}
	fs, g := p.Check()
	var rf *graph.Step
	for _, s := range g.Steps {
		if s.Kind == graph.BuildScriptCompile && s.Package == "fastmath-sys" && strings.Contains(strings.Join(s.Config.Rustflags, " "), "truth_rf") {
			for _, x := range g.Steps {
				for _, d := range x.Deps {
					if d == s && x.Kind == graph.BuildScriptRun {
						rf = x
					}
				}
			}
		}
	}
	if rf == nil {
		t.Fatal("no build-script run of the RUSTFLAGS configuration found")
	}
	if rf.Live() {
		t.Errorf("the run of the RUSTFLAGS configuration %s is live for %v", rf.RunDir, rf.Roots)
	}
	for _, f := range fs {
		if testutil.HasSubject(f, rf.RunDir) && len(f.Roots) > 0 {
			t.Errorf("%s %s names %v for the other configuration's run: %s", f.Severity, f.Rule, f.Roots, f.Message)
		}
	}
}
