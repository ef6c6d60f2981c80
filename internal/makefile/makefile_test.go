package makefile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil/special"
)

func needTools(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"make", "cc", "ar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: these tests drive real GNU make builds", tool)
		}
	}
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// build runs a real make in dir (the tests' own build, not the reader's).
func build(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MAKEFLAGS=", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// makeQ runs `make -q` and returns its exit status (0 up to date, 1 something to do).
func makeQ(t testing.TB, dir string) int {
	t.Helper()
	cmd := exec.Command("make", "-q", "--no-print-directory")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MAKEFLAGS=")
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// edit rewrites a file and moves its mtime 2 s past every other file's, so the order does not hang
// on the file system's timestamp granularity.
func edit(t testing.TB, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	bump(t, path)
}

func bump(t testing.TB, path string) {
	t.Helper()
	future := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
}

func mtimeNS(t testing.TB, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime().UnixNano()
}

func readBuild(t testing.TB, dir string) *Build {
	t.Helper()
	f, err := Detect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f == nil {
		t.Fatalf("Detect(%s): not a Make folder", dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Read(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func factsOf(b *Build, kind FactKind) []Fact {
	var out []Fact
	for _, f := range b.Facts {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

func step(t testing.TB, b *Build, target string) *Step {
	t.Helper()
	for _, s := range b.Steps {
		if s.Target == target {
			return s
		}
	}
	t.Fatalf("no step %q among %d steps", target, len(b.Steps))
	return nil
}

func hasHow(hs []How, h How) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}

const pointH = "#ifndef POINT_H\n#define POINT_H\nstruct point { int x, y; };\nint norm1(struct point p);\n#endif\n"
const pointH2 = "#ifndef POINT_H\n#define POINT_H\nstruct point { long z; int x, y; };\nint norm1(struct point p);\n#endif\n"

func s12Files(include bool) map[string]string {
	mk := "CFLAGS = -g -O0 -MMD\nOBJS = main.o point.o\nprog: $(OBJS)\n\t$(CC) -o $@ $^\n"
	if include {
		mk += "-include $(OBJS:.o=.d)\n"
	}
	return map[string]string{
		"Makefile": mk,
		"point.h":  pointH,
		"point.c":  "#include \"point.h\"\nint norm1(struct point p) { return p.x + p.y; }\n",
		"main.c":   "#include \"point.h\"\nint main(void) { struct point p = {1, 2}; return norm1(p) - 3; }\n",
	}
}

// S12: -MMD without -include $(DEPS). After a struct change in point.h make -q says up to date; the
// reader names point.h from both .d files (and DWARF) against both stale objects.
func TestS12DepfilesNotIncluded(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, s12Files(false))
	build(t, dir)
	edit(t, filepath.Join(dir, "point.h"), pointH2)
	if st := makeQ(t, dir); st != 0 {
		t.Fatalf("make -q = %d: the scenario needs make to call it up to date", st)
	}
	b := readBuild(t, dir)
	if b.Query.ExitCode != 0 {
		t.Errorf("make -q pass exit %d, want 0", b.Query.ExitCode)
	}
	hdr := filepath.Join(dir, "point.h")
	got := factsOf(b, UntrackedInputChanged)
	var steps []string
	for _, f := range got {
		if f.Path != hdr {
			t.Errorf("untracked fact for %s, want only point.h: %+v", f.Path, f)
			continue
		}
		steps = append(steps, filepath.Base(f.Step))
		if !hasHow(f.How, Depfile) || !hasHow(f.How, DWARF) {
			t.Errorf("%s: clues %v, want depfile and dwarf", f.Step, f.How)
		}
		if f.InputMTimeNS != mtimeNS(t, hdr) || f.ReferenceMTimeNS != mtimeNS(t, f.Step) || f.InputMTimeNS <= f.ReferenceMTimeNS {
			t.Errorf("%s: mtimes %d vs %d", f.Step, f.InputMTimeNS, f.ReferenceMTimeNS)
		}
		if f.MakeRemakes {
			t.Errorf("%s: make -q verdict says it remakes", f.Step)
		}
		wantD := strings.TrimSuffix(f.Step, ".o") + ".d"
		if f.Detail[0] != wantD {
			t.Errorf("%s: depfile clue %q, want %q", f.Step, f.Detail[0], wantD)
		}
	}
	sort.Strings(steps)
	if strings.Join(steps, ",") != "main.o,point.o" {
		t.Errorf("untracked steps %v, want main.o and point.o", steps)
	}
	if n := len(factsOf(b, PendingRebuild)) + len(factsOf(b, MissingDepfile)); n != 0 {
		t.Errorf("%d pending/missing-depfile facts, want none: %+v", n, b.Facts)
	}
	m := step(t, b, "main.o")
	if m.Included || m.Depfile != filepath.Join(dir, "main.d") || m.Kind != Compile {
		t.Errorf("main.o: depfile %q included %v kind %s", m.Depfile, m.Included, m.Kind)
	}
	if len(m.Declared) != 1 || m.Declared[0].Name != "main.c" || m.RuleFrom != "built-in" || m.Stem != "main" {
		t.Errorf("main.o declared %+v from %q stem %q: want main.c from the built-in rule", m.Declared, m.RuleFrom, m.Stem)
	}
	if len(m.Config) < 2 || m.Config[0] != (KV{Key: "CC", Value: "cc", From: "default"}) || m.Config[1] != (KV{Key: "CFLAGS", Value: "-g -O0 -MMD", From: filepath.Join(dir, "Makefile") + ":1"}) {
		t.Errorf("main.o config %+v", m.Config)
	}
	if p := step(t, b, "prog"); p.Kind != Link || len(p.Declared) != 2 {
		t.Errorf("prog: %+v", p)
	}
	if len(b.Problems) != 0 {
		t.Errorf("problems: %v", b.Problems)
	}
}

// The same with -include $(DEPS): make knows point.h, so it is a pending rebuild make will do.
func TestS12DepfilesIncluded(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, s12Files(true))
	build(t, dir)
	edit(t, filepath.Join(dir, "point.h"), pointH2)
	if st := makeQ(t, dir); st != 1 {
		t.Fatalf("make -q = %d, want 1 (make sees the header)", st)
	}
	b := readBuild(t, dir)
	if n := len(factsOf(b, UntrackedInputChanged)); n != 0 {
		t.Errorf("%d untracked facts, want none: %+v", n, b.Facts)
	}
	hdr := filepath.Join(dir, "point.h")
	var steps []string
	for _, f := range factsOf(b, PendingRebuild) {
		if f.Path != hdr || !f.MakeRemakes || !hasHow(f.How, Declared) || !hasHow(f.How, Depfile) {
			t.Errorf("pending fact %+v: want point.h, declared and depfile, make remakes", f)
		}
		steps = append(steps, filepath.Base(f.Step))
	}
	sort.Strings(steps)
	if strings.Join(steps, ",") != "main.o,point.o" {
		t.Errorf("pending steps %v, want main.o and point.o", steps)
	}
	if m := step(t, b, "main.o"); !m.Included || m.Depfile != filepath.Join(dir, "main.d") || !m.MakeRemakes {
		t.Errorf("main.o: depfile %q included %v remakes %v", m.Depfile, m.Included, m.MakeRemakes)
	}
	if b.Query.ExitCode != 1 {
		t.Errorf("exit %d, want 1", b.Query.ExitCode)
	}
}

// No depfiles at all: missing-depfile per object; after a header edit only DWARF knows the header.
func TestMissingDepfile(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	files := s12Files(false)
	files["Makefile"] = strings.Replace(files["Makefile"], " -MMD", "", 1)
	writeFiles(t, dir, files)
	build(t, dir)
	b := readBuild(t, dir)
	miss := factsOf(b, MissingDepfile)
	if len(miss) != 2 {
		t.Fatalf("missing-depfile facts %+v, want main.o and point.o", miss)
	}
	for _, f := range miss {
		want := strings.TrimSuffix(f.Step, ".o") + ".d"
		if f.Path != want || len(f.Detail) != 2 || f.Detail[1] != f.Step+".d" {
			t.Errorf("missing-depfile %+v: want %s and %s.d looked for", f, want, f.Step)
		}
	}
	edit(t, filepath.Join(dir, "point.h"), pointH2)
	b = readBuild(t, dir)
	un := factsOf(b, UntrackedInputChanged)
	if len(un) != 2 {
		t.Fatalf("untracked %+v, want 2 (from DWARF)", un)
	}
	for _, f := range un {
		if len(f.How) != 1 || f.How[0] != DWARF || f.Detail[0] != f.Step {
			t.Errorf("%+v: want a DWARF clue naming the object", f)
		}
	}
}

func archiveFiles(withB bool) map[string]string {
	mk := "CFLAGS = -O0 -MMD\nprog: main.o libfoo.a\n\t$(CC) -o $@ main.o libfoo.a\n"
	if withB {
		mk += "libfoo.a: a.o b.o\n\tar rcs $@ $^\n"
	} else {
		mk += "libfoo.a: a.o\n\tar rcs $@ $^\n"
	}
	mk += "-include main.d a.d b.d\n"
	return map[string]string{
		"Makefile": mk,
		"a.c":      "int fa(void) { return 1; }\n",
		"b.c":      "int fb(void) { return 2; }\n",
		"main.c":   "int fa(void);\nint main(void) { return fa() - 1; }\n",
	}
}

// `ar rcs` keeps the object of a removed source: the member is reported, the kept ones are not.
func TestArchiveKeepsRemovedMember(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, archiveFiles(true))
	build(t, dir)
	for _, f := range []string{"b.c", "b.o", "b.d"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	edit(t, filepath.Join(dir, "Makefile"), archiveFiles(false)["Makefile"])
	edit(t, filepath.Join(dir, "a.c"), "int fa(void) { return 1 + 0; }\n")
	build(t, dir)
	b := readBuild(t, dir)
	got := factsOf(b, ArchiveMemberWithoutRule)
	lib := filepath.Join(dir, "libfoo.a")
	if len(got) != 1 || got[0].Path != lib+":b.o" || got[0].Step != lib {
		t.Fatalf("archive facts %+v, want libfoo.a:b.o", got)
	}
	s := step(t, b, "libfoo.a")
	if len(s.Members) != 2 || s.Members[0].Object != filepath.Join(dir, "a.o") || s.Members[1].Object != "" {
		t.Errorf("members %+v", s.Members)
	}
	if len(factsOf(b, BinaryOlderThanInput)) != 0 {
		t.Errorf("unexpected: %+v", b.Facts)
	}
}

// A program older than its rebuilt archive: binary-older-than-input, and make will relink.
func TestProgramOlderThanArchive(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, archiveFiles(true))
	build(t, dir)
	edit(t, filepath.Join(dir, "a.c"), "int fa(void) { return 1 + 0; }\n")
	build(t, dir, "libfoo.a")
	lib := filepath.Join(dir, "libfoo.a")
	bump(t, lib) // the archive's mtime after the edit, past the program's for sure
	b := readBuild(t, dir)
	got := factsOf(b, BinaryOlderThanInput)
	prog := filepath.Join(dir, "prog")
	if len(got) != 1 || got[0].Step != prog || got[0].Path != lib || !got[0].MakeRemakes {
		t.Fatalf("facts %+v, want prog older than libfoo.a, make remaking it", got)
	}
	if got[0].InputMTimeNS != mtimeNS(t, lib) || got[0].ReferenceMTimeNS != mtimeNS(t, prog) {
		t.Errorf("mtimes %+v", got[0])
	}
	if len(factsOf(b, ArchiveMemberWithoutRule)) != 0 {
		t.Errorf("unexpected: %+v", b.Facts)
	}
}

func TestSyntaxError(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"Makefile": "prog: a.o\nthis line has no separator\n", "a.o": ""})
	f, err := Detect(dir)
	if err != nil || f == nil {
		t.Fatalf("Detect: %v %v", f, err)
	}
	_, err = Read(context.Background(), f)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "Makefile")) || !strings.Contains(err.Error(), "missing separator") {
		t.Fatalf("error %v: want one naming the Makefile and make's complaint", err)
	}
}

