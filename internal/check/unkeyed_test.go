package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

// Two feature variants of g-sys write one generated header to target/include/g.h, outside OUT_DIR,
// and point consumers at it with cargo:include= (nano-ros #117/#514): the last variant built wins.
// unkeyed-output names both runs and the last writer; after the script writes into OUT_DIR and both
// variants are rebuilt, it is gone.
func TestUnkeyedOutputTwoFeatureVariants(t *testing.T) {
	script := `use std::{env, path::PathBuf};
fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let dir = @DIR@;
    std::fs::create_dir_all(&dir).unwrap();
    let v = if env::var_os("CARGO_FEATURE_B").is_some() { 2 } else { 1 };
    std::fs::write(dir.join("g.h"), format!("#define G_VAL {}\n", v)).unwrap();
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:include={}", dir.display());
}
`
	// target/include, found by name: OUT_DIR is target/debug/build/g-sys-<hash>/out (legacy) or
	// target/debug/build/g-sys/<hash>/out (new), so a fixed ancestor count would differ by layout.
	target := `out.ancestors().find(|a| a.file_name().map_or(false, |n| n == "target")).unwrap().join("include")`
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":       "[workspace]\nresolver = \"2\"\nmembers = [\"app\", \"g-sys\"]\n",
		"app/Cargo.toml":   "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[features]\nb = [\"g-sys/b\"]\n[dependencies]\ng-sys = { path = \"../g-sys\" }\n",
		"app/src/main.rs":  "fn main() { println!(\"{}\", g_sys::V); }\n#[test]\nfn t() {}\n",
		"g-sys/Cargo.toml": "[package]\nname = \"g-sys\"\nversion = \"0.1.0\"\nedition = \"2021\"\nlinks = \"g\"\n[features]\nb = []\n",
		"g-sys/build.rs":   strings.Replace(script, "@DIR@", target, 1),
		"g-sys/src/lib.rs": "pub const V: i32 = 0;\n",
	})
	p.Cargo("test", "--no-run")
	p.Cargo("build", "--features", "b")
	fs, _ := p.Check()
	f := one(t, fs, "unkeyed-output")
	t.Log(f.Message)
	for _, want := range []string{"target/include/g.h", "2 configurations", `features ["b"]`} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if n := strings.Count(f.Message, "g-sys-"); n < 3 {
		t.Errorf("want both runs and the last writer named (%d unit names): %s", n, f.Message)
	}
	p.Write("g-sys/build.rs", strings.Replace(script, "@DIR@", `out.join("include")`, 1))
	p.Cargo("test", "--no-run")
	p.Cargo("build", "--features", "b")
	fs, _ = p.Check()
	none(t, fs, "unkeyed-output")
}
