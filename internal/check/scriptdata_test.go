package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
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

// A build script compiles every .cu of kernels/ to PTX in OUT_DIR and declares only itself (repro
// turn3/09): scale.ptx named after kernels/scale.cu ties the source to the run, so its edit is an error,
// not a package-folder candidate's warning.
func TestCudaToPTXNamedAfterItsSource(t *testing.T) {
	need.Tools(t, "nvcc")
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"ptxapp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs": `use std::{env, fs, path::PathBuf, process::Command};
fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    for e in fs::read_dir("kernels").unwrap() {
        let p = e.unwrap().path();
        if p.extension().map_or(false, |x| x == "cu") {
            let dst = out.join(p.file_stem().unwrap()).with_extension("ptx");
            let st = Command::new("nvcc").args(["-ptx", "-ccbin", "c++", "-allow-unsupported-compiler", "-o"]).arg(&dst).arg(&p).status().unwrap();
            assert!(st.success());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
`,
		"kernels/scale.cu": "extern \"C\" __global__ void scale(float *x) { x[threadIdx.x] *= 3.0f; }\n",
		"src/main.rs":      "const PTX: &str = include_str!(concat!(env!(\"OUT_DIR\"), \"/scale.ptx\"));\nfn main() { println!(\"{}\", PTX.contains(\"0f40400000\")); }\n",
	})
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Edit("kernels/scale.cu", "3.0f", "4.0f")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh ptxapp") {
		t.Fatalf("the premise fails: cargo rebuilt ptxapp:\n%s", out)
	}
	fs, _ = p.Check()
	f := one(t, fs, "untracked-input-changed")
	if f.Severity != check.Error || f.Subjects[0] != p.Path("kernels/scale.cu") || !strings.Contains(evidenceHow(f, "input"), "output-stem") {
		t.Errorf("want an error naming kernels/scale.cu known by its output scale.ptx, got %v %v (%s): %s", f.Severity, f.Subjects, evidenceHow(f, "input"), f.Message)
	}
}
