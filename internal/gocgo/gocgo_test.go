package gocgo_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/gocgo"
	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/special"
)

// goCache is the build cache of this test binary: a temporary folder, so no test depends on the
// machine's cache (one per package run rather than per test: a fresh cache compiles the runtime
// again, about a minute on the shared 2-core machine).
var goCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gocgo-gocache-")
	if err != nil {
		panic(err)
	}
	goCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goEnv prepares the environment of a test that runs the real go command: the test binary's build
// cache, no network, no toolchain switch, no workspace. It skips when go or cc is absent.
func goEnv(t *testing.T) {
	t.Helper()
	need.RealBuild(t)
	for _, tool := range []string{"go", "gcc", "ar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: this test drives real cgo builds", tool)
		}
	}
	t.Setenv("GOCACHE", goCache)
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=readonly")
	t.Setenv("GOWORK", "off")
	t.Setenv("CGO_ENABLED", "1")
	t.Setenv("CC", "gcc")
	t.Setenv("CARGO_NET_OFFLINE", "true")
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// edit appends text to a file.
func edit(t *testing.T, p, text string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// cargoIn runs cargo ARGS in dir in the build-dir layout testutil's projects build in
// (testutil.CargoLayoutEnv), with a deadline; it fails the test on error.
func cargoIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	argv, env := testutil.ProjectAt(t, dir).CargoCommand(args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in %s: %v\n%s", strings.Join(argv, " "), dir, err, out)
	}
	return string(out)
}

func mtime(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime().UnixNano()
}

func sum(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// buildLib compiles c/calc.c into c/libcalc.a with gcc and ar.
func buildLib(t *testing.T, dir, body string) {
	t.Helper()
	write(t, dir, map[string]string{"c/calc.c": body})
	os.Remove(filepath.Join(dir, "c", "libcalc.a"))
	run(t, filepath.Join(dir, "c"), "gcc", "-c", "-O2", "calc.c", "-o", "calc.o")
	run(t, filepath.Join(dir, "c"), "ar", "rcs", "libcalc.a", "calc.o")
}

// cgoModule is the module of S10 and S11: package calc includes include/api.h (outside its folder,
// through -I${SRCDIR}/../include) and links c/libcalc.a (-L${SRCDIR}/../c -lcalc); cmd/app prints
// API_VALUE and calc(1).
func cgoModule(t *testing.T) string {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"go.mod":        "module example.com/cgomod\n\ngo 1.26\n",
		"include/api.h": "#define API_VALUE 1\n",
		"calc/calc.go": `package calc

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#cgo LDFLAGS: -L${SRCDIR}/../c -lcalc
#include <stdlib.h>
#include "api.h"
int calc(int);
static int api(void) { return API_VALUE; }
*/
import "C"

func API() int        { return int(C.api()) }
func Calc(x int) int  { return int(C.calc(C.int(x))) }
`,
		"cmd/app/main.go": `package main

import (
	"fmt"

	"example.com/cgomod/calc"
)

func main() { fmt.Println(calc.API(), calc.Calc(1)) }
`,
	})
	buildLib(t, dir, "int calc(int x) { return x + 100; }\n")
	return dir
}

type state struct {
	bin *gocgo.Binary
	rep *gocgo.Report
}

func check(t *testing.T, dir, bin string, bl *gocgo.Baseline) state {
	t.Helper()
	b, err := gocgo.ReadBinary(bin)
	if err != nil {
		t.Fatal(err)
	}
	m, err := gocgo.Read(context.Background(), dir, gocgo.ListOptionsFor(b))
	if err != nil {
		t.Fatal(err)
	}
	r, err := gocgo.Check(m, b, gocgo.CheckOptions{Content: true, Baseline: bl})
	if err != nil {
		t.Fatal(err)
	}
	return state{b, r}
}

func missed(r *gocgo.Report, path string) *gocgo.Newer {
	for _, n := range r.Missed() {
		if n.Input.Path == path {
			return &n
		}
	}
	return nil
}

func holdingOf(r *gocgo.Report, lib string) *gocgo.LibraryHolding {
	for _, h := range r.Holdings {
		if h.Library == lib {
			return &h
		}
	}
	return nil
}

