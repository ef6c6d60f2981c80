package vcache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/content"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// record runs consult under a recording and tries to store res; it returns Store's answer.
func record(t *testing.T, c *Cache, k Key, res *Result, consult func()) (bool, string) {
	t.Helper()
	rec := c.Begin()
	if rec == nil {
		t.Fatal("another recording is active")
	}
	consult()
	return c.Store(k, rec, res)
}

// write writes a file (tests wait past the racy window where they need an old one).
func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestStoreLookupAndEachChange(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	c := Open(state, nil)
	src, missing, sub := filepath.Join(dir, "a.c"), filepath.Join(dir, "inc", "x.h"), filepath.Join(dir, "inc")
	write(t, src, "int a;\n")
	os.Mkdir(sub, 0o755)
	time.Sleep(racyWindow + 20*time.Millisecond)
	k := Key{1}
	res := &Result{Exit: 1, Out: []byte("report\n"), Err: []byte("note\n"), Extra: []byte("{}")}
	consult := func() {
		safeio.ReadFile(src, 1<<20)
		fsrec.Stat(missing)
		fsrec.ReadDir(sub)
	}
	if ok, why := record(t, c, k, res, consult); !ok {
		t.Fatalf("not stored: %s", why)
	}
	got, ok := c.Lookup(k)
	if !ok || got.Exit != 1 || string(got.Out) != "report\n" || string(got.Err) != "note\n" || string(got.Extra) != "{}" {
		t.Fatalf("lookup after store: %v %+v", ok, got)
	}
	if _, ok := c.Lookup(Key{2}); ok {
		t.Fatal("another key hit")
	}

	// The content rewritten with size and mtime put back: the ctime tells.
	fi, _ := os.Stat(src)
	write(t, src, "int b;\n")
	os.Chtimes(src, fi.ModTime(), fi.ModTime())
	if _, ok := c.Lookup(k); ok {
		t.Fatal("hit after an in-place edit with the mtime put back")
	}
	time.Sleep(racyWindow + 20*time.Millisecond)
	if ok, why := record(t, c, k, res, consult); !ok {
		t.Fatalf("not stored: %s", why)
	}
	// A file appearing where a look-up found nothing (also lists the folder: its mtime moves too).
	write(t, missing, "#define X 1\n")
	if _, ok := c.Lookup(k); ok {
		t.Fatal("hit after a missing file appeared")
	}
}

func TestNotStored(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	c := Open(state, nil)
	src := filepath.Join(dir, "a.c")
	write(t, src, "x")
	// Too new: ctime within the racy window of the check's start.
	if ok, why := record(t, c, Key{1}, &Result{}, func() { fsrec.Stat(src) }); ok || !strings.Contains(why, "too close") {
		t.Fatalf("a file written just now: stored %v (%s)", ok, why)
	}
	time.Sleep(racyWindow + 20*time.Millisecond)
	// Changed during the check, after it was consulted: the entry keeps what the check saw, so the
	// next look-up misses (whether or not it was stored).
	record(t, c, Key{1}, &Result{}, func() {
		fsrec.Stat(src)
		write(t, src, "xy")
	})
	if _, ok := c.Lookup(Key{1}); ok {
		t.Fatal("a file changed during the check after it was consulted: a hit")
	}
	// Seen with two signatures during the check (a second Stat gives the first answer again; an
	// open looks anew).
	time.Sleep(racyWindow + 20*time.Millisecond)
	if ok, why := record(t, c, Key{1}, &Result{}, func() {
		fsrec.Stat(src)
		write(t, src, "xyz")
		if f, err := fsrec.Open(src); err == nil {
			f.Close()
		}
	}); ok || !strings.Contains(why, "changed during the check") {
		t.Fatalf("a file seen with two signatures: stored %v (%s)", ok, why)
	}
	// Uncacheable: a child process's reads.
	time.Sleep(racyWindow + 20*time.Millisecond)
	if ok, why := record(t, c, Key{1}, &Result{}, func() {
		fsrec.Stat(src)
		fsrec.Uncacheable("ran make -n in /x")
	}); ok || !strings.Contains(why, "make -n") {
		t.Fatalf("uncacheable: stored %v (%s)", ok, why)
	}
	// A fresh state file does not keep the check from being stored (the racy window does not apply to
	// state files); the ledger is not recorded.
	base, ledger := filepath.Join(state, content.BaselinesFile), filepath.Join(state, "ledger.db")
	write(t, base, "{}")
	write(t, ledger, "x")
	if ok, why := record(t, c, Key{1}, &Result{}, func() {
		safeio.ReadFile(base, 1<<20)
		safeio.ReadFile(ledger, 1<<20)
		write(t, ledger, "changed")
	}); !ok {
		t.Fatalf("a fresh state file and a rewritten ledger: not stored (%s)", why)
	}
	// A state file the check rewrote (a baseline recorded, a cache filled) is kept as the check left it:
	// the verdict is stored, the next check with that file is a hit, and another change to it a miss.
	if ok, why := record(t, c, Key{2}, &Result{Out: []byte("v")}, func() {
		safeio.ReadFile(base, 1<<20)
		os.WriteFile(base+".tmp", []byte(`{"a":1}`), 0o600)
		os.Rename(base+".tmp", base)
	}); !ok {
		t.Fatalf("rewritten baselines: not stored (%s)", why)
	}
	if res, ok := c.Lookup(Key{2}); !ok || string(res.Out) != "v" {
		t.Fatalf("after the check that rewrote the baselines: hit %v", ok)
	}
	os.WriteFile(base+".tmp", []byte(`{"a":2}`), 0o600)
	os.Rename(base+".tmp", base)
	if _, ok := c.Lookup(Key{2}); ok {
		t.Fatal("baselines rewritten since the check: a hit")
	}
}

