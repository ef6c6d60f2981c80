package check_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// ccEnvProject is a -sys crate built with Debian's cc crate, whose C code prints a value only when
// CFLAGS defines ENVTAG: cc-rs reads CFLAGS (and logs the lookup) but does not declare it.
func ccEnvProject(t *testing.T) *testutil.Project {
	return testutil.NewProject(t, map[string]string{
		".cargo/config.toml": testutil.DirectorySourceConfig(testutil.DebianRegistry),
		"Cargo.toml":         "[workspace]\nresolver = \"2\"\nmembers = [\"app\", \"e-sys\"]\n",
		"app/Cargo.toml":     "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\ne-sys = { path = \"../e-sys\" }\n",
		"app/src/main.rs":    "fn main() { println!(\"{}\", e_sys::tag()); }\n",
		"e-sys/Cargo.toml":   "[package]\nname = \"e-sys\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[build-dependencies]\ncc = \"1.0\"\n",
		"e-sys/build.rs":     "fn main() {\n    println!(\"cargo:rerun-if-changed=native/e.c\");\n    cc::Build::new().file(\"native/e.c\").compile(\"e\");\n}\n",
		"e-sys/native/e.c":   "int e_tag(void) {\n#ifdef ENVTAG\n    return ENVTAG;\n#else\n    return 1;\n#endif\n}\n",
		"e-sys/src/lib.rs":   "extern \"C\" { fn e_tag() -> i32; }\npub fn tag() -> i32 { unsafe { e_tag() } }\n",
	})
}

// CFLAGS set after a build: Cargo says Fresh, the binary lacks the flag; the rule names the variable
// and both values. Back in the build's environment, nothing is reported.
func TestUntrackedEnvChanged(t *testing.T) {
	p := ccEnvProject(t)
	t.Setenv("CFLAGS", "")
	os.Unsetenv("CFLAGS")
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	none(t, fs, "untracked-env-changed")

	p.Env = append(p.Env, "CFLAGS=-DENVTAG=7")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh e-sys") {
		t.Fatalf("the premise fails: cargo reran the build script for CFLAGS:\n%s", out)
	}
	if out, _ := exec.Command(p.Path("target/debug/app")).Output(); strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("the premise fails: the binary prints %q, want 1 (built without the flag)", out)
	}
	t.Setenv("CFLAGS", "-DENVTAG=7")
	fs, _ = p.Check()
	f := one(t, fs, "untracked-env-changed")
	if f.Severity != check.Error {
		t.Errorf("severity %v, want error", f.Severity)
	}
	for _, want := range []string{"CFLAGS", "unset when it ran", `"-DENVTAG=7" now`, "e-sys"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if !testutil.HasSubject(check.Finding{Subjects: f.Roots}, p.Path("target/debug/app")) {
		t.Errorf("roots %v do not name target/debug/app", f.Roots)
	}
	if !strings.Contains(f.Fix, "rerun-if-env-changed=CFLAGS") {
		t.Errorf("fix %q does not declare CFLAGS", f.Fix)
	}

	os.Unsetenv("CFLAGS")
	fs, _ = p.Check()
	none(t, fs, "untracked-env-changed")
}

// A build script that only asks cc-rs for the compiler (a probe, as openssl-sys does) logs the CFLAGS
// lookup but links nothing it compiled: a CFLAGS change cannot have changed the binary, and is not
// reported (the truth harness found it as a false error on Debian's openssl-sys).
func TestUntrackedEnvChangedProbeOnly(t *testing.T) {
	p := ccEnvProject(t)
	p.Write("e-sys/build.rs", "fn main() {\n    let _ = cc::Build::new().get_compiler();\n    println!(\"cargo:rerun-if-changed=build.rs\");\n}\n")
	p.Write("e-sys/src/lib.rs", "pub fn tag() -> i32 { 1 }\n")
	t.Setenv("CFLAGS", "")
	os.Unsetenv("CFLAGS")
	p.Cargo("build")
	t.Setenv("CFLAGS", "-DENVTAG=7")
	fs, _ := p.Check()
	none(t, fs, "untracked-env-changed")
}

