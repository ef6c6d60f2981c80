package vcache

import (
	stdcmp "cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stalecheck/stalecheck/internal/fsrec"
)

// formatEntries are real look-ups of files in folders of several sizes (more than one chunk), with
// the odd paths: a file at the root, a last element "..", an absent name, a content entry.
func formatEntries(t *testing.T) []fsrec.Entry {
	t.Helper()
	dir := t.TempDir()
	var ents []fsrec.Entry
	for d := 0; d < 40; d++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", d))
		os.Mkdir(sub, 0o755)
		for i := 0; i < d*3; i++ {
			p := filepath.Join(sub, fmt.Sprintf("f%03d.c", i))
			write(t, p, p)
			ents = append(ents, fsrec.Entry{Path: p, Op: fsrec.OpLstat, Sig: fsrec.Now(p, fsrec.OpLstat)})
		}
		ents = append(ents, fsrec.Entry{Path: sub, Op: fsrec.OpStat, Sig: fsrec.Now(sub, fsrec.OpStat)})
	}
	c := filepath.Join(dir, "bin.d")
	write(t, c, "bin: a.rs\n")
	odd := []string{"/etc", filepath.Join(dir, "d01", ".."), filepath.Join(dir, "absent", "x.h")}
	for _, p := range odd {
		ents = append(ents, fsrec.Entry{Path: p, Op: fsrec.OpStat, Sig: fsrec.Now(p, fsrec.OpStat)})
	}
	sum := fsrec.SumOf([]byte("bin: a.rs\n"))
	ents = append(ents, fsrec.Entry{Path: c, Op: fsrec.OpContent, Sig: fsrec.Now(c, fsrec.OpContent), Sum: &sum, Recheck: true})
	sortByFolder(ents)
	return ents
}

func TestFormatRoundTripAndChanges(t *testing.T) {
	ents := formatEntries(t)
	k := Key{9}
	res := &Result{Exit: 2, Out: []byte("o"), Err: []byte("e"), Extra: []byte(`{"x":1}`)}
	first := firstLook(ents, "/no-state/")
	if len(first) != firstLookEntries {
		t.Fatalf("%d first-look entries of %d", len(first), len(ents))
	}
	data := encode(k, res, ents, nil, first)
	f, err := parse(data, k)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(first, f.first); d != "" {
		t.Fatalf("first-look entries (-stored +decoded):\n%s", d)
	}
	if f.firstChanged() {
		t.Fatal("unchanged tree: a first-look entry changed")
	}
	if len(f.chunks) < 2 {
		t.Fatalf("%d entries in %d chunk(s): the test wants several", len(ents), len(f.chunks))
	}
	got, err := f.entries()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ents, got); d != "" {
		t.Fatalf("round trip (-stored +decoded):\n%s", d)
	}
	if d := cmp.Diff(res, f.res); d != "" {
		t.Fatalf("result (-stored +decoded):\n%s", d)
	}
	if p, err := f.changed(nil); p != "" || err != nil {
		t.Fatalf("unchanged tree: changed %q, %v", p, err)
	}
	// A change in the first, a middle and the last chunk is found, whichever worker meets it (a tree
	// of its own each time: a removal changes the folder's entry too).
	for _, at := range []int{0, len(ents) / 2, len(ents) - 5} {
		ents := formatEntries(t)
		f, err := parse(encode(k, res, ents, nil, nil), k)
		if err != nil {
			t.Fatal(err)
		}
		i := at
		for ents[i].Op != fsrec.OpLstat {
			i = (i + 1) % len(ents)
		}
		e := ents[i]
		write(t, e.Path, "edited")
		if p, err := f.changed(nil); p != e.Path || err != nil {
			t.Errorf("edited %s: changed %q, %v", e.Path, p, err)
		}
		if f.firstChanged() {
			t.Errorf("edited %s: a first-look entry changed (none stored)", e.Path)
		}
		if p, _ := f.changed(func(b []byte) bool { return string(b) == e.Path }); p != "" {
			t.Errorf("edited %s, skipped: changed %q", e.Path, p)
		}
		os.Remove(e.Path)
		if p, _ := f.changed(nil); p != e.Path && p != filepath.Dir(e.Path) {
			t.Errorf("removed %s: changed %q", e.Path, p)
		}
	}
}

