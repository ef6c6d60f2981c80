package cargo

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// holdLock takes path exclusively, as a cargo build does, and returns the release.
func holdLock(t *testing.T, path string) func() {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	return func() { unix.Flock(int(f.Fd()), unix.LOCK_UN); f.Close() }
}

func TestShareLocksWaitsForBuild(t *testing.T) {
	base := t.TempDir()
	for _, p := range []string{"debug", "release"} {
		os.MkdirAll(filepath.Join(base, p), 0o755)
	}
	release := holdLock(t, filepath.Join(base, "release", ".cargo-lock"))
	var told []string
	got := make(chan error, 1)
	go func() {
		l, err := shareLocks([]string{base, base}, []string{"debug", "release"}, func(lock string) { told = append(told, lock) })
		l.release()
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("took the locks while a build held one (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still waiting after the build released its lock")
	}
	if want := filepath.Join(base, "release", ".cargo-lock"); len(told) != 1 || told[0] != want {
		t.Errorf("told %q, want once %q", told, want)
	}
	// No lock file is created where Cargo made none.
	if _, err := os.Lstat(filepath.Join(base, "debug", ".cargo-lock")); !os.IsNotExist(err) {
		t.Errorf("a lock file was created in debug/: %v", err)
	}
}

func TestShareLocksGivesUp(t *testing.T) {
	base := t.TempDir()
	os.MkdirAll(filepath.Join(base, "release"), 0o755)
	defer holdLock(t, filepath.Join(base, "release", ".cargo-lock"))()
	defer func(d time.Duration) { lockWaitLimit = d }(lockWaitLimit)
	lockWaitLimit = 100 * time.Millisecond
	_, err := shareLocks([]string{base}, []string{"release"}, nil)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(base, "release", ".cargo-lock")) {
		t.Fatalf("err %v, want one naming the lock", err)
	}
}

// A lock file that is not a regular file (a FIFO, a link) is left alone: no hang, no wait.
func TestShareLocksOddLockFiles(t *testing.T) {
	base := t.TempDir()
	os.MkdirAll(filepath.Join(base, "debug"), 0o755)
	os.MkdirAll(filepath.Join(base, "release"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(base, "debug", ".cargo-lock"), 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	outside := filepath.Join(t.TempDir(), "held")
	defer holdLock(t, outside)()
	if err := os.Symlink(outside, filepath.Join(base, "release", ".cargo-lock")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		l, err := shareLocks([]string{base}, []string{"debug", "release"}, nil)
		l.release()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shareLocks hangs on a FIFO or a link in a lock's place")
	}
}