func TestHangHitsDeadline(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"Makefile": "X := $(shell sleep 100)\nprog: a.o\n", "a.o": ""})
	f, err := Detect(dir)
	if err != nil || f == nil {
		t.Fatalf("Detect: %v %v", f, err)
	}
	special.Within(t, 10*time.Second, "Read of a makefile whose $(shell) sleeps", func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = Read(ctx, f)
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), f.Makefile) {
		t.Fatalf("error %v: want a deadline error naming the Makefile", err)
	}
}

// A corrupt .d file that make never reads is a Problem naming it; the rest is still read.
func TestCorruptDepfile(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, s12Files(false))
	build(t, dir)
	bad := filepath.Join(dir, "main.d")
	if err := os.WriteFile(bad, []byte("this is not\na depfile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edit(t, filepath.Join(dir, "point.h"), pointH2)
	b := readBuild(t, dir)
	if len(b.Problems) != 1 || b.Problems[0].Path != bad || !strings.Contains(b.Problems[0].Err.Error(), "main.d") {
		t.Fatalf("problems %v, want one naming main.d", b.Problems)
	}
	var n int
	for _, f := range factsOf(b, UntrackedInputChanged) {
		if filepath.Base(f.Step) == "main.o" && (len(f.How) != 1 || f.How[0] != DWARF) {
			t.Errorf("main.o: %+v, want the DWARF clue only", f)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d untracked facts, want 2", n)
	}
}

// Names with a space and a colon, escaped in the Makefile (make prints them unescaped).
func TestStrangeNames(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "CFLAGS = -O0 -MMD\nprog: sp\\ ace.o co\\:lon.o\n\t$(CC) -o $@ \"sp ace.o\" \"co:lon.o\"\n" +
			"sp\\ ace.o: sp\\ ace.c\n\t$(CC) $(CFLAGS) -c -o \"$@\" \"$<\"\n" +
			"co\\:lon.o: co\\:lon.c\n\t$(CC) $(CFLAGS) -c -o \"$@\" \"$<\"\n",
		"my hdr.h": "#define V 1\n",
		"sp ace.c": "#include \"my hdr.h\"\nint f(void) { return V; }\n",
		"co:lon.c": "#include \"my hdr.h\"\nint f(void);\nint main(void) { return f() - V; }\n",
	})
	build(t, dir)
	edit(t, filepath.Join(dir, "my hdr.h"), "#define V 2\n")
	b := readBuild(t, dir)
	sp := step(t, b, "sp ace.o")
	if len(sp.Declared) != 1 || sp.Declared[0].Path != filepath.Join(dir, "sp ace.c") {
		t.Errorf("sp ace.o declared %+v", sp.Declared)
	}
	if p := step(t, b, "prog"); len(p.Declared) != 2 || p.Declared[0].Name != "sp ace.o" || p.Declared[1].Name != "co:lon.o" {
		t.Errorf("prog declared %+v", p.Declared)
	}
	un := factsOf(b, UntrackedInputChanged)
	if len(un) != 2 {
		t.Fatalf("untracked %+v, want both objects against \"my hdr.h\"", un)
	}
	for _, f := range un {
		if f.Path != filepath.Join(dir, "my hdr.h") {
			t.Errorf("%+v", f)
		}
	}
}

