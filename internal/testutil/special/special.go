// Package special plants what must never be read as a file (a FIFO, a symlink to /dev/zero) and runs
// code under a deadline, for the tests that prove stalecheck neither hangs nor reads without bound.
package special

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// Kinds are the special files Plant makes: "fifo" and "devzero".
var Kinds = []string{"fifo", "devzero"}

// Plant replaces (or creates) path as a FIFO ("fifo") or a symlink to /dev/zero ("devzero").
func Plant(t testing.TB, path, kind string) {
	t.Helper()
	os.Remove(path)
	var err error
	if kind == "fifo" {
		err = syscall.Mkfifo(path, 0o600)
	} else {
		err = os.Symlink("/dev/zero", path)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Within runs f and fails the test when it does not return within d: a regression (a blocking open of
// a FIFO) fails instead of hanging the test binary.
func Within(t testing.TB, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}
