package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// stepOf returns the live unit of a package whose fingerprint file is target (nil when none).
func stepOf(g *graph.Graph, pkg, target string) *graph.Step {
	for _, s := range g.Steps {
		if s.Package == pkg && unit.Of(s).Target == target && s.Live() {
			return s
		}
	}
	return nil
}

func newest(s *graph.Step) (string, time.Time) {
	var p string
	var n int64
	for _, o := range s.Outputs {
		if o.MTimeNS > n {
			p, n = o.Path, o.MTimeNS
		}
	}
	return p, time.Unix(0, n)
}

// cargoSaysFresh is the oracle: a second cargo build -v rebuilds nothing.
func cargoSaysFresh(t *testing.T, p *testutil.Project) {
	t.Helper()
	out := p.Cargo("build", "-v")
	for _, bad := range []string{"Compiling", "Running `", "Dirty"} {
		if strings.Contains(out, bad) {
			t.Fatalf("the oracle fails: cargo build -v is not all Fresh (%q):\n%s", bad, out)
		}
	}
}

// A -sys crate built with Debian's cmake crate, from clean, several times: pipelined builds write cc's
// rlib after cmake started from cc's rmeta, and CMake's install step copies files with their source's
// mtime (whole seconds for the library, the header's own old mtime). Cargo says Fresh; so must check,
// with no warning (--fail-on warning exits 0).
func TestCmakeCrateCleanBuildsHealthy(t *testing.T) {
	testutil.NeedDebianCrates(t)
	p := testutil.NewProject(t, testutil.CmakeWorkspace())
	for i := 0; i < 3; i++ {
		p.Cargo("clean")
		p.Cargo("build")
		cargoSaysFresh(t, p)
		fs, g := p.Check()
		if bad := testutil.AtLeast(fs, check.Warning); len(bad) != 0 {
			t.Fatalf("clean build %d: want no warning or error, got:\n%s", i+1, testutil.Dump(bad))
		}
		run := stepOf(g, "cm-sys", "run-build-script-build-script-build")
		if run == nil {
			t.Fatal("no live build-script run of cm-sys")
		}
		// The premise of the leftover case: CMake installed cmk.h with its source's mtime, older than the
		// run's start, and the crate's dep-info names it (include_str!).
		hdr := filepath.Join(run.Script().OutDir, "include", "cmk.h")
		st, err := os.Stat(hdr)
		if err != nil || st.ModTime().UnixNano() >= run.Reference.MTimeNS {
			t.Fatalf("the premise fails: %s should be older than %s (%v)", hdr, run.Reference.Path, err)
		}
		if !strings.Contains(run.Script().Written[hdr], "CMake's install step") {
			t.Errorf("the run's records should show it installed %s: %q", hdr, run.Script().Written[hdr])
		}
		lib := filepath.Join(run.Script().OutDir, "lib", "libcmk.a")
		if run.Script().Written[lib] == "" {
			t.Errorf("the run's records should show it installed %s", lib)
		}
		cmake, cc := stepOf(g, "cmake", "lib-cmake"), stepOf(g, "cc", "lib-cc")
		if cmake == nil || cc == nil {
			t.Fatal("no live cmake or cc lib unit")
		}
		ccRlib, ccT := newest(cc)
		_, cmT := newest(cmake)
		t.Logf("build %d: cc's newest output %s at %s, cmake's newest output at %s (pipelined: %v)", i+1, filepath.Base(ccRlib), ccT, cmT, ccT.After(cmT))
	}

	// The pipelined state, placed for certain: cc's rlib newer than every output of cmake (which needs
	// only cc's rmeta) but older than the build script that links both. Cargo compares the rmeta.
	_, g := p.Check()
	cmake, cc := stepOf(g, "cmake", "lib-cmake"), stepOf(g, "cc", "lib-cc")
	_, cmT := newest(cmake)
	var bsT time.Time // the build-script executable, which links cmake and cc
	for _, e := range p.ScriptExes("debug", "cm-sys") {
		if st, err := os.Stat(e); err == nil {
			bsT = st.ModTime()
		}
	}
	var rlib string
	for _, o := range cc.Outputs {
		if strings.HasSuffix(o.Path, ".rlib") {
			rlib = o.Path
		}
	}
	at := cmT.Add(time.Microsecond)
	if rlib == "" || !at.Before(bsT) {
		t.Fatalf("cannot place cc's rlib between cmake (%s) and the build script (%s): %q", cmT, bsT, rlib)
	}
	if err := os.Chtimes(rlib, at, at); err != nil {
		t.Fatal(err)
	}
	cargoSaysFresh(t, p)
	fs, _ := p.Check()
	none(t, fs, "pending-rebuild")
	if bad := testutil.AtLeast(fs, check.Warning); len(bad) != 0 {
		t.Fatalf("pipelined state: want no warning or error, got:\n%s", testutil.Dump(bad))
	}

	// What Cargo does see: cc's rmeta newer than cmake's outputs. Both agree it is a rebuild.
	for _, o := range cc.Outputs {
		if strings.HasSuffix(o.Path, ".rmeta") {
			later := bsT.Add(time.Second)
			if err := os.Chtimes(o.Path, later, later); err != nil {
				t.Fatal(err)
			}
		}
	}
	fs, _ = p.Check()
	var hit bool
	for _, f := range testutil.Rule(fs, "pending-rebuild") {
		hit = hit || strings.Contains(f.Message, "of cmake (lib-cmake)") && strings.Contains(testutil.Dump([]check.Finding{f}), ".rmeta")
	}
	if !hit {
		t.Fatalf("want pending-rebuild of cmake against cc's .rmeta:\n%s", testutil.Dump(fs))
	}
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Compiling cmake") {
		t.Fatalf("the oracle disagrees: cargo did not rebuild cmake:\n%s", out)
	}

	// A real leftover is still one: the CMakeLists no longer installs the header, the run after it does
	// not list it, and the crate still reads the copy an earlier run installed.
	p.Edit("cm-sys/csrc/CMakeLists.txt", "install(FILES include/cmk.h DESTINATION include)\n", "")
	p.Cargo("build")
	fs, g = p.Check()
	f := one(t, fs, "out-dir-leftover")
	run := stepOf(g, "cm-sys", "run-build-script-build-script-build")
	if f.Subjects[0] != filepath.Join(run.Script().OutDir, "include", "cmk.h") || !strings.Contains(f.Message, "dep-info") {
		t.Fatalf("want the header no run installs any more:\n%s", testutil.Dump(fs))
	}
}