// S10: a header outside the cgo package's folder is edited; go build reuses its cache.
func TestS10HeaderOutsidePackage(t *testing.T) {
	goEnv(t)
	dir := cgoModule(t)
	app := filepath.Join(dir, "app")
	header := filepath.Join(dir, "include", "api.h")
	run(t, dir, "go", "build", "-o", app, "./cmd/app")
	if out := run(t, dir, app); out != "1 101\n" {
		t.Fatalf("first build prints %q", out)
	}
	s := check(t, dir, app, nil)
	if len(s.rep.Missed()) != 0 {
		t.Fatalf("fresh build: missed inputs %+v", s.rep.Missed())
	}
	// The cgo package, and the main package (local: the module's own, without cgo).
	var cgoPkgs []*gocgo.Package
	for _, p := range s.rep.Link.Packages {
		if p.Cgo {
			cgoPkgs = append(cgoPkgs, p)
		} else if !p.Local || p.ImportPath != "example.com/cgomod/cmd/app" || len(p.Discovered) != 0 {
			t.Fatalf("package %+v", p)
		}
	}
	if len(cgoPkgs) != 1 || cgoPkgs[0].ImportPath != "example.com/cgomod/calc" || len(s.rep.Link.Packages) != 2 {
		t.Fatalf("packages of the binary: %+v", s.rep.Link.Packages)
	}
	p := cgoPkgs[0]
	var hdr *gocgo.Input
	for i, in := range p.Discovered {
		if in.Path == header {
			hdr = &p.Discovered[i]
		}
	}
	if hdr == nil || hdr.Watched || hdr.Clues[0].How != gocgo.HowIncludeScan ||
		!strings.Contains(hdr.Clues[0].Detail, `#include "api.h" at `+filepath.Join(dir, "calc", "calc.go")+":7 through -I "+filepath.Join(dir, "include")) {
		t.Fatalf("the header is not a discovered, unwatched include-scan input: %+v", p.Discovered)
	}
	for _, in := range p.Declared {
		if !in.Watched || in.Clues[0].How != gocgo.HowGoList {
			t.Fatalf("declared input %+v", in)
		}
	}
	bl, err := gocgo.TakeBaseline(s.rep)
	if err != nil {
		t.Fatal(err)
	}
	buildID := s.bin.BuildID
	if buildID == "" || bl.BuildID != buildID {
		t.Fatalf("build ID %q, baseline %q", buildID, bl.BuildID)
	}

	// The edit.
	write(t, dir, map[string]string{"include/api.h": "#define API_VALUE 2\n"})
	s = check(t, dir, app, bl)
	n := missed(s.rep, header)
	if n == nil {
		t.Fatalf("the edited header is not named: %+v", s.rep.Newer)
	}
	if n.Input.MTimeNS != mtime(t, header) || n.BinaryMTimeNS != written(t, app) || n.ByNS <= 0 || n.Package != "example.com/cgomod/calc" {
		t.Fatalf("header %+v: header mtime %d, binary mtime %d", n, mtime(t, header), mtime(t, app))
	}
	if _, err := gocgo.TakeBaseline(s.rep); err == nil {
		t.Fatal("a baseline was taken while the header is newer than the binary")
	}

	// go build reuses its cache: the binary keeps the old value, its bytes and build ID stay, and go
	// only touches it (exec.go's BuildInstallFunc): its mtime moves past the header, its birth time
	// (when go build wrote it) does not, so where the file system keeps one the evidence stays.
	before, beforeMT := sum(t, app), mtime(t, app)
	run(t, dir, "go", "build", "-o", app, "./cmd/app")
	if out := run(t, dir, app); out != "1 101\n" {
		t.Fatalf("go build noticed the header after all: %q", out)
	}
	if sum(t, app) != before {
		t.Fatal("go build relinked the binary")
	}
	s = check(t, dir, app, bl)
	if s.bin.BuildID != buildID {
		t.Fatalf("build ID moved without a relink: %s → %s", buildID, s.bin.BuildID)
	}
	t.Logf("go build touched the binary: mtime %d → %d ns (header %d ns)", beforeMT, mtime(t, app), mtime(t, header))
	switch {
	case birthKept(t, app) && missed(s.rep, header) == nil:
		t.Fatalf("the header edit is not named newer than when go build wrote the binary: %+v", s.rep.Newer)
	case !birthKept(t, app) && mtime(t, app) > mtime(t, header) && len(s.rep.Missed()) != 0:
		t.Fatalf("mtime evidence after the touch: %+v", s.rep.Missed())
	}
	if len(s.rep.Changed) != 1 || s.rep.Changed[0].Input.Path != header || s.rep.Changed[0].Old == s.rep.Changed[0].New {
		t.Fatalf("the baseline does not show the edit under the same build ID: %+v notes %v", s.rep.Changed, s.rep.Notes)
	}

	// Touching the .go file is no fix: Go hashes content, not mtimes.
	now := time.Now()
	os.Chtimes(filepath.Join(dir, "calc", "calc.go"), now, now)
	run(t, dir, "go", "build", "-o", app, "./cmd/app")
	if out := run(t, dir, app); out != "1 101\n" {
		t.Fatalf("touch made go rebuild: %q", out)
	}
	if s = check(t, dir, app, bl); len(s.rep.Changed) != 1 {
		t.Fatalf("after touch: %+v", s.rep.Changed)
	}

	// The fix: go build -a.
	run(t, dir, "go", "build", "-a", "-o", app, "./cmd/app")
	if out := run(t, dir, app); out != "2 101\n" {
		t.Fatalf("go build -a prints %q", out)
	}
	s = check(t, dir, app, bl)
	if len(s.rep.Missed()) != 0 || len(s.rep.Changed) != 0 || s.bin.BuildID == buildID {
		t.Fatalf("after go build -a: missed %+v changed %+v build ID %s", s.rep.Missed(), s.rep.Changed, s.bin.BuildID)
	}
	if len(s.rep.Notes) == 0 || !strings.Contains(s.rep.Notes[0], "no longer applies") {
		t.Fatalf("notes %v", s.rep.Notes)
	}
	if _, err := gocgo.TakeBaseline(s.rep); err != nil {
		t.Fatal(err)
	}
}

