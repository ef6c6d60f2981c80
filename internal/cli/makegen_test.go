package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// A Makefile without depfiles whose objects need a generated header (config.h from config.h.in, an
// order-only prerequisite) and include a header only through a macro (#include LIB_IMPL): the rule that
// makes config.h is a step the program depends on, and the include scan follows the computed include.
func TestMakeGeneratedHeaderAndComputedInclude(t *testing.T) {
	needTools(t, "make", "cc", "ar")
	if testing.Short() {
		t.Skip("real make build")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "CPPFLAGS := -Iinclude -I.\nOBJS := a.o b.o\napp: main.o libk.a\n\t$(CC) -o $@ main.o libk.a\n" +
			"libk.a: $(OBJS)\n\tar crs $@ $^\n%.o: %.c\n\t$(CC) $(CPPFLAGS) -c $< -o $@\n" +
			"$(OBJS): | config.h\nconfig.h: config.h.in\n\tsed 's/@V@/1/' config.h.in > $@\n",
		"config.h.in":    "#define CONF @V@\n",
		"include/lib.h":  "#define LIB_IMPL \"impl.h\"\n",
		"include/impl.h": "#define IMPL 2\n",
		"a.c":            "#include \"lib.h\"\n#include LIB_IMPL\n#include \"config.h\"\nint a(void) { return CONF + IMPL; }\n",
		"b.c":            "int b(void) { return 0; }\n",
		"main.c":         "int a(void);\nint main(void) { return a() - 3; }\n",
	})
	shIn(t, dir, nil, "make")
	fs, _ := checkSystems(t, dir)
	if errs := severity(fs, "error"); len(errs) != 0 {
		t.Fatalf("a fresh build: %+v", errs)
	}
	app, cfg := filepath.Join(dir, "app"), filepath.Join(dir, "config.h")

	// The template changes: make will remake config.h, a step app depends on through a.o.
	editLater(t, filepath.Join(dir, "config.h.in"), "#define MORE 1\n")
	fs, _ = checkSystems(t, dir)
	pr := find(fs, "pending-rebuild", filepath.Join(dir, "config.h.in"))
	if len(pr) != 1 || pr[0].Severity != "error" {
		t.Fatalf("pending-rebuild of config.h: %+v", fs)
	}
	if _, d, ok := evidenceAt(pr[0], "root", app); !ok || !strings.Contains(d, "reaches config.h") {
		t.Fatalf("the program is the root of config.h's step: %q %+v", d, pr[0].Evidence)
	}
	// make remakes config.h but not a.o (config.h is order-only, and there is no depfile).
	shIn(t, dir, nil, "make")
	fs, _ = checkSystems(t, dir)
	if u := find(fs, "untracked-input-changed", cfg); len(u) != 1 || u[0].Severity != "error" {
		t.Fatalf("untracked-input-changed of config.h into a.o: %+v", fs)
	}
	os.Remove(filepath.Join(dir, "a.o"))
	shIn(t, dir, nil, "make")

	// impl.h, named only through LIB_IMPL, changes: make sees nothing.
	impl := filepath.Join(dir, "include", "impl.h")
	editLater(t, impl, "#define IMPL2 3\n")
	if out := shIn(t, dir, nil, "make", "-q", "app"); out != "" {
		t.Fatalf("make -q: %s", out)
	}
	fs, _ = checkSystems(t, dir)
	u := find(fs, "untracked-input-changed", impl)
	if len(u) != 1 || u[0].Severity != "error" {
		t.Fatalf("untracked-input-changed of impl.h: %+v", fs)
	}
	if _, d, ok := evidenceAt(u[0], "input", impl); !ok || !strings.Contains(d, `LIB_IMPL (= "impl.h")`) {
		t.Fatalf("the evidence names the computed include: %q", d)
	}
}

