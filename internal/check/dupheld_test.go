package check_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// arAppendProject: aq-sys's build script compiles native/aq.c and appends it with `ar qc` to the
// libaq.a it already holds in OUT_DIR (no remove first), so every rerun adds another member aq.o and
// GNU ld keeps taking the first (tsyrogit/zxcvbn-c #38). Built once and checked with a state folder,
// so the first run's content baseline is recorded.
func arAppendProject(t *testing.T) *testutil.Project {
	t.Helper()
	if _, err := exec.LookPath("ar"); err != nil {
		t.Skip("ar (binutils) is not installed")
	}
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":        "[workspace]\nresolver = \"2\"\nmembers = [\"app\", \"aq-sys\"]\n",
		"app/Cargo.toml":    "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\naq-sys = { path = \"../aq-sys\" }\n",
		"app/src/main.rs":   "fn main() { println!(\"{}\", aq_sys::val()); }\n",
		"aq-sys/Cargo.toml": "[package]\nname = \"aq-sys\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"aq-sys/build.rs": `use std::process::Command;
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=native/aq.c");
    let out = std::env::var("OUT_DIR").unwrap();
    assert!(Command::new("cc").args(["-c", "-fPIC", "native/aq.c", "-o"]).arg(format!("{}/aq.o", out)).status().unwrap().success());
    assert!(Command::new("ar").arg("qc").arg(format!("{}/libaq.a", out)).arg(format!("{}/aq.o", out)).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out);
    println!("cargo:rustc-link-lib=static=aq");
}
`,
		"aq-sys/native/aq.c": "int aq_val(void) { return 1; }\n",
		"aq-sys/src/lib.rs":  "extern \"C\" { fn aq_val() -> i32; }\npub fn val() -> i32 { unsafe { aq_val() } }\n",
	})
	p.StateDir = t.TempDir()
	p.Cargo("build")
	p.Check()
	return p
}

func runAq(t *testing.T, p *testutil.Project) string {
	t.Helper()
	out, err := exec.Command(p.Path("target/debug/app")).CombinedOutput()
	if err != nil {
		t.Fatalf("target/debug/app: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// cpP writes content into path and sets its mtime back to mtime, as `cp -p` of a saved copy does.
func cpP(t *testing.T, path string, content []byte, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// An edit reruns the script, which appends a second aq.o; the binary still holds the first copy (the
// linker takes it): an error. Then the source is restored with `cp -p` to the content the first copy
// was compiled from, with its older mtime: a build from the files here prints what the binary prints,
// so nothing is stale, although the last run (the last copy, the object in OUT_DIR) used other content.
// No error: duplicate-archive-member and changed-with-older-mtime are warnings that name the run that
// wrote the linked copy (the truth harness's ar-append shape called both errors). Restoring content
// that no run compiled, with an older mtime, is still an error.
func TestDuplicateMemberRestoredToLinkedCopy(t *testing.T) {
	p := arAppendProject(t)
	src := p.Path("aq-sys/native/aq.c")
	v1, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	p.Write("aq-sys/native/aq.c", "int aq_val(void) { return 2; }\n")
	p.Cargo("build")
	if got := runAq(t, p); got != "1" {
		t.Fatalf("the premise fails: the binary prints %q, want 1 (the first member)", got)
	}
	fs, _ := p.Check()
	if f := one(t, fs, "duplicate-archive-member"); f.Severity != check.Error || !strings.Contains(f.Message, "runs the old code of aq.o") {
		t.Fatalf("after the edit: want a duplicate-archive-member error, got %v: %s", f.Severity, f.Message)
	}

	cpP(t, src, v1, st.ModTime())
	fs, _ = p.Check()
	noErrors(t, fs)
	d := one(t, fs, "duplicate-archive-member")
	if d.Severity != check.Warning || !strings.Contains(d.Message, "copy 1 of 2 was written by the run at") || !strings.Contains(d.Message, "the binary holds the code of the sources here") {
		t.Errorf("want a duplicate-archive-member warning naming the run of copy 1, got %v: %s", d.Severity, d.Message)
	}
	m := one(t, fs, "changed-with-older-mtime")
	if m.Severity != check.Warning || m.Subjects[0] != src || !strings.Contains(m.Message, "target/debug/app links copy 1 of 2 of aq.o") {
		t.Errorf("want a changed-with-older-mtime warning on %s saying the binary links copy 1, got %v %v: %s", src, m.Severity, m.Subjects, m.Message)
	}
	// The build does not rerun the script (the mtime is older), and the binary still prints 1.
	p.Cargo("build")
	if got := runAq(t, p); got != "1" {
		t.Fatalf("after the restore the binary prints %q, want 1", got)
	}
	fs, _ = p.Check()
	noErrors(t, fs)

	// Content no run compiled, with an older mtime: the binary (1) is not what the files say (3).
	cpP(t, src, []byte("int aq_val(void) { return 3; }\n"), st.ModTime())
	fs, _ = p.Check()
	m = one(t, fs, "changed-with-older-mtime")
	if m.Severity != check.Error || !strings.Contains(m.Message, "the binary you have was built from other content") {
		t.Errorf("content no run compiled: want a changed-with-older-mtime error, got %v: %s", m.Severity, m.Message)
	}
	if d := one(t, fs, "duplicate-archive-member"); d.Severity != check.Error {
		t.Errorf("content no run compiled: want a duplicate-archive-member error, got %v: %s", d.Severity, d.Message)
	}
}

// After a restore and a touch, the script compiles the first copy's source again and appends a copy
// byte-identical to the first; a later edit appends a fourth. The binary's bytes match copies 1 and 3
// alike, so which one it holds was "unknown" and the finding only a warning (the truth harness's
// ar-append shape missed every later state); they are one content: it holds copy 1, an error.
func TestDuplicateMemberIdenticalCopiesHeld(t *testing.T) {
	p := arAppendProject(t)
	src := p.Path("aq-sys/native/aq.c")
	v1, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	p.Write("aq-sys/native/aq.c", "int aq_val(void) { return 2; }\n")
	p.Cargo("build")
	p.Check()
	cpP(t, src, v1, st.ModTime())
	p.Check()
	now := time.Now()
	if err := os.Chtimes(src, now, now); err != nil {
		t.Fatal(err)
	}
	p.Cargo("build") // reruns the script: copy 3, compiled from v1 again
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Write("aq-sys/native/aq.c", "int aq_val(void) { return 4; }\n")
	p.Cargo("build") // copy 4
	if got := runAq(t, p); got != "1" {
		t.Fatalf("the premise fails: the binary prints %q, want 1 (the first member)", got)
	}
	fs, _ = p.Check()
	f := one(t, fs, "duplicate-archive-member")
	if f.Severity != check.Error || !strings.Contains(f.Message, "holds 4 members named aq.o") || !strings.Contains(f.Message, "target/debug/app holds copy 1 of 4") {
		t.Errorf("want a duplicate-archive-member error saying target/debug/app holds copy 1 of 4, got %v: %s", f.Severity, f.Message)
	}
}

// `cargo clean -p aq-sys` after an edit the binary does not hold (the linker kept the first aq.o):
// the archive is gone, but the removed run's content baseline recorded that its linked copy was not
// its own, so the binary is an error (the truth harness's ar-append shape missed it: the removed run's
// sources equal the files, and that was all it compared). The rebuild makes a fresh archive: gone.
func TestDuplicateMemberAfterCleanP(t *testing.T) {
	p := arAppendProject(t)
	p.Write("aq-sys/native/aq.c", "int aq_val(void) { return 2; }\n")
	p.Cargo("build")
	p.Check()
	p.Cargo("clean", "-p", "aq-sys")
	if got := runAq(t, p); got != "1" {
		t.Fatalf("the premise fails: the binary prints %q, want 1 (the first member)", got)
	}
	fs, _ := p.Check()
	var hit bool
	for _, f := range testutil.AtLeast(fs, check.Error) {
		if f.Rule == "pending-rebuild" && strings.Contains(f.Message, "duplicated members") && strings.Contains(f.Message, "libaq.a(aq.o): linked copy blake3:") &&
			slices.Contains(f.Roots, p.Path("target/debug/app")) {
			hit = true
		}
	}
	if !hit {
		t.Fatalf("after cargo clean -p: want an error naming libaq.a(aq.o)'s older linked copy, got:\n%s", testutil.Dump(fs))
	}
	p.Cargo("build")
	if got := runAq(t, p); got != "2" {
		t.Fatalf("after the rebuild the binary prints %q, want 2", got)
	}
	fs, _ = p.Check()
	noErrors(t, fs)
}

// The same after a restore to the first copy's content: the removed run's own sources differ from the
// files, but the copy the binary holds was compiled from them: no error, before or after the rebuild.
// A release build beside it records the package's sources, which the removed debug units' baselines
// are compared with.
func TestDuplicateMemberRestoredThenCleanP(t *testing.T) {
	p := arAppendProject(t)
	p.Cargo("build", "--release")
	src := p.Path("aq-sys/native/aq.c")
	v1, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	p.Write("aq-sys/native/aq.c", "int aq_val(void) { return 2; }\n")
	p.Cargo("build")
	p.Check()
	cpP(t, src, v1, st.ModTime())
	p.Check()
	p.Cargo("clean", "-p", "aq-sys")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Cargo("build")
	if got := runAq(t, p); got != "1" {
		t.Fatalf("after the rebuild the binary prints %q, want 1", got)
	}
	fs, _ = p.Check()
	noErrors(t, fs)
}

// A second copy of the workspace with aq.c changed, built with this workspace's target folder: its
// run of aq-sys's script appends its aq.o to the shared archive and relinks target/debug/app, but the
// linker takes the first copy, compiled here. The binary holds the code of the files here, so
// built-in-other-tree is a warning (the truth harness's ar-append shape called it an error: aq.c
// differs between the copies), saying why aq.c does not count.
func TestDuplicateMemberOtherTreeAppend(t *testing.T) {
	a := arAppendProject(t)
	b := &testutil.Project{T: t, Dir: filepath.Join(t.TempDir(), "b"), Env: append(append([]string{}, a.Env...), "CARGO_TARGET_DIR="+a.Path("target")), NewLayout: a.NewLayout}
	if out, err := exec.Command("cp", "-a", a.Dir, b.Dir).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	if err := os.RemoveAll(b.Path("target")); err != nil {
		t.Fatal(err)
	}
	b.Write("aq-sys/native/aq.c", "int aq_val(void) { return 7; }\n")
	b.Cargo("build")
	if out, _ := exec.Command(a.Path("target/debug/app")).Output(); strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("the premise fails: the binary prints %q, want 1 (the first member, compiled here)", out)
	}
	fs, _ := a.Check()
	noErrors(t, fs)
	var found bool
	for _, f := range testutil.Rule(fs, "built-in-other-tree") {
		if f.Severity == check.Warning && strings.Contains(f.Message, b.Dir) && strings.Contains(f.Message, "archive copies compiled from the content here") {
			found = true
		}
	}
	if !found {
		t.Errorf("want a built-in-other-tree warning naming %s and the archive copy compiled here:\n%s", b.Dir, testutil.Dump(fs))
	}
}