// The cmake crate reads CFLAGS through cc-rs without logging the lookup, and hands it to CMake as the
// tail of -DCMAKE_C_FLAGS= on the configure line it does log. CFLAGS set after a build: Cargo says Fresh
// and the binary lacks the flag; the rule names CFLAGS from that line. Built with it and then unset: the
// flag after cc-rs's defaults is named. Back in the build's environment, nothing (the truth harness
// missed both on its cmake shape).
func TestUntrackedEnvChangedCMake(t *testing.T) {
	files := testutil.CmakeWorkspace()
	files["cm-sys/csrc/include/cmk.h"] = "#ifndef CMK_VAL\n#define CMK_VAL 42\n#endif\n"
	p := testutil.NewProject(t, files)
	t.Setenv("CFLAGS", "")
	os.Unsetenv("CFLAGS")
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	none(t, fs, "untracked-env-changed")

	p.Env = append(p.Env, "CFLAGS=-O2 -DCMK_VAL=7")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh cm-sys") {
		t.Fatalf("the premise fails: cargo reran the build script for CFLAGS:\n%s", out)
	}
	if out, _ := exec.Command(p.Path("target/debug/app")).Output(); !strings.HasPrefix(string(out), "42 ") {
		t.Fatalf("the premise fails: the binary prints %q, want 42 (built without the flag)", out)
	}
	t.Setenv("CFLAGS", "-O2 -DCMK_VAL=7")
	fs, _ = p.Check()
	f := one(t, fs, "untracked-env-changed")
	for _, want := range []string{"CFLAGS", "-DCMAKE_C_FLAGS=", `CFLAGS="-O2 -DCMK_VAL=7" now`, "cm-sys"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if f.Severity != check.Error || !strings.Contains(f.Fix, "rerun-if-env-changed=CFLAGS") {
		t.Errorf("severity %v, fix %q", f.Severity, f.Fix)
	}

	// Rebuilt with it (the script reruns for its own source), then unset. CMake's install step says
	// "-- Up-to-date" and keeps the installed libcmk.a when the rebuilt one has its size and its mtime's
	// whole second (it installs with whole-second mtimes): the edit waits for the next second.
	time.Sleep(1100 * time.Millisecond)
	p.Write("cm-sys/csrc/cmk.c", "#include \"cmk.h\"\nint cmk_val(void) { return CMK_VAL + 0; }\n")
	p.Cargo("build")
	if out, _ := exec.Command(p.Path("target/debug/app")).Output(); !strings.HasPrefix(string(out), "7 ") {
		t.Fatalf("the premise fails: the binary prints %q, want 7 (built with the flag)", out)
	}
	fs, _ = p.Check()
	none(t, fs, "untracked-env-changed")
	os.Unsetenv("CFLAGS")
	fs, _ = p.Check()
	f = one(t, fs, "untracked-env-changed")
	if !strings.Contains(f.Message, `"-DCMK_VAL=7" after cc-rs's default flags when it ran, unset now`) {
		t.Errorf("message: %s", f.Message)
	}
}

// A variable of tens of kilobytes (a CFLAGS the cmake crate hands on, a value cc-rs logs) changed: the
// finding names it, and its message and evidence quote a few hundred bytes of each value with their
// length and digest, not the whole (a 39 KB CFLAGS made a 79 KB line; 13 MB, a 56 MB SARIF file).
func TestUntrackedEnvChangedLongValues(t *testing.T) {
	long := func(tag string) string { return strings.Repeat("-DFILLER_"+tag+"=1 ", 4000) }
	g := cargoBuild(func(g *graph.Graph, run, _ *graph.Step) {
		run.OwnScript().EnvReads = []graph.EnvRead{{Name: "KIT_OPTS", Value: long("a"), Set: true}}
		run.OwnScript().FlagsSeen = []graph.FlagsSeen{{Var: "CFLAGS", Names: []string{"CFLAGS_x86_64_unknown_linux_gnu", "CFLAGS"},
			Value: "-ffunction-sections -fdata-sections -fPIC -m64 " + long("b"), Define: "-DCMAKE_C_FLAGS"}}
		g.Env = map[string]graph.EnvRead{
			"KIT_OPTS": {Name: "KIT_OPTS", Value: long("c"), Set: true},
			"CFLAGS":   {Name: "CFLAGS", Value: long("d"), Set: true},
		}
	})
	f := one(t, check.Run(g, check.Options{}), "untracked-env-changed")
	for _, want := range []string{"KIT_OPTS", "CFLAGS", "bytes", "blake3:"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %.300s", want, f.Message)
		}
	}
	if len(f.Message) > 2000 {
		t.Errorf("message of %d bytes for values of %d bytes: %.300s…", len(f.Message), len(long("a")), f.Message)
	}
	for _, e := range f.Evidence {
		if len(e.Detail) > 2000 {
			t.Errorf("evidence %s: detail of %d bytes: %.300s…", e.Kind, len(e.Detail), e.Detail)
		}
	}
}

