package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// TestTargetDirElsewhere: a package built with cargo build --target-dir ../out. run of the fresh
// ../out/debug/k8 from the package folder runs it (the program's own target folder is read); after an
// edit, check --target-dir ../out says stale with a fix that names the target folder, and run refuses.
func TestTargetDirElsewhere(t *testing.T) {
	need.RealBuild(t)
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Skip("cargo not installed")
	}
	top := t.TempDir()
	pkg, out := filepath.Join(top, "k8"), filepath.Join(top, "out")
	os.MkdirAll(filepath.Join(pkg, "src"), 0o755)
	os.WriteFile(filepath.Join(pkg, "Cargo.toml"), []byte("[package]\nname = \"k8\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"), 0o644)
	os.WriteFile(filepath.Join(pkg, "src", "main.rs"), []byte("fn main() {}\n"), 0o644)
	cargo := exec.Command("cargo", "build", "--target-dir", "../out")
	cargo.Dir = pkg
	cargo.Env = append(withoutTargetDirs(os.Environ()), "CARGO_NET_OFFLINE=true")
	if b, err := cargo.CombinedOutput(); err != nil {
		t.Fatalf("cargo build: %v\n%s", err, b)
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("CARGO_TARGET_DIR", "")
	t.Chdir(pkg)
	if _, stderr, code := run(t, "run", "-q", "--", "../out/debug/k8"); code != 0 {
		t.Fatalf("run of the fresh ../out/debug/k8: exit %d: %s", code, stderr)
	}
	when := time.Now().Add(2 * time.Second)
	os.WriteFile(filepath.Join(pkg, "src", "main.rs"), []byte("fn main() { println!(\"2\"); }\n"), 0o644)
	os.Chtimes(filepath.Join(pkg, "src", "main.rs"), when, when)
	stdout, _, code := run(t, "check", "--target-dir", "../out", ".")
	if code != 1 || !strings.Contains(stdout, "fix: cargo build --target-dir "+out) {
		t.Errorf("check after the edit: exit %d, want 1 and a fix naming %s:\n%s", code, out, stdout)
	}
	if _, _, code := run(t, "run", "-q", "--", "../out/debug/k8"); code != 125 {
		t.Errorf("run of the stale ../out/debug/k8: exit %d, want 125", code)
	}
}
