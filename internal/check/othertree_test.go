package check_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// Two copies of one workspace (git worktrees) share a target folder: Cargo hashes path packages by
// their workspace-relative path, so the second copy's build is Fresh and reuses the first's build-script
// run, whose rustc-env value bakes the first copy's CARGO_MANIFEST_DIR into the binary (nubjs/nub #614).
// Checked from the second copy: built-in-other-tree names the first. A differing input makes it an
// error. With a target folder of its own (the fix) it is gone.
func TestBuiltInOtherTree(t *testing.T) {
	files := otherTreeFiles
	a := testutil.NewProject(t, files)
	shared := filepath.Join(t.TempDir(), "shared-target")
	a.Env = append(a.Env, "CARGO_TARGET_DIR="+shared)
	a.Cargo("build")
	b := &testutil.Project{T: t, Dir: filepath.Join(t.TempDir(), "b"), Env: a.Env, NewLayout: a.NewLayout}
	if out, err := exec.Command("cp", "-a", a.Dir, b.Dir).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	if out := b.Cargo("build", "-v"); !strings.Contains(out, "Fresh app") {
		t.Fatalf("the premise fails: the copy's build is not Fresh:\n%s", out)
	}
	if out, _ := exec.Command(filepath.Join(shared, "debug", "app")).Output(); !strings.Contains(string(out), a.Dir) {
		t.Fatalf("the premise fails: the binary prints %q, want the first copy's folder", out)
	}
	fs, _ := b.Check()
	f := one(t, fs, "built-in-other-tree")
	if f.Severity != check.Warning || !strings.Contains(f.Message, a.Dir) || !strings.Contains(f.Message, "the build script of app") {
		t.Errorf("want a warning naming %s: %v %s", a.Dir, f.Severity, f.Message)
	}
	b.Write("app/data.txt", "two\n")
	// A checkout keeping the old mtime (Cargo stays Fresh): only the bytes differ.
	st, err := os.Stat(a.Path("app/data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(b.Path("app/data.txt"), st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	fs, _ = b.Check()
	f = one(t, fs, "built-in-other-tree")
	if f.Severity != check.Error || !strings.Contains(f.Message, "app/data.txt") {
		t.Errorf("want an error naming the differing data.txt: %v %s", f.Severity, f.Message)
	}
	own := filepath.Join(b.Dir, "target")
	b.Env = append(append([]string{}, a.Env[:len(a.Env)-1]...), "CARGO_TARGET_DIR="+own)
	b.Cargo("build")
	fs, _ = b.Check()
	none(t, fs, "built-in-other-tree")
}

var otherTreeFiles = map[string]string{
	"Cargo.toml":      "[workspace]\nresolver = \"2\"\nmembers = [\"app\"]\n",
	"app/Cargo.toml":  "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
	"app/build.rs":    "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    println!(\"cargo:rerun-if-changed=data.txt\");\n    println!(\"cargo:rustc-env=BUILT_IN={}\", std::env::var(\"CARGO_MANIFEST_DIR\").unwrap());\n}\n",
	"app/data.txt":    "one\n",
	"app/src/main.rs": "fn main() { println!(\"{}\", env!(\"BUILT_IN\")); }\n",
}

// A workspace copied whole with its target folder (cp -a, as a backup or a CI cache restore) names the
// old location in its run's output, but the target folder moved with it (root-output names the old
// OUT_DIR): not another copy sharing a target folder, so no finding.
func TestBuiltInOtherTreeNotForAMovedTree(t *testing.T) {
	a := testutil.NewProject(t, otherTreeFiles)
	a.Cargo("build")
	c := &testutil.Project{T: t, Dir: filepath.Join(t.TempDir(), "c"), Env: a.Env, NewLayout: a.NewLayout}
	if out, err := exec.Command("cp", "-a", a.Dir, c.Dir).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	fs, _ := c.Check()
	none(t, fs, "built-in-other-tree")
	noErrors(t, fs)
	// A build there (Cargo rewrites the uplifted binary's .d with the copy's paths) leaves a binary
	// whose DWARF names the first location: still the moved tree, not another copy.
	c.Cargo("build")
	fs, _ = c.Check()
	none(t, fs, "built-in-other-tree")
	noErrors(t, fs)
}

// A second copy of the workspace built with this workspace's target folder (CARGO_TARGET_DIR=a/target,
// as a worktree's build pointed at the main tree's folder) gets units of its own (cargo 1.95: other
// hashes) and replaces the uplifted target/debug/app; this workspace's units stay Fresh. Found by the
// truth harness's other-tree edit (a miss before): Cargo's `app.d` beside the binary names the copy's
// sources. An error when a source differs between the copies; gone after touching it here and building.
func TestBuiltInOtherTreeUpliftedBinary(t *testing.T) {
	a := testutil.NewProject(t, otherTreeFiles)
	a.Cargo("build")
	b := &testutil.Project{T: t, Dir: filepath.Join(t.TempDir(), "b"), Env: append(append([]string{}, a.Env...), "CARGO_TARGET_DIR="+a.Path("target"))}
	if out, err := exec.Command("cp", "-a", a.Dir, b.Dir).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	if err := os.RemoveAll(b.Path("target")); err != nil {
		t.Fatal(err)
	}
	b.Write("app/data.txt", "two\n")
	b.Cargo("build")
	if out, _ := exec.Command(a.Path("target/debug/app")).Output(); !strings.Contains(string(out), b.Dir) {
		t.Fatalf("the premise fails: the binary prints %q, want the second copy's folder", out)
	}
	fs, _ := a.Check()
	var found *check.Finding
	for i := range fs {
		if fs[i].Rule == "built-in-other-tree" && strings.Contains(fs[i].Message, "app.d") {
			found = &fs[i]
		}
	}
	if found == nil {
		t.Fatalf("no built-in-other-tree finding naming target/debug/app.d: %v", fs)
	}
	if found.Severity != check.Error || !strings.Contains(found.Message, b.Dir) || !strings.Contains(found.Message, "app/data.txt") {
		t.Errorf("want an error naming %s and the differing app/data.txt: %v %s", b.Dir, found.Severity, found.Message)
	}
	time.Sleep(15 * time.Millisecond)
	now := time.Now()
	if err := os.Chtimes(a.Path("app/data.txt"), now, now); err != nil {
		t.Fatal(err)
	}
	a.Cargo("build")
	if out, _ := exec.Command(a.Path("target/debug/app")).Output(); strings.Contains(string(out), b.Dir) {
		t.Fatalf("after the fix the binary still prints %q", out)
	}
	fs, _ = a.Check()
	none(t, fs, "built-in-other-tree")
}

// The case of nubjs/nub #614 as a user meets it: a second copy built into this workspace's target
// folder, then a no-op `cargo build` here (Fresh), which rewrites target/debug/app.d with this
// workspace's paths and leaves the copy's binary in place. Its DWARF compile units still name the copy
// (comp_dir): an error, since a module and the data file differ; gone after touching them here and
// building.
func TestBuiltInOtherTreeAfterNoOpBuild(t *testing.T) {
	files := map[string]string{}
	for k, v := range otherTreeFiles {
		files[k] = v
	}
	files["app/src/main.rs"] = "mod util;\nfn main() { println!(\"{} {}\", env!(\"BUILT_IN\"), util::v()); }\n"
	files["app/src/util.rs"] = "pub fn v() -> i32 { 1 }\n"
	a := testutil.NewProject(t, files)
	a.Cargo("build")
	b := &testutil.Project{T: t, Dir: filepath.Join(t.TempDir(), "b"), Env: append(append([]string{}, a.Env...), "CARGO_TARGET_DIR="+a.Path("target")), NewLayout: a.NewLayout}
	if out, err := exec.Command("cp", "-a", a.Dir, b.Dir).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	if err := os.RemoveAll(b.Path("target")); err != nil {
		t.Fatal(err)
	}
	b.Write("app/src/util.rs", "pub fn v() -> i32 { 2 }\n")
	b.Cargo("build")
	if out := a.Cargo("build", "-v"); !strings.Contains(out, "Fresh app") {
		t.Fatalf("the premise fails: the build here is not a no-op:\n%s", out)
	}
	if out, _ := exec.Command(a.Path("target/debug/app")).Output(); !strings.HasSuffix(strings.TrimSpace(string(out)), " 2") {
		t.Fatalf("the premise fails: the binary prints %q, want the second copy's util.rs (2)", out)
	}
	if d, _ := os.ReadFile(a.Path("target/debug/app.d")); strings.Contains(string(d), b.Dir) {
		t.Fatalf("the premise fails: Cargo left app.d naming the copy:\n%s", d)
	}
	fs, _ := a.Check()
	f := one(t, fs, "built-in-other-tree")
	if f.Severity != check.Error || !strings.Contains(f.Message, "DWARF") || !strings.Contains(f.Message, b.Dir) ||
		!strings.Contains(f.Message, "app/src/util.rs") {
		t.Errorf("want an error naming the DWARF units, %s and the differing app/src/util.rs: %v %s", b.Dir, f.Severity, f.Message)
	}
	if len(f.Evidence) == 0 || f.Evidence[0].Path != a.Path("target/debug/app") {
		t.Errorf("first evidence %+v, want the binary", f.Evidence)
	}

	time.Sleep(15 * time.Millisecond)
	now := time.Now()
	for _, p := range []string{"app/src/util.rs", "app/data.txt"} {
		if err := os.Chtimes(a.Path(p), now, now); err != nil {
			t.Fatal(err)
		}
	}
	a.Cargo("build")
	if out, _ := exec.Command(a.Path("target/debug/app")).Output(); strings.TrimSpace(string(out)) != a.Path("app")+" 1" {
		t.Fatalf("after the fix the binary prints %q, want %s 1", out, a.Path("app"))
	}
	fs, _ = a.Check()
	none(t, fs, "built-in-other-tree")
	noErrors(t, fs)
}

// Two unrelated workspaces (packages a and b) share one target folder (CARGO_TARGET_DIR). rustc's .d
// names each path package's files relative to where its build ran (src/main.rs), so checked from a,
// b's unit must not be read as if its src/main.rs were a's: no error from either side (both builds are
// Fresh), and a warning that says b's unit belongs to another workspace. An edit in b is still
// pending from b's side.
func TestSharedTargetDirOfAnotherWorkspace(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "shared")
	state := t.TempDir()
	mk := func(name string) *testutil.Project {
		p := testutil.NewProject(t, map[string]string{
			"Cargo.toml":  "[package]\nname = \"" + name + "\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
			"src/main.rs": "fn main() { println!(\"" + name + "\"); }\n",
		})
		p.Env = append(p.Env, "CARGO_TARGET_DIR="+shared)
		p.StateDir = state
		return p
	}
	a, b := mk("a"), mk("b")
	a.Cargo("build")
	time.Sleep(1100 * time.Millisecond)
	b.Cargo("build")
	if out := a.Cargo("build", "-v"); !strings.Contains(out, "Fresh a") {
		t.Fatalf("premise: a's build is not Fresh:\n%s", out)
	}
	for _, p := range []struct {
		from  *testutil.Project
		other string
	}{{b, "a"}, {a, "b"}, {b, "a"}} {
		fs, _ := p.from.Check()
		noErrors(t, fs)
		f := one(t, fs, "unreadable-record")
		if !strings.Contains(f.Message, "package "+p.other+" relative to where its build ran") || !strings.Contains(f.Fix, "package "+p.other) {
			t.Errorf("want a warning that %s's unit was built in another workspace: %s (fix: %s)", p.other, f.Message, f.Fix)
		}
	}
	time.Sleep(1100 * time.Millisecond)
	b.Write("src/main.rs", "fn main() { println!(\"b2\"); }\n")
	fs, _ := b.Check()
	if f := one(t, fs, "pending-rebuild"); !strings.Contains(f.Message, "src/main.rs") {
		t.Errorf("after the edit in b: %s", f.Message)
	}
	fs, _ = a.Check()
	noErrors(t, fs)
}
