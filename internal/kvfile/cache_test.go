package kvfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

type val struct {
	N    int               `json:"n"`
	Tags map[string]string `json:"tags,omitempty"`
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// A save of the file this process read appends what changed (a put, a value changed in place, a
// deletion) to the same inode; the next open sees the same cache as the process had. Past half the
// file's last whole write the file is written whole again, as one block.
func TestCacheAppendsWhatChanged(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.kv")
	c := Open[val](p, 1000, "", nil)
	big := strings.Repeat("x", 1000)
	for i := 0; i < 200; i++ {
		c.Put(fmt.Sprint("k", i), val{N: i, Tags: map[string]string{"pad": big}})
	}
	c.Save()
	ino := inode(t, p)

	c = Open[val](p, 1000, "", nil)
	c.Put("new", val{N: -1})
	v, _ := c.Get("k1")
	v.Tags["changed"] = "in place" // a caller changing what a value holds, without Put
	c.Get("k2")                    // asked for, unchanged: not appended
	c.Del("k3")
	c.Save()
	if inode(t, p) != ino {
		t.Fatal("the file was written whole again, not appended to")
	}
	_, info, err := Read(p, 1<<30)
	if err != nil || info.Blocks != 2 || info.Appended > 3000 {
		t.Fatalf("after the save: %v, info %+v; want one appended block of the two changed values and a deletion", err, info)
	}
	c = Open[val](p, 1000, "", nil)
	if v, ok := c.Get("new"); !ok || v.N != -1 {
		t.Errorf("new: %+v, %v", v, ok)
	}
	if v, _ := c.Get("k1"); v.Tags["changed"] != "in place" {
		t.Errorf("k1: %+v", v)
	}
	if c.Has("k3") || c.Len() != 200 {
		t.Errorf("k3 there: %v; %d entries, want 200", c.Has("k3"), c.Len())
	}

	// Enough changes to pass half the file: written whole, one block.
	for i := 0; i < 150; i++ {
		c.Put(fmt.Sprint("k", i), val{N: i + 1, Tags: map[string]string{"pad": big}})
	}
	c.Save()
	if _, info, err := Read(p, 1<<30); err != nil || info.Blocks != 1 || inode(t, p) == ino {
		t.Fatalf("after many changes: %v, info %+v; want the file written whole", err, info)
	}
	if v, _ := Open[val](p, 1000, "", nil).Get("k149"); v.N != 150 {
		t.Fatalf("k149 after the rewrite: %+v", v)
	}
}

// A value that does not decode is absent, and a save removes it from the file.
func TestCacheDropsWhatDoesNotDecode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.kv")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, RecordSize("bad", []byte("[1]"), false)+RecordSize("good", []byte(`{"n":1}`), false))
	w.Add("bad", []byte("[1]"))
	w.Add("good", []byte(`{"n":1}`))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c := Open[val](p, 1000, "", nil)
	if _, ok := c.Get("bad"); ok {
		t.Fatal("a value that does not decode is there")
	}
	c.Put("other", val{N: 2})
	c.Save()
	raw, _, err := Read(p, 1<<20)
	if err != nil || raw["bad"] != nil || raw["good"] == nil || raw["other"] == nil {
		t.Fatalf("after the save: %v, %q", err, raw)
	}
}

// A damaged file is written whole again at the next save, never appended to (the appended block would
// stay behind a first block no one can read).
func TestCacheRewritesADamagedFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.kv")
	if err := os.WriteFile(p, []byte("stalecheck kv 1\nold format"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Open[val](p, 1000, "", nil)
	c.Put("k", val{N: 1})
	c.Save()
	if v, ok := Open[val](p, 1000, "", nil).Get("k"); !ok || v.N != 1 {
		t.Fatalf("after a save over a damaged file: %+v, %v", v, ok)
	}
}

// Checks saving at once lose nothing: each save is made under a lock beside the file, and merges what
// the others saved (a helper lost content baselines with four checks of a fresh state folder at once).
func TestCacheConcurrentSaves(t *testing.T) {
	for round := 0; round < 5; round++ {
		p := filepath.Join(t.TempDir(), "c.kv")
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := Open[val](p, 1000, "", nil)
				c.Put(fmt.Sprint("k", i), val{N: i})
				c.Save()
			}()
		}
		wg.Wait()
		if n := Open[val](p, 1000, "", nil).Len(); n != 8 {
			t.Fatalf("round %d: %d of 8 saves kept", round, n)
		}
	}
}

// Zeros after the last block (a file extended with a hole) end the file there, and the next save
// writes it whole, even when nothing changed.
func TestCacheRepairsATornTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.kv")
	c := Open[val](p, 1000, "", nil)
	c.Put("k", val{N: 1})
	c.Save()
	if err := os.Truncate(p, 200<<20); err != nil {
		t.Fatal(err)
	}
	if _, info, err := Read(p, 1<<30); err != nil || info.Blocks != 1 || info.TornAt == 0 {
		t.Fatalf("a zero-filled tail: %v, info %+v; want one block and the rest torn", err, info)
	}
	c = Open[val](p, 1000, "", nil)
	if v, ok := c.Get("k"); !ok || v.N != 1 {
		t.Fatalf("k: %+v, %v", v, ok)
	}
	c.Save()
	if fi, err := os.Stat(p); err != nil || fi.Size() > 1<<10 {
		t.Fatalf("after the save: %v, %d bytes; want the file written whole", err, fi.Size())
	}
}
