package safeio

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/fsrec"
)

func TestRejectsWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", link)
	// A socket's path must fit sun_path (108 bytes): a short folder of its own, not the test's.
	sdir, err := os.MkdirTemp("", "sc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sdir)
	sock := filepath.Join(sdir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	read := map[string]func(string) error{
		"ReadFile": func(p string) error { _, err := ReadFile(p, 1<<20); return err },
		// A listing that said "regular file" of what is something else now (replaced since): the
		// fstat-less read must not take its word.
		"ReadListedInto": func(p string) error { var buf []byte; _, err := ReadListedInto(p, 1<<20, &buf, true); return err },
	}
	for name, f := range read {
		for _, p := range []string{fifo, link, dir, sock} {
			done := make(chan error, 1)
			go func() { done <- f(p) }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrNotRegular) {
					t.Errorf("%s(%s): want ErrNotRegular, got %v", name, p, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s(%s): blocked", name, p)
			}
		}
	}
}

// ReadListedInto without a recording reads a listed regular file without its fstat: the bytes and
// limits are ReadFile's, whatever the size against its buffer.
func TestReadListedIntoAsReadFile(t *testing.T) {
	if fsrec.Active() {
		t.Skip("a recording is active")
	}
	dir := t.TempDir()
	for _, n := range []int{0, 1, 16, 4095, 4096, 4097, 70000} {
		p := filepath.Join(dir, "f")
		want := make([]byte, n)
		for i := range want {
			want[i] = byte('a' + i%26)
		}
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, buf := range [][]byte{nil, make([]byte, 0, 16), make([]byte, 0, 8192)} {
			got, err := ReadListedInto(p, 1<<20, &buf, true)
			if err != nil || string(got) != string(want) {
				t.Fatalf("%d bytes: got %d bytes, %v", n, len(got), err)
			}
		}
		if n > 0 {
			var buf []byte
			if _, err := ReadListedInto(p, int64(n-1), &buf, true); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("%d bytes, limit %d: want ErrTooLarge, got %v", n, n-1, err)
			}
		}
	}
	var buf []byte
	if _, err := ReadListedInto(filepath.Join(dir, "missing"), 1<<20, &buf, true); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: want ErrNotExist, got %v", err)
	}
}

func TestReadFileLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, make([]byte, 100), 0o644)
	if _, err := ReadFile(p, 99); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("want ErrTooLarge, got %v", err)
	}
	if data, err := ReadFile(p, 100); err != nil || len(data) != 100 {
		t.Fatalf("%v %d", err, len(data))
	}
}

// ReadFile's file information is what os.Stat says of the file, down to the signature the verdict cache
// keeps.
func TestReadFileInfoMatchesStat(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	if err := os.WriteFile(p, []byte(`{"x":1}`), 0o640); err != nil {
		t.Fatal(err)
	}
	data, fi, err := readFile(p, MaxRecord, true)
	if err != nil || string(data) != `{"x":1}` {
		t.Fatalf("readFile: %q, %v", data, err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Name() != st.Name() || fi.Size() != st.Size() || fi.Mode() != st.Mode() || !fi.ModTime().Equal(st.ModTime()) || fi.IsDir() {
		t.Errorf("info %s %d %v %v, os.Stat %s %d %v %v", fi.Name(), fi.Size(), fi.Mode(), fi.ModTime(), st.Name(), st.Size(), st.Mode(), st.ModTime())
	}
	if a, b := fsrec.SigOf(fi, nil), fsrec.SigOf(st, nil); a != b || a.Err != fsrec.ErrNone {
		t.Errorf("signature %+v, os.Stat's %+v", a, b)
	}
	// An empty file and a missing one.
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if data, err := ReadFile(empty, 10); err != nil || len(data) != 0 {
		t.Errorf("empty file: %q, %v", data, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: %v", err)
	}
}
