package fsrec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// begin starts a recording for one test and ends it when the test ends. The package's recorder is
// one per process, so these tests never run in parallel.
func begin(t *testing.T, exclude func(string) bool) *Recorder {
	t.Helper()
	r := Begin(Options{Exclude: exclude})
	if r == nil {
		t.Fatal("Begin: another recording is active")
	}
	t.Cleanup(r.End)
	return r
}

func entryOf(r *Recorder, path string, op Op) (Entry, bool) {
	for _, e := range r.Entries() {
		if e.Path == path && e.Op == op {
			return e, true
		}
	}
	return Entry{}, false
}

func write(t *testing.T, path, body string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// TestRecordsFoundAndMissing: a stat that finds a file records its signature; one that fails records
// the error class (missing, a component that is not a folder), since a file that appears later
// changes verdicts too.
func TestRecordsFoundAndMissing(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.c")
	mt := time.Unix(1_700_000_000, 123)
	write(t, f, "int a;\n", mt)
	r := begin(t, nil)
	if _, err := Stat(f); err != nil {
		t.Fatal(err)
	}
	_, _ = Stat(filepath.Join(dir, "missing.h"))
	_, _ = Lstat(filepath.Join(f, "under-a-file"))

	e, ok := entryOf(r, f, OpStat)
	if !ok || e.Sig.Err != ErrNone || e.Sig.Size != 7 || e.Sig.MtimeNS != mt.UnixNano() || e.Sig.Ino == 0 {
		t.Errorf("found file: %+v (recorded %v)", e, ok)
	}
	if e, ok := entryOf(r, filepath.Join(dir, "missing.h"), OpStat); !ok || e.Sig.Err != ErrNotExist {
		t.Errorf("missing file: %+v (recorded %v), want error class %d", e, ok, ErrNotExist)
	}
	if e, ok := entryOf(r, filepath.Join(f, "under-a-file"), OpLstat); !ok || e.Sig.Err != ErrNotDir {
		t.Errorf("path under a file: %+v (recorded %v), want error class %d", e, ok, ErrNotDir)
	}
	if len(r.Changed()) != 0 {
		t.Errorf("changed: %v", r.Changed())
	}
}

// TestRelativePathsAreMadeAbsolute: a relative path is recorded against the working folder at Begin,
// as given (not cleaned).
func TestRelativePathsAreMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "x"), "x", time.Unix(1_700_000_000, 0))
	t.Chdir(dir)
	r := begin(t, nil)
	_, _ = Stat("x")
	_, _ = Stat("sub/../x")
	cwd, _ := os.Getwd()
	for _, p := range []string{filepath.Join(cwd, "x"), cwd + "/sub/../x"} {
		if _, ok := entryOf(r, p, OpStat); !ok {
			t.Errorf("%s not recorded; entries: %+v", p, r.Entries())
		}
	}
}

// TestChangedDuringTheRecording: a path seen twice with different signatures marks the recording
// changed; the same bytes read twice (OpContent) agree whatever their signatures.
func TestChangedDuringTheRecording(t *testing.T) {
	dir := t.TempDir()
	f, d := filepath.Join(dir, "lib.h"), filepath.Join(dir, "app.d")
	write(t, f, "#define A 1\n", time.Unix(1_700_000_000, 0))
	write(t, d, "app: main.c\n", time.Unix(1_700_000_000, 0))
	r := begin(t, nil)
	if _, err := Stat(f); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(d)
	NoteContent(d, fi, []byte("app: main.c\n"))
	write(t, f, "#define A 2\n", time.Unix(1_700_000_100, 0))
	write(t, d, "app: main.c\n", time.Unix(1_700_000_100, 0)) // rewritten with the same bytes
	// A second Stat gives the first answer (TestOneAnswerPerLookup); opening the file looks anew.
	h, err := Open(f)
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	fi, _ = os.Stat(d)
	NoteContent(d, fi, []byte("app: main.c\n"))
	if got := r.Changed(); !slices.Equal(got, []string{f}) {
		t.Errorf("changed = %v, want only %s", got, f)
	}
	e, ok := entryOf(r, d, OpContent)
	if !ok || e.Sum == nil || *e.Sum != SumOf([]byte("app: main.c\n")) {
		t.Errorf("content entry: %+v (recorded %v)", e, ok)
	}
}