// TestFormatDamageUnderAValidCRC: bytes changed with the CRC sealed again (a bug, not a bad disk) are
// an error or a decode, never a panic or a hang.
func TestFormatDamageUnderAValidCRC(t *testing.T) {
	ents := formatEntries(t)
	k := Key{3}
	data := encode(k, &Result{Extra: []byte("{}")}, ents, nil, firstLook(ents, "/no-state/"))
	body := len(data) - 4
	stride := 61
	if testing.Short() {
		stride = 601 // a tenth of the bytes: the full suite damages every 61st
	}
	for i := len(magic) + 32; i < body; i += stride {
		for _, b := range []byte{0, 0xff, data[i] ^ 0x80} {
			bad := append([]byte{}, data...)
			bad[i] = b
			binary.LittleEndian.PutUint32(bad[body:], crc32.ChecksumIEEE(bad[:body]))
			f, err := parse(bad, k)
			if err != nil {
				continue
			}
			f.entries()
			f.changed(nil)

		}
	}
	for _, n := range []int{len(magic) + 33, body / 2, body - 1} {
		bad := append([]byte{}, data[:n]...)
		bad = binary.LittleEndian.AppendUint32(bad, crc32.ChecksumIEEE(bad))
		if f, err := parse(bad, k); err == nil {
			if _, err := f.entries(); err == nil {
				t.Errorf("cut at %d of %d bytes: decoded", n, body)
			}
		}
	}
}

