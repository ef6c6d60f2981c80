package systems

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/check"
)

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (%v): this test drives a real %s build", tool, err, tool)
		}
	}
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sh(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// TestDetect: what Detect finds at and under a folder, and what it skips (hidden folders, a Cargo
// target folder holding a build.ninja, a makefile with nothing built).
func TestDetect(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"Cargo.toml":                             "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
		"target/CACHEDIR.TAG":                    "Signature: 8a477f597d28d172789f06886806bc55\n",
		"target/release/build/x/out/build.ninja": "",
		"a/build/build.ninja":                    "",
		"b/Makefile":                             "all:\n",
		"b/x.o":                                  "not really an object",
		"c/Makefile":                             "all:\n",
		".hidden/build.ninja":                    "",
		"g/go.mod":                               "module g\n",
		"p/Cargo.toml":                           "[package]\nname = \"p\"\nversion = \"0.1.0\"\n",
		"p/build.rs":                             "fn main() {}\n",
		"p/native/Makefile":                      "all:\n",
		"p/native/y.o":                           "not really an object",
	})
	got := map[string]string{}
	for _, f := range Detect(root) {
		got[f.Dir] += f.System + " "
	}
	want := map[string]string{root: "cargo ", filepath.Join(root, "a/build"): "ninja ", filepath.Join(root, "b"): "make ", filepath.Join(root, "g"): "go ",
		filepath.Join(root, "p/native"): "make "}
	if len(got) != len(want) {
		t.Fatalf("Detect: %v, want %v", got, want)
	}
	for d, s := range want {
		if got[d] != s {
			t.Fatalf("Detect: %v, want %v", got, want)
		}
	}
	for _, f := range Detect(root) {
		if want := map[bool]string{true: filepath.Join(root, "p"), false: ""}[f.Dir == filepath.Join(root, "p/native")]; f.Package != want {
			t.Fatalf("%s: Package %q, want %q", f.Dir, f.Package, want)
		}
	}
	// Under the Cargo workspace, PATH itself is Cargo's (cargo.Locate walks up).
	if fs := Detect(filepath.Join(root, "c")); len(fs) != 1 || fs[0].System != "cargo" || !strings.HasSuffix(fs[0].Why, "Cargo.toml") {
		t.Fatalf("Detect(c): %+v", fs)
	}
}

// TestReadAllErrors: an unknown --system name, a --system none of whose systems is found, and an
// empty folder (Cargo's own error, as check always gave it).
func TestReadAllErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := ReadAll(context.Background(), dir, []string{"scons"}, Options{}); !errors.Is(err, ErrUnknownSystem) {
		t.Fatalf("unknown: %v", err)
	}
	if _, _, err := ReadAll(context.Background(), dir, []string{"ninja"}, Options{}); !errors.Is(err, ErrNoSystem) {
		t.Fatalf("none found: %v", err)
	}
	if _, _, err := ReadAll(context.Background(), dir, nil, Options{}); err == nil || !strings.Contains(err.Error(), "no Cargo.toml at or above") {
		t.Fatalf("empty folder: %v", err)
	}
	// A Makefile that is a FIFO: the error names it, not only the missing Cargo.toml.
	if err := syscall.Mkfifo(filepath.Join(dir, "Makefile"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadAll(context.Background(), dir, nil, Options{}); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "Makefile")) || !strings.Contains(err.Error(), "FIFO") {
		t.Fatalf("a Makefile that is a FIFO: %v", err)
	}
}

