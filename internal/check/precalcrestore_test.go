package check_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A build script with no rerun-if line (Cargo scans the package): older content restored with its
// older mtime (cp -p) changes the newest package file Cargo recorded, and Cargo compares that for
// equality, so it reruns the script. The binary holds the newer code: pending-rebuild, an error,
// naming the unit Cargo calls Dirty (the truth harness found it reported as a change Cargo misses).
func TestPackageScanRestoreOlderIsPending(t *testing.T) {
	p := packageScanProject(t)
	src := p.Path("ps-sys/native/ps.c")
	old, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	p.Write("ps-sys/native/ps.c", "int native_run(void) { return 2; }\n")
	p.Cargo("build")
	p.Check()
	if err := os.WriteFile(src, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(src, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	fs, _ := p.Check()
	none(t, fs, "changed-with-older-mtime")
	f := one(t, fs, "pending-rebuild")
	if f.Severity != check.Error || f.Subjects[0] != src || !strings.Contains(f.Message, "compares the two for equality") {
		t.Errorf("want an error on %s saying Cargo compares for equality, got %v %v: %s", src, f.Severity, f.Subjects, f.Message)
	}
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Dirty ps-sys") {
		t.Errorf("the premise fails: cargo does not rerun the script:\n%s", out)
	}
}

// The same package, its Rust source touched without a change: the build script's package scan makes
// Cargo rerun the script, but the content is what the lib unit was built from, so it is not stale
// (the truth harness found an error on Debian's blake3 beside such a crate).
func TestPackageScanTouchedRustSourceIsNotStale(t *testing.T) {
	p := packageScanProject(t)
	now := time.Now()
	if err := os.Chtimes(p.Path("ps-sys/src/lib.rs"), now, now); err != nil {
		t.Fatal(err)
	}
	fs, _ := p.Check()
	noErrors(t, fs)
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Dirty ps-sys") {
		t.Errorf("the premise fails: cargo does not rerun:\n%s", out)
	}
}

// packageScanProject is a -sys crate whose build script prints no rerun-if line (Cargo scans the whole
// package), built once and checked once so its content baselines exist.
func packageScanProject(t *testing.T) *testutil.Project {
	t.Helper()
	p := testutil.NewProject(t, testutil.SysCrate("ps-sys", "ps", map[string]string{
		"native/ps.c": "int native_run(void) { return 1; }\n",
	}, nil, nil))
	p.StateDir = t.TempDir()
	p.Cargo("build")
	p.Check()
	return p
}