// S11: libcalc.a is rebuilt with new behaviour; go build keeps the old one.
func TestS11RebuiltStaticLibrary(t *testing.T) {
	goEnv(t)
	dir := cgoModule(t)
	app := filepath.Join(dir, "app")
	lib := filepath.Join(dir, "c", "libcalc.a")
	run(t, dir, "go", "build", "-o", app, "./cmd/app")
	s := check(t, dir, app, nil)
	if h := holdingOf(s.rep, lib); h == nil || h.Verdict != evidence.HoldsAll {
		t.Fatalf("fresh build: holding %+v", s.rep.Holdings)
	}
	if len(s.rep.Link.Libraries) != 1 || s.rep.Link.Libraries[0].Path != lib || s.rep.Link.Libraries[0].Kind != gocgo.KindArchive ||
		!strings.Contains(s.rep.Link.Libraries[0].Clues[0].Detail, "-lcalc found in -L "+filepath.Join(dir, "c")) {
		t.Fatalf("libraries %+v", s.rep.Link.Libraries)
	}

	buildLib(t, dir, "int calc(int x) { return x * 1000 + 7; }\n")
	s = check(t, dir, app, nil)
	n := missed(s.rep, lib)
	if n == nil || n.Input.MTimeNS != mtime(t, lib) || n.BinaryMTimeNS != written(t, app) || n.Input.Kind != gocgo.KindArchive {
		t.Fatalf("the rebuilt library is not named newer than the binary: %+v", s.rep.Newer)
	}
	h := holdingOf(s.rep, lib)
	if h == nil || h.Verdict != evidence.HoldsOther || len(h.Contradicted) == 0 {
		t.Fatalf("Holds does not say the binary holds the old code: %+v", s.rep.Holdings)
	}
	t.Logf("holding: %s: %s", h.Verdict, h.Why)

	// go build keeps the old library (and touches the binary): content evidence still says so.
	run(t, dir, "go", "build", "-o", app, "./cmd/app")
	if out := run(t, dir, app); out != "1 101\n" {
		t.Fatalf("go build relinked: %q", out)
	}
	s = check(t, dir, app, nil)
	if h := holdingOf(s.rep, lib); h == nil || h.Verdict != evidence.HoldsOther {
		t.Fatalf("after go build: %+v", s.rep.Holdings)
	}

	// The fix: change the cgo file's content (Go hashes it), so go builds the package and links again
	// (go build -a does too: TestS10HeaderOutsidePackage).
	edit(t, filepath.Join(dir, "calc", "calc.go"), "\n// relink after libcalc.a changed\n")
	run(t, dir, "go", "build", "-o", app, "./cmd/app")
	if out := run(t, dir, app); out != "1 1007\n" {
		t.Fatalf("after the fix: %q", out)
	}
	s = check(t, dir, app, nil)
	if len(s.rep.Missed()) != 0 {
		t.Fatalf("after the fix: %+v", s.rep.Missed())
	}
	if h := holdingOf(s.rep, lib); h == nil || h.Verdict != evidence.HoldsAll {
		t.Fatalf("after the fix: %+v", s.rep.Holdings)
	}
}