// The guard: recipes make would run even under -n -q (`+` lines, $(MAKE) lines, makefile remakes)
// write nothing; a target-specific SHELL stops the goal pass.
func TestNeverRunsRecipes(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "prog: a.o\n\t+touch plus-ran\n\t$(MAKE) sub\n\t$(CC) -o $@ $^\nsub:\n\ttouch sub-ran\n" +
			"-include a.d\na.d: a.c\n\techo 'a.o: a.c' > a.d; touch d-ran\n",
		"a.c": "int main(void) { return 0; }\n",
	})
	build(t, dir, "a.o")
	edit(t, filepath.Join(dir, "a.c"), "int main(void) { return 0 * 1; }\n")
	if err := os.Remove(filepath.Join(dir, "d-ran")); err != nil {
		t.Fatalf("the test's own build should have remade a.d: %v", err)
	}
	before := listing(t, dir)
	b := readBuild(t, dir)
	if after := listing(t, dir); after != before {
		t.Fatalf("the reader changed the folder:\nbefore %s\nafter  %s", before, after)
	}
	if len(b.Query.Refused) == 0 {
		t.Errorf("no refused recipe recorded; stderr %q", b.Query.Stderr)
	}
	if f := factsOf(b, PendingRebuild); len(f) != 1 || f[0].Path != filepath.Join(dir, "a.c") {
		t.Errorf("pending %+v, want a.c against a.o", f)
	}

	edit(t, filepath.Join(dir, "Makefile"), "prog: SHELL := /bin/sh\nprog: a.o\n\t+touch plus-ran\n")
	before = listing(t, dir)
	b = readBuild(t, dir)
	if after := listing(t, dir); after != before {
		t.Fatalf("the reader changed the folder:\nbefore %s\nafter  %s", before, after)
	}
	if len(b.Problems) != 1 || !errors.Is(b.Problems[0].Err, ErrTargetShell) {
		t.Errorf("problems %v, want ErrTargetShell", b.Problems)
	}
}

