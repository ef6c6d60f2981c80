package check_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// shadowProject: f-sys's build script compiles native/f.c and makes libf.so (F_SHARED set) or libf.a
// in OUT_DIR, printing rustc-link-lib=f without a kind; it reruns when F_SHARED changes, in the same
// OUT_DIR, which Cargo never empties. probe's build script prints extra link-search folders listed in
// native/search (one per line), as a pkg-config probe would.
func shadowProject(t *testing.T) *testutil.Project {
	return testutil.NewProject(t, map[string]string{
		"Cargo.toml":       "[workspace]\nresolver = \"2\"\nmembers = [\"app\", \"f-sys\", \"a-probe\"]\n",
		"app/Cargo.toml":   "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nf-sys = { path = \"../f-sys\" }\na-probe = { path = \"../a-probe\" }\n",
		"app/src/main.rs":  "fn main() { a_probe::touch(); println!(\"{}\", f_sys::val()); }\n",
		"f-sys/Cargo.toml": "[package]\nname = \"f-sys\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"f-sys/build.rs": `use std::{env, path::PathBuf, process::Command};
fn main() {
    let out = match env::var_os("F_PREFIX") { Some(p) => PathBuf::from(p), None => PathBuf::from(env::var("OUT_DIR").unwrap()) };
    println!("cargo:rerun-if-changed=native/f.c");
    println!("cargo:rerun-if-env-changed=F_SHARED");
    println!("cargo:rerun-if-env-changed=F_PREFIX");
    std::fs::create_dir_all(&out).unwrap();
    let obj = out.join("f.o");
    assert!(Command::new("cc").args(["-c", "-fPIC", "native/f.c", "-o"]).arg(&obj).status().unwrap().success());
    if env::var_os("F_SHARED").is_some() {
        assert!(Command::new("cc").args(["-shared", "-o"]).arg(out.join("libf.so")).arg(&obj).status().unwrap().success());
    } else {
        let _ = std::fs::remove_file(out.join("libf.a"));
        assert!(Command::new("ar").args(["crs"]).arg(out.join("libf.a")).arg(&obj).status().unwrap().success());
    }
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=f");
}
`,
		"f-sys/native/f.c":   "int f_val(void) { return 1; }\n",
		"f-sys/src/lib.rs":   "extern \"C\" { fn f_val() -> i32; }\npub fn val() -> i32 { unsafe { f_val() } }\n",
		"a-probe/Cargo.toml": "[package]\nname = \"a-probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"a-probe/build.rs": `fn main() {
    println!("cargo:rerun-if-changed=native/search");
    for l in std::fs::read_to_string("native/search").unwrap().lines() {
        if !l.is_empty() { println!("cargo:rustc-link-search=native={}", l); }
    }
}
`,
		"a-probe/native/search": "",
		"a-probe/src/lib.rs":    "pub fn touch() {}\n",
	})
}

func runApp(t *testing.T, p *testutil.Project) string {
	t.Helper()
	cmd := exec.Command(p.Path("target/debug/app"))
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+strings.Join(p.OutDirs("debug", "f-sys"), ":"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "error: " + strings.TrimSpace(string(out))
	}
	return strings.TrimSpace(string(out))
}

// A shared object left in OUT_DIR by an earlier configuration (F_SHARED) wins over the new libf.a the
// last run built in the same folder: ld takes .so first for a link without static= (cctbx_project
// #1148). The binary's DT_NEEDED proves it: an error naming both files. Removing the .so and rerunning
// the script (the fix) relinks the binary; the finding is gone.
func TestLinkedLibraryShadowedBySharedLeftover(t *testing.T) {
	p := leftoverSharedProject(t)
	if got := runApp(t, p); got != "1" {
		t.Fatalf("the premise fails: the binary prints %q, want 1 (the old shared object)", got)
	}
	fs, _ := p.Check()
	f := one(t, fs, "linked-library-shadowed")
	if f.Severity != check.Error {
		t.Errorf("severity %v, want error (DT_NEEDED names libf.so): %s", f.Severity, f.Message)
	}
	for _, want := range []string{"/out/libf.so", "/out/libf.a", "ld takes libf.so before libf.a", "DT_NEEDED entries name libf.so", "leftover"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	removeLeftoverSO(t, p)
	p.Edit("f-sys/build.rs", "fn main() {", "fn main() {\n    // rerun")
	p.Cargo("build")
	if got := runApp(t, p); got != "2" {
		t.Fatalf("after the fix the binary prints %q, want 2", got)
	}
	fs, _ = p.Check()
	none(t, fs, "linked-library-shadowed")
}

// leftoverSharedProject builds shadowProject with F_SHARED (libf.so, f_val 1), then without it after an
// edit (libf.a, f_val 2) in the same OUT_DIR: the .so is left over and ld takes it.
func leftoverSharedProject(t *testing.T) *testutil.Project {
	p := shadowProject(t)
	p.Env = append(p.Env, "F_SHARED=1")
	p.Cargo("build")
	p.Env = p.Env[:len(p.Env)-1]
	p.Edit("f-sys/native/f.c", "return 1", "return 2")
	p.Cargo("build")
	return p
}

// removeLeftoverSO removes the one leftover libf.so of the debug OUT_DIRs (the first half of the fix).
func removeLeftoverSO(t *testing.T, p *testutil.Project) {
	t.Helper()
	so := p.OutFiles("debug", "f-sys", "libf.so")
	if len(so) != 1 {
		t.Fatalf("want one leftover libf.so, got %v", so)
	}
	if err := os.Remove(so[0]); err != nil {
		t.Fatal(err)
	}
}

// The same leftover, then a failing edit: the script's rerun stops at the compile, before it prints its
// rustc-link-lib line, so the search order cannot be rebuilt from the run's output. The binary is still
// the one that loads the leftover libf.so (older than the libf.a beside it, and the binary is newer than
// that .a): still an error, found by the truth harness's so-leftover shape (a miss before). Fixing the
// edit and removing the .so clears it.
func TestLinkedLibraryShadowedAfterFailedRun(t *testing.T) {
	p := leftoverSharedProject(t)
	p.Edit("f-sys/native/f.c", "return 2;", "return 2; #error broken")
	if _, err := p.CargoErr("build"); err == nil {
		t.Fatal("the premise fails: the broken edit built")
	}
	if got := runApp(t, p); got != "1" {
		t.Fatalf("the premise fails: the binary prints %q, want 1 (the old shared object)", got)
	}
	fs, _ := p.Check()
	f := one(t, fs, "linked-library-shadowed")
	if f.Severity != check.Error || !strings.Contains(f.Message, "DT_NEEDED entries name libf.so") {
		t.Errorf("want an error proven by DT_NEEDED: %v %s", f.Severity, f.Message)
	}
	p.Edit("f-sys/native/f.c", "return 2; #error broken", "return 2;")
	removeLeftoverSO(t, p)
	p.Cargo("build")
	if got := runApp(t, p); got != "2" {
		t.Fatalf("after the fix the binary prints %q, want 2", got)
	}
	fs, _ = p.Check()
	none(t, fs, "linked-library-shadowed")
}

// Another crate's probe prints a folder outside the target folder that holds an old libf.a ahead of
// the prefix f-sys installs its new libf.a into (both outside OUT_DIR; Cargo orders dependencies' -L
// folders by package name: a-probe first), so ld takes the old copy (libz-sys #49). Static: not proven
// from DT_NEEDED, a warning. Dropping the folder from the probe's output fixes it.
func TestLinkedLibraryShadowedBySystemFolder(t *testing.T) {
	p := shadowProject(t)
	sys := filepath.Join(t.TempDir(), "sysroot", "lib")
	if err := os.MkdirAll(sys, 0o755); err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(sys, "f.c")
	if err := os.WriteFile(c, []byte("int f_val(void) { return 9; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"cc", "-c", "-fPIC", c, "-o", filepath.Join(sys, "f.o")}, {"ar", "crs", filepath.Join(sys, "libf.a"), filepath.Join(sys, "f.o")}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	p.Write("a-probe/native/search", sys+"\n")
	p.Env = append(p.Env, "F_PREFIX="+p.Path("prefix/lib"))
	p.Cargo("build")
	if got := runApp(t, p); got != "9" {
		t.Fatalf("the premise fails: the binary prints %q, want 9 (the copy in the probe's folder)", got)
	}
	fs, _ := p.Check()
	f := one(t, fs, "linked-library-shadowed")
	if f.Severity != check.Warning {
		t.Errorf("severity %v, want warning (a static copy is not proven by DT_NEEDED)", f.Severity)
	}
	for _, want := range []string{sys + "/libf.a", "prefix/lib/libf.a", "outside the target folder", "the build script of a-probe"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	p.Write("a-probe/native/search", "")
	p.Cargo("build")
	if got := runApp(t, p); got != "1" {
		t.Fatalf("after the fix the binary prints %q, want 1", got)
	}
	fs, _ = p.Check()
	none(t, fs, "linked-library-shadowed")
}
