package fsrec

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// walkOrder lists what walk passes to fn, skipping folders named "skip".
func walkOrder(t *testing.T, walk func(string, fs.WalkDirFunc) error, root string) []string {
	t.Helper()
	var got []string
	err := walk(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			got = append(got, "error "+p)
			return nil
		}
		got = append(got, p+" "+d.Type().String())
		if d.IsDir() && d.Name() == "skip" {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWalkDirKeptWalksAsWalkDir: the same paths and types in the same order as filepath.WalkDir,
// without a recording, while keeping listings, and from the listings a prior recording kept.
func TestWalkDirKeptWalksAsWalkDir(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/b", "a/skip/c", "z"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for _, f := range []string{"a/b/x.c", "a/y.h", "a/skip/c/w.c", "m.txt"} {
		os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644)
	}
	os.Symlink("a", filepath.Join(root, "link"))
	want := walkOrder(t, filepath.WalkDir, root)
	if got := walkOrder(t, WalkDirKept, root); !slices.Equal(got, want) {
		t.Fatalf("no recording:\n%q\nwant\n%q", got, want)
	}

	r := begin(t, nil)
	if got := walkOrder(t, WalkDirKept, root); !slices.Equal(got, want) {
		t.Fatalf("keeping listings:\n%q\nwant\n%q", got, want)
	}
	memos := r.Memos()
	if len(memos) == 0 {
		t.Fatal("no listing kept")
	}
	var entries []PriorEntry
	for _, e := range r.Entries() {
		entries = append(entries, PriorEntry{Entry: e, Memo: true})
	}
	r.End()

	// The next recording, given those memos as still valid, lists nothing again and walks alike.
	r2 := begin(t, nil)
	p := &Prior{Memos: map[string]Memo{}, Entries: entries}
	for _, m := range memos {
		p.Memos[m.Name] = m
	}
	r2.Adopt(p)
	if got := walkOrder(t, WalkDirKept, root); !slices.Equal(got, want) {
		t.Fatalf("from kept listings:\n%q\nwant\n%q", got, want)
	}
	if r2.Reused() != len(memos) {
		t.Fatalf("reused %d of %d listings", r2.Reused(), len(memos))
	}
	if _, ok := entryOf(r2, filepath.Join(root, "a", "b"), OpLstat); !ok {
		t.Fatal("the adopted entries are not the new recording's")
	}
}

// TestPriorAnswersRecordedWhenAsked: an entry adopted as an answer (not under a memo) answers a Stat
// without a system call and becomes an entry of the recording only then.
func TestPriorAnswersRecordedWhenAsked(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("1"), 0o644)
	os.WriteFile(b, []byte("2"), 0o644)
	fa, _ := os.Stat(a)
	fb, _ := os.Stat(b)
	r := begin(t, nil)
	r.Adopt(&Prior{Entries: []PriorEntry{
		{Entry: Entry{Path: a, Op: OpStat, Sig: SigOf(fa, nil)}, Nlink: 1},
		{Entry: Entry{Path: b, Op: OpStat, Sig: SigOf(fb, nil)}, Nlink: 1},
	}})
	if _, ok := entryOf(r, a, OpStat); ok {
		t.Fatal("an answer nobody asked for is an entry")
	}
	// a is rewritten: the adopted answer (the state the cache's look-up saw) is given, as a first
	// look-up's would be for the rest of the recording.
	os.WriteFile(a, []byte("11"), 0o644)
	got, err := Stat(a)
	if err != nil || got.Size() != 1 || got.Mode() != fa.Mode() || !SameFile(got, fa) {
		t.Fatalf("Stat(a) = %v %v, want the adopted answer", got, err)
	}
	if _, ok := entryOf(r, a, OpStat); !ok {
		t.Fatal("an answer given is no entry")
	}
	if _, ok := entryOf(r, b, OpStat); ok {
		t.Fatal("b was never asked for")
	}
}
