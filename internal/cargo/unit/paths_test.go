package unit

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// The paths of the build-script run fastmath-sys-594afa23a9542f99 as cargo 1.95 wrote them in both
// layouts (docs/cargo-new-layout.md §1).
func TestLayoutPaths(t *testing.T) {
	const b = "/w/target"
	legacy := Paths{Fingerprint: b + "/debug/.fingerprint/fastmath-sys-594afa23a9542f99", Folder: b + "/debug/build/fastmath-sys-594afa23a9542f99",
		Run: b + "/debug/build/fastmath-sys-594afa23a9542f99", Out: b + "/debug/build/fastmath-sys-594afa23a9542f99/out",
		Stdout: b + "/debug/build/fastmath-sys-594afa23a9542f99/output", Artifacts: b + "/debug/deps",
		ScriptArtifacts: b + "/debug/build/fastmath-sys-594afa23a9542f99"}
	u := b + "/debug/build/fastmath-sys/594afa23a9542f99"
	fresh := Paths{New: true, Fingerprint: u + "/fingerprint", Unit: u, Folder: u, Run: u + "/run", Out: u + "/out",
		Stdout: u + "/run/stdout", Artifacts: u + "/out", ScriptArtifacts: u + "/out"}
	if d := cmp.Diff(legacy, LayoutPaths(b, "debug", "fastmath-sys", "594afa23a9542f99", false)); d != "" {
		t.Errorf("legacy (-want +got):\n%s", d)
	}
	if d := cmp.Diff(fresh, LayoutPaths(b, "debug", "fastmath-sys", "594afa23a9542f99", true)); d != "" {
		t.Errorf("new (-want +got):\n%s", d)
	}
	for dir, want := range map[string]bool{
		legacy.Fingerprint: false, fresh.Fingerprint: true,
		b + "/debug/.fingerprint/fingerprint-0123456789abcdef": false, // a package named "fingerprint"
		b + "/debug/build/fingerprint":                         false,
	} {
		if got := IsNewLayoutRecord(dir); got != want {
			t.Errorf("IsNewLayoutRecord(%s) = %v, want %v", dir, got, want)
		}
	}
	s := &graph.Step{ProfileDir: "debug", Package: "fastmath-sys", Origin: &Unit{Hash: "594afa23a9542f99", FingerprintDir: fresh.Fingerprint}}
	if d := cmp.Diff(fresh, PathsOf(b, s)); d != "" {
		t.Errorf("PathsOf (-want +got):\n%s", d)
	}
	if p := PathsOf(b, &graph.Step{}); p != (Paths{}) {
		t.Errorf("PathsOf a step of another system = %+v", p)
	}
	for s, want := range map[string]bool{"594afa23a9542f99": true, "594AFA23A9542F99": false, "594afa23a9542f9": false, "not-a-hash-at-al": false} {
		if IsHash(s) != want {
			t.Errorf("IsHash(%q) != %v", s, want)
		}
	}
}