// TestOneRecordingAtATime: Begin returns nil while another recording is active; after End nothing is
// recorded, and a new recording can begin.
func TestOneRecordingAtATime(t *testing.T) {
	dir := t.TempDir()
	r := Begin(Options{})
	if r == nil {
		t.Fatal("Begin: another recording is active")
	}
	if Begin(Options{}) != nil {
		t.Error("a second Begin succeeded while the first is active")
	}
	if !Active() {
		t.Error("Active() is false during a recording")
	}
	r.End()
	_, _ = Stat(dir)
	if len(r.Entries()) != 0 {
		t.Errorf("recorded after End: %+v", r.Entries())
	}
	r2 := begin(t, nil)
	if r2 == nil || !Active() {
		t.Error("no recording after the first ended")
	}
}

// TestSkippedAndExcluded: /proc, /sys and /dev are never recorded, nor what exclude names;
// Uncacheable reasons are kept.
func TestSkippedAndExcluded(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "cache.json")
	write(t, own, "{}", time.Unix(1_700_000_000, 0))
	r := begin(t, func(abs string) bool { return abs == own })
	_, _ = Stat("/proc/self/status")
	_, _ = Stat("/dev/null")
	_, _ = Stat(own)
	Uncacheable("ran make -n in " + dir)
	if es := r.Entries(); len(es) != 0 {
		t.Errorf("entries: %+v, want none", es)
	}
	if got := r.UncacheableReasons(); len(got) != 1 || got[0] != "ran make -n in "+dir {
		t.Errorf("uncacheable reasons = %v", got)
	}
}

// TestListingsAndWalks: a listed folder is recorded by its own signature and each entry whose Info is
// asked by its lstat; a walk records every folder it lists; a glob records its folder and matches.
func TestListingsAndWalks(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "src")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.c", "b.c", "notes.txt"} {
		write(t, filepath.Join(sub, n), n, time.Unix(1_700_000_000, 0))
	}
	r := begin(t, nil)
	ents, err := ReadDir(sub)
	if err != nil || len(ents) != 3 {
		t.Fatalf("ReadDir: %v, %d entries", err, len(ents))
	}
	if _, err := ents[0].Info(); err != nil {
		t.Fatal(err)
	}
	if _, ok := entryOf(r, sub, OpStat); !ok {
		t.Error("the listed folder is not recorded")
	}
	if _, ok := entryOf(r, filepath.Join(sub, ents[0].Name()), OpLstat); !ok {
		t.Error("an entry whose Info was asked is not recorded")
	}
	if _, ok := entryOf(r, filepath.Join(sub, ents[1].Name()), OpLstat); ok {
		t.Error("an entry whose Info was never asked is recorded")
	}
	if err := WalkDir(dir, func(string, os.DirEntry, error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, sub} {
		if _, ok := entryOf(r, p, OpLstat); !ok {
			t.Errorf("walked folder %s not recorded", p)
		}
	}
	m, err := Glob(filepath.Join(sub, "*.c"))
	if err != nil || len(m) != 2 {
		t.Fatalf("Glob: %v %v", m, err)
	}
	for _, p := range m {
		if _, ok := entryOf(r, p, OpLstat); !ok {
			t.Errorf("glob match %s not recorded", p)
		}
	}
	if Glob(filepath.Join(dir, "*", "*.c")); len(r.UncacheableReasons()) != 1 {
		t.Errorf("a pattern with meta characters in its folder: uncacheable reasons %v", r.UncacheableReasons())
	}
}

// TestLookPathRecordsEarlierFolders: a tool found on PATH is recorded with the misses in the folders
// before it, where a tool placed later would change the answer.
func TestLookPathRecordsEarlierFolders(t *testing.T) {
	early, late := t.TempDir(), t.TempDir()
	tool := filepath.Join(late, "mytool")
	write(t, tool, "#!/bin/sh\n", time.Unix(1_700_000_000, 0))
	if err := os.Chmod(tool, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", early+string(os.PathListSeparator)+late)
	r := begin(t, nil)
	got, err := LookPath("mytool")
	if err != nil || got != tool {
		t.Fatalf("LookPath = %q, %v", got, err)
	}
	if e, ok := entryOf(r, filepath.Join(early, "mytool"), OpStat); !ok || e.Sig.Err != ErrNotExist {
		t.Errorf("the miss in the earlier folder: %+v (recorded %v)", e, ok)
	}
	if e, ok := entryOf(r, tool, OpStat); !ok || e.Sig.Err != ErrNone {
		t.Errorf("the tool: %+v (recorded %v)", e, ok)
	}
}

// A failed look-up keeps its error number: a symbolic-link loop, a name too long and a missing file are
// three signatures, the same through Now (os.Stat) and StatZ, so a verdict that quotes one error is
// not kept when the path fails another way.
func TestFailedLookupsKeepTheirError(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, strings.Repeat("x", 300))
	missing := filepath.Join(dir, "missing")
	sigs := map[Sig]string{}
	for _, p := range []string{loop, long, missing} {
		now := Now(p, OpStat)
		if now.Err == ErrNone || now.Err == ErrOther {
			t.Errorf("%s: class %d, want an error of its own", filepath.Base(p), now.Err)
		}
		if z := StatZ(append([]byte(p), 0), OpStat); z != now {
			t.Errorf("%s: StatZ %+v, Now %+v", filepath.Base(p), z, now)
		}
		_, err := os.Stat(p)
		if s := SigOf(nil, err); s != now {
			t.Errorf("%s: SigOf(os.Stat's error) %+v, Now %+v", filepath.Base(p), s, now)
		}
		sigs[now] = p
	}
	if len(sigs) != 3 {
		t.Errorf("the three failures give %d signatures, want 3", len(sigs))
	}
	if Now(missing, OpStat).Err != ErrNotExist {
		t.Error("a missing file is not ErrNotExist")
	}
}

