package runner

import (
	"github.com/stalecheck/stalecheck/internal/testutil/special"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A FIFO or a /dev/zero symlink in place of the run cache: an empty cache at once, and save replaces it.
func TestStateCacheSpecialFile(t *testing.T) {
	for _, kind := range []string{"fifo", "devzero"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, StateFile)
			special.Plant(t, path, kind)
			special.Within(t, 10*time.Second, "openState and save", func() {
				c := openState(dir)
				if len(c.d.Tools) != 0 || len(c.d.Fingerprints) != 0 {
					t.Errorf("cache from a %s: %+v", kind, c.d)
				}
				c.setFingerprint("blake3:00", "sections:blake3:11")
				if err := c.save(); err != nil {
					t.Errorf("save: %v", err)
				}
				if fp, ok := openState(dir).fingerprint("blake3:00"); !ok || fp != "sections:blake3:11" {
					t.Errorf("reopened cache: %q %v", fp, ok)
				}
			})
			if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
				t.Errorf("after save %s is %v (%v)", path, st.Mode(), err)
			}
		})
	}
}

// .rustc_info.json, a native library or a binary replaced by a FIFO or a device: no hang, no endless read.
func TestRecordsSpecialFiles(t *testing.T) {
	for _, kind := range []string{"fifo", "devzero"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			special.Plant(t, filepath.Join(dir, ".rustc_info.json"), kind)
			lib := filepath.Join(dir, "libk.a")
			special.Plant(t, lib, kind)
			special.Within(t, 10*time.Second, "rustcInfo, Fingerprint and hasMagic", func() {
				if v, s := rustcInfo(dir); v != "" || s != "" {
					t.Errorf("rustcInfo = %q, %q", v, s)
				}
				if _, err := Fingerprint(lib); err == nil || !strings.Contains(err.Error(), lib) {
					t.Errorf("Fingerprint(%s) = %v; want an error naming it", lib, err)
				}
				if hasMagic(lib, "\x00\x00") {
					t.Errorf("hasMagic read a %s", kind)
				}
			})
		})
	}
}

// The floor of a command's peak RSS is this process's own peak when it starts the command: `true`, which
// touches almost nothing, reports no more than about that floor (Linux folds it in at exec).
func TestSelfPeakRSSFloor(t *testing.T) {
	if n := SelfPeakRSS(); n < 1<<20 {
		t.Errorf("SelfPeakRSS = %d bytes", n)
	}
	u, err := execPlan(t, t.TempDir(), "true").Exec(Stdio{})
	if err != nil || u.ExitStatus != 0 {
		t.Fatal(u, err)
	}
	// The floor is read once the command was reaped, so it bounds the inherited part from above: the helper
	// may have grown between the exec and the read (CI saw a peak of 4.0 MiB under a floor of 5.1 MiB).
	// What must hold: the peak is not zero, and `true` adds nothing worth a MiB above the floor (Linux
	// reads its RSS counters approximately, in per-CPU batches).
	if u.RSSFloorBytes < 1<<20 || u.PeakRSSBytes < 1<<20 || u.PeakRSSBytes > u.RSSFloorBytes+1<<20 {
		t.Errorf("true: peak RSS %d bytes, floor %d bytes; want a peak of some MiB, at most 1 MiB above the floor", u.PeakRSSBytes, u.RSSFloorBytes)
	}
}