// A Go program linking a Rust staticlib that real cargo built in a workspace nearby.
func TestGoLinksCargoStaticlib(t *testing.T) {
	goEnv(t)
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Skip("cargo is not on PATH")
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"rs/Cargo.toml": "[package]\nname = \"rcalc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\ncrate-type = [\"staticlib\"]\n\n[profile.release]\npanic = \"abort\"\n",
		"rs/src/lib.rs": "#[no_mangle]\npub extern \"C\" fn rcalc(x: i32) -> i32 { x + 1 }\n",
		"go/go.mod":     "module example.com/chain\n\ngo 1.26\n",
		"go/rbridge/rbridge.go": `package rbridge

/*
#cgo LDFLAGS: -L${SRCDIR}/../../rs/target/release -lrcalc -lpthread -ldl -lm
int rcalc(int);
*/
import "C"

func Calc(x int) int { return int(C.rcalc(C.int(x))) }
`,
		"go/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/chain/rbridge\"\n)\n\nfunc main() { fmt.Println(rbridge.Calc(1)) }\n",
	})
	rs, gomod := filepath.Join(dir, "rs"), filepath.Join(dir, "go")
	cargoIn(t, rs, "build", "--release", "--offline")
	app := filepath.Join(gomod, "app")
	run(t, gomod, "go", "build", "-o", app, ".")
	if out := run(t, gomod, app); out != "2\n" {
		t.Fatalf("first build prints %q", out)
	}
	lib := filepath.Join(rs, "target", "release", "librcalc.a")
	s := check(t, gomod, app, nil)
	if len(s.rep.Link.Libraries) != 1 || s.rep.Link.Libraries[0].Path != lib {
		t.Fatalf("libraries %+v", s.rep.Link.Libraries)
	}
	want := gocgo.CargoOrigin{TargetDir: filepath.Join(rs, "target"), Profile: "release", ProfileDir: filepath.Join(rs, "target", "release"),
		Place: "uplifted", CrateName: "rcalc", Workspace: rs}
	if o := s.rep.Link.Libraries[0].Cargo; o == nil || *o != want {
		t.Fatalf("cargo origin %+v, want %+v", o, want)
	}
	if len(s.rep.Missed()) != 0 {
		t.Fatalf("fresh: %+v", s.rep.Missed())
	}

	write(t, rs, map[string]string{"src/lib.rs": "#[no_mangle]\npub extern \"C\" fn rcalc(x: i32) -> i32 { x * 40 + 2 }\n"})
	cargoIn(t, rs, "build", "--release", "--offline")
	s = check(t, gomod, app, nil)
	n := missed(s.rep, lib)
	if n == nil || n.Input.Cargo == nil || n.Input.Cargo.TargetDir != filepath.Join(rs, "target") || n.Input.MTimeNS != mtime(t, lib) || n.BinaryMTimeNS != written(t, app) {
		t.Fatalf("the rebuilt staticlib is not named newer than the Go binary with its Cargo target folder: %+v", s.rep.Newer)
	}
	if h := holdingOf(s.rep, lib); h == nil || h.Verdict == evidence.HoldsAll {
		t.Fatalf("holding of the rebuilt Rust staticlib: %+v", s.rep.Holdings)
	} else {
		t.Logf("holding: %s: %s %s", h.Verdict, h.Why, h.Err)
	}

	edit(t, filepath.Join(gomod, "rbridge", "rbridge.go"), "\n// relink after librcalc.a changed\n")
	run(t, gomod, "go", "build", "-o", app, ".")
	if out := run(t, gomod, app); out != "42\n" {
		t.Fatalf("after the fix: %q", out)
	}
	if s = check(t, gomod, app, nil); len(s.rep.Missed()) != 0 {
		t.Fatalf("after the fix: %+v", s.rep.Missed())
	}
}

