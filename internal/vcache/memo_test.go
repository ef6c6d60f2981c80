package vcache

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// countUnder is a memoized computation over a folder: how many regular files it holds (one level).
func countUnder(dir string) (n int, reused bool) {
	name := "test.count\x00" + dir
	if b, ok := fsrec.Reuse(name); ok {
		n, _ := strconv.Atoi(string(b))
		return n, true
	}
	ents, _ := fsrec.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n++
		}
	}
	fsrec.Keep(name, dir, []byte(strconv.Itoa(n)))
	return n, false
}

// TestMemosReusedUntilTheirScopeChanges: a check after a change outside a memo's scope reuses the
// memo (and records its scope's paths, so the next verdict covers them); a change under the scope, or
// a file added there, makes the computation run again.
func TestMemosReusedUntilTheirScopeChanges(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	c := Open(state, nil)
	pkgA, pkgB, other := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "other.txt")
	for _, d := range []string{pkgA, pkgB} {
		os.Mkdir(d, 0o755)
		write(t, filepath.Join(d, "x.c"), "int x;\n")
	}
	write(t, other, "1\n")
	time.Sleep(racyWindow + 20*time.Millisecond)
	k := Key{7}
	// check looks up the cache the way `check` does and runs the memoized computations on a miss.
	check := func() (hit bool, a, b int, reusedA, reusedB bool) {
		t.Helper()
		if _, ok := c.Lookup(k); ok {
			return true, 0, 0, false, false
		}
		rec := c.Begin()
		if rec == nil {
			t.Fatal("another recording is active")
		}
		safeio.ReadFile(other, 1<<20)
		a, reusedA = countUnder(pkgA)
		b, reusedB = countUnder(pkgB)
		if ok, why := c.Store(k, rec, &Result{Out: []byte(strconv.Itoa(a) + " " + strconv.Itoa(b))}); !ok {
			t.Fatalf("not stored: %s", why)
		}
		return false, a, b, reusedA, reusedB
	}
	if hit, a, b, ra, rb := check(); hit || a != 1 || b != 1 || ra || rb {
		t.Fatalf("first check: hit %v, counts %d %d, reused %v %v", hit, a, b, ra, rb)
	}
	if hit, _, _, _, _ := check(); !hit {
		t.Fatal("second check missed")
	}

	// A change outside both scopes: both memos reused, and the verdict stored after it still covers
	// what they read (an edit under a/ misses).
	write(t, other, "2\n")
	time.Sleep(racyWindow + 20*time.Millisecond)
	if hit, a, b, ra, rb := check(); hit || a != 1 || b != 1 || !ra || !rb {
		t.Fatalf("after an edit outside: hit %v, counts %d %d, reused %v %v", hit, a, b, ra, rb)
	}
	write(t, filepath.Join(pkgA, "x.c"), "int y;\n")
	time.Sleep(racyWindow + 20*time.Millisecond)
	if hit, a, b, ra, rb := check(); hit || a != 1 || b != 1 || ra || !rb {
		t.Fatalf("after an edit under a/: hit %v, counts %d %d, reused %v %v (want a computed again, b reused)", hit, a, b, ra, rb)
	}
	// A file added under b/: its folder's signature moves, b's memo is stale.
	write(t, filepath.Join(pkgB, "y.c"), "int y;\n")
	time.Sleep(racyWindow + 20*time.Millisecond)
	if hit, a, b, ra, rb := check(); hit || a != 1 || b != 2 || !ra || rb {
		t.Fatalf("after a file added under b/: hit %v, counts %d %d, reused %v %v", hit, a, b, ra, rb)
	}
	if hit, _, _, _, _ := check(); !hit {
		t.Fatal("the check after that missed")
	}
}

// TestMemosNeedTheirRecording: with no recording active, Reuse finds nothing and Keep keeps nothing.
func TestMemosNeedTheirRecording(t *testing.T) {
	fsrec.Keep("x", "/", []byte("1"))
	if _, ok := fsrec.Reuse("x"); ok {
		t.Fatal("reused without a recording")
	}
}

// TestMemoFileDamage: a memo file that does not decode, or belongs to another verdict, gives no memo;
// a damaged byte anywhere under a valid CRC is an error or a decode, never a panic.
func TestMemoFileDamage(t *testing.T) {
	k, gen := Key{9}, []byte("0123456789abcdef")
	ms := []fsrec.Memo{{Name: "n", Scope: "/a/b", Value: []byte("v")}, {Name: "m", Scope: "/a", Value: nil}}
	misses := []fsrec.Entry{{Path: "/a/b/Cargo.toml", Op: fsrec.OpStat}, {Path: "/a/x.h", Op: fsrec.OpLstat}}
	data := encodeMemos(k, gen, ms, misses)
	got, gotMisses, err := parseMemos(data, k, gen)
	if err != nil || len(got) != 2 || got[0].Name != "n" || got[0].Scope != "/a/b" || string(got[0].Value) != "v" || got[1].Name != "m" {
		t.Fatalf("memos: %v %+v", err, got)
	}
	if len(gotMisses) != 2 || gotMisses[0].Path != "/a/b/Cargo.toml" || gotMisses[0].Op != fsrec.OpStat || gotMisses[1].Op != fsrec.OpLstat ||
		gotMisses[0].Sig.Err != fsrec.ErrNotExist || gotMisses[1].Sig.Err != fsrec.ErrNotExist {
		t.Fatalf("covered misses: %+v", gotMisses)
	}
	if _, _, err := parseMemos(data, k, []byte("fedcba9876543210")); err == nil {
		t.Fatal("the memos of another generation decoded")
	}
	if _, _, err := parseMemos(data, Key{8}, gen); err == nil {
		t.Fatal("the memos of another key decoded")
	}
	if _, _, err := parseMemos(data[:len(data)-1], k, gen); err == nil {
		t.Fatal("a cut memo file decoded")
	}
	body := len(data) - 4
	for i := len(memoMagic) + 32 + len(gen); i < body; i++ {
		for _, b := range []byte{0, 0xff, data[i] ^ 0x80} {
			bad := append([]byte{}, data...)
			bad[i] = b
			binary.LittleEndian.PutUint32(bad[body:], crc32.ChecksumIEEE(bad[:body]))
			parseMemos(bad, k, gen)
		}
	}
}

