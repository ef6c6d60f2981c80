package cinclude

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The store gives a later check the parse a fresh read gives; a rewritten file is parsed again; a file
// written within the racy window is not kept.
func TestStoreKeepsParses(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	a := filepath.Join(dir, "a.c")
	src := "#include \"x.h\"\n#include <stdio.h>\n#ifdef FAST\n#include \"fast.h\"\n#endif\n#define IMPL \"impl.h\"\n#include IMPL\n"
	if err := os.WriteFile(a, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(f func() time.Time) { storeClock = f }(storeClock)
	storeClock = func() time.Time { return time.Now().Add(time.Minute) }

	s := OpenStore(state)
	fresh := *NewCacheIn(s).file(a)
	if len(fresh.includes) != 3 || len(fresh.computed) != 1 || len(fresh.defines) != 1 {
		t.Fatalf("premise: the parse of a.c is %+v", fresh)
	}
	s.Save()
	s2 := OpenStore(state)
	if s2.c.Len() != 1 {
		t.Fatalf("the saved store holds %d parses, want 1", s2.c.Len())
	}
	stored := *NewCacheIn(s2).file(a)
	if d := cmp.Diff(fresh, stored, cmp.AllowUnexported(parsed{}), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("the stored parse differs from a fresh one (-fresh +stored):\n%s", d)
	}

	// Rewritten (its key changes): the new text's parse.
	if err := os.WriteFile(a, []byte("#include \"y.h\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := NewCacheIn(s2).Includes(a); len(got) != 1 || got[0].Name != "y.h" {
		t.Errorf("after a rewrite: %+v, want y.h", got)
	}

	// Written just now by the real clock: parsed, not kept.
	storeClock = time.Now
	b := filepath.Join(dir, "b.c")
	if err := os.WriteFile(b, []byte("#include \"z.h\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s3 := OpenStore(state)
	n := s3.c.Len()
	if got := NewCacheIn(s3).Includes(b); len(got) != 1 || got[0].Name != "z.h" {
		t.Fatalf("b.c: %+v", got)
	}
	if s3.c.Len() != n {
		t.Error("a file written within the racy window was kept")
	}

	// A damaged store file is an empty store, not an error.
	if err := os.WriteFile(filepath.Join(state, StoreFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s4 := OpenStore(state); s4 == nil || s4.c.Len() != 0 {
		t.Error("a damaged store file did not give an empty store")
	}
	if OpenStore("") != nil {
		t.Error("no state folder gave a store")
	}
}