// CMake with Ninja: no depfile survives in OUT_DIR, and compile_commands.json holds the compile with
// -I csrc/include. An edit of the undeclared header is found by the include scan (Cargo says Fresh).
func TestCmakeNinjaCompileCommandsHeader(t *testing.T) {
	testutil.NeedDebianCrates(t)
	p := testutil.NewProject(t, testutil.CmakeNinjaWorkspace())
	p.Cargo("build")
	cargoSaysFresh(t, p)
	fs, g := p.Check()
	if bad := testutil.AtLeast(fs, check.Warning); len(bad) != 0 {
		t.Fatalf("healthy build: want no warning or error, got:\n%s", testutil.Dump(bad))
	}
	hdr := p.Path("cm-sys/csrc/include/cmk.h")
	in := runInput(g, "cm-sys", hdr)
	if in == nil || !in.Has(graph.IncludeScan) || !strings.Contains(includeDetail(in), "compile_commands.json") {
		t.Fatalf("want cmk.h known by an include scan of compile_commands.json, got %+v", in)
	}
	p.Edit("cm-sys/csrc/include/cmk.h", "42", "43")
	out := p.Cargo("build", "-v")
	if !strings.Contains(out, "Fresh cm-sys") {
		t.Fatalf("the premise fails: cargo rebuilt cm-sys:\n%s", out)
	}
	fs, _ = p.Check()
	f := one(t, fs, "untracked-input-changed")
	if f.Severity != check.Error || f.Subjects[0] != hdr || !strings.Contains(evidenceHow(f, "input"), "include-scan") {
		t.Fatalf("want an error naming cmk.h known by include-scan:\n%s", testutil.Dump(fs))
	}
}