func listing(t testing.TB, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		st, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, fmt.Sprintf("%s@%d/%d", e.Name(), st.ModTime().UnixNano(), st.Size()))
	}
	return strings.Join(names, " ")
}

func TestDetect(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, s12Files(false))
	if f, err := Detect(dir); f != nil || err != nil {
		t.Fatalf("before the build: %+v %v, want not a Make folder", f, err)
	}
	build(t, dir)
	f, err := Detect(dir)
	if err != nil || f == nil {
		t.Fatalf("Detect: %v %v", f, err)
	}
	var names []string
	for _, p := range f.Built {
		names = append(names, filepath.Base(p))
	}
	if f.Makefile != filepath.Join(dir, "Makefile") || strings.Join(names, ",") != "main.o,point.o,prog" {
		t.Errorf("Detect = %s %v", f.Makefile, names)
	}
	if _, err := Detect(filepath.Join(dir, "nope")); err == nil {
		t.Error("Detect of a missing folder: no error")
	}
}

// make's real data base, cut short or emptied, gives a ParseError naming the Makefile.
func TestTruncatedDatabase(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, s12Files(false))
	build(t, dir)
	cmd := exec.Command("make", "-p", "-q", "--no-print-directory")
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "LC_ALL=C", "MAKEFLAGS=")
	out, _ := cmd.Output()
	mk := filepath.Join(dir, "Makefile")
	db, err := ParseDatabase(strings.NewReader(string(out)), mk)
	if err != nil || db.Files["prog"] == nil || db.Version == "" {
		t.Fatalf("whole data base: %v", err)
	}
	for _, cut := range []int{0, len(out) / 2, len(out) - 60} {
		_, err := ParseDatabase(strings.NewReader(string(out[:cut])), mk)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), mk) {
			t.Errorf("cut at %d of %d: %v, want a ParseError naming %s", cut, len(out), err, mk)
		}
	}
}

