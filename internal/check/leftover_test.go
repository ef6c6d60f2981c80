package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

const genBuildRS = `use std::{env, fs, path::PathBuf};

// One module per line of gen.list, and an index of every gen_*.rs found in OUT_DIR.
fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    for name in fs::read_to_string("gen.list").unwrap().lines().map(str::trim).filter(|n| !n.is_empty()) {
        fs::write(out.join(format!("gen_{name}.rs")), format!("pub fn name() -> &'static str {{ \"{name}\" }}\n")).unwrap();
    }
    let mut files: Vec<String> = fs::read_dir(&out).unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("gen_") && n.ends_with(".rs"))
        .collect();
    files.sort();
    let mut index = String::new();
    for f in files {
        let m = &f[4..f.len() - 3];
        index += &format!("pub mod {m} {{ include!(concat!(env!(\"OUT_DIR\"), \"/{f}\")); }}\n");
    }
    fs::write(out.join("index.rs"), index).unwrap();
    println!("cargo:rerun-if-changed=gen.list");
    println!("cargo:rerun-if-changed=build.rs");
}
`

// S06: a generated module left in OUT_DIR by an earlier run is still compiled.
func TestS06OutDirLeftover(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":  "[package]\nname = \"gen\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs":    genBuildRS,
		"gen.list":    "alpha\nbeta\n",
		"src/main.rs": "include!(concat!(env!(\"OUT_DIR\"), \"/index.rs\"));\nfn main() { println!(\"{}\", alpha::name()); }\n",
	})
	p.Cargo("build", "--release")
	fs, _ := p.Check()
	noErrors(t, fs)
	none(t, fs, "out-dir-leftover")

	p.Write("gen.list", "alpha\n")
	p.Cargo("build", "--release")
	fs, _ = p.Check()
	f := one(t, fs, "out-dir-leftover")
	runs := runDirs(t, p, "release", "gen")
	if len(runs) != 1 {
		t.Fatalf("want one run folder, got %v", runs)
	}
	leftover := testutil.OutDirOf(runs[0]) + "/gen_beta.rs"
	if f.Subjects[0] != leftover {
		t.Fatalf("want the leftover %s, got:\n%s", leftover, testutil.Dump(fs))
	}
	if !strings.Contains(f.Message, "dep-info") || !strings.Contains(f.Message, msgTime(t, leftover)) {
		t.Errorf("message should name how it is used and its time: %s", f.Message)
	}

	// Fix step: cargo clean -p empties the run folder; the next build makes only what gen.list lists.
	p.Cargo("clean", "-p", "gen", "--release")
	p.Cargo("build", "--release")
	fs, _ = p.Check()
	none(t, fs, "out-dir-leftover")
	noErrors(t, fs)
}
