package check_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// S02: two copies of libgroth16_cuda.a from two feature sets; which one does the binary link?
func TestS02TwoCopiesWhichIsLinked(t *testing.T) {
	p := testutil.NewProject(t, testutil.SysCrate("seed-sys", "groth16_cuda",
		map[string]string{"cuda/groth16.c": groth16V1}, nil, []string{"cargo:rerun-if-changed=build.rs"}))
	p.Cargo("build", "--release")
	fs, _ := p.Check()
	none(t, fs, "duplicate-native-artifact")

	p.Cargo("build", "--release", "--features", "timing")
	var lastFS []check.Finding
	linked := func() (check.Finding, map[string]string) {
		fs, g := p.Check()
		lastFS = fs
		f := one(t, fs, "duplicate-native-artifact")
		// features of the run that made each copy, from the graph
		feats := map[string]string{}
		for _, s := range g.Steps {
			if s.Kind == graph.ScriptRun && s.Package == "seed-sys" {
				feats[filepath.Join(s.Script().OutDir, "libgroth16_cuda.a")] = strings.Join(s.Records().Features, ",")
			}
		}
		return f, feats
	}
	f, feats := linked()
	noErrors(t, lastFS) // the binary links the newest copy
	if len(f.Subjects) != 2 {
		t.Fatalf("want both copies as subjects, got %v", f.Subjects)
	}
	var gotFeats []string
	linkedCopy := ""
	for _, e := range f.Evidence {
		if e.Kind != "copy" {
			continue
		}
		gotFeats = append(gotFeats, feats[e.Path])
		wantCfg := `features []`
		if feats[e.Path] == "timing" {
			wantCfg = `features ["timing"]`
		}
		if !strings.Contains(e.Detail, wantCfg) {
			t.Errorf("copy %s: detail %q lacks %q", e.Path, e.Detail, wantCfg)
		}
		if strings.Contains(e.Detail, "used by target/release/app") {
			linkedCopy = e.Path
		}
	}
	slices.Sort(gotFeats)
	if d := cmp.Diff([]string{"", "timing"}, gotFeats); d != "" {
		t.Fatalf("configurations of the copies (-want +got):\n%s", d)
	}
	if feats[linkedCopy] != "timing" {
		t.Fatalf("after the --features timing build the binary should link the timing copy; evidence:\n%s", testutil.Dump([]check.Finding{f}))
	}
	if !strings.Contains(f.Message, "target/release/app, target/release/libseed_sys.rlib built from the copy in seed-sys-") {
		t.Errorf("message does not say which copy the binary links: %s", f.Message)
	}

	// Switch the feature back: Cargo only re-links the uplift; no mtime in build/ changes, yet the answer flips.
	before := mtimes(t, p.Path("target/release/build"))
	p.Cargo("build", "--release")
	if d := cmp.Diff(before, mtimes(t, p.Path("target/release/build"))); d != "" {
		t.Fatalf("the premise fails: build/ changed:\n%s", d)
	}
	f, feats = linked()
	linkedCopy = ""
	for _, e := range f.Evidence {
		if e.Kind == "copy" && strings.Contains(e.Detail, "used by target/release/app") {
			linkedCopy = e.Path
		}
	}
	if linkedCopy == "" || feats[linkedCopy] != "" {
		t.Fatalf("after switching back the binary should link the default copy; evidence:\n%s", testutil.Dump([]check.Finding{f}))
	}
	// The bytes agree with the records, and say the copy inside is older than the timing copy:
	// linked-copy-not-newest, as info (the newer copy belongs to another configuration: nothing is
	// wrong, and issue 8 calls a warning there noise).
	noErrors(t, lastFS)
	lc := one(t, lastFS, "linked-copy-not-newest")
	if lc.Severity != check.Info {
		t.Errorf("linked-copy-not-newest severity %v, want info when records and bytes agree", lc.Severity)
	}
	if lc.Subjects[0] != p.Path("target/release/app") || lc.Subjects[1] != linkedCopy || feats[lc.Subjects[2]] != "timing" {
		t.Fatalf("unexpected linked-copy-not-newest:\n%s", testutil.Dump([]check.Finding{lc}))
	}
	if !strings.Contains(lc.Message, "proven by content") {
		t.Errorf("message lacks the content proof: %s", lc.Message)
	}

	// The fingerprint JSON of the lib unit the binary links made unreadable: its edge to the run is
	// unknown, so the finding does not say that no current binary uses either copy.
	_, g := p.Check()
	for _, s := range g.Steps {
		if s.Live() && s.Kind == graph.Compile && s.Package == "seed-sys" {
			p.Write(strings.TrimPrefix(filepath.Join(unit.Of(s).FingerprintDir, unit.Of(s).Target+".json"), p.Dir+"/"), "{}")
		}
	}
	fs, _ = p.Check()
	f = one(t, fs, "duplicate-native-artifact")
	if strings.Contains(f.Message, "no current binary uses") || !strings.Contains(f.Message, "cannot be told") {
		t.Errorf("with the linked lib unit's fingerprint unreadable: %s", f.Message)
	}
	// A run's fingerprint unreadable: its copy's features are unknown, not "[]" (the other copy's).
	for _, s := range g.Steps {
		if s.Kind == graph.ScriptRun && s.Package == "seed-sys" && strings.Join(s.Records().Features, ",") == "timing" {
			p.Write(strings.TrimPrefix(filepath.Join(unit.Of(s).FingerprintDir, unit.Of(s).Target+".json"), p.Dir+"/"), "{}")
		}
	}
	fs, _ = p.Check()
	f = one(t, fs, "duplicate-native-artifact")
	if strings.Count(f.Message, "([])") != 1 || !strings.Contains(f.Message, "features unknown") {
		t.Errorf("with the timing run's fingerprint unreadable, its copy's features are unknown: %s", f.Message)
	}
}