// TestSortByFolderNewestFirst: folders come by the newest ctime among their entries, newest first (the
// look-up after a rebuild meets a change in the first chunk), then by name; a folder's entries by name.
func TestSortByFolderNewestFirst(t *testing.T) {
	at := func(p string, ctime int64) fsrec.Entry {
		return fsrec.Entry{Path: p, Op: fsrec.OpStat, Sig: fsrec.Sig{CtimeNS: ctime}}
	}
	ents := []fsrec.Entry{at("/w/src/a.rs", 10), at("/w/t/deps/app.d", 90), at("/w/src/b.rs", 50), at("/w/t/fp/x", 70),
		at("/w/t/deps/lib.d", 20), at("/w/old/o", 5), at("/w/t/fp/y", 70), at("/w/missing", 0)}
	sortByFolder(ents)
	var got []string
	for _, e := range ents {
		got = append(got, e.Path)
	}
	want := []string{"/w/t/deps/app.d", "/w/t/deps/lib.d", "/w/t/fp/x", "/w/t/fp/y", "/w/src/a.rs", "/w/src/b.rs", "/w/old/o", "/w/missing"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// TestSortByFolderOrder: with no times, entries end ordered by folder, then name, path and op, as one
// comparison of the whole key would order them, whatever order they came in.
func TestSortByFolderOrder(t *testing.T) {
	var ents []fsrec.Entry
	for _, p := range []string{"/w/b/x", "/w/a", "/w/b", "/w/a/z", "/w/a/y", "/w/ab/c", "/w/a/y", "/w/.", "/x", "/w/b/x"} {
		for _, op := range []fsrec.Op{fsrec.OpLstat, fsrec.OpStat} {
			ents = append(ents, fsrec.Entry{Path: p, Op: op})
		}
	}
	want := slices.Clone(ents)
	slices.SortFunc(want, func(a, b fsrec.Entry) int {
		da, ba, _ := splitPath(a.Path)
		db, bb, _ := splitPath(b.Path)
		return stdcmp.Or(strings.Compare(da, db), strings.Compare(ba, bb), strings.Compare(a.Path, b.Path), stdcmp.Compare(a.Op, b.Op))
	})
	for seed := range uint64(20) {
		got := slices.Clone(ents)
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		sortByFolder(got)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: got %v, want %v", seed, got, want)
		}
	}
}

// TestFirstLook: the first-look entries are the found, non-content entries outside the state folder
// that changed last (mtime or ctime), latest first; a rewrite of one of them is seen at first look.
func TestFirstLook(t *testing.T) {
	var ents []fsrec.Entry
	at := func(p string, op fsrec.Op, mtime, ctime int64) {
		ents = append(ents, fsrec.Entry{Path: p, Op: op, Sig: fsrec.Sig{Ino: uint64(len(ents) + 1), MtimeNS: mtime, CtimeNS: ctime}})
	}
	for i := 0; i < 30; i++ {
		at(fmt.Sprintf("/ws/src/f%02d.rs", i), fsrec.OpStat, int64(i), int64(i)) // f29 is the latest of these
	}
	at("/ws/target/app", fsrec.OpStat, 5, 100)        // a late ctime (a rename, a chmod) counts
	at("/ws/target/app.d", fsrec.OpContent, 200, 200) // compared by its bytes: not a quick look
	at("/state/verdicts/x", fsrec.OpStat, 300, 300)   // the state folder's: every check rewrites it
	at("/ws/target/touched", fsrec.OpLstat, 150, 1)   // a late mtime (touch -d) counts
	ents = append(ents, fsrec.Entry{Path: "/ws/absent.h", Op: fsrec.OpStat, Sig: fsrec.Sig{Err: fsrec.ErrNotExist}})
	rand.Shuffle(len(ents), func(i, j int) { ents[i], ents[j] = ents[j], ents[i] })
	var got []string
	for _, e := range firstLook(ents, "/state/") {
		got = append(got, e.Path)
	}
	want := []string{"/ws/target/touched", "/ws/target/app", "/ws/src/f29.rs", "/ws/src/f28.rs", "/ws/src/f27.rs",
		"/ws/src/f26.rs", "/ws/src/f25.rs", "/ws/src/f24.rs"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("first-look entries (-want +got):\n%s", d)
	}
	if got := firstLook(ents[:0], "/state/"); len(got) != 0 {
		t.Fatalf("no entries: %d first-look entries", len(got))
	}

	// On disk: the file written last is looked at first, and its rewrite is a change seen there.
	dir := t.TempDir()
	old, last := filepath.Join(dir, "old.c"), filepath.Join(dir, "app")
	write(t, old, "1")
	write(t, last, "1")
	future := time.Now().Add(time.Hour)
	os.Chtimes(last, future, future)
	ents = nil
	for _, p := range []string{old, last} {
		ents = append(ents, fsrec.Entry{Path: p, Op: fsrec.OpStat, Sig: fsrec.Now(p, fsrec.OpStat)})
	}
	sortByFolder(ents)
	k := Key{4}
	f, err := parse(encode(k, &Result{}, ents, nil, firstLook(ents, "/state/")), k)
	if err != nil {
		t.Fatal(err)
	}
	if f.firstChanged() {
		t.Fatal("nothing rewritten: a first-look entry changed")
	}
	os.Remove(last)
	write(t, last, "2")
	if !f.firstChanged() {
		t.Fatal("the file written last was rewritten: not seen at first look")
	}
}

// TestDropFollowedTwins: the stat of a path is left out only where its lstat has the same signature
// and is no symbolic link (or both failed alike), whatever order the recorder gave them in.
func TestDropFollowedTwins(t *testing.T) {
	file := fsrec.Sig{Mode: syscall.S_IFREG | 0o644, Ino: 7, Size: 3}
	link := fsrec.Sig{Mode: syscall.S_IFLNK | 0o777, Ino: 8}
	absent := fsrec.Sig{Err: fsrec.ErrNotExist}
	ents := []fsrec.Entry{
		{Path: "/ws/a.c", Op: fsrec.OpLstat, Sig: file},
		{Path: "/ws/a.c", Op: fsrec.OpStat, Sig: file}, // dropped
		{Path: "/ws/lib.so", Op: fsrec.OpLstat, Sig: link},
		{Path: "/ws/lib.so", Op: fsrec.OpStat, Sig: file}, // followed a link: kept
		{Path: "/ws/b.c", Op: fsrec.OpStat, Sig: file},    // no lstat: kept
		{Path: "/ws/gone.h", Op: fsrec.OpLstat, Sig: absent},
		{Path: "/ws/gone.h", Op: fsrec.OpStat, Sig: absent}, // dropped
		{Path: "/ws/moved.c", Op: fsrec.OpLstat, Sig: file},
		{Path: "/ws/moved.c", Op: fsrec.OpStat, Sig: fsrec.Sig{Mode: syscall.S_IFREG | 0o644, Ino: 9}}, // another signature: kept
		{Path: "/ws/sub/a.c", Op: fsrec.OpStat, Sig: file},                                             // the same name in another folder: kept
		{Path: "/ws/t.d", Op: fsrec.OpContent, Sig: file},
	}
	want := map[string]bool{}
	for i, e := range ents {
		if i != 1 && i != 6 {
			want[fmt.Sprint(e.Path, e.Op)] = true
		}
	}
	for seed := uint64(0); seed < 20; seed++ {
		got := slices.Clone(ents)
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		got = dropFollowedTwins(got)
		have := map[string]bool{}
		for _, e := range got {
			have[fmt.Sprint(e.Path, e.Op)] = true
		}
		if d := cmp.Diff(want, have); d != "" || len(got) != len(want) {
			t.Fatalf("seed %d: kept (-want +got):\n%s", seed, d)
		}
	}
}