// A program compiled and linked by one rule (app: main.c; make's built-in %: %.c alike) is a link step
// whose inputs are its sources: an edited source is a pending rebuild, an edited header make does not
// know (no depfile; found in the program's DWARF) is untracked, and with the depfile gcc -MMD writes beside the program included,
// the header is make's prerequisite and the step is pending.
func TestCompileAndLinkInOneRule(t *testing.T) {
	needTools(t)
	for _, tc := range []struct{ name, makefile string }{
		{"explicit", "main: main.c\n\tcc -g -o main main.c\n"},
		{"built-in", "CFLAGS = -g\nmain: main.c\n"},
		{"depfile", "main: main.c\n\tcc -MMD -o main main.c\n-include main.d\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"Makefile": tc.makefile, "main.c": "#include \"x.h\"\nint main(void) { return x(); }\n", "x.h": "static inline int x(void) { return 0; }\n"})
			build(t, dir)
			b := readBuild(t, dir)
			if s := step(t, b, "main"); s.Kind != Link {
				t.Fatalf("main is a %q step, want %q", s.Kind, Link)
			}
			if p := factsOf(b, PendingRebuild); len(p) != 0 {
				t.Fatalf("fresh build: pending %+v", p)
			}
			edit(t, filepath.Join(dir, "x.h"), "static inline int x(void) { return 1; }\n")
			if makeQ(t, dir) == 0 == (tc.name == "depfile") {
				t.Fatalf("premise: make -q after the header edit disagrees with the shape %s", tc.name)
			}
			b = readBuild(t, dir)
			want, other := UntrackedInputChanged, PendingRebuild
			if tc.name == "depfile" {
				want, other = PendingRebuild, UntrackedInputChanged
			}
			if f := factsOf(b, want); len(f) != 1 || f[0].Path != filepath.Join(dir, "x.h") {
				t.Errorf("after the header edit: %s facts %+v, want one naming x.h (all: %+v)", want, f, b.Facts)
			}
			if f := factsOf(b, other); len(f) != 0 {
				t.Errorf("after the header edit: %s facts %+v, want none", other, f)
			}
			build(t, dir)
			edit(t, filepath.Join(dir, "main.c"), "#include \"x.h\"\nint main(void) { return x() + 1; }\n")
			b = readBuild(t, dir)
			if !slices.ContainsFunc(factsOf(b, PendingRebuild), func(f Fact) bool { return f.Path == filepath.Join(dir, "main.c") }) {
				t.Errorf("after the source edit: pending %+v, want one naming main.c", factsOf(b, PendingRebuild))
			}
		})
	}
}

