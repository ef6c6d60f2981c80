package analyze_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/analyze"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// scriptMakeWorkspace: a build script that runs make in a folder of its package (csrc/): the objects,
// their depfiles and the archive land beside the sources, and make's own mtime rules decide what is
// recompiled. The script declares build.rs, the Makefile and a.c; the feature passes FAST=1 to make.
func scriptMakeWorkspace() map[string]string {
	return map[string]string{
		"Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[features]\nfast = []\n",
		"build.rs": `use std::process::Command;
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/Makefile");
    println!("cargo:rerun-if-changed=csrc/a.c");
    let mut c = Command::new("make");
    c.args(["-s", "-C", "csrc"]);
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { c.arg("FAST=1"); }
    assert!(c.status().unwrap().success(), "make failed");
    let dir = std::env::current_dir().unwrap().join("csrc");
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=dm");
}
`,
		"csrc/Makefile": "CPPFLAGS := -Iinclude\nifdef FAST\nCPPFLAGS += -DFAST\nendif\nOBJS := a.o\nlibdm.a: $(OBJS)\n\tar crs $@ $^\n" +
			"%.o: %.c\n\t$(CC) -MMD -MP $(CPPFLAGS) -O1 -fPIC -c $< -o $@\n-include $(OBJS:.o=.d)\n",
		"csrc/include/lib.h": "#define LIB_TAG \"h-1\"\n",
		"csrc/a.c": "#include \"lib.h\"\n#ifdef FAST\n#define SPEED \"+fast\"\n#else\n#define SPEED \"\"\n#endif\n" +
			"const char *dm_tag(void) { return LIB_TAG SPEED; }\n",
		"src/main.rs": "extern \"C\" { fn dm_tag() -> *const std::os::raw::c_char; }\n" +
			"fn main() { println!(\"{}\", unsafe { std::ffi::CStr::from_ptr(dm_tag()) }.to_str().unwrap()); }\n",
	}
}

func analyzeProject(t *testing.T, p *testutil.Project, state string) []check.Finding {
	t.Helper()
	_, fs, err := analyze.Analyze(context.Background(), p.Dir, analyze.Options{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func runApp(t *testing.T, p *testutil.Project) string {
	t.Helper()
	out, err := exec.Command(p.Path("target/debug/app")).Output()
	if err != nil {
		t.Fatalf("target/debug/app: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// buildThenEditHeader builds the project and checks it is clean, then edits the header only the nested
// build's depfiles name and builds again: Cargo does not rerun the script, so the program is stale.
func buildThenEditHeader(t *testing.T, p *testutil.Project, state string) {
	t.Helper()
	p.Cargo("build")
	if errs := testutil.AtLeast(analyzeProject(t, p, state), check.Error); len(errs) > 0 {
		t.Fatalf("a fresh build: want no error, got:\n%s", testutil.Dump(errs))
	}
	p.Edit("csrc/include/lib.h", "h-1", "h-2")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh app") || runApp(t, p) != "h-1" {
		t.Fatalf("the premise fails: cargo reran the build script, or the program prints %q:\n%s", runApp(t, p), out)
	}
}

// wantError fails the test unless an error of rule names path among its subjects and the program
// among its roots.
func wantError(t *testing.T, fs []check.Finding, rule, path, root string) check.Finding {
	t.Helper()
	for _, f := range testutil.AtLeast(fs, check.Error) {
		if f.Rule == rule && testutil.HasSubject(f, path) && strings.Contains(strings.Join(f.Roots, " "), root) {
			return f
		}
	}
	t.Fatalf("want a %s error naming %s for %s; got:\n%s", rule, path, root, testutil.Dump(fs))
	return check.Finding{}
}

// The make build a script drives is read as that run's records: a header only make's depfile names is
// an input of the program, and Cargo, which does not watch it, will not rerun make for it; a feature the
// script passes to make, which finds nothing to redo for it, leaves the library of the other
// configuration in the program.
func TestScriptDrivenMake(t *testing.T) {
	if testing.Short() {
		t.Skip("real cargo and make builds")
	}
	need.Tools(t, "make", "cc", "ar")
	p := testutil.NewProject(t, scriptMakeWorkspace())
	state := t.TempDir()
	buildThenEditHeader(t, p, state)
	f := wantError(t, analyzeProject(t, p, state), "untracked-input-changed", p.Path("csrc/include/lib.h"), p.Path("target/debug/app"))
	if !strings.Contains(f.Fix, "rerun-if-changed=csrc/include") || !strings.Contains(f.Fix, "cargo build") {
		t.Errorf("the fix should declare the folder and rebuild through Cargo: %s", f.Fix)
	}
	// What the fix says to do (short of declaring the folder) makes the program current and the check clean.
	p.Write("build.rs", strings.Replace(scriptMakeWorkspace()["build.rs"], "fn main() {", "fn main() {\n    // rerun", 1))
	p.Cargo("build")
	if got := runApp(t, p); got != "h-2" {
		t.Fatalf("the premise fails: after the script's rerun the program prints %q", got)
	}
	if errs := testutil.AtLeast(analyzeProject(t, p, state), check.Error); len(errs) > 0 {
		t.Fatalf("after the rerun: want no error, got:\n%s", testutil.Dump(errs))
	}

	p.Cargo("build", "--features", "fast")
	if got := runApp(t, p); got != "h-2" {
		t.Fatalf("the premise fails: make redid the library for FAST=1 (the program prints %q)", got)
	}
	f = wantError(t, analyzeProject(t, p, state), "other-config-library", p.Path("csrc/libdm.a"), p.Path("target/debug/app"))
	if !strings.Contains(f.Message, "CARGO_FEATURE_FAST") || !strings.Contains(f.Fix, "csrc/a.o") {
		t.Errorf("the finding should name the setting the script reads and the object to remove: %s\nfix: %s", f.Message, f.Fix)
	}
}

// The same with Ninja in the package folder (a hand-written build.ninja with gcc depfiles in its deps
// log): nothing in the mechanism knows which system the script runs.
func TestScriptDrivenNinja(t *testing.T) {
	if testing.Short() {
		t.Skip("real cargo and ninja builds")
	}
	need.Tools(t, "ninja", "cc", "ar")
	files := scriptMakeWorkspace()
	delete(files, "csrc/Makefile")
	files["csrc/build.ninja"] = "rule cc\n  command = cc -MMD -MF $out.d -Iinclude -O1 -fPIC -c $in -o $out\n  depfile = $out.d\n  deps = gcc\n" +
		"rule ar\n  command = rm -f $out && ar crs $out $in\nbuild a.o: cc a.c\nbuild libdm.a: ar a.o\n"
	files["build.rs"] = strings.NewReplacer(`println!("cargo:rerun-if-changed=csrc/Makefile");`, `println!("cargo:rerun-if-changed=csrc/build.ninja");`,
		`Command::new("make")`, `Command::new("ninja")`, `c.args(["-s", "-C", "csrc"]);`, `c.args(["-C", "csrc"]);`).Replace(files["build.rs"])
	p := testutil.NewProject(t, files)
	state := t.TempDir()
	buildThenEditHeader(t, p, state)
	wantError(t, analyzeProject(t, p, state), "untracked-input-changed", p.Path("csrc/include/lib.h"), p.Path("target/debug/app"))
}
