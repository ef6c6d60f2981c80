package runner

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// While a cargo build holds the profile folder's lock, BuildRunning says so (repro turn3/05: run timed
// the old binary mid-build); once released, it does not. A missing lock file is not created.
func TestBuildRunningProbesCargoLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "target", "debug")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &Plan{Matter: []string{filepath.Join(dir, "app")}}
	if _, busy := p.BuildRunning(); busy {
		t.Fatal("no lock file: no build")
	}
	if _, err := os.Stat(filepath.Join(dir, ".cargo-lock")); !os.IsNotExist(err) {
		t.Fatalf("the probe created the lock file: %v", err)
	}
	f, err := os.Create(filepath.Join(dir, ".cargo-lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, busy := p.BuildRunning(); busy {
		t.Fatal("a lock nobody holds: no build")
	}
	// Cargo takes it exclusively for the whole build (another open file description, as another process).
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if lock, busy := p.BuildRunning(); !busy || lock != filepath.Join(dir, ".cargo-lock") {
		t.Fatalf("held lock: busy %v, lock %q", busy, lock)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	if _, busy := p.BuildRunning(); busy {
		t.Fatal("released lock: no build")
	}
}
