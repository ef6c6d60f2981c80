package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A build script reads a data file it names but does not declare (repro turn3/01): an edit leaves Cargo
// Fresh and the binary stale, and the file named in build.rs is an input of the run like a source it
// compiles.
func TestUndeclaredDataFileNamedInBuildScript(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":     "[package]\nname = \"gentxt\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs":       "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    let v = std::fs::read_to_string(\"data/table.txt\").unwrap();\n    std::fs::write(format!(\"{}/v.rs\", std::env::var(\"OUT_DIR\").unwrap()), format!(\"const V: &str = {:?};\", v.trim())).unwrap();\n}\n",
		"data/table.txt": "v=1\n",
		"data/notes.md":  "not read\n",
		"src/main.rs":    "include!(concat!(env!(\"OUT_DIR\"), \"/v.rs\"));\nfn main() { println!(\"{}\", V); }\n",
	})
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Write("data/notes.md", "edited, never read\n")
	p.Write("data/table.txt", "v=2\n")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh gentxt") {
		t.Fatalf("the premise fails: cargo rebuilt gentxt:\n%s", out)
	}
	fs, _ = p.Check()
	f := one(t, fs, "untracked-input-changed")
	if f.Severity != check.Error || f.Subjects[0] != p.Path("data/table.txt") {
		t.Errorf("want an error naming data/table.txt, got %v %v: %s", f.Severity, f.Subjects, f.Message)
	}
}
