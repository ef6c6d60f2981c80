package fsrec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// listing spells a folder's entries for comparison: name, type, and what Info says of each.
func listing(t *testing.T, ents []fs.DirEntry) []string {
	t.Helper()
	var out []string
	for _, e := range ents {
		fi, err := e.Info()
		info := fmt.Sprint(err)
		if err == nil {
			info = fmt.Sprintf("%s %v %d", fi.Name(), fi.Mode(), fi.Size())
		}
		out = append(out, fmt.Sprintf("%s dir=%v type=%v info=%s", e.Name(), e.IsDir(), e.Type(), info))
	}
	return out
}

// A tree with every kind of entry, and names that sort apart from their bytes' order in a listing.
func oddTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range []string{"b.txt", "a", "Z", "ü-nonascii", "with space", ".hidden", strings.Repeat("x", 255)} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"sub", "sub/deeper", "sub/deeper/deepest", "empty"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 600; i++ {
		if err := os.WriteFile(filepath.Join(dir, "sub", fmt.Sprintf("f%03d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Several getdents buffers' worth of records (64 bytes each, 32 KiB a buffer).
	if err := os.Mkdir(filepath.Join(dir, "big"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000; i++ {
		if err := os.WriteFile(filepath.Join(dir, "big", fmt.Sprintf("%040d", 3000-i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub", filepath.Join(dir, "link-to-dir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestListDirAsOSReadDir(t *testing.T) {
	dir := oddTree(t)
	for _, p := range []string{dir, filepath.Join(dir, "sub"), filepath.Join(dir, "big"), filepath.Join(dir, "empty"), dir + "/", filepath.Join(dir, "sub", "..")} {
		want, werr := os.ReadDir(p)
		got, gerr := listDir(p)
		if werr != nil || gerr != nil {
			t.Fatalf("%s: %v, %v", p, werr, gerr)
		}
		if len(want) == 0 && p != filepath.Join(dir, "empty") {
			t.Fatalf("premise: %s lists nothing", p)
		}
		if d := cmp.Diff(listing(t, want), listing(t, got)); d != "" {
			t.Errorf("%s (-os.ReadDir +listDir):\n%s", p, d)
		}
	}
	// Errors read as os.ReadDir's: a missing folder, a file, a FIFO (which os would wait on).
	for _, p := range []string{filepath.Join(dir, "missing"), filepath.Join(dir, "b.txt"), filepath.Join(dir, "dangling")} {
		_, werr := os.ReadDir(p)
		_, gerr := listDir(p)
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() || !errors.Is(gerr, errors.Unwrap(werr)) {
			t.Errorf("%s: os.ReadDir %v, listDir %v", p, werr, gerr)
		}
	}
	if _, err := listDir(filepath.Join(dir, "fifo")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("fifo: %v", err)
	}
}

// walkCalls spells every call WalkDir-like walk makes of fn, which skips "deeper" and, in the big
// folder, everything after f002 (SkipDir from a file).
func walkCalls(t *testing.T, walk func(string, fs.WalkDirFunc) error, root string) []string {
	t.Helper()
	var calls []string
	err := walk(root, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		kind := "nil"
		if d != nil {
			kind = fmt.Sprintf("dir=%v type=%v", d.IsDir(), d.Type())
		}
		calls = append(calls, fmt.Sprintf("%s %s %v", rel, kind, err))
		switch filepath.Base(p) {
		case "deeper":
			return filepath.SkipDir
		case "f002":
			return filepath.SkipDir
		}
		return nil
	})
	calls = append(calls, fmt.Sprint("end ", err))
	return calls
}

func TestWalkDirAsFilepath(t *testing.T) {
	dir := oddTree(t)
	for _, root := range []string{dir, filepath.Join(dir, "sub"), filepath.Join(dir, "b.txt"), filepath.Join(dir, "missing"), filepath.Join(dir, "link-to-dir")} {
		want := walkCalls(t, filepath.WalkDir, root)
		if got := walkCalls(t, WalkDir, root); !cmp.Equal(want, got) {
			t.Errorf("%s, not recording (-filepath.WalkDir +WalkDir):\n%s", root, cmp.Diff(want, got))
		}
		r := Begin(Options{})
		got := walkCalls(t, WalkDir, root)
		r.End()
		if !cmp.Equal(want, got) {
			t.Errorf("%s, recording (-filepath.WalkDir +WalkDir):\n%s", root, cmp.Diff(want, got))
		}
	}
	// An unreadable folder: fn sees the error on the folder's second call, as filepath.WalkDir gives it.
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "sub", "deeper")
		os.Chmod(locked, 0)
		defer os.Chmod(locked, 0o755)
		want := walkCalls(t, filepath.WalkDir, filepath.Join(dir, "sub"))
		if got := walkCalls(t, WalkDir, filepath.Join(dir, "sub")); !cmp.Equal(want, got) {
			t.Errorf("unreadable (-filepath.WalkDir +WalkDir):\n%s", cmp.Diff(want, got))
		}
	}
}
