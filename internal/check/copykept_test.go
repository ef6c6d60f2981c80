package check_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A build script that archives its C code in OUT_DIR/build and copies the archive into OUT_DIR/lib, the
// folder it links from, only when no copy is there yet (a copy step that keeps a destination it takes
// for up to date: CMake's install within a second, cp -u, rsync): after an edit of k.c the run rebuilds
// build/libk.a and the program links the old lib/libk.a. The content evidence proves which copy is
// inside; the error names the edited source through the depfile of the member that differs.
func TestLinkedCopyNotRewritten(t *testing.T) {
	if testing.Short() {
		t.Skip("real cargo build")
	}
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":  "[package]\nname = \"kc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"k.c":         "const char *k_tag(void) { return \"k-tag-version-0\"; }\n",
		"src/main.rs": "extern \"C\" { fn k_tag() -> *const std::os::raw::c_char; }\nfn main() { println!(\"{:?}\", unsafe { std::ffi::CStr::from_ptr(k_tag()) }); }\n",
		"build.rs": `use std::{env, fs, path::PathBuf, process::Command};
fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let (b, l) = (out.join("build"), out.join("lib"));
    fs::create_dir_all(&b).unwrap();
    fs::create_dir_all(&l).unwrap();
    let obj = b.join("k.o");
    assert!(Command::new("cc").args(["-c", "-fPIC", "-MD", "-MF"]).arg(b.join("k.o.d")).arg("k.c").arg("-o").arg(&obj).status().unwrap().success());
    let lib = b.join("libk.a");
    let _ = fs::remove_file(&lib);
    assert!(Command::new("ar").arg("crs").arg(&lib).arg(&obj).status().unwrap().success());
    if !l.join("libk.a").exists() {
        fs::copy(&lib, l.join("libk.a")).unwrap();
    }
    println!("cargo:rustc-link-search=native={}", l.display());
    println!("cargo:rustc-link-lib=static=k");
    println!("cargo:rerun-if-changed=k.c");
    println!("cargo:rerun-if-changed=build.rs");
}
`,
	})
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Edit("k.c", "k-tag-version-0", "k-tag-version-1")
	p.Cargo("build")
	if out, err := exec.Command(p.Path("target/debug/kc")).Output(); err != nil || !strings.Contains(string(out), "k-tag-version-0") {
		t.Fatalf("the premise: the program holds the old copy; it prints %q (%v)", out, err) // the premise
	}
	fs, _ = p.Check()
	f := one(t, fs, "linked-copy-not-newest")
	if f.Severity.String() != "error" || !strings.Contains(f.Message, "/lib/libk.a") || !strings.Contains(f.Message, "k.c") {
		t.Errorf("want an error naming the linked lib/libk.a and k.c:\n%s", testutil.Dump(fs))
	}
	if !testutil.HasSubject(f, p.Path("target/debug/kc")) {
		t.Errorf("the finding does not name the program:\n%s", testutil.Dump(fs))
	}
	named := false
	for _, e := range f.Evidence {
		named = named || e.Path == p.Path("k.c")
	}
	if !named {
		t.Errorf("no evidence names k.c:\n%s", testutil.Dump(fs))
	}
}
