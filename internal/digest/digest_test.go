package digest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// old is an mtime far enough in the past not to be racy.
var old = time.Date(2024, 3, 1, 12, 0, 0, 123456789, time.UTC)

func writeFile(t testing.TB, path, content string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func mustFile(t testing.TB, c *Cache, path string) Digest {
	t.Helper()
	d, err := c.File(path)
	if err != nil {
		t.Fatalf("File(%s): %v", path, err)
	}
	return d
}

func TestDigestText(t *testing.T) {
	// BLAKE3 of the empty input, from the reference test vectors.
	const empty = "blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	if got := Bytes(nil).String(); got != empty {
		t.Fatalf("Bytes(nil) = %s, want %s", got, empty)
	}
	d, err := Parse(strings.ToUpper(empty[len(Prefix):]))
	if err == nil {
		t.Fatalf("Parse without prefix = %v, want an error", d)
	}
	d, err = Parse(Prefix + strings.ToUpper(empty[len(Prefix):]))
	if err != nil || d != Bytes(nil) {
		t.Fatalf("Parse(upper case) = %v, %v", d, err)
	}
	for _, bad := range []string{"sha256:" + empty[len(Prefix):], "blake3:abc", empty[:len(empty)-1] + "g"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", bad)
		}
	}
	j, err := json.Marshal(struct{ D, Z Digest }{D: Bytes(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"D":"` + empty + `","Z":""}`; string(j) != want {
		t.Fatalf("json = %s, want %s", j, want)
	}
	var back struct{ D, Z Digest }
	if err := json.Unmarshal(j, &back); err != nil || back.D != Bytes(nil) || !back.Z.IsZero() {
		t.Fatalf("json round trip = %+v, %v", back, err)
	}
}

func TestReaderMatchesBytes(t *testing.T) {
	// Longer than the read buffer, and not a multiple of it or of the 1 KiB BLAKE3 chunk.
	data := bytes.Repeat([]byte("0123456789abcdef"), (3*bufSize+777)/16)
	got, err := Reader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if want := Bytes(data); got != want {
		t.Fatalf("Reader = %v, Bytes = %v", got, want)
	}
}

// TestMain moves the clock of every cache past the racy window: the tests' files were all written (their
// ctime) a moment ago. Tests of the racy window set their cache's clock themselves.
func TestMain(m *testing.M) {
	clock = func() time.Time { return time.Now().Add(RacyWindow + time.Second) }
	os.Exit(m.Run())
}

// TestHitDoesNotReread documents the contract: a cache hit answers from (device, inode, size, mtime,
// ctime) without opening the file, within a process and across processes.
func TestHitDoesNotReread(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "lib.a")
	writeFile(t, f, "version one", old)

	c, err := OpenCache(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	first := mustFile(t, c, f)
	if first != Bytes([]byte("version one")) {
		t.Fatalf("first digest = %v", first)
	}
	if got := mustFile(t, c, f); got != first {
		t.Fatalf("second lookup: %v, want %v", got, first)
	}
	if s := c.Stats(); s.Hits != 1 || s.Misses != 1 {
		t.Fatalf("stats = %+v, want 1 hit and 1 miss", s)
	}

	// The same holds across processes: save, reopen, ask again.
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	c2, err := OpenCache(filepath.Join(dir, "state"))
	if err != nil || c2.LoadErr() != nil {
		t.Fatalf("reopen: %v, %v", err, c2.LoadErr())
	}
	if got := mustFile(t, c2, f); got != first {
		t.Fatalf("reopened cache: %v, want the cached %v", got, first)
	}
	if s := c2.Stats(); s.Hits != 1 || s.Misses != 0 {
		t.Fatalf("reopened stats = %+v, want 1 hit", s)
	}
}

// An in-place edit that keeps the size and restores the mtime (cp -p, rsync -t, tar, two writes in one
// timestamp tick) moves the ctime: the cache must not answer with the old digest, in this process or
// after a save and reopen (repro 06).
func TestSameSizeSameMtimeRewriteRehashes(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "x.h")
	writeFile(t, f, "banner v1", old)
	state := filepath.Join(dir, "state")
	c, _ := OpenCache(state)
	first := mustFile(t, c, f)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	st1, _ := os.Stat(f)
	time.Sleep(20 * time.Millisecond) // past the kernel's coarse timestamp tick, so the ctime moves
	writeFile(t, f, "banner v9", old)
	st2, _ := os.Stat(f)
	if st1.Size() != st2.Size() || !st1.ModTime().Equal(st2.ModTime()) {
		t.Fatalf("the rewrite changed size or mtime: %v %v", st1, st2)
	}
	want := Bytes([]byte("banner v9"))
	if got := mustFile(t, c, f); got != want || got == first {
		t.Fatalf("after a same-size same-mtime rewrite: %v, want the new %v", got, want)
	}
	c2, _ := OpenCache(state)
	if got := mustFile(t, c2, f); got != want {
		t.Fatalf("reopened cache after the rewrite: %v, want the new %v", got, want)
	}
	if s := c2.Stats(); s.Hits != 0 || s.Misses != 1 {
		t.Fatalf("reopened stats = %+v, want 1 miss (the old entry's key has the old ctime)", s)
	}
}

func TestChangedMtimeRehashes(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "kernel.cu")
	writeFile(t, f, "__global__ void k() {}", old)
	c, _ := OpenCache(dir)
	a := mustFile(t, c, f)

	writeFile(t, f, "__global__ void K() {}", old.Add(time.Nanosecond)) // same size, mtime 1 ns later
	b := mustFile(t, c, f)
	if a == b || b != Bytes([]byte("__global__ void K() {}")) {
		t.Fatalf("after an mtime change: %v (before %v)", b, a)
	}

	writeFile(t, f, "longer content now", old.Add(time.Nanosecond)) // size changes, mtime kept
	if got := mustFile(t, c, f); got != Bytes([]byte("longer content now")) {
		t.Fatalf("after a size change: %v", got)
	}
	if s := c.Stats(); s.Misses != 3 || s.Hits != 0 {
		t.Fatalf("stats = %+v, want 3 misses", s)
	}
}

func TestRenamedOverRehashes(t *testing.T) {
	// A build that writes a new file and renames it into place changes the inode, even when size and mtime
	// are kept.
	dir := t.TempDir()
	f := filepath.Join(dir, "out.o")
	writeFile(t, f, "AAAA", old)
	c, _ := OpenCache(dir)
	mustFile(t, c, f)
	tmp := filepath.Join(dir, "out.o.tmp")
	writeFile(t, tmp, "BBBB", old)
	if err := os.Rename(tmp, f); err != nil {
		t.Fatal(err)
	}
	if got := mustFile(t, c, f); got != Bytes([]byte("BBBB")) {
		t.Fatalf("after rename over: %v", got)
	}
}

func TestRacyMtimeNotCached(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "fresh.rs")
	now := time.Now()
	writeFile(t, f, "fn main() {}", now)
	c, _ := OpenCache(dir)
	c.now = func() time.Time { return now }
	mustFile(t, c, f)
	writeFile(t, f, "fn main(){ }", now) // same size and mtime: a cached entry would hide this
	if got := mustFile(t, c, f); got != Bytes([]byte("fn main(){ }")) {
		t.Fatalf("racy file answered from the cache: %v", got)
	}
	if s := c.Stats(); s.Misses != 2 || s.Uncached != 2 || s.Entries != 0 {
		t.Fatalf("stats = %+v, want 2 uncached misses", s)
	}
	// Once the clock has moved past the window, the entry is stored.
	c.now = func() time.Time { return now.Add(RacyWindow + time.Second) }
	mustFile(t, c, f)
	if s := c.Stats(); s.Entries != 1 {
		t.Fatalf("stats = %+v, want 1 entry", s)
	}
}

func TestCorruptCacheIgnored(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.c")
	writeFile(t, f, "int a;", old)
	state := filepath.Join(dir, "state")
	c, _ := OpenCache(state)
	want := mustFile(t, c, f)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(state, CacheFile))
	if err != nil {
		t.Fatal(err)
	}

	flip := bytes.Clone(good)
	flip[headerSize+40] ^= 0xff // a digest byte: only the checksum notices
	count := bytes.Clone(good)
	count[8] = 200 // an entry count the length cannot hold
	for name, content := range map[string][]byte{
		"garbage":   []byte("this is not a cache file"),
		"empty":     nil,
		"truncated": good[:len(good)-1],
		"bitflip":   flip,
		"count":     count,
		"version":   append([]byte("SCDIGST\x09"), good[8:]...),
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(state, CacheFile), content, 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := OpenCache(state)
			if err != nil {
				t.Fatalf("OpenCache on a corrupt file: %v", err)
			}
			if c.LoadErr() == nil || c.Stats().Entries != 0 {
				t.Fatalf("LoadErr = %v, entries = %d; want an error and none", c.LoadErr(), c.Stats().Entries)
			}
			if got := mustFile(t, c, f); got != want {
				t.Fatalf("digest = %v, want %v", got, want)
			}
			if err := c.Save(); err != nil {
				t.Fatalf("Save over a corrupt file: %v", err)
			}
			c, _ = OpenCache(state)
			if c.LoadErr() != nil || c.Stats().Entries != 1 {
				t.Fatalf("after Save: LoadErr = %v, entries = %d", c.LoadErr(), c.Stats().Entries)
			}
		})
	}
}

func TestMissingCacheAndFolder(t *testing.T) {
	state := filepath.Join(t.TempDir(), "does", "not", "exist")
	c, err := OpenCache(state)
	if err != nil || c.LoadErr() != nil {
		t.Fatalf("OpenCache(missing) = %v, %v", err, c.LoadErr())
	}
	if err := c.Save(); err != nil { // nothing to save: no folder made
		t.Fatal(err)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("Save with nothing to write created the folder: %v", err)
	}
	if _, err := OpenCache(""); err == nil {
		t.Fatal("OpenCache(\"\") succeeded")
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	c, _ := OpenCache(dir)
	if _, err := c.File(filepath.Join(dir, "nope")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v, want not-exist", err)
	}
	if _, err := c.File(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("folder: %v, want 'not a regular file'", err)
	}
	// A symlink is followed; a dangling one is an error.
	target := filepath.Join(dir, "target")
	writeFile(t, target, "x", old)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if got := mustFile(t, c, link); got != Bytes([]byte("x")) {
		t.Errorf("through a link: %v", got)
	}
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.File(filepath.Join(dir, "dangling")); !os.IsNotExist(err) {
		t.Errorf("dangling link: %v", err)
	}
	// A nil cache hashes every time.
	var nc *Cache
	if got := mustFile(t, nc, target); got != Bytes([]byte("x")) || nc.Save() != nil {
		t.Errorf("nil cache: %v", got)
	}
}

// TestConcurrentSaves runs several caches (as separate processes would) on one folder: each Save merges,
// none tears the file, and every entry survives.
func TestConcurrentSaves(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	const workers, files = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _ := OpenCache(state)
			for i := range files {
				p := filepath.Join(dir, fmt.Sprintf("w%d-%d", w, i))
				writeFile(t, p, p, old)
				if _, err := c.File(p); err != nil {
					errs <- err
					return
				}
				if i%5 == 4 {
					if err := c.Save(); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c, _ := OpenCache(state)
	if c.LoadErr() != nil || c.Stats().Entries != workers*files {
		t.Fatalf("LoadErr = %v, entries = %d, want %d", c.LoadErr(), c.Stats().Entries, workers*files)
	}
	left, _ := filepath.Glob(filepath.Join(state, "*.tmp"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestParallelFile exercises the cache from many goroutines (run with -race).
func TestParallelFile(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 16 {
		p := filepath.Join(dir, fmt.Sprint(i))
		writeFile(t, p, p, old)
		paths = append(paths, p)
	}
	c, _ := OpenCache(dir)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range paths {
				if d, err := c.File(p); err != nil || d != Bytes([]byte(p)) {
					t.Errorf("%s: %v %v", p, d, err)
				}
			}
		}()
	}
	wg.Wait()
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if d, err := DefaultDir(); err != nil || d != "/x/state/stalecheck" {
		t.Errorf("with XDG_STATE_HOME: %q, %v", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/u")
	if d, err := DefaultDir(); err != nil || d != "/home/u/.local/state/stalecheck" {
		t.Errorf("with HOME: %q, %v", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	if d, err := DefaultDir(); err == nil {
		t.Errorf("with neither: %q, want an error", d)
	}
}

// BenchmarkFileWarm measures the warm path: a stat and a map lookup, no read.
func BenchmarkFileWarm(b *testing.B) {
	dir := b.TempDir()
	f := filepath.Join(dir, "libgroth16_cuda.a")
	writeFile(b, f, strings.Repeat("x", 1<<20), old)
	c, _ := OpenCache(dir)
	mustFile(b, c, f)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.File(f); err != nil {
			b.Fatal(err)
		}
	}
	if s := c.Stats(); s.Misses != 1 {
		b.Fatalf("stats = %+v, want every iteration to hit", s)
	}
}

// BenchmarkFileCold measures hashing a 16 MiB file (the miss path), in bytes per second.
func BenchmarkFileCold(b *testing.B) {
	dir := b.TempDir()
	f := filepath.Join(dir, "big.a")
	writeFile(b, f, strings.Repeat("0123456789abcdef", 1<<20), old)
	b.SetBytes(16 << 20)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := HashFile(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveLoad measures writing and reading a cache of 100k entries.
func BenchmarkSaveLoad(b *testing.B) {
	dir := b.TempDir()
	c, _ := OpenCache(dir)
	for i := range 100_000 {
		c.m[Key{Dev: 1, Ino: uint64(i), Size: int64(i), MtimeNS: int64(i)}] = entry{sum: Bytes([]byte(fmt.Sprint(i)))}
	}
	for b.Loop() {
		c.dirty = true
		if err := c.Save(); err != nil {
			b.Fatal(err)
		}
		c2, _ := OpenCache(dir)
		if c2.LoadErr() != nil || len(c2.m) != 100_000 {
			b.Fatalf("load: %v, %d entries", c2.LoadErr(), len(c2.m))
		}
	}
}

// A file whose mtime is old but whose ctime is recent (just restored with cp -p) is racy too: a second
// restore within the same tick would keep size, mtime and ctime.
func TestRacyCtimeNotCached(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "restored.c")
	writeFile(t, f, "int a;", old)
	c, _ := OpenCache(dir)
	c.now = time.Now
	mustFile(t, c, f)
	if s := c.Stats(); s.Misses != 1 || s.Uncached != 1 || s.Entries != 0 {
		t.Fatalf("stats = %+v, want 1 uncached miss", s)
	}
}