func TestBadInput(t *testing.T) {
	goEnv(t)
	t.Run("broken go.mod", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, map[string]string{"go.mod": "module example.com/x\n\ngo 1.26\nbogus directive here\n", "x.go": "package x\n"})
		_, err := gocgo.Read(context.Background(), dir, gocgo.Options{})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "go.mod")) || !strings.Contains(err.Error(), "unknown directive") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("no go.mod", func(t *testing.T) {
		_, err := gocgo.Read(context.Background(), t.TempDir(), gocgo.Options{})
		if err == nil || !strings.Contains(err.Error(), "no go.mod") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, map[string]string{"go.mod": "module example.com/x\n\ngo 1.26\n", "x.go": "package x\n"})
		_, err := gocgo.Read(context.Background(), dir, gocgo.Options{Timeout: time.Nanosecond})
		if err == nil || !strings.Contains(err.Error(), "no answer within") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("missing folders and libraries", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, map[string]string{"go.mod": "module example.com/x\n\ngo 1.26\n",
			"x.go": "package x\n\n/*\n#cgo CFLAGS: -I${SRCDIR}/nowhere\n#cgo LDFLAGS: -L${SRCDIR}/nolib -lnothere\n#include \"gone.h\"\n*/\nimport \"C\"\n"})
		m, err := gocgo.Read(context.Background(), dir, gocgo.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := m.Package("example.com/x")
		all := strings.Join(append(p.Problems, p.Unresolved...), "\n")
		for _, w := range []string{"include folder " + filepath.Join(dir, "nowhere"), "-L " + filepath.Join(dir, "nolib") + " is missing", `#include "gone.h" at ` + filepath.Join(dir, "x.go") + ":6"} {
			if !strings.Contains(all, w) {
				t.Errorf("%q not in\n%s", w, all)
			}
		}
		// -lnothere is in no folder, the linker's default ones included: the link took it from the
		// project's -L folder, and it is gone (a missing input, judged by the rules).
		found := false
		for _, in := range p.Discovered {
			found = found || in.Path == filepath.Join(dir, "nolib", "libnothere.a") && strings.Contains(in.Clues[0].Detail, "-lnothere")
		}
		if !found {
			t.Errorf("-lnothere is no missing input of nolib: %+v", p.Discovered)
		}
	})
	t.Run("not a Go binary", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, map[string]string{"m.c": "int main(void){return 0;}\n", "text": "hello\n"})
		run(t, dir, "gcc", "m.c", "-o", "m")
		for _, p := range []string{filepath.Join(dir, "m"), filepath.Join(dir, "text")} {
			_, err := gocgo.ReadBinary(p)
			if !errors.Is(err, gocgo.ErrNotGo) || !strings.Contains(err.Error(), p) {
				t.Fatalf("%s: %v", p, err)
			}
		}
	})
	t.Run("truncated and special binaries", func(t *testing.T) {
		dir := cgoModule(t)
		app := filepath.Join(dir, "app")
		run(t, dir, "go", "build", "-o", app, "./cmd/app")
		data, err := os.ReadFile(app)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 64, 4096, len(data) / 2, len(data) - 1} {
			p := filepath.Join(dir, "cut")
			os.WriteFile(p, data[:n], 0o755)
			b, err := gocgo.ReadBinary(p)
			switch {
			case err != nil && (!errors.Is(err, gocgo.ErrNotGo) || !strings.Contains(err.Error(), p)):
				t.Fatalf("cut at %d: %v", n, err)
			case err == nil && b.MainPackage != "example.com/cgomod/cmd/app":
				t.Fatalf("cut at %d: read %+v", n, b)
			}
			t.Logf("cut at %d of %d bytes: %v", n, len(data), err)
		}
		fifo := filepath.Join(dir, "fifo")
		special.Plant(t, fifo, "fifo")
		special.Within(t, 10*time.Second, "ReadBinary of a FIFO", func() {
			if _, err := gocgo.ReadBinary(fifo); err == nil || !strings.Contains(err.Error(), fifo) {
				t.Errorf("fifo: %v", err)
			}
		})
		// A binary of another module.
		other := t.TempDir()
		write(t, other, map[string]string{"go.mod": "module example.com/other\n\ngo 1.26\n", "main.go": "package main\n\nfunc main() {}\n"})
		b, err := gocgo.ReadBinary(app)
		if err != nil {
			t.Fatal(err)
		}
		m, err := gocgo.Read(context.Background(), other, gocgo.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gocgo.Check(m, b, gocgo.CheckOptions{}); err == nil || !strings.Contains(err.Error(), "does not list") {
			t.Fatalf("binary of another module: %v", err)
		}
	})
}