func TestDamagedFileIsAMiss(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	c := Open(state, nil)
	src := filepath.Join(dir, "a.c")
	write(t, src, "x")
	time.Sleep(racyWindow + 20*time.Millisecond)
	if ok, why := record(t, c, Key{7}, &Result{Out: []byte("out")}, func() { fsrec.Stat(src) }); !ok {
		t.Fatal(why)
	}
	p := c.path(Key{7})
	data, _ := os.ReadFile(p)
	for _, bad := range [][]byte{data[:len(data)-1], data[:10], append(append([]byte{}, data[:len(data)-5]...), 'x', 0, 0, 0, 0), {}} {
		os.WriteFile(p, bad, 0o600)
		if _, ok := c.Lookup(Key{7}); ok {
			t.Fatalf("a damaged file (%d bytes) hit", len(bad))
		}
	}
	os.Remove(p)
	syscall.Mkfifo(p, 0o600) // never waited on
	if _, ok := c.Lookup(Key{7}); ok {
		t.Fatal("a FIFO hit")
	}
}

func TestKeyEnvironment(t *testing.T) {
	t.Setenv("CFLAGS", "-O2")
	a, err := MakeKey("check", "v", []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("_", "/usr/bin/whatever")
	t.Setenv("SHLVL", "7") // bash lowers it for the last command of a $(...)
	t.Setenv(EnvMode, "verify")
	if b, _ := MakeKey("check", "v", []string{"x"}); b != a {
		t.Fatal("a volatile variable or the cache's own switch changed the key")
	}
	t.Setenv("CFLAGS", "-O3")
	if b, _ := MakeKey("check", "v", []string{"x"}); b == a {
		t.Fatal("CFLAGS did not change the key")
	}
	if b, _ := MakeKey("check", "v", []string{"y"}); b == a {
		t.Fatal("the command line did not change the key")
	}
}

// A file read as content (safeio.ReadContent: Cargo's uplifted <bin>.d) keeps the verdict valid when it is
// rewritten with the same bytes (a new mtime and ctime, as every no-op cargo build does), and not when
// its bytes change, even with the size and mtime put back; a content read just written (racy) is
// stored and compared by its bytes on every look-up.
func TestContentEntries(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	c := Open(state, nil)
	dep := filepath.Join(dir, "app.d")
	write(t, dep, "/x/app: /x/src/main.rs\n")
	time.Sleep(racyWindow + 20*time.Millisecond)
	k := Key{7}
	consult := func() {
		if _, err := safeio.ReadContent(dep, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	if ok, why := record(t, c, k, &Result{}, consult); !ok {
		t.Fatalf("not stored: %s", why)
	}
	_, _, ents, err := ReadEntry(c.path(k))
	if err != nil || len(ents) != 1 || ents[0].Op != fsrec.OpContent || ents[0].Recheck {
		t.Fatalf("entries %+v (%v), want one content entry without recheck", ents, err)
	}
	time.Sleep(20 * time.Millisecond)
	write(t, dep, "/x/app: /x/src/main.rs\n") // the same bytes, a new mtime
	if _, ok := c.Lookup(k); !ok {
		t.Fatal("miss after a rewrite with the same bytes")
	}
	fi, _ := os.Stat(dep)
	write(t, dep, "/y/app: /y/src/main.rs\n") // other bytes, same size, mtime put back
	os.Chtimes(dep, fi.ModTime(), fi.ModTime())
	if _, ok := c.Lookup(k); ok {
		t.Fatal("hit after the bytes changed")
	}
	os.Remove(dep)
	if _, ok := c.Lookup(k); ok {
		t.Fatal("hit after the file was removed")
	}

	// Written just before the check: stored, with a recheck of the bytes on every look-up.
	write(t, dep, "/x/app: /x/src/main.rs\n")
	if ok, why := record(t, c, k, &Result{}, consult); !ok {
		t.Fatalf("a content read of a fresh file: not stored (%s)", why)
	}
	if _, _, ents, _ := ReadEntry(c.path(k)); len(ents) != 1 || !ents[0].Recheck {
		t.Fatalf("entries %+v, want a recheck", ents)
	}
	if _, ok := c.Lookup(k); !ok {
		t.Fatal("miss on unchanged bytes with a recheck")
	}
	// The same size and signature kept as far as a coarse clock can tell: the bytes decide.
	fi, _ = os.Stat(dep)
	write(t, dep, "/z/app: /z/src/main.rs\n")
	os.Chtimes(dep, fi.ModTime(), fi.ModTime())
	if _, ok := c.Lookup(k); ok {
		t.Fatal("hit after the bytes of a recheck entry changed")
	}

	// A stat of the same path still guards its mtime: the content entry does not stand in for it.
	write(t, dep, "/x/app: /x/src/main.rs\n")
	time.Sleep(racyWindow + 20*time.Millisecond)
	if ok, why := record(t, c, k, &Result{}, func() { consult(); fsrec.Stat(dep) }); !ok {
		t.Fatalf("not stored: %s", why)
	}
	write(t, dep, "/x/app: /x/src/main.rs\n")
	if _, ok := c.Lookup(k); ok {
		t.Fatal("hit after a rewrite of a file whose stat the check also used")
	}
}

// A look-up that found nothing in a folder the check also listed is covered by the folder's signature
// (not stored apart), and still misses when the name appears; one in a folder not recorded is kept.
func TestCoveredMisses(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	c := Open(state, nil)
	out, other := filepath.Join(dir, "out"), filepath.Join(dir, "other")
	os.Mkdir(out, 0o755)
	os.Mkdir(other, 0o755)
	write(t, filepath.Join(out, "libfoo.a"), "!<arch>\n")
	time.Sleep(racyWindow + 20*time.Millisecond)
	k := Key{8}
	consult := func() {
		fsrec.ReadDir(out)
		fsrec.Stat(filepath.Join(out, "libfoo.so"))
		fsrec.Stat(filepath.Join(other, "libfoo.so"))
	}
	if ok, why := record(t, c, k, &Result{}, consult); !ok {
		t.Fatalf("not stored: %s", why)
	}
	_, _, ents, _ := ReadEntry(c.path(k))
	var paths []string
	for _, e := range ents {
		paths = append(paths, e.Path)
	}
	if got, want := strings.Join(paths, " "), out+" "+filepath.Join(other, "libfoo.so"); got != want {
		t.Fatalf("entries %s, want %s", got, want)
	}
	if _, ok := c.Lookup(k); !ok {
		t.Fatal("miss when nothing changed")
	}
	write(t, filepath.Join(out, "libfoo.so"), "\x7fELF")
	if _, ok := c.Lookup(k); ok {
		t.Fatal("hit after the missing name appeared in the listed folder")
	}
	os.Remove(filepath.Join(out, "libfoo.so"))
	time.Sleep(racyWindow + 20*time.Millisecond)
	if ok, why := record(t, c, k, &Result{}, consult); !ok {
		t.Fatalf("not stored: %s", why)
	}
	write(t, filepath.Join(other, "libfoo.so"), "\x7fELF")
	if _, ok := c.Lookup(k); ok {
		t.Fatal("hit after the missing name appeared in the folder not listed")
	}
}

// A miss where a cache file of the state folder and a source both changed names the source: the state
// file is rarely the reason a person looks for (TestVerdictCacheOnRealBuild met the state file first).
func TestMissNamesAChangeOutsideTheStateFolder(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	var trace strings.Builder
	c := Open(state, nil)
	c.Trace = func(format string, args ...any) { fmt.Fprintf(&trace, format+"\n", args...) }
	cache, src := filepath.Join(state, content.BaselinesFile), filepath.Join(dir, "z.c")
	write(t, cache, "{}")
	write(t, src, "int z;\n")
	time.Sleep(racyWindow + 20*time.Millisecond)
	k := Key{3}
	if ok, why := record(t, c, k, &Result{}, func() { safeio.ReadFile(cache, 1<<20); safeio.ReadFile(src, 1<<20) }); !ok {
		t.Fatalf("not stored: %s", why)
	}
	write(t, cache, `{"archives":[]}`)
	write(t, src, "int zz;\n")
	trace.Reset()
	if _, ok := c.Lookup(k); ok {
		t.Fatal("hit after two changes")
	}
	if !strings.Contains(trace.String(), "miss: "+src+" changed") {
		t.Errorf("the miss names %q, want %s", trace.String(), src)
	}
	// Only the state file changed: it is named.
	time.Sleep(racyWindow + 20*time.Millisecond)
	if ok, why := record(t, c, k, &Result{}, func() { safeio.ReadFile(cache, 1<<20); safeio.ReadFile(src, 1<<20) }); !ok {
		t.Fatalf("not stored: %s", why)
	}
	write(t, cache, `{"archives":[],"versions":[]}`)
	trace.Reset()
	if _, ok := c.Lookup(k); ok || !strings.Contains(trace.String(), "miss: "+cache+" changed") {
		t.Errorf("state file only: hit %v, trace %q", ok, trace.String())
	}
}