// TestDoubleColonRuleThatLeavesTheTarget: of two double-colon rules of app, one links it and one only
// reports that notes.txt changed. After notes.txt is edited and make has run, app is as a scratch
// build makes it (make runs the echo on every build from now on): no fact; an edited main.c is still
// pending, through the rule that links.
func TestDoubleColonRuleThatLeavesTheTarget(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile":  "CFLAGS = -O2 -g -MMD\napp:: main.o\n\t$(CC) -o $@ $^\napp:: notes.txt\n\t@echo notes changed\n-include main.d\n",
		"main.c":    "int main(void) { return 0; }\n",
		"notes.txt": "a\n",
	})
	build(t, dir)
	edit(t, filepath.Join(dir, "notes.txt"), "b\n")
	build(t, dir)
	if makeQ(t, dir) == 0 {
		t.Fatal("premise: make -q says app is up to date, though its echo rule runs on every build")
	}
	b := readBuild(t, dir)
	if s := step(t, b, "app"); slices.ContainsFunc(s.Declared, func(in *Input) bool { return in.Name == "notes.txt" }) {
		t.Errorf("notes.txt is an input of app: %+v", s.Declared)
	}
	if len(b.Facts) != 0 {
		t.Errorf("after make: facts %+v, want none", b.Facts)
	}
	edit(t, filepath.Join(dir, "main.c"), "int main(void) { return 1; }\n")
	b = readBuild(t, dir)
	if !slices.ContainsFunc(factsOf(b, PendingRebuild), func(f Fact) bool { return f.Path == filepath.Join(dir, "main.c") }) {
		t.Errorf("after the source edit: pending %+v, want one naming main.c", factsOf(b, PendingRebuild))
	}
}

// TestUnmakeableDepfileHeader: main.d (written with -MMD, no -MP) names old.h; the #include is removed
// and old.h deleted. make stops on it ("No rule to make target"), so the fix removes main.d first.
func TestUnmakeableDepfileHeader(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "CFLAGS = -MMD\napp: main.o\n\t$(CC) -o $@ $^\n-include main.d\n",
		"main.c":   "#include \"old.h\"\nint main(void) { return OLD; }\n",
		"old.h":    "#define OLD 0\n",
	})
	build(t, dir)
	edit(t, filepath.Join(dir, "main.c"), "int main(void) { return 0; }\n")
	if err := os.Remove(filepath.Join(dir, "old.h")); err != nil {
		t.Fatal(err)
	}
	b := readBuild(t, dir)
	s := step(t, b, "main.o")
	if len(s.Unmakeable) != 1 || s.Unmakeable[0].Path != filepath.Join(dir, "old.h") || s.Unmakeable[0].Depfile != filepath.Join(dir, "main.d") {
		t.Fatalf("unmakeable %+v", s.Unmakeable)
	}
	o := &Origin{Step: s, Folder: b.Folder, Build: b}
	if fix := o.Rebuild(nil); !strings.HasPrefix(fix, "rm "+filepath.Join(dir, "main.d")+" && make") {
		t.Errorf("fix %q does not remove main.d first", fix)
	}
}

// TestHeadersAmongPrerequisites: no depfile, but make has the header as a prerequisite (a list kept
// by hand, or CMake's depend.make for IMPLICIT_DEPENDS): make sees its edits, so no missing-depfile;
// an edit is pending.
func TestHeadersAmongPrerequisites(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "app: main.o\n\t$(CC) -o $@ $^\nmain.o: main.c m.h\n\t$(CC) -c main.c -o main.o\n",
		"main.c":   "#include \"m.h\"\nint main(void) { return M; }\n",
		"m.h":      "#define M 0\n",
	})
	build(t, dir)
	if f := factsOf(readBuild(t, dir), MissingDepfile); len(f) != 0 {
		t.Fatalf("missing-depfile with m.h a prerequisite: %+v", f)
	}
	edit(t, filepath.Join(dir, "m.h"), "#define M 1\n")
	if p := factsOf(readBuild(t, dir), PendingRebuild); !slices.ContainsFunc(p, func(f Fact) bool { return f.Path == filepath.Join(dir, "m.h") }) {
		t.Errorf("after the header edit: pending %+v", p)
	}
}
