package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// After a failed build (hash files emptied), the units Cargo would reuse are tied by name and
// configuration: a run made under other RUSTFLAGS, or for another feature set, is not one of them, so
// it stays orphaned and no finding about it names the current binary (the truth harness found both as
// false errors after a fix).
func TestFailedRunReuseIgnoresOtherConfigurations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(p *testutil.Project)
		is    func(s *graph.Step) bool // the other configuration's build-script compile
	}{
		{"rustflags", func(p *testutil.Project) {
			p.Env = append(p.Env, "RUSTFLAGS=--cfg truth_rf")
			p.Cargo("build")
			p.Env = p.Env[:len(p.Env)-1]
		}, func(s *graph.Step) bool { return strings.Contains(strings.Join(unit.Of(s).Rustflags, " "), "truth_rf") }},
		{"feature", func(p *testutil.Project) { p.Cargo("build", "--features", "app/fast") },
			func(s *graph.Step) bool { return strings.Join(s.Records().Features, ",") == "fast" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testutil.NewProject(t, testutil.CCSys(t))
			p.Cargo("build")
			tc.build(p)
			p.Cargo("build")
			p.Edit("fastmath-sys/native/x.c", "return v * X_SCALE;", "return v * X_SCALE; }\n#error broken\nint dummy(void) {")
			if _, err := p.CargoErr("build"); err == nil {
				t.Fatal("the premise fails: the broken build succeeded")
			}
			fs, g := p.Check()
			var other *graph.Step
			for _, x := range g.Steps {
				for _, d := range x.Deps {
					if x.Kind == graph.ScriptRun && d.Kind == graph.ScriptCompile && d.Package == "fastmath-sys" && tc.is(d) {
						other = x
					}
				}
			}
			if other == nil {
				t.Fatal("no build-script run of the other configuration found")
			}
			if other.Live() {
				t.Errorf("the other configuration's run %s is live for %v", other.Script().RunDir, other.Roots)
			}
			for _, f := range fs {
				if testutil.HasSubject(f, other.Script().RunDir) && len(f.Roots) > 0 {
					t.Errorf("%s %s names %v for the other configuration's run: %s", f.Severity, f.Rule, f.Roots, f.Message)
				}
			}
		})
	}
}
