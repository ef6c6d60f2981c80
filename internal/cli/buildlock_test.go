package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCheckWaitsForRunningCargoBuild: Cargo holds a profile folder's .cargo-lock while it rewrites the
// unit records. A check then waits for the build and judges what it left, not a record cut in the
// middle of its rewrite (which it called an unreadable record before).
func TestCheckWaitsForRunningCargoBuild(t *testing.T) {
	ws := ccToggled(t)
	runEnv(t)
	fps, _ := filepath.Glob(filepath.Join(ws, "target/release/.fingerprint/fastmath-sys-*/lib-fastmath_sys.json"))
	if len(fps) == 0 {
		t.Fatal("the premise fails: no fingerprint of fastmath-sys's lib unit")
	}
	fp := fps[0]
	saved, err := os.ReadFile(fp)
	if err != nil {
		t.Fatal(err)
	}
	when := mtimeOf(t, fp)
	lock, err := os.OpenFile(filepath.Join(ws, "target/release/.cargo-lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("the premise fails: cargo left no lock file: %v", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// The build is rewriting the record: half of it is on disk.
	if err := os.WriteFile(fp, saved[:len(saved)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	restore := func() {
		if err := os.WriteFile(fp, saved, 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Chtimes(fp, when, when); err != nil {
			t.Error(err)
		}
	}
	type result struct {
		out, err string
		code     int
	}
	done := make(chan result, 1)
	go func() {
		o, e, c := run(t, "check", "--format", "json", "--fail-on", "none", ws)
		done <- result{o, e, c}
	}()
	select {
	case r := <-done:
		restore()
		t.Fatalf("check returned while a build held the lock: exit %d\n%s%s", r.code, r.out, r.err)
	case <-time.After(500 * time.Millisecond):
	}
	// The build ends: the record whole again, the lock released.
	restore()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("check did not return after the build released its lock")
	}
	var doc struct{ Findings []map[string]any }
	if r.code != 0 || json.Unmarshal([]byte(r.out), &doc) != nil {
		t.Fatalf("check: exit %d\n%s%s", r.code, r.out, r.err)
	}
	if !strings.Contains(r.err, "waiting for the cargo build that holds "+filepath.Join(ws, "target/release/.cargo-lock")) {
		t.Errorf("check said nothing of the wait on stderr:\n%s", r.err)
	}
	if rules := findingsAbout(doc.Findings, fp); len(rules) != 0 {
		t.Errorf("check judged the record the build was rewriting: %v", rules)
	}
}