func TestParseLDFlagsSettings(t *testing.T) {
	b := &gocgo.Binary{Settings: []gocgo.Setting{{"-tags", "netgo,x"}, {"CGO_ENABLED", "1"}, {"GOOS", "linux"},
		{"CGO_LDFLAGS", "-L/opt/a -lfoo"}, {"-ldflags", `-s -extldflags "-L /opt/b -lbar"`}, {"CGO_CFLAGS", "-I'/opt/with space' -O2"}}}
	o := gocgo.ListOptionsFor(b)
	if o.Tags != "netgo,x" || strings.Join(o.Env, " ") != "CGO_ENABLED=1 GOOS=linux" {
		t.Fatalf("options %+v", o)
	}
	if got := strings.Join(o.CgoEnv.LDFLAGS, "|"); got != "-L/opt/a|-lfoo|-L|/opt/b|-lbar" {
		t.Fatalf("ldflags %q", got)
	}
	if got := strings.Join(o.CgoEnv.CFLAGS, "|"); got != "-I/opt/with space|-O2" {
		t.Fatalf("cflags %q", got)
	}
}

// The Cargo places a Go package may link from: deps/ (by -l:file), a build script's OUT_DIR, and a
// <triple>/<profile> folder, in a target folder outside the workspace (no Cargo.toml above it).
func TestCargoPlaces(t *testing.T) {
	goEnv(t)
	dir := t.TempDir()
	tgt := filepath.Join(dir, "tgt")
	write(t, dir, map[string]string{
		"tgt/CACHEDIR.TAG":                                         "Signature: 8a477f597d28d172789f06886806bc55\n",
		"tgt/release/.fingerprint/x/keep":                          "",
		"tgt/release/deps/libfoo-0123abcd.a":                       "!<arch>\n",
		"tgt/release/build/bar-sys-99aa0123456789ab/out/libbar.a":  "!<arch>\n",
		"tgt/x86_64-unknown-linux-gnu/release/.fingerprint/y/keep": "",
		"tgt/x86_64-unknown-linux-gnu/release/libbaz.so":           "",
		"m/go.mod": "module example.com/m\n\ngo 1.26\n",
		"m/m.go": "package m\n\n/*\n#cgo LDFLAGS: -L${SRCDIR}/../tgt/release/deps -l:libfoo-0123abcd.a -L${SRCDIR}/../tgt/release/build/bar-sys-99aa0123456789ab/out -lbar\n" +
			"#cgo LDFLAGS: -L${SRCDIR}/../tgt/x86_64-unknown-linux-gnu/release -lbaz\n*/\nimport \"C\"\n",
	})
	m, err := gocgo.Read(context.Background(), filepath.Join(dir, "m"), gocgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]gocgo.CargoOrigin{}
	for _, in := range m.Package("example.com/m").Discovered {
		if in.Cargo == nil {
			t.Fatalf("%s: no Cargo origin", in.Path)
		}
		got[filepath.Base(in.Path)] = *in.Cargo
	}
	rel := filepath.Join(tgt, "release")
	triple := filepath.Join(tgt, "x86_64-unknown-linux-gnu", "release")
	want := map[string]gocgo.CargoOrigin{
		"libfoo-0123abcd.a": {TargetDir: tgt, Profile: "release", ProfileDir: rel, Place: "deps", CrateName: "foo"},
		"libbar.a":          {TargetDir: tgt, Profile: "release", ProfileDir: rel, Place: "build-script-out", BuildDir: filepath.Join(rel, "build", "bar-sys-99aa0123456789ab"), CrateName: "bar"},
		"libbaz.so":         {TargetDir: tgt, Triple: "x86_64-unknown-linux-gnu", Profile: "release", ProfileDir: triple, Place: "uplifted", CrateName: "baz"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
}