// TestMergeTiesMakeToNinja: Ninja builds libk.a; a Make folder beside it links ../nj/libk.a into its
// program. After a rebuild of libk.a by ninja alone, Merge has made the Make link step depend on the
// Ninja edge (a path edge), the program's root reaches the Ninja steps, and check reports the program
// older than the library Ninja wrote; make relinking fixes it.
func TestMergeTiesMakeToNinja(t *testing.T) {
	need(t, "make", "ninja", "cc", "ar")
	root := t.TempDir()
	nj, mk := filepath.Join(root, "nj"), filepath.Join(root, "mk")
	write(t, nj, map[string]string{
		"build.ninja": "rule cc\n  command = cc -MD -MF $out.d -c $in -o $out\n  depfile = $out.d\n  deps = gcc\nrule ar\n  command = rm -f $out && ar rcs $out $in\n" +
			"build k.o: cc k.c\nbuild libk.a: ar k.o\n",
		"k.c": "int k(void) { return 0; }\n",
	})
	lib := filepath.Join(nj, "libk.a")
	write(t, mk, map[string]string{
		"Makefile": "CFLAGS = -MMD\napp: main.o " + lib + "\n\t$(CC) main.o " + lib + " -o $@\n-include main.d\n",
		"main.c":   "int k(void);\nint main(void) { return k(); }\n",
	})
	sh(t, nj, "ninja")
	sh(t, mk, "make")
	time.Sleep(20 * time.Millisecond)
	write(t, nj, map[string]string{"k.c": "int k(void) { return 1 - 1; }\n"})
	sh(t, nj, "ninja")
	g, found, err := ReadAll(context.Background(), root, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 2 {
		t.Fatalf("found %+v", found)
	}
	var link, ar = g.Steps[0], g.Steps[0]
	for _, s := range g.Steps {
		switch s.ID {
		case "make:" + filepath.Join(mk, "app"):
			link = s
		case "ninja:" + lib:
			ar = s
		}
	}
	if link.ID != "make:"+filepath.Join(mk, "app") || ar.ID != "ninja:"+lib {
		t.Fatalf("steps not found: %s %s", link.ID, ar.ID)
	}
	tied := false
	for _, d := range link.Deps {
		tied = tied || d == ar
	}
	if !tied || len(ar.Roots) == 0 {
		t.Fatalf("Merge did not tie the make link to the ninja archive: deps %v, roots of the archive %v", link.Deps, ar.Roots)
	}
	var older []check.Finding
	for _, f := range check.Run(g, check.Options{}) {
		if f.Rule == "binary-older-than-input" {
			older = append(older, f)
		}
	}
	if len(older) != 1 || older[0].Subjects[0] != filepath.Join(mk, "app") || older[0].Subjects[1] != lib || older[0].System != "make" ||
		!strings.Contains(older[0].Evidence[1].Detail, "written by ninja step libk.a") || !strings.Contains(older[0].Message, "Make relinks it the next time it builds it") {
		t.Fatalf("binary-older-than-input %+v", older)
	}
	sh(t, mk, "make")
	g, _, err = ReadAll(context.Background(), root, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fs := check.Run(g, check.Options{}); len(fs) != 0 {
		t.Fatalf("after make: %+v", fs)
	}
}

// TestReadAllSkipsScriptDrivenBuilds: a Make folder inside a Cargo package with a build script is the
// script's build: ReadAll reads Cargo alone (its own error here: nothing built) unless --system names
// make, and then reads that folder.
func TestReadAllSkipsScriptDrivenBuilds(t *testing.T) {
	need(t, "make")
	root := t.TempDir()
	write(t, root, map[string]string{
		"Cargo.toml":      "[package]\nname = \"p\"\nversion = \"0.1.0\"\n",
		"build.rs":        "fn main() {}\n",
		"native/Makefile": "all: y.o\ny.o:\n\ttrue\n",
		"native/y.o":      "not really an object",
		"src/lib.rs":      "",
	})
	if _, _, err := ReadAll(context.Background(), root, nil, Options{}); !errors.Is(err, cargo.ErrNotBuilt) {
		t.Fatalf("default: %v, want Cargo's nothing-built error", err)
	}
	g, found, err := ReadAll(context.Background(), root, []string{"make"}, Options{})
	if err != nil || len(found) != 1 || found[0].Dir != filepath.Join(root, "native") || found[0].Package != root {
		t.Fatalf("--system make: %v %+v", err, found)
	}
	ok := false
	for _, s := range g.Steps {
		ok = ok || s.ID == "make:"+filepath.Join(root, "native/y.o") && s.System == "make"
	}
	if !ok {
		t.Fatalf("no step for native/y.o in %d steps", len(g.Steps))
	}
}

// A folder that is no build itself but holds two builds sharing no file is refused, naming both and how
// to check one; either one alone is read; --system reads them together as asked.
func TestReadAllRefusesUnrelatedBuilds(t *testing.T) {
	need(t, "make", "cc")
	root := t.TempDir()
	mk := "app: main.o\n\tcc -o app main.o\nmain.o: main.c\n\tcc -c main.c -o main.o\n"
	write(t, root, map[string]string{
		"one/Makefile": mk, "one/main.c": "int main(void) { return 0; }\n",
		"two/Makefile": mk, "two/main.c": "int main(void) { return 1; }\n",
	})
	sh(t, filepath.Join(root, "one"), "make", "-s")
	sh(t, filepath.Join(root, "two"), "make", "-s")
	_, _, err := ReadAll(context.Background(), root, nil, Options{})
	if !errors.Is(err, ErrSeveralBuilds) || !strings.Contains(err.Error(), "make at "+filepath.Join(root, "one")) ||
		!strings.Contains(err.Error(), "make at "+filepath.Join(root, "two")) || !strings.Contains(err.Error(), "stalecheck check "+filepath.Join(root, "one")) {
		t.Fatalf("two unrelated builds: %v", err)
	}
	if g, _, err := ReadAll(context.Background(), filepath.Join(root, "one"), nil, Options{}); err != nil || len(g.Steps) == 0 {
		t.Fatalf("one of them: %v", err)
	}
	if _, _, err := ReadAll(context.Background(), root, []string{"make"}, Options{}); err != nil {
		t.Fatalf("--system make: %v", err)
	}
}

// A go.work that uses two modules, one of whose programs is built from the other: one build, read at
// the root (the program's steps read the other module's files), not two unrelated ones.
func TestReadAllGoWorkIsOneBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("a real go build: not under -short")
	}
	need(t, "go")
	t.Setenv("GOFLAGS", "")
	t.Setenv("GOWORK", "")
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOPROXY", "off")
	root := t.TempDir()
	write(t, root, map[string]string{
		"go.work":     "go 1.21\n\nuse (\n\t./app\n\t./lib\n)\n",
		"lib/go.mod":  "module example.com/lib\n\ngo 1.21\n",
		"lib/lib.go":  "package lib\n\nfunc K() int { return 3 }\n",
		"app/go.mod":  "module example.com/app\n\ngo 1.21\n\nrequire example.com/lib v0.0.0\n",
		"app/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/lib\"\n)\n\nfunc main() { fmt.Println(lib.K()) }\n",
	})
	sh(t, filepath.Join(root, "app"), "go", "build", "-o", "app", ".")
	g, _, err := ReadAll(context.Background(), root, nil, Options{})
	if err != nil {
		t.Fatalf("go.work root: %v", err)
	}
	libFile := filepath.Join(root, "lib", "lib.go")
	read := false
	for _, s := range g.Steps {
		for _, in := range s.Inputs {
			read = read || in.File.Path == libFile
		}
	}
	if len(g.Roots) != 1 || !read {
		t.Fatalf("roots %d, lib.go an input: %v", len(g.Roots), read)
	}
}
