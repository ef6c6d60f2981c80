package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCommentOnlyEdit: after a check of the clean build (the content baselines), an edit of a comment
// in a source make watches is pending for make but not stale: pending-rebuild drops to info, saying
// only comments changed; a comment edit of a header make does not watch is not an error either; an
// edit of code stays an error.
func TestCommentOnlyEdit(t *testing.T) {
	needTools(t, "make", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "app: main.o\n\t$(CC) -o $@ main.o\nmain.o: main.c\n\t$(CC) -c main.c -o $@\n",
		"main.c":   "#include \"k.h\"\n/* note 0 */\nint main(void) { return K - 1; }\n",
		"k.h":      "#define K 1 // note 0\n",
	})
	shIn(t, dir, nil, "make")
	if fs, code := checkSystems(t, dir); code != 0 {
		t.Fatalf("clean build: exit %d %+v", code, fs)
	}
	later := func(name, from, to string) {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), from) {
			t.Fatalf("%s: %v", name, err)
		}
		os.WriteFile(p, []byte(strings.Replace(string(b), from, to, 1)), 0o644)
		when := time.Now().Add(2 * time.Second)
		os.Chtimes(p, when, when)
	}
	later("main.c", "note 0", "note 1, longer")
	later("k.h", "note 0", "note 1")
	fs, code := checkSystems(t, dir)
	if code != 0 {
		t.Fatalf("comment edits: exit %d, want 0: %+v", code, fs)
	}
	main := filepath.Join(dir, "main.c")
	p := find(fs, "pending-rebuild", main)
	if len(p) != 1 || p[0].Severity != "info" || !strings.Contains(p[0].Message, "only comments or blanks changed") {
		t.Fatalf("pending-rebuild of main.c: %+v", fs)
	}
	// A touch of main.c (make redoes main.o, at the cost of time only) and an edit of k.h, which make
	// does not watch: the binary is stale for k.h's sake until that rebuild, and is said so.
	later("main.c", "note 1, longer", "note 1, longer")
	later("k.h", "K 1", "K 2")
	fs, code = checkSystems(t, dir)
	if u := find(fs, "untracked-input-changed", filepath.Join(dir, "k.h")); code != 1 || len(u) != 1 || u[0].Severity != "error" {
		t.Fatalf("touch of main.c and an edit of k.h: exit %d %+v", code, fs)
	}
	later("main.c", "K - 1", "K - 2")
	fs, code = checkSystems(t, dir)
	if p := find(fs, "pending-rebuild", main); code != 1 || len(p) != 1 || p[0].Severity != "error" {
		t.Fatalf("code edit: exit %d %+v", code, fs)
	}
}