// TestOnMissCalledOnceOnAMiss: the caller's OnMiss runs once when the look-up of a verdict file with
// memos meets a change, and never on a hit.
func TestOnMissCalledOnceOnAMiss(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	c := Open(state, nil)
	pkg, other := filepath.Join(dir, "a"), filepath.Join(dir, "other.txt")
	os.Mkdir(pkg, 0o755)
	write(t, filepath.Join(pkg, "x.c"), "int x;\n")
	write(t, other, "1\n")
	time.Sleep(racyWindow + 20*time.Millisecond)
	calls := make(chan struct{}, 4)
	c.OnMiss = func() { calls <- struct{}{} }
	var trace []string
	c.Trace = func(format string, args ...any) { trace = append(trace, fmt.Sprintf(format, args...)) }
	k := Key{8}
	check := func() bool {
		t.Helper()
		if _, ok := c.Lookup(k); ok {
			return true
		}
		rec := c.Begin()
		safeio.ReadFile(other, 1<<20)
		countUnder(pkg)
		if ok, why := c.Store(k, rec, &Result{}); !ok {
			t.Fatalf("not stored: %s", why)
		}
		return false
	}
	check()
	if !check() {
		t.Fatal("the second check missed")
	}
	if n := len(calls); n != 0 {
		t.Fatalf("OnMiss called %d times before any change (nothing stored, then a hit)", n)
	}
	write(t, other, "2\n")
	write(t, filepath.Join(pkg, "x.c"), "int y;\n")
	time.Sleep(racyWindow + 20*time.Millisecond)
	if check() {
		t.Fatal("a check after two changes hit")
	}
	// Both files were written after every other path of the verdict: the miss is seen at first look,
	// and OnMiss has run before the look-up returns.
	if !slices.ContainsFunc(trace, func(l string) bool { return strings.Contains(l, "seen at first look") }) {
		t.Errorf("the files written last changed, the trace does not say the first look saw it:\n%s", strings.Join(trace, "\n"))
	}
	select {
	case <-calls:
	default:
		t.Fatal("OnMiss was not called, or not before the look-up returned, on a miss seen at first look")
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(calls); n != 0 {
		t.Errorf("OnMiss called %d more times on one miss (two changed paths)", n)
	}
}

// TestCoveredAnswers: a covered miss answers the next recording only while its folder is among the
// entries that still answer alike, as a folder.
func TestCoveredAnswers(t *testing.T) {
	dir := fsrec.Sig{Mode: syscall.S_IFDIR | 0o755, Ino: 1}
	file := fsrec.Sig{Mode: syscall.S_IFREG | 0o644, Ino: 2}
	cands := []fsrec.PriorEntry{
		{Entry: fsrec.Entry{Path: "/ws/pkg", Op: fsrec.OpStat, Sig: dir}},
		{Entry: fsrec.Entry{Path: "/ws/lib", Op: fsrec.OpLstat, Sig: dir}},
		{Entry: fsrec.Entry{Path: "/ws/file", Op: fsrec.OpStat, Sig: file}},
	}
	misses := []fsrec.Entry{
		{Path: "/ws/pkg/Cargo.toml", Op: fsrec.OpStat, Sig: fsrec.Sig{Err: fsrec.ErrNotExist}},
		{Path: "/ws/lib/libz.so", Op: fsrec.OpLstat, Sig: fsrec.Sig{Err: fsrec.ErrNotExist}},
		{Path: "/ws/changed/x.h", Op: fsrec.OpStat, Sig: fsrec.Sig{Err: fsrec.ErrNotExist}}, // its folder changed: not a candidate
		{Path: "/ws/file/x", Op: fsrec.OpStat, Sig: fsrec.Sig{Err: fsrec.ErrNotExist}},      // under a file
		{Path: "/ws/pkg/sub/Cargo.toml", Op: fsrec.OpStat, Sig: fsrec.Sig{Err: fsrec.ErrNotExist}},
	}
	got := coveredAnswers(cands, misses)
	var paths []string
	for _, e := range got {
		if e.Memo || e.Sig.Err != fsrec.ErrNotExist {
			t.Errorf("%s: Memo %v, error class %d: want an answer that found nothing", e.Path, e.Memo, e.Sig.Err)
		}
		paths = append(paths, e.Path)
	}
	if want := []string{"/ws/pkg/Cargo.toml", "/ws/lib/libz.so"}; !slices.Equal(paths, want) {
		t.Errorf("answers %q, want %q", paths, want)
	}
	if coveredAnswers(cands, nil) != nil {
		t.Error("answers without misses")
	}
}
