package explain_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/explain"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// Repro 04: after a feature toggle left a second set of units (the first set no longer live, its
// details not read), explain PACKAGE still says where Cargo takes the path package from: "path package
// at <folder>", in the text and in every JSON source, as it does after one build.
func TestPackageSourceAfterFeatureToggle(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	root := p.Path("fastmath-sys")
	check := func(when string, wantUnits int) {
		t.Helper()
		g := readGraph(t, p)
		r, err := explain.Package(g, "fastmath-sys", explain.Options{Cwd: p.Dir})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Sources) != 1 || r.Sources[0].Root != root || r.Sources[0].Kind != "path" || r.Sources[0].SourceID != "" {
			t.Fatalf("%s: sources %+v, want one path package at %s", when, r.Sources, root)
		}
		units, dead := 0, 0
		for _, role := range r.Roles {
			for _, v := range role.Variants {
				units++
				if !v.Step.Live() {
					dead++
				}
			}
		}
		if units != wantUnits || wantUnits > 3 && dead == 0 {
			t.Fatalf("%s: %d units (%d not live), want %d", when, units, dead, wantUnits)
		}
		var b bytes.Buffer
		if err := explain.WritePackageText(&b, g, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "fastmath-sys 0.1.0: path package at "+root+"\n") || strings.Contains(b.String(), "source unknown") {
			t.Fatalf("%s: text:\n%s", when, b.String())
		}
	}
	p.Cargo("build", "--release")
	check("after one build", 3) // lib, build-script run, build-script compile
	p.Cargo("build", "--release", "--features", "app/fast")
	check("after the feature toggle", 6)
}
