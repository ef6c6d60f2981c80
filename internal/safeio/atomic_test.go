package safeio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.json")
	if err := WriteBytesAtomic(p, WriteOptions{MkdirPerm: 0o700, Sync: true}, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Fatalf("content %q", b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", st.Mode().Perm())
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	// A failed write leaves the old file and no temporary file behind.
	boom := errors.New("boom")
	err := WriteFileAtomic(p, WriteOptions{}, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), p) {
		t.Errorf("error %v: want boom, naming %s", err, p)
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Errorf("after a failed write: %q, want the old content", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("folder holds %d entries, want the file alone", len(ents))
	}
	// A replacement keeps the replaced file's mode.
	if err := WriteBytesAtomic(p, WriteOptions{}, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v, want 0600", st.Mode().Perm())
	}
	// A folder where the file belongs is an error naming it, and is left alone.
	d := filepath.Join(dir, "adir")
	os.Mkdir(d, 0o755)
	if err := WriteBytesAtomic(d, WriteOptions{}, []byte("x")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("writing over a folder: %v, want ErrNotRegular", err)
	}
}

// A cache's file replaced by a link to a device: Replace writes a regular file in its place.
func TestWriteFileAtomicReplace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cache.json")
	if err := os.Symlink("/dev/zero", p); err != nil {
		t.Skip(err)
	}
	if err := WriteBytesAtomic(p, WriteOptions{}, []byte("x")); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("without Replace: %v, want ErrNotRegular", err)
	}
	if err := WriteBytesAtomic(p, WriteOptions{Replace: true, Perm: 0o600}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Errorf("after the write: %v %v", st, err)
	}
}