// TestOneAnswerPerLookup: during a recording a path looked up again the same way gets the first
// answer, found or missing, whatever happened to it since (one state of each path per check); a
// Stat is answered by an Lstat that found no link, never an Lstat by the Stat of a link; paths
// named Fresh and look-ups after End go to the kernel.
func TestOneAnswerPerLookup(t *testing.T) {
	if !Supported {
		t.Skip("answers are kept where signatures can be taken")
	}
	dir, state := t.TempDir(), t.TempDir()
	f, missing, own := filepath.Join(dir, "a.c"), filepath.Join(dir, "b.c"), filepath.Join(state, "baselines.json")
	link := filepath.Join(dir, "link.c")
	write(t, f, "int a;\n", time.Unix(1_700_000_000, 0))
	write(t, own, "{}", time.Unix(1_700_000_000, 0))
	if err := os.Symlink(f, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	r := Begin(Options{Fresh: func(abs string) bool { return strings.HasPrefix(abs, state+"/") }})
	if r == nil {
		t.Fatal("Begin: another recording is active")
	}
	defer r.End()
	first, err := Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if fi, err := Stat(link); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("Stat of the link: %v %v", fi, err)
	}
	Stat(own)
	write(t, f, "int a = 2;\n", time.Unix(1_700_000_100, 0))
	write(t, missing, "int b;\n", time.Unix(1_700_000_100, 0))
	write(t, own, "{\"a\":1}", time.Unix(1_700_000_100, 0))
	if fi, err := os.Stat(f); err != nil || fi.Size() == first.Size() {
		t.Fatalf("premise: the file did not change (%v, %v)", fi, err)
	}

	if fi, err := Stat(f); err != nil || fi.Size() != first.Size() || !fi.ModTime().Equal(first.ModTime()) ||
		fi.Mode() != first.Mode() || fi.Name() != first.Name() || fi.IsDir() {
		t.Errorf("second Stat: %v %v, want the first answer (size %d)", fi, err, first.Size())
	} else {
		// What the readers take from Sys: device, inode, links, mode, size and times.
		la, _ := keepable(first)
		lb, _ := keepable(fi)
		if SigOf(fi, nil) != SigOf(first, nil) || la != lb || !SameFile(fi, first) {
			t.Errorf("second Stat's Sys: %+v, want the first's %+v", fi.Sys(), first.Sys())
		}
	}
	rel := "b.c" // the same path, relative to the working folder
	var pe *fs.PathError
	if _, err := Stat(rel); !errors.As(err, &pe) || pe.Op != "stat" || pe.Path != rel || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("second Stat of the missing file, spelt %s: %v, want the first answer in that spelling", rel, err)
	}
	if fi, err := Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat of a link after its Stat: %v %v, want the link", fi, err)
	}
	if fi, err := Stat(own); err != nil || fi.Size() != 7 {
		t.Errorf("a Fresh path: %v %v, want the file as it is now", fi, err)
	}
	if slices.Contains(r.Changed(), f) || slices.Contains(r.Changed(), missing) {
		t.Errorf("changed = %v: an answer given again is no second look-up", r.Changed())
	}

	g := filepath.Join(dir, "g.c")
	write(t, g, "1", time.Unix(1_700_000_000, 0))
	if _, err := Lstat(g); err != nil {
		t.Fatal(err)
	}
	write(t, g, "22", time.Unix(1_700_000_100, 0))
	if fi, err := Stat(g); err != nil || fi.Size() != 1 {
		t.Errorf("Stat after an Lstat that found no link: %v %v, want the Lstat's answer", fi, err)
	}

	r.End()
	if fi, err := Stat(f); err != nil || fi.Size() == first.Size() {
		t.Errorf("Stat after End: %v %v, want the file as it is now", fi, err)
	}
}
