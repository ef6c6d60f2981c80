package unit

import (
	"path/filepath"
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
		u + "/fingerprint/":                                    false, // as filepath.Dir counts folders
		u + "//fingerprint":                                    true,
		"fingerprint":                                          false,
		"":                                                     false,
	} {
		if got := IsNewLayoutRecord(dir); got != want {
			t.Errorf("IsNewLayoutRecord(%s) = %v, want %v", dir, got, want)
		}
	}
	s := &graph.Step{ProfileDir: "debug", Package: "fastmath-sys", Origin: &Unit{Hash: "594afa23a9542f99", FingerprintDir: fresh.Fingerprint}}
	if d := cmp.Diff(fresh, PathsOf(b, s)); d != "" {
		t.Errorf("PathsOf (-want +got):\n%s", d)
	}
	old := &graph.Step{ProfileDir: "debug", Package: "fastmath-sys", Origin: &Unit{Hash: "594afa23a9542f99", FingerprintDir: legacy.Fingerprint}}
	for _, s := range []*graph.Step{s, old, {}, nil} {
		if IsNew(s) != PathsOf(b, s).New {
			t.Errorf("IsNew(%+v) = %v, PathsOf's New %v", s, IsNew(s), PathsOf(b, s).New)
		}
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

// TestLayoutPathsJoined: the paths joined by hand are filepath.Join's, for odd folders and names too
// (which take Join's way).
func TestLayoutPathsJoined(t *testing.T) {
	for _, dir := range []string{"/w/target", "/w/target/", "/", "", "rel/t", "/w//t/../t", "."} {
		for _, prof := range []string{"debug", "x86_64-unknown-linux-gnu/release", "", ".", "../up", "a/"} {
			for _, pkg := range []string{"fastmath-sys", "", ".", "..", "a/b", "-"} {
				for _, hash := range []string{"594afa23a9542f99", "", "."} {
					for _, nl := range []bool{false, true} {
						if d := cmp.Diff(joinedPaths(filepath.Join(dir, prof), pkg, hash, nl), LayoutPaths(dir, prof, pkg, hash, nl)); d != "" {
							t.Errorf("LayoutPaths(%q, %q, %q, %q, %v) (-Join +got):\n%s", dir, prof, pkg, hash, nl, d)
						}
					}
				}
			}
		}
	}
}

// TestParsePath: every path LayoutPaths gives, in both layouts, parses back to its unit and area;
// deps/ files give the hash their name ends with; paths of no unit are refused.
func TestParsePath(t *testing.T) {
	const b, h = "/w/target", "594afa23a9542f99"
	for _, newLayout := range []bool{false, true} {
		p := LayoutPaths(b, "x86_64-unknown-linux-gnu/release", "fastmath-sys", h, newLayout)
		lay := Legacy
		if newLayout {
			lay = NewLayout
		}
		for _, c := range []struct {
			path string
			area Area
			rest string
		}{
			{p.Out + "/libfastmath.a", AreaOut, "libfastmath.a"},
			{p.Out + "/include/fm.h", AreaOut, "include/fm.h"},
			{p.Stdout, AreaRun, filepath.Base(p.Stdout)},
			{p.Fingerprint + "/invoked.timestamp", AreaFingerprint, "invoked.timestamp"},
		} {
			want := Place{Layout: lay, ProfileDir: b + "/x86_64-unknown-linux-gnu/release", Package: "fastmath-sys", Hash: h,
				Area: c.area, Unit: p.Folder, Rest: c.rest}
			if c.area == AreaFingerprint && !newLayout {
				want.Unit = ""
			}
			got, ok := ParsePath(c.path)
			if d := cmp.Diff(want, got); !ok || d != "" {
				t.Errorf("ParsePath(%s) ok=%v (-want +got):\n%s", c.path, ok, d)
			}
		}
	}
	if got, ok := ParsePath(b + "/debug/build/app/" + h); !ok || got.Layout != NewLayout || got.Area != "" || got.Unit != b+"/debug/build/app/"+h {
		t.Errorf("new-layout unit folder: %+v %v", got, ok)
	}
	if got, ok := ParsePath(b + "/debug/deps/librcalc-0123456789abcdef.a"); !ok || got.Area != AreaDeps || got.Hash != "0123456789abcdef" || got.ProfileDir != b+"/debug" {
		t.Errorf("deps file: %+v %v", got, ok)
	}
	if got, ok := ParsePath(b + "/debug/deps/app"); !ok || got.Area != AreaDeps || got.Hash != "" {
		t.Errorf("deps file without hash: %+v %v", got, ok)
	}
	for _, p := range []string{b + "/debug/app", b + "/debug/build/notahash-xyz/out/lib.a", "/src/build/lib.a", b + "/debug/libapp.a", "/"} {
		if got, ok := ParsePath(p); ok {
			t.Errorf("ParsePath(%s) = %+v, want no unit", p, got)
		}
	}
}
