package check_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// nestedCMakeWorkspace: a build script that builds its C library with the cmake crate (CMake's Makefile
// generator in OUT_DIR: an incremental build of its own, with depfiles); it declares build.rs, the
// CMakeLists.txt and a.c, not b.c nor the header that include/ holds behind an (empty) override/.
func nestedCMakeWorkspace() map[string]string {
	return map[string]string{
		".cargo/config.toml": testutil.DirectorySourceConfig(testutil.DebianRegistry),
		"Cargo.toml":         "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[build-dependencies]\ncmake = \"0.1\"\n",
		"build.rs": "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    println!(\"cargo:rerun-if-changed=csrc/CMakeLists.txt\");\n    println!(\"cargo:rerun-if-changed=csrc/a.c\");\n" +
			"    let dst = cmake::Config::new(\"csrc\").build();\n    println!(\"cargo:rustc-link-search=native={}/lib\", dst.display());\n    println!(\"cargo:rustc-link-lib=static=nb\");\n}\n",
		"csrc/CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(nb C)\nadd_library(nb STATIC a.c b.c)\n" +
			"target_include_directories(nb PRIVATE override include)\ninstall(TARGETS nb ARCHIVE DESTINATION lib)\n",
		"csrc/override/README": "headers here come before include/\n",
		"csrc/include/lib.h":   "#define LIB_TAG \"h-1\"\n",
		"csrc/a.c":             "#include \"lib.h\"\nconst char *nb_a(void) { return \"a-1|\" LIB_TAG; }\n",
		"csrc/b.c":             "const char *nb_b(void) { return \"b-1\"; }\n",
		"src/main.rs": "use std::ffi::CStr;\nuse std::os::raw::c_char;\nextern \"C\" { fn nb_a() -> *const c_char; fn nb_b() -> *const c_char; }\n" +
			"fn main() { unsafe { println!(\"{} {}\", CStr::from_ptr(nb_a()).to_str().unwrap(), CStr::from_ptr(nb_b()).to_str().unwrap()); } }\n",
	}
}

// wantErrorNaming fails the test unless an error finding has path among its subjects.
func wantErrorNaming(t *testing.T, fs []check.Finding, path string) {
	t.Helper()
	for _, f := range testutil.AtLeast(fs, check.Error) {
		if testutil.HasSubject(f, path) {
			return
		}
	}
	t.Errorf("want an error naming %s; got:\n%s", path, testutil.Dump(fs))
}

