package evidence_test

import (
	"os"
	"testing"

	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A bin whose uplifted copy is gone is still found by its unit's own file, in both layouts: by the
// unit hash in the name (deps/app-<hash>, legacy) or by its unit folder (build/app/<hash>/out/app, new:
// no hash in the name).
func TestFindRootUnitFileBothLayouts(t *testing.T) {
	testutil.BothLayouts(t, func(t *testing.T) {
		p := testutil.NewProject(t, map[string]string{
			"Cargo.toml":  "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"src/main.rs": "fn main() { println!(\"app\"); }\n",
		})
		p.Cargo("build")
		pattern := "app-????????????????"
		if p.NewLayout {
			pattern = "app"
		}
		files := p.UnitFiles("debug", "app", pattern)
		if len(files) != 1 {
			t.Fatalf("the premise fails: the bin unit's files %v (new layout %v)", files, p.NewLayout)
		}
		if err := os.Remove(p.Path("target/debug/app")); err != nil {
			t.Fatal(err)
		}
		_, g := p.Check()
		r := evidence.FindRoot(g, files[0])
		if r == nil || r.Step == nil || r.Step.Package != "app" || r.Step.Kind != graph.Compile || r.File.Path != files[0] {
			t.Fatalf("FindRoot(%s) = %+v, want the bin unit of app", files[0], r)
		}
		if evidence.FindRoot(g, p.Path("src/main.rs")) != nil {
			t.Errorf("a source file is found as a root")
		}
	})
}
