package cargo

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stalecheck/stalecheck/internal/safeio"
	"github.com/stalecheck/stalecheck/internal/vcache"
)

const lockText = `version = 4

[[package]]
name = "app"
version = "0.1.0"

[[package]]
name = "libc"
version = "0.2.150"
source = "registry+https://example.invalid/index"

[[patch.unused]]
name = "zstd-sys"
version = "2.0.9"
`

// TestLockFileMemo: the lock file read through its memo after a miss (another file changed) gives what
// the TOML decode gives; a damaged memo value is refused.
func TestLockFileMemo(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	lp, other := filepath.Join(dir, "Cargo.lock"), filepath.Join(dir, "other.txt")
	if err := os.WriteFile(lp, []byte(lockText), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(other, []byte("1"), 0o644)
	want, err := readLockFile(lp) // no recording: the decode
	if err != nil || len(want.Package) != 2 || want.Package[1].Source == "" || len(want.Patch.Unused) != 1 {
		t.Fatalf("decode: %+v, %v", want, err)
	}
	time.Sleep(120 * time.Millisecond) // past the verdict cache's racy window
	c := vcache.Open(state, nil)
	k := vcache.Key{5}
	rec := c.Begin()
	got, err := readLockFile(lp)
	safeio.ReadFile(other, 1<<20)
	if d := cmp.Diff(want, got); err != nil || d != "" {
		t.Fatalf("first recording (-decode +memo): %v\n%s", err, d)
	}
	if ok, why := c.Store(k, rec, &vcache.Result{}); !ok {
		t.Fatalf("not stored: %s", why)
	}
	os.WriteFile(other, []byte("2"), 0o644)
	time.Sleep(120 * time.Millisecond)
	if _, hit := c.Lookup(k); hit {
		t.Fatal("a changed file: hit")
	}
	rec = c.Begin()
	got, err = readLockFile(lp)
	reused := rec.Reused()
	rec.End()
	if reused == 0 {
		t.Fatal("the lock file's memo was not reused (the lock file did not change)")
	}
	if d := cmp.Diff(want, got); err != nil || d != "" {
		t.Fatalf("through the memo (-decode +memo): %v\n%s", err, d)
	}
	for _, bad := range [][]byte{nil, {1}, encodeLockMemo(want)[:5], append(encodeLockMemo(want), 0)} {
		if _, ok := decodeLockMemo(bad); ok {
			t.Errorf("damaged memo %q decoded", bad)
		}
	}
}
