package fsrec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestStatOpAsOS: statOp gives what os.Stat and os.Lstat give (name, mode, size, mtime, the
// Stat_t, and the error's text) for files, folders, links, dangling links, missing paths, a file used
// as a folder, trailing slashes, relative paths and a NUL byte.
func TestStatOpAsOS(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(f, []byte("abc"), 0o640); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("gone", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	paths := []string{f, sub, sub + "/", sub + "//", filepath.Join(dir, "link"), filepath.Join(dir, "dangling"),
		filepath.Join(dir, "missing"), f + "/x", "f.txt", "./sub/", "sub", ".", "..", "/", "//", "a\x00b", ""}
	for _, p := range paths {
		for _, op := range []Op{OpStat, OpLstat} {
			got, gerr := statOp(p, op)
			want, werr := os.Stat(p)
			if op == OpLstat {
				want, werr = os.Lstat(p)
			}
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("%q op %d: error %v, os gives %v", p, op, gerr, werr)
				continue
			}
			if werr != nil {
				continue
			}
			if got.Name() != want.Name() || got.Mode() != want.Mode() || got.Size() != want.Size() ||
				!got.ModTime().Equal(want.ModTime()) || got.IsDir() != want.IsDir() {
				t.Errorf("%q op %d: %q %v %d %v, os gives %q %v %d %v", p, op, got.Name(), got.Mode(), got.Size(), got.ModTime(),
					want.Name(), want.Mode(), want.Size(), want.ModTime())
			}
			if !SameFile(got, want) {
				t.Errorf("%q op %d: another file than os's", p, op)
			}
		}
	}
}