func runNestedApp(t *testing.T, p *testutil.Project) string {
	t.Helper()
	out, err := exec.Command(p.Path("target/debug/app")).Output()
	if err != nil {
		t.Fatalf("target/debug/app: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// A header that now shadows, in an earlier -I folder, the one a depfile says the nested build read:
// the search is answered again from the command line CMake left (flags.make), as for a Make or Ninja
// step, although the step is a build script's run.
func TestNestedBuildShadowedHeader(t *testing.T) {
	need.Tools(t, "cmake", "make")
	p := testutil.NewProject(t, nestedCMakeWorkspace())
	p.StateDir = t.TempDir()
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Write("csrc/override/lib.h", "#define LIB_TAG \"h-shadow\"\n")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh app") {
		t.Fatalf("the premise fails: cargo reran the build script:\n%s", out)
	}
	if got := runNestedApp(t, p); got != "a-1|h-1 b-1" {
		t.Fatalf("the premise fails: the program prints %q", got)
	}
	fs, _ = p.Check()
	var found bool
	for _, f := range testutil.AtLeast(fs, check.Error) {
		if f.Rule == "path-lookup-changed" && strings.Contains(f.Message, "override/lib.h") {
			found = true
		}
	}
	if !found {
		t.Errorf("want a path-lookup-changed error naming csrc/override/lib.h; got:\n%s", testutil.Dump(fs))
	}
}

// A rerun of the build script rebuilds only what the nested build finds out of date: b.c restored with
// other content and an older mtime (cp -p) keeps its old object although the run is newer than the
// file. The baseline of b.c stays the content its object was compiled from (the run its depfile dates
// from), so the check after the build still reports it.
func TestNestedBuildKeepsOlderObjectsBaseline(t *testing.T) {
	need.Tools(t, "cmake", "make")
	p := testutil.NewProject(t, nestedCMakeWorkspace())
	p.StateDir = t.TempDir()
	p.Cargo("build")
	fs, _ := p.Check() // records the run's baselines
	noErrors(t, fs)
	st, err := os.Stat(p.Path("csrc/b.c"))
	if err != nil {
		t.Fatal(err)
	}
	p.Edit("csrc/b.c", "b-1", "b-2")
	if err := os.Chtimes(p.Path("csrc/b.c"), st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	now := time.Now()
	if err := os.Chtimes(p.Path("csrc/a.c"), now, now); err != nil { // touched: Cargo reruns the script
		t.Fatal(err)
	}
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "build-script-build") {
		t.Fatalf("the premise fails: cargo did not rerun the build script:\n%s", out)
	}
	if got := runNestedApp(t, p); got != "a-1|h-1 b-1" {
		t.Fatalf("the premise fails: the nested build recompiled b.c (the program prints %q)", got)
	}
	fs, _ = p.Check()
	wantErrorNaming(t, fs, p.Path("csrc/b.c"))
	// A fresh build of the same sources (b.c touched: the nested build recompiles it) is clean again.
	now = time.Now()
	if err := os.Chtimes(p.Path("csrc/b.c"), now, now); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p.Path("csrc/a.c"), now, now); err != nil {
		t.Fatal(err)
	}
	p.Cargo("build")
	if got := runNestedApp(t, p); got != "a-1|h-1 b-2" {
		// Seen on a fresh 2-core machine (2 runs of 3, 2026-12-05): the cmake crate's rerun keeps the
		// old b.o although b.c was touched after it, the same shape as the truth corpus's cargo-cmake
		// branch-switch misses (docs/TRUTH.md). What the build tools did is not what this step is
		// about (the stale half above was judged): say so rather than fail.
		t.Skipf("the premise of the last step did not arise: after touching b.c the program prints %q (the nested CMake build kept b.o)", got)
	}
	fs, _ = p.Check()
	noErrors(t, fs)
}

// A build script that runs the compiler by hand (no command line logged, no depfile) names its -I
// folders in its own text: the include scan searches them in the order the script names them, so a
// header that a folder named first now holds is what the next compile reads, whatever the folders'
// alphabetical order.
func TestHandMadeCompileSearchOrder(t *testing.T) {
	need.Tools(t, "cc", "ar")
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs": `use std::process::Command;
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/hm.c");
    let out = std::env::var("OUT_DIR").unwrap();
    let obj = format!("{}/hm.o", out);
    assert!(Command::new("cc").args(["-Icsrc/zz_first", "-Icsrc/include", "-c", "csrc/hm.c", "-o", &obj]).status().unwrap().success());
    assert!(Command::new("ar").args(["crs", &format!("{}/libhm.a", out), &obj]).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out);
    println!("cargo:rustc-link-lib=static=hm");
}
`,
		"csrc/zz_first/README": "headers here come before include/\n",
		"csrc/include/hm.h":    "#define HM_TAG \"h-1\"\n",
		"csrc/hm.c":            "#include \"hm.h\"\nconst char *hm_tag(void) { return HM_TAG; }\n",
		"src/main.rs": "extern \"C\" { fn hm_tag() -> *const std::os::raw::c_char; }\n" +
			"fn main() { println!(\"{}\", unsafe { std::ffi::CStr::from_ptr(hm_tag()) }.to_str().unwrap()); }\n",
	})
	p.StateDir = t.TempDir()
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Write("csrc/zz_first/hm.h", "#define HM_TAG \"h-shadow\"\n")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh app") {
		t.Fatalf("the premise fails: cargo reran the build script:\n%s", out)
	}
	fs, _ = p.Check()
	wantErrorNaming(t, fs, p.Path("csrc/zz_first/hm.h"))
}