// A recipe whose flags come from the user's environment (make takes FAST from the shell): a build with
// FAST set redoes nothing, so the objects hold the code of the command without -DFAST. The object whose
// source tests FAST is stale; the others differ only in a macro they never read.
func TestMakeCommandFromTheEnvironment(t *testing.T) {
	needTools(t, "make", "cc", "ar")
	if testing.Short() {
		t.Skip("real make build")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("FAST", "")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "ifdef FAST\nCPPFLAGS += -DFAST\nendif\napp: main.o a.o b.o\n\t$(CC) -o $@ $^\n%.o: %.c\n\t$(CC) $(CPPFLAGS) -c $< -o $@\n",
		"a.c":      "int a(void) {\n#ifdef FAST\n  return 1;\n#endif\n  return 0;\n}\n",
		"b.c":      "#include <stdio.h>\nint b(void) { return puts(\"b\"); }\n",
		"main.c":   "int a(void); int b(void);\nint main(void) { return a() + b() - 2; }\n",
	})
	shIn(t, dir, nil, "make")
	if fs, _ := checkSystems(t, dir); len(severity(fs, "error")) != 0 {
		t.Fatalf("a fresh build: %+v", fs) // this check also records the commands the build ran
	}
	t.Setenv("FAST", "1")
	if out := shIn(t, dir, nil, "make"); strings.Contains(out, "-DFAST") {
		t.Fatalf("the premise: make does not redo objects for a new flag: %s", out)
	}
	fs, _ := checkSystems(t, dir)
	a, b := filepath.Join(dir, "a.o"), filepath.Join(dir, "b.o")
	var errA, infoB []sysFinding
	for _, f := range find(fs, "untracked-input-changed", filepath.Join(dir, "Makefile")) {
		switch {
		case f.Subjects[1] == a && f.Severity == "error":
			errA = append(errA, f)
		case f.Subjects[1] == b && f.Severity == "info":
			infoB = append(infoB, f)
		case f.Severity == "error":
			t.Errorf("only a.o reads FAST: %+v", f)
		}
	}
	if len(errA) != 1 || !strings.Contains(errA[0].Message, "the environment") {
		t.Fatalf("a.o's command changed through the environment: %+v", fs)
	}
	if len(infoB) != 1 || !strings.Contains(infoB[0].Message, "differs only in -DFAST") {
		t.Fatalf("b.o's command differs in a macro it never reads (stdio.h included): %+v", fs)
	}
}

func severity(fs []sysFinding, sev string) []sysFinding {
	var out []sysFinding
	for _, f := range fs {
		if f.Severity == sev {
			out = append(out, f)
		}
	}
	return out
}

// The compiler a recipe names without a folder ($(CC) is cc) is whatever PATH finds when make runs it: a
// folder put first on PATH with another cc (a new toolchain, a wrapper) leaves every object in place,
// since make compares the command's text. The search is answered again with the PATH of the next build;
// another path to the same program (a link) changes nothing.
func TestMakeCompilerFoundOnPATH(t *testing.T) {
	needTools(t, "make", "cc")
	if testing.Short() {
		t.Skip("real make build")
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "app: main.o a.o\n\t$(CC) -o $@ $^\n%.o: %.c\n\t$(CC) -c $< -o $@\n",
		"a.c":      "int a(void) {\n#ifdef WRAPPED\n  return 1;\n#endif\n  return 0;\n}\n",
		"main.c":   "int a(void);\nint main(void) { return a(); }\n",
	})
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatal(err)
	}
	shIn(t, dir, nil, "make")
	if fs, _ := checkSystems(t, dir); len(severity(fs, "error")) != 0 {
		t.Fatalf("a fresh build: %+v", fs) // this check also records which cc the commands ran
	}
	// A link to the same compiler first on PATH: the same program.
	same := t.TempDir()
	if err := os.Symlink(cc, filepath.Join(same, "cc")); err != nil {
		t.Fatal(err)
	}
	path := os.Getenv("PATH")
	t.Setenv("PATH", same+string(filepath.ListSeparator)+path)
	if fs, _ := checkSystems(t, dir); len(find(fs, "path-lookup-changed", "")) != 0 {
		t.Fatalf("a link to the same cc: %+v", fs)
	}
	// A wrapper that compiles with one more definition.
	wrap := t.TempDir()
	writeFiles(t, wrap, map[string]string{"cc": "#!/bin/sh\nexec " + cc + " -DWRAPPED \"$@\"\n"})
	if err := os.Chmod(filepath.Join(wrap, "cc"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", wrap+string(filepath.ListSeparator)+path)
	if out := shIn(t, dir, nil, "make", "-q", "app"); out != "" {
		t.Fatalf("the premise: make sees nothing to do: %s", out)
	}
	fs, _ := checkSystems(t, dir)
	var objs []string
	for _, f := range find(fs, "path-lookup-changed", filepath.Join(wrap, "cc")) {
		if f.Severity != "error" {
			t.Errorf("want an error: %+v", f)
		}
		objs = append(objs, filepath.Base(f.Subjects[len(f.Subjects)-1]))
	}
	sort.Strings(objs)
	if strings.Join(objs, " ") != "a.o app main.o" {
		t.Fatalf("want the link and both compiles, naming %s/cc: %v\n%+v", wrap, objs, fs)
	}
}
