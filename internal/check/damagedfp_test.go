package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A live build-script run's fingerprint JSON truncated: the record is unreadable (a warning naming
// it), and the declarations the output still lists are not judged against an unknown package root, so
// no file is called missing (a newcomer's attack found false pending-rebuild errors and run refusing).
func TestDamagedRunFingerprintNoFalseErrors(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	p.Cargo("build")
	_, g := p.Check()
	var jf string
	for _, s := range g.Steps {
		if s.Kind == graph.ScriptRun && s.Live() {
			jf = filepath.Join(unit.Of(s).FingerprintDir, unit.Of(s).Target+".json")
		}
	}
	if err := os.WriteFile(jf, []byte(`{"rustc":`), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, _ := p.Check()
	noErrors(t, fs)
	found := false
	for _, f := range fs {
		found = found || f.Rule == "unreadable-record" && strings.Contains(f.Message, filepath.Base(jf))
	}
	if !found {
		t.Errorf("no unreadable-record naming %s", jf)
	}
}

// A unit's rustc .d file gives the package root of the package-relative files Cargo's dep-info lists.
// With it gone, an edited source cannot be judged: the check says so, naming the .d file and the
// source, instead of "No findings" (a newcomer's attack found the silence).
func TestMissingRustcDepfileSaysSourcesUnchecked(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":  "[package]\nname = \"nod\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/main.rs": "fn main() { println!(\"v1\"); }\n",
	})
	p.Cargo("build")
	p.Edit("src/main.rs", "v1", "v2")
	fs, g := p.Check()
	var d string
	for _, f := range fs {
		if f.Rule == "pending-rebuild" && strings.Contains(f.Message, "main.rs") {
			d = "found"
		}
	}
	if d == "" {
		t.Fatalf("the premise: an edited main.rs with every record in place is a pending rebuild; findings %v", fs)
	}
	for _, s := range g.Steps {
		if s.Kind == graph.Compile && s.Live() && unit.Of(s).Target == "bin-nod" {
			d = filepath.Join(filepath.Dir(s.Outputs[0].Path), "nod-"+unit.Of(s).Hash+".d")
		}
	}
	if err := os.Remove(d); err != nil {
		t.Fatal(err)
	}
	fs, _ = p.Check()
	found := false
	for _, f := range fs {
		found = found || f.Rule == "unreadable-record" && strings.Contains(f.Message, filepath.Base(d)) && strings.Contains(f.Message, "src/main.rs")
	}
	if !found {
		t.Errorf("no unreadable-record naming %s and src/main.rs; findings %v", filepath.Base(d), fs)
	}
}

// The hash file of the live -sys lib unit damaged: the binary's deps entry names no hash on disk, but
// the only unit of that name whose hash file could not be read may be it; the edge is taken to it (its
// build-script run stays live, so errors its intact records support are kept) instead of calling the
// dependency gone (a false pending-rebuild: "which no unit on disk has any more"), and which no longer
// says the binary links no native library.
func TestDamagedLibHashFileKeepsEdge(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	p.Cargo("build")
	_, g := p.Check()
	var hf, run string
	for _, s := range g.Steps {
		if s.Live() && s.Kind == graph.Compile && strings.HasSuffix(s.Package, "-sys") && strings.HasPrefix(unit.Of(s).Target, "lib-") {
			hf = filepath.Join(unit.Of(s).FingerprintDir, unit.Of(s).Target)
		}
		if s.Live() && s.Kind == graph.ScriptRun {
			run = s.ID
		}
	}
	if hf == "" || run == "" {
		t.Fatalf("the premise: a live -sys lib unit (%q) and build-script run (%q)", hf, run)
	}
	if err := os.WriteFile(hf, []byte("zzzz"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, g := p.Check()
	noErrors(t, fs)
	one(t, fs, "unreadable-record")
	for _, s := range g.Steps {
		if s.ID == run && !s.Live() {
			t.Errorf("the build-script run %s is no longer reached from a binary", run)
		}
	}
}
