package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An archive written with `ar q` (quick append, as zxcvbn-c's Makefile did: tsyrogit/zxcvbn-c #38):
// after x.c changes, make recompiles x.o and appends it again, so libx.a holds two members named x.o.
// GNU ld takes the first (the old one) and the program prints the old value although every file is
// newer than its prerequisites. check names the archive, both copies (the first is the linker's, the
// second equals x.o now) and what the binary's bytes hold; writing the archive with `ar rcs` and
// rebuilding it fixes it.
func TestMakeArchiveDuplicateMember(t *testing.T) {
	needTools(t, "make", "cc", "ar")
	dir := t.TempDir()
	mk := func(ar string) string {
		return "app: main.o libx.a\n\t$(CC) -o $@ main.o -L. -lx\nlibx.a: x.o\n\t" + ar + " $@ x.o\n%.o: %.c\n\t$(CC) -O0 -c $< -o $@\n"
	}
	writeFiles(t, dir, map[string]string{
		"Makefile": mk("ar q"),
		"x.c":      "int x_val(void) { return 1; }\nconst char *x_tag(void) { return \"xtag-version-one\"; }\n",
		"main.c":   "#include <stdio.h>\nint x_val(void); const char *x_tag(void);\nint main(void) { printf(\"%d %s\\n\", x_val(), x_tag()); return 0; }\n",
	})
	shIn(t, dir, nil, "make")
	app, lib, obj := filepath.Join(dir, "app"), filepath.Join(dir, "libx.a"), filepath.Join(dir, "x.o")
	if fs, _ := checkSystems(t, dir); len(find(fs, "duplicate-archive-member", "")) != 0 {
		t.Fatalf("one member: no finding wanted: %+v", fs)
	}
	x := filepath.Join(dir, "x.c")
	if err := os.WriteFile(x, []byte("int x_val(void) { return 2; }\nconst char *x_tag(void) { return \"xtag-version-two\"; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	editLater(t, x, "\n")
	shIn(t, dir, nil, "make")
	// The premise: two members named x.o, and the program runs the first one's code.
	if out := shIn(t, dir, nil, "ar", "t", lib); out != "x.o\nx.o\n" {
		t.Fatalf("ar t libx.a = %q, want two x.o members", out)
	}
	if out := shIn(t, dir, nil, app); out != "1 xtag-version-one\n" {
		t.Fatalf("the premise fails: app prints %q, want the old member's output", out)
	}
	fs, code := checkSystems(t, dir)
	got := find(fs, "duplicate-archive-member", lib)
	if len(got) != 1 {
		t.Fatalf("want one duplicate-archive-member for %s: %+v", lib, fs)
	}
	f := got[0]
	if f.Severity != "error" || code != 1 || f.System != "make" || f.Subjects[1] != lib+":x.o" {
		t.Fatalf("severity %s exit %d system %q subjects %v", f.Severity, code, f.System, f.Subjects)
	}
	for _, want := range []string{"libx.a holds 2 members named x.o", "the linker takes copy 1 of 2", "copy 2 of 2 equals x.o as it is now", "app holds copy 1 of 2", "app runs the old code of x.o"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	var copies []string
	for _, e := range f.Evidence {
		if e.Kind == "copy" && e.Path == lib {
			copies = append(copies, e.Detail)
		}
	}
	if len(copies) != 2 || !strings.Contains(copies[0], "copy 1 of 2: member #0") || !strings.Contains(copies[0], "the linker takes it") ||
		!strings.Contains(copies[1], "copy 2 of 2: member #1") || !strings.Contains(copies[1], "equals the object now") ||
		!strings.Contains(copies[0], "x_val") || !strings.Contains(copies[0], "blake3:") {
		t.Fatalf("copy evidence: %q", copies)
	}
	if mt, _, ok := evidenceAt(f, "input", obj); !ok || mt == 0 {
		t.Fatalf("no input evidence for %s: %+v", obj, f.Evidence)
	}
	if _, d, ok := evidenceAt(f, "root", app); !ok || !strings.Contains(d, "copy 1: holds") || !strings.Contains(d, "copy 2: differs") {
		t.Fatalf("root evidence %q", d)
	}
	if !strings.Contains(f.Fix, "ar rcs") || !strings.Contains(f.Fix, "rm "+lib) {
		t.Fatalf("fix %q", f.Fix)
	}

	// Fix step: `ar rcs` replaces the member; rebuild the archive.
	writeFiles(t, dir, map[string]string{"Makefile": mk("ar rcs")})
	os.Remove(lib)
	shIn(t, dir, nil, "make")
	if out := shIn(t, dir, nil, app); out != "2 xtag-version-two\n" {
		t.Fatalf("after the fix app prints %q", out)
	}
	fs, _ = checkSystems(t, dir)
	if len(find(fs, "duplicate-archive-member", "")) != 0 {
		t.Fatalf("after the fix: %+v", fs)
	}
	// An edit after the fix: `ar rcs` keeps one member, so nothing is reported.
	editLater(t, x, "int x_more(void) { return 3; }\n")
	shIn(t, dir, nil, "make")
	if out := shIn(t, dir, nil, "ar", "t", lib); out != "x.o\n" {
		t.Fatalf("ar t = %q", out)
	}
	if fs, _ = checkSystems(t, dir); len(find(fs, "duplicate-archive-member", "")) != 0 {
		t.Fatalf("after a further edit: %+v", fs)
	}
}

// Appending the same object twice: two identical copies, nothing stale: info, not an error.
func TestMakeArchiveIdenticalDuplicateMembers(t *testing.T) {
	needTools(t, "make", "cc", "ar")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "app: main.o libx.a\n\t$(CC) -o $@ main.o -L. -lx\nlibx.a: x.o\n\tar q $@ x.o\n\tar q $@ x.o\n%.o: %.c\n\t$(CC) -O0 -c $< -o $@\n",
		"x.c":      "int x_val(void) { return 1; }\n",
		"main.c":   "int x_val(void);\nint main(void) { return x_val() - 1; }\n",
	})
	shIn(t, dir, nil, "make")
	fs, _ := checkSystems(t, dir)
	got := find(fs, "duplicate-archive-member", filepath.Join(dir, "libx.a"))
	if len(got) != 1 || got[0].Severity != "info" || !strings.Contains(got[0].Message, "the copies are identical") {
		t.Fatalf("want one info finding: %+v", fs)
	}
}

// Two objects of one base name from different folders (a/u.o, b/u.o) in one archive define different
// symbols: the linker loads each for its own, so they are not copies of one object and nothing is
// reported.
func TestMakeArchiveSameNameDifferentObjects(t *testing.T) {
	needTools(t, "make", "cc", "ar")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "app: main.o libu.a\n\t$(CC) -o $@ main.o -L. -lu\nlibu.a: a/u.o b/u.o\n\tar q $@ a/u.o b/u.o\n%.o: %.c\n\t$(CC) -O0 -c $< -o $@\n",
		"a/u.c":    "int ua(void) { return 1; }\n",
		"b/u.c":    "int ub(void) { return 2; }\n",
		"main.c":   "int ua(void); int ub(void);\nint main(void) { return ua() + ub() - 3; }\n",
	})
	shIn(t, dir, nil, "make")
	if out := shIn(t, dir, nil, "ar", "t", filepath.Join(dir, "libu.a")); out != "u.o\nu.o\n" {
		t.Fatalf("the premise fails: ar t = %q", out)
	}
	shIn(t, dir, nil, filepath.Join(dir, "app")) // exits 0: both members are linked
	if fs, _ := checkSystems(t, dir); len(find(fs, "duplicate-archive-member", "")) != 0 {
		t.Fatalf("distinct objects of one name reported: %+v", fs)
	}
}
