package gocgo_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stalecheck/stalecheck/internal/cargo"
	rules "github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/content"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/gocgo"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/systems"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// goCheck reads the Go module (and Cargo workspaces given) into one graph, annotates it as `check`
// does, and runs the rules.
func goCheck(t *testing.T, dir, state string, cargoDirs ...string) ([]rules.Finding, *graph.Graph) {
	t.Helper()
	gg, err := gocgo.ReadGraph(context.Background(), dir, gocgo.GraphOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	gs := []*graph.Graph{}
	for _, cd := range cargoDirs {
		l, err := cargo.Locate(cd, cargo.LocateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cg, err := cargo.Read(l, cargo.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, cg)
	}
	g := gg
	if len(gs) > 0 {
		g = systems.Merge(append(gs, gg)...)
	}
	evidence.Annotate(g, state)
	content.Annotate(g, content.Options{StateDir: state})
	return rules.Run(g, rules.Options{}), g
}

func findings(fs []rules.Finding, rule, subject string) []rules.Finding {
	var out []rules.Finding
	for _, f := range testutil.Rule(fs, rule) {
		if testutil.HasSubject(f, subject) {
			out = append(out, f)
		}
	}
	return out
}

func hasRoot(f rules.Finding, root string) bool {
	for _, r := range f.Roots {
		if r == root {
			return true
		}
	}
	return false
}

// S10 through the graph and the rules: the header is untracked-input-changed against the Go binary,
// also after a go build that only touched the binary (the baseline under its build ID); go build -a fixes it.
func TestReadGraphS10(t *testing.T) {
	goEnv(t)
	dir := cgoModule(t)
	state := t.TempDir()
	app := filepath.Join(dir, "app")
	header := filepath.Join(dir, "include", "api.h")
	run(t, dir, "go", "build", "-o", app, "./cmd/app")

	fs, g := goCheck(t, dir, state)
	if len(g.Roots) != 1 || g.Roots[0].File.Path != app || g.Roots[0].Kind != "bin" || g.Roots[0].Step == nil {
		t.Fatalf("roots %+v", g.Roots)
	}
	link := g.Roots[0].Step
	// Its package steps: the cgo package, and main (the module's own package, without cgo).
	if link.System != gocgo.System || link.Reference.Path != app || link.Reference.MTimeNS > mtime(t, app) || len(link.Deps) != 2 {
		t.Fatalf("link step %+v", link)
	}
	var pkg *graph.Step
	for _, d := range link.Deps {
		if d.Package == "example.com/cgomod/calc" {
			pkg = d
		} else if d.Label != "package example.com/cgomod/cmd/app of app" {
			t.Fatalf("package step %+v", d)
		}
	}
	if pkg == nil {
		t.Fatalf("no step of the cgo package: %+v", link.Deps)
	}
	if pkg.Package != "example.com/cgomod/calc" || !pkg.Live() || pkg.Words().NotWatched != "Go's build cache does not hash it" || !strings.HasPrefix(pkg.Words().Reference, "the Go binary, judged from when go build last wrote it") {
		t.Fatalf("package step %+v words %+v", pkg, pkg.Words())
	}
	var hdr *graph.Input
	for _, in := range pkg.Inputs {
		if in.File.Path == header {
			hdr = in
		}
		if in.File.Path == filepath.Join(dir, "calc", "calc.go") && (!in.Watched || !in.Has(graph.Declared)) {
			t.Fatalf("calc.go %+v", in)
		}
	}
	if hdr == nil || hdr.Watched || !hdr.Has(graph.IncludeScan) {
		t.Fatalf("header input %+v in %+v", hdr, pkg.Inputs)
	}
	if errs := testutil.AtLeast(fs, rules.Warning); len(errs) != 0 {
		t.Fatalf("fresh build: %s", testutil.Dump(errs))
	}
	if _, err := os.Stat(filepath.Join(state, gocgo.BaselinesFile)); err != nil {
		t.Fatalf("no Go baseline stored: %v", err)
	}

	write(t, dir, map[string]string{"include/api.h": "#define API_VALUE 2\n"})
	fs, _ = goCheck(t, dir, state)
	u := findings(fs, "untracked-input-changed", header)
	if len(u) != 1 || u[0].Severity != rules.Error || !hasRoot(u[0], app) || !strings.Contains(u[0].Message, "Go's build cache does not hash it") ||
		u[0].Evidence[0].MTimeNS != mtime(t, header) || u[0].Evidence[1].MTimeNS != link.Written() || u[0].Evidence[0].How != "include-scan" ||
		!strings.Contains(u[0].Fix, "go build -a -o ./app example.com/cgomod/cmd/app") {
		t.Fatalf("after the header edit:\n%s", testutil.Dump(fs))
	}
	t.Logf("%s", u[0].Message)

	// go build reuses its cache and only touches the binary: the baseline under its build ID still shows it.
	run(t, dir, "go", "build", "-o", app, "./cmd/app")
	if out := run(t, dir, app); out != "1 101\n" {
		t.Fatalf("go build noticed the header: %q", out)
	}
	fs, _ = goCheck(t, dir, state)
	u = findings(fs, "untracked-input-changed", header)
	if mtime(t, app) > mtime(t, header) {
		if len(u) != 1 || u[0].Severity != rules.Error || !hasRoot(u[0], app) {
			t.Fatalf("after the touch:\n%s", testutil.Dump(fs))
		}
		t.Logf("%s", u[0].Message)
	}
	// The first check of all, after that no-op build: the binary's mtime is newer than the header, but
	// go build wrote it before the edit (its birth time, where the file system keeps one).
	if fresh, _ := goCheck(t, dir, t.TempDir()); mtime(t, app) > mtime(t, header) && birthKept(t, app) {
		if u := findings(fresh, "untracked-input-changed", header); len(u) != 1 || u[0].Severity != rules.Error {
			t.Fatalf("first check after the no-op build:\n%s", testutil.Dump(fresh))
		}
	}
	if c := testutil.Rule(fs, "changed-with-older-mtime"); len(c) != 0 {
		t.Fatalf("changed-with-older-mtime on a Go input: %s", testutil.Dump(c))
	}

	run(t, dir, "go", "build", "-a", "-o", app, "./cmd/app")
	if out := run(t, dir, app); out != "2 101\n" {
		t.Fatalf("go build -a prints %q", out)
	}
	fs, _ = goCheck(t, dir, state)
	if errs := testutil.AtLeast(fs, rules.Warning); len(errs) != 0 {
		t.Fatalf("after go build -a: %s", testutil.Dump(errs))
	}
}

// S11 through the graph and the rules: the rebuilt libcalc.a is binary-older-than-input with content
// evidence that the Go binary holds other code; a relink fixes it.
func TestReadGraphS11(t *testing.T) {
	goEnv(t)
	dir := cgoModule(t)
	state := t.TempDir()
	app := filepath.Join(dir, "app")
	lib := filepath.Join(dir, "c", "libcalc.a")
	run(t, dir, "go", "build", "-o", app, "./cmd/app")
	fs, g := goCheck(t, dir, state)
	link := g.Roots[0].Step
	if len(link.Inputs) != 1 || link.Inputs[0].File.Path != lib || !link.Inputs[0].Has(graph.CommandLine) || !graph.LinkedLibrary(link.Inputs[0]) ||
		!strings.Contains(link.Inputs[0].Detail[0], "#cgo LDFLAGS: -L"+filepath.Join(dir, "calc")+"/../c -lcalc") {
		t.Fatalf("link inputs %+v", link.Inputs[0])
	}
	if errs := testutil.AtLeast(fs, rules.Warning); len(errs) != 0 {
		t.Fatalf("fresh build: %s", testutil.Dump(errs))
	}

	buildLib(t, dir, "int calc(int x) { return x * 1000 + 7; }\n")
	fs, _ = goCheck(t, dir, state)
	b := findings(fs, "binary-older-than-input", lib)
	if len(b) != 1 || b[0].Severity != rules.Error || b[0].Subjects[0] != app || evidenceHow(b[0], "record") != "content-differs" ||
		b[0].Evidence[1].MTimeNS != mtime(t, lib) || b[0].Evidence[0].MTimeNS != mtime(t, app) || !strings.HasPrefix(b[0].Fix, "go build -a") {
		t.Fatalf("after the rebuild of libcalc.a:\n%s", testutil.Dump(fs))
	}
	t.Logf("%s", b[0].Message)
	if u := findings(fs, "untracked-input-changed", lib); len(u) != 0 {
		t.Fatalf("the library is also untracked-input-changed: %s", testutil.Dump(u))
	}

	// The fix: a content edit Go hashes relinks (go build -a does too: TestReadGraphS10).
	edit(t, filepath.Join(dir, "calc", "calc.go"), "\n// relink after libcalc.a changed\n")
	run(t, dir, "go", "build", "-o", app, "./cmd/app")
	if out := run(t, dir, app); out != "1 1007\n" {
		t.Fatalf("after the fix: %q", out)
	}
	fs, _ = goCheck(t, dir, state)
	if errs := testutil.AtLeast(fs, rules.Warning); len(errs) != 0 {
		t.Fatalf("after the relink: %s", testutil.Dump(errs))
	}
}

func evidenceHow(f rules.Finding, kind string) string {
	for _, e := range f.Evidence {
		if e.Kind == kind {
			return e.How
		}
	}
	return ""
}

// The Go → Rust → C chain: a Go program links a Cargo staticlib whose build.rs compiles native/x.c
// with Debian's cc crate. An edit of x.c without cargo build is Cargo's pending rebuild with the Go
// binary among its roots; after cargo build the rebuilt staticlib is binary-older-than-input against
// the Go binary (content: differs) and names x.c behind it; relinking the Go binary clears both.
func TestReadGraphGoRustCChain(t *testing.T) {
	goEnv(t)
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Skip("cargo is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(testutil.CCCrate, "Cargo.toml")); err != nil {
		t.Skipf("Debian's librust-cc-dev is not installed: %v", err)
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"rs/.cargo/config.toml": "[source.crates-io]\nreplace-with = \"debian\"\n[source.debian]\ndirectory = \"" + testutil.DebianRegistry + "\"\n[net]\noffline = true\n",
		"rs/Cargo.toml": "[package]\nname = \"rcalc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\ncrate-type = [\"staticlib\"]\n\n" +
			"[build-dependencies]\ncc = \"1.0\"\n\n[profile.dev]\npanic = \"abort\"\n",
		"rs/build.rs":   "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    println!(\"cargo:rerun-if-changed=native/x.c\");\n    cc::Build::new().file(\"native/x.c\").compile(\"x\");\n}\n",
		"rs/native/x.c": "int x_compute(int v) { return v * 3; }\n",
		"rs/src/lib.rs": "extern \"C\" { fn x_compute(v: i32) -> i32; }\n#[no_mangle]\npub extern \"C\" fn rcalc(x: i32) -> i32 { unsafe { x_compute(x) } }\n",
		"go/go.mod":     "module example.com/chain\n\ngo 1.26\n",
		"go/rbridge/rbridge.go": `package rbridge

/*
#cgo LDFLAGS: -L${SRCDIR}/../../rs/target/debug -lrcalc -lpthread -ldl -lm
int rcalc(int);
*/
import "C"

func Calc(x int) int { return int(C.rcalc(C.int(x))) }
`,
		"go/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/chain/rbridge\"\n)\n\nfunc main() { fmt.Println(rbridge.Calc(2)) }\n",
	})
	rs, gomod := filepath.Join(dir, "rs"), filepath.Join(dir, "go")
	state := t.TempDir()
	cargoIn(t, rs, "build", "--offline")
	app := filepath.Join(gomod, "chain") // go build's default name for the module's root package
	run(t, gomod, "go", "build")
	if out := run(t, gomod, app); out != "6\n" {
		t.Fatalf("first build prints %q", out)
	}
	lib := filepath.Join(rs, "target", "debug", "librcalc.a")
	xc := filepath.Join(rs, "native", "x.c")
	fs, g := goCheck(t, gomod, state, rs)
	var goRoot *graph.Root
	for _, r := range g.Roots {
		if r.File.Path == app {
			goRoot = r
		}
	}
	if goRoot == nil {
		t.Fatalf("no root for %s: %+v", app, g.Roots)
	}
	crossed := false
	for _, s := range goRoot.Reach() {
		if s.System == "cargo" {
			crossed = true
		}
	}
	if !crossed {
		t.Fatalf("the Go binary's root reaches no Cargo step; link step deps %+v", goRoot.Step.Deps)
	}
	if errs := testutil.AtLeast(fs, rules.Warning); len(errs) != 0 {
		t.Fatalf("fresh builds: %s", testutil.Dump(errs))
	}

	// Edit the C file, no cargo build: Cargo's build-script run will rerun, and the Go binary is behind it.
	write(t, rs, map[string]string{"native/x.c": "int x_compute(int v) { return v * 3 + 1000; }\n"})
	fs, _ = goCheck(t, gomod, state, rs)
	var named []rules.Finding
	for _, rule := range []string{"pending-rebuild", "untracked-input-changed"} {
		named = append(named, findings(fs, rule, xc)...)
	}
	if len(named) == 0 || !hasRoot(named[0], app) || named[0].Severity != rules.Error {
		t.Fatalf("the edited C file is not named with the Go binary among its roots:\n%s", testutil.Dump(fs))
	}
	t.Logf("%s: %s (roots %v)", named[0].Rule, named[0].Message, named[0].Roots)

	// cargo build rebuilds the staticlib; the Go binary is not relinked.
	cargoIn(t, rs, "build", "--offline")
	fs, _ = goCheck(t, gomod, state, rs)
	b := findings(fs, "binary-older-than-input", lib)
	if len(b) != 1 || b[0].Subjects[0] != app || b[0].Severity != rules.Error {
		t.Fatalf("the rebuilt staticlib is not binary-older-than-input against the Go binary:\n%s", testutil.Dump(fs))
	}
	behind := false
	for _, e := range b[0].Evidence {
		if e.Kind == "input" && e.Path == xc && e.MTimeNS == mtime(t, xc) {
			behind = true
		}
	}
	if !behind || !strings.Contains(b[0].Message, "native/x.c") {
		t.Fatalf("x.c is not named behind the staticlib:\n%s", testutil.Dump(b))
	}
	t.Logf("%s (content: %s)", b[0].Message, evidenceHow(b[0], "record"))
	if evidenceHow(b[0], "record") != "content-differs" {
		t.Errorf("content verdict %q, want content-differs", evidenceHow(b[0], "record"))
	}

	// The fix: relink the Go binary.
	edit(t, filepath.Join(gomod, "rbridge", "rbridge.go"), "\n// relink after librcalc.a changed\n")
	run(t, gomod, "go", "build")
	if out := run(t, gomod, app); out != "1006\n" {
		t.Fatalf("after the fix: %q", out)
	}
	fs, _ = goCheck(t, gomod, state, rs)
	if errs := testutil.AtLeast(fs, rules.Warning); len(errs) != 0 {
		t.Fatalf("after relinking the Go binary: %s", testutil.Dump(errs))
	}
}

// A binary built into a folder of its own (go build -o build/app) is found and judged as one in the
// module folder is (it was nothing to judge, and run timed it as if current).
func TestReadGraphBinaryInSubfolder(t *testing.T) {
	goEnv(t)
	dir := cgoModule(t)
	state := t.TempDir()
	app := filepath.Join(dir, "build", "app")
	header := filepath.Join(dir, "include", "api.h")
	run(t, dir, "go", "build", "-o", app, "./cmd/app")
	fs, g := goCheck(t, dir, state)
	if len(g.Roots) != 1 || g.Roots[0].File.Path != app {
		t.Fatalf("roots %+v", g.Roots)
	}
	if errs := testutil.AtLeast(fs, rules.Warning); len(errs) != 0 {
		t.Fatalf("fresh build: %s", testutil.Dump(errs))
	}
	write(t, dir, map[string]string{"include/api.h": "#define API_VALUE 2\n"})
	fs, _ = goCheck(t, dir, state)
	if u := findings(fs, "untracked-input-changed", header); len(u) != 1 || !hasRoot(u[0], app) {
		t.Fatalf("after the header edit:\n%s", testutil.Dump(fs))
	}
}

// birthKept reports whether the file system keeps p's birth time (statx btime), which the reference
// of a Go binary's steps rests on.
func birthKept(t *testing.T, p string) bool {
	t.Helper()
	var st unix.Statx_t
	return unix.Statx(unix.AT_FDCWD, p, 0, unix.STATX_BTIME, &st) == nil && st.Mask&unix.STATX_BTIME != 0
}

// written is when go build last wrote the binary at p, as gocgo takes it: its birth time when the file
// system keeps one older than its mtime, else its mtime.
func written(t *testing.T, p string) int64 {
	t.Helper()
	var st unix.Statx_t
	m := mtime(t, p)
	if unix.Statx(unix.AT_FDCWD, p, 0, unix.STATX_BTIME, &st) == nil && st.Mask&unix.STATX_BTIME != 0 {
		if b := st.Btime.Sec*1e9 + int64(st.Btime.Nsec); b > 0 && b < m {
			return b
		}
	}
	return m
}

// TestReadGraphPureGoPackages: the packages without cgo whose files are the user's (the main module's,
// a module replaced by a folder) are steps too, with the files Go hashes as watched inputs: an edit of
// any of them with no go build since is a pending rebuild naming it (a subpackage, main's own file, a
// //go:embed file, the replaced module's file); after go build, nothing. A standard-library package
// is no step.
func TestReadGraphPureGoPackages(t *testing.T) {
	goEnv(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"go.mod":     "module example.com/pure\n\ngo 1.26\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ./dep\n",
		"dep/go.mod": "module example.com/dep\n\ngo 1.26\n",
		"dep/dep.go": "package dep\n\nfunc D() int { return 1 }\n",
		"u/u.go":     "package u\n\nfunc U() int { return 1 }\n",
		"data.txt":   "one\n",
		"main.go": `package main

import (
	_ "embed"
	"fmt"

	"example.com/dep"
	"example.com/pure/u"
)

//go:embed data.txt
var data string

func main() { fmt.Println(u.U(), dep.D(), data) }
`,
	})
	state := t.TempDir()
	app := filepath.Join(dir, "pure")
	run(t, dir, "go", "build", "-o", app, ".")
	fs, g := goCheck(t, dir, state)
	if errs := testutil.AtLeast(fs, rules.Warning); len(errs) != 0 {
		t.Fatalf("fresh build: %s", testutil.Dump(errs))
	}
	steps := map[string]bool{}
	for _, s := range g.Steps {
		steps[s.Label] = true
	}
	for _, want := range []string{"package example.com/pure of pure", "package example.com/pure/u of pure", "package example.com/dep of pure"} {
		if !steps[want] {
			t.Fatalf("no step %q in %v", want, steps)
		}
	}
	if steps["package fmt of pure"] {
		t.Fatalf("a standard-library package is a step: %v", steps)
	}
	for _, e := range []struct{ rel, old, new string }{
		{"u/u.go", "return 1", "return 2"}, {"main.go", "u.U(), dep.D()", "dep.D(), u.U()"},
		{"data.txt", "one", "two"}, {"dep/dep.go", "return 1", "return 3"},
		// A comment: go build then keeps the build ID (the code is the same) and only touches the
		// binary; Go hashed the new content, so the binary holds what it makes.
		{"u/u.go", "func U", "// U is two.\nfunc U"},
	} {
		rel, p := e.rel, filepath.Join(dir, e.rel)
		body, _ := os.ReadFile(p)
		if !strings.Contains(string(body), e.old) {
			t.Fatalf("premise: %s lacks %q", rel, e.old)
		}
		write(t, dir, map[string]string{rel: strings.Replace(string(body), e.old, e.new, 1)})
		fs, _ = goCheck(t, dir, state)
		if pend := findings(fs, "pending-rebuild", p); len(pend) != 1 || pend[0].Severity != rules.Error || !hasRoot(pend[0], app) {
			t.Fatalf("after editing %s with no go build:\n%s", rel, testutil.Dump(fs))
		}
		run(t, dir, "go", "build", "-o", app, ".")
		fs, _ = goCheck(t, dir, state)
		if errs := testutil.AtLeast(fs, rules.Warning); len(errs) != 0 {
			t.Fatalf("after go build (%s): %s", rel, testutil.Dump(errs))
		}
	}
}
