package content

import (
	"os"
	"path/filepath"
	"testing"
)

// TestShadowedBy: a header the run read in include/ is shadowed when a folder searched before it
// (override/) holds a file of the same name now; one in the first folder, or outside the search order,
// is not.
func TestShadowedBy(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"src/a.c", "override/other.h", "include/lib.h", "include/sub/x.h", "override/sub/x.h"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	order := []string{filepath.Join(dir, "src"), filepath.Join(dir, "override"), filepath.Join(dir, "include")}
	for _, c := range []struct{ p, want string }{
		{"include/lib.h", ""},
		{"include/sub/x.h", "override/sub/x.h"},
		{"src/a.c", ""},
		{"elsewhere/y.h", ""},
	} {
		want := c.want
		if want != "" {
			want = filepath.Join(dir, want)
		}
		if got := shadowedBy(filepath.Join(dir, c.p), order); got != want {
			t.Errorf("%s: got %q, want %q", c.p, got, want)
		}
	}
	os.WriteFile(filepath.Join(dir, "override", "lib.h"), []byte("y"), 0o644)
	if got := shadowedBy(filepath.Join(dir, "include", "lib.h"), order); got != filepath.Join(dir, "override", "lib.h") {
		t.Errorf("a new override/lib.h: got %q", got)
	}
}
