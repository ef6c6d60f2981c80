package cargo

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Cargo lists a package in a git work tree through git: a file git ignores is not the package's.
func TestScanPackageLeavesGitIgnoredFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	pkg := filepath.Join(dir, "pkg")
	for rel, s := range map[string]string{".gitignore": "scratch/\n", "pkg/Cargo.toml": "[package]\n", "pkg/native/a.c": "int a;\n",
		"pkg/scratch/b.c": "int b;\n", "pkg/native/new.c": "int n;\n"} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &reader{l: &Layout{TargetDir: filepath.Join(pkg, "target"), BuildDir: filepath.Join(pkg, "target")}}
	ps := r.scanPackage(pkg)
	if len(ps.native) != 3 {
		t.Fatalf("no git work tree: every file is the package's, got %v", ps.native)
	}
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	ps = r.scanPackage(pkg)
	want := []string{filepath.Join(pkg, "native/a.c"), filepath.Join(pkg, "native/new.c")} // untracked, not ignored: listed
	if len(ps.native) != 2 || ps.native[0] != want[0] || ps.native[1] != want[1] {
		t.Errorf("native = %v, want %v", ps.native, want)
	}
	if ps.newest == filepath.Join(pkg, "scratch/b.c") {
		t.Error("an ignored file is not the package's newest")
	}
}