// A build script that declares rerun-if-env-changed=LEVEL and bakes the value into the program: built
// with LEVEL=1, checked where LEVEL=2, Cargo would run it again (its fingerprint records "1"), so the
// binary is old: pending-rebuild names the variable and both values. With LEVEL=1 again nothing is
// reported; unset (a value Cargo may take from a [env] table), a warning.
func TestDeclaredEnvChanged(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":  "[package]\nname = \"lv\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs":    "fn main() {\n    println!(\"cargo:rerun-if-env-changed=LEVEL\");\n    println!(\"cargo:rustc-env=LV={}\", std::env::var(\"LEVEL\").unwrap_or_default());\n}\n",
		"src/main.rs": "fn main() { println!(\"{}\", env!(\"LV\")); }\n",
	})
	p.Env = append(p.Env, "LEVEL=1")
	p.Cargo("build")
	t.Setenv("LEVEL", "1")
	fs, _ := p.Check()
	noErrors(t, fs)
	none(t, fs, "pending-rebuild")
	t.Setenv("LEVEL", "2")
	fs, _ = p.Check()
	f := one(t, fs, "pending-rebuild")
	if f.Severity != check.Error || !strings.Contains(f.Message, "rerun-if-env-changed=LEVEL") || !strings.Contains(f.Message, `last ran with LEVEL "1" and it is "2" in this environment`) {
		t.Errorf("want an error naming LEVEL and both values:\n%s", testutil.Dump(fs))
	}
	os.Unsetenv("LEVEL")
	fs, _ = p.Check()
	if f := one(t, fs, "pending-rebuild"); f.Severity != check.Warning {
		t.Errorf("unset now: want a warning:\n%s", testutil.Dump(fs))
	}
}

// Cargo's [env] table gives a build script's declared variable its value (rerun-if-env-changed=SCALE,
// SCALE unset in the environment): the build is Fresh, and nothing is pending. The same variable set
// in the environment to another value wins over [env] (no force) and makes the next build redo the
// run.
func TestDeclaredEnvFromCargoConfig(t *testing.T) {
	files := map[string]string{
		".cargo/config.toml": "[env]\nSCALE = \"1\"\n",
		"Cargo.toml":         "[package]\nname = \"k7\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs":           "fn main() {\n    println!(\"cargo:rerun-if-env-changed=SCALE\");\n    println!(\"cargo:rustc-env=S={}\", std::env::var(\"SCALE\").unwrap_or_default());\n}\n",
		"src/main.rs":        "fn main() { println!(\"{}\", env!(\"S\")); }\n",
	}
	p := testutil.NewProject(t, files)
	t.Setenv("SCALE", "")
	os.Unsetenv("SCALE")
	p.Cargo("build")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh k7") {
		t.Fatalf("premise: the build is not Fresh:\n%s", out)
	}
	fs, _ := p.Check()
	if len(fs) != 0 {
		t.Fatalf("[env] SCALE = \"1\", as the run saw it: want no finding, got:\n%s", testutil.Dump(fs))
	}
	t.Setenv("SCALE", "2")
	fs, _ = p.Check()
	if f := one(t, fs, "pending-rebuild"); f.Severity != check.Error || !strings.Contains(f.Message, "SCALE") {
		t.Errorf("SCALE=2 in the environment: %v %s", f.Severity, f.Message)
	}
}
