package check_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/content"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// ccSysProject is the reproductions' workspace (testutil.CCSys).
func ccSysProject(t *testing.T) *testutil.Project {
	t.Helper()
	return testutil.NewProject(t, testutil.CCSys(t))
}

// cargoSays returns the Fresh/Dirty lines `cargo build -v` prints for the workspace packages (the build
// runs, so call it only where the test is done with the state it judges).
func cargoSays(t *testing.T, p *testutil.Project, args ...string) string {
	t.Helper()
	out := p.Cargo(append([]string{"build", "-v"}, args...)...)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if (strings.HasPrefix(l, "Fresh ") || strings.HasPrefix(l, "Dirty ")) && (strings.Contains(l, "fastmath-sys v") || strings.Contains(l, "app v")) {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func touchLater(t *testing.T, path string) {
	t.Helper()
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}

// Repro 07: `touch` of the live OUT_DIR archive, content unchanged. Cargo says Fresh; the binary and the
// rlib hold its content, so binary-older-than-input is info for both, proven by content. An archive
// really rewritten with other content stays an error that says so; with --no-native it stays an error
// that says why it could not be cleared.
func TestTouchedArchiveIsNotStale(t *testing.T) {
	p := ccSysProject(t)
	p.Cargo("build", "--release")
	fs, _ := p.Check()
	none(t, fs, "binary-older-than-input")
	lib := filepath.Join(testutil.OutDirOf(runDirs(t, p, "release", "fastmath-sys")[0]), "libx.a")
	app, rlib := p.Path("target/release/app"), p.Path("target/release/libfastmath_sys.rlib")

	touchLater(t, lib)
	fs, g := p.Check()
	noErrors(t, fs)
	older := testutil.Rule(fs, "binary-older-than-input")
	seen := map[string]bool{}
	for _, f := range older {
		if f.Severity != check.Info || f.Subjects[1] != lib || !strings.Contains(f.Message, "by content it holds what that library now contains") ||
			evidenceHow(f, "record") != "content-holds" {
			t.Errorf("want info proven by content, got %s", testutil.Dump([]check.Finding{f}))
		}
		seen[f.Subjects[0]] = true
	}
	if !seen[app] || !seen[rlib] || len(older) != 2 {
		t.Fatalf("want binary-older-than-input info for %s and %s:\n%s", app, rlib, testutil.Dump(fs))
	}

	// --no-native: nothing is opened, so the error stays and says why.
	g.Holdings = nil
	content.Annotate(g, content.Options{SkipNative: true})
	nn := testutil.Rule(check.Run(g, check.Options{}), "binary-older-than-input")
	if len(nn) != 2 || nn[0].Severity != check.Error || !strings.Contains(nn[0].Message, "--no-native") {
		t.Fatalf("want 2 errors naming --no-native:\n%s", testutil.Dump(nn))
	}

	if says := cargoSays(t, p, "--release"); strings.Contains(says, "Dirty") || !strings.Contains(says, "Fresh fastmath-sys") {
		t.Fatalf("premise: cargo should call the touched archive fresh:\n%s", says)
	}

	// The archive rewritten with other code (the FASTMATH_FAST variant) after the link: stale.
	out := filepath.Dir(lib)
	obj := filepath.Join(t.TempDir(), "x.o")
	for _, c := range [][]string{
		{"cc", "-c", "-O2", "-fPIC", "-ffunction-sections", "-fdata-sections", "-DFASTMATH_FAST", "-I", p.Path("fastmath-sys/native/include"), p.Path("fastmath-sys/native/x.c"), "-o", obj},
		{"ar", "crs", filepath.Join(out, "libx.a.new"), obj},
		{"mv", filepath.Join(out, "libx.a.new"), lib},
	} {
		if b, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, b)
		}
	}
	touchLater(t, lib)
	fs, _ = p.Check()
	older = testutil.Rule(fs, "binary-older-than-input")
	seen = map[string]bool{}
	for _, f := range older {
		if f.Severity == check.Error && evidenceHow(f, "record") == "content-differs" && strings.Contains(f.Message, "by content it holds other code") {
			seen[f.Subjects[0]] = true
		}
	}
	if !seen[app] || !seen[rlib] {
		t.Fatalf("want binary-older-than-input errors proven by content for %s and %s:\n%s", app, rlib, testutil.Dump(older))
	}
}

// `touch` of a declared input after a checked build: Cargo will rerun the build script (Dirty), which
// pending-rebuild still reports for that unit, but the content equals the baseline recorded while the
// file was what the run used, so it is info and no error names the binary. Without a baseline (no check
// since the build) it stays an error that says the content was not compared.
func TestTouchedDeclaredInputSameContent(t *testing.T) {
	p := ccSysProject(t)
	p.StateDir = t.TempDir()
	p.Cargo("build", "--release")
	fs, _ := p.Check() // records the baselines
	noErrors(t, fs)
	src := p.Path("fastmath-sys/native/x.c")
	run := runDirs(t, p, "release", "fastmath-sys")[0]
	touchLater(t, src)

	fs, _ = p.Check()
	noErrors(t, fs)
	f := one(t, fs, "pending-rebuild")
	if f.Severity != check.Info || !testutil.HasSubject(f, src) || !testutil.HasSubject(f, run) ||
		!strings.Contains(f.Message, "because the mtime of fastmath-sys/native/x.c changed") || !strings.Contains(f.Message, "the binary is not stale") {
		t.Fatalf("want pending-rebuild info for %s:\n%s", src, testutil.Dump(fs))
	}

	// A fresh state folder: no baseline, so the mtime decides and the unknown is said.
	p.StateDir = t.TempDir()
	fs, _ = p.Check()
	f = one(t, fs, "pending-rebuild")
	if f.Severity != check.Error || evidenceHow(f, "record") != "content-unknown" {
		t.Fatalf("want pending-rebuild error with content-unknown evidence:\n%s", testutil.Dump(fs))
	}

	if says := cargoSays(t, p, "--release"); !strings.Contains(says, "Dirty fastmath-sys") {
		t.Fatalf("premise: cargo should rerun the build script after the touch:\n%s", says)
	}
}

// Older content restored with an older mtime (`cp -p` of a saved copy) after a checked build of newer
// content: Cargo says Fresh (the mtime is older than the run), the binary holds the newer code, so it is
// stale: changed-with-older-mtime, an error naming the binary. Without a baseline a graph note says the
// content is unknown.
func TestRestoredOlderContentIsStale(t *testing.T) {
	p := ccSysProject(t)
	p.StateDir = t.TempDir()
	src := p.Path("fastmath-sys/native/x.c")
	saved := filepath.Join(t.TempDir(), "x.c")
	p.Cargo("build", "--release")
	if b, err := exec.Command("cp", "-p", src, saved).CombinedOutput(); err != nil {
		t.Fatalf("cp -p: %v\n%s", err, b)
	}
	time.Sleep(20 * time.Millisecond)
	p.Edit("fastmath-sys/native/x.c", "return v * X_SCALE;", "return v * X_SCALE + 1;")
	p.Cargo("build", "--release")
	if got := runBin(t, p.Path("target/release/app")); !strings.Contains(got, "-> 22") {
		t.Fatalf("premise: the new build computes 7*3+1: %q", got)
	}
	fs, _ := p.Check() // records the baselines of the new run
	noErrors(t, fs)
	time.Sleep(20 * time.Millisecond) // the restore's ctime lands after the run
	if b, err := exec.Command("cp", "-p", saved, src).CombinedOutput(); err != nil {
		t.Fatalf("cp -p: %v\n%s", err, b)
	}

	fs, _ = p.Check()
	f := one(t, fs, "changed-with-older-mtime")
	if f.Severity != check.Error || f.Subjects[0] != src || !containsRoot(f, p.Path("target/release/app")) ||
		!strings.Contains(f.Message, "its mtime was set back") || evidenceHow(f, "record") != "content-baseline" {
		t.Fatalf("want changed-with-older-mtime error for %s:\n%s", src, testutil.Dump(fs))
	}
	none(t, fs, "pending-rebuild")

	// Without a baseline nothing can be claimed: no finding, and a note says what is unknown.
	p.StateDir = t.TempDir()
	fs, g := p.Check()
	noErrors(t, fs)
	none(t, fs, "changed-with-older-mtime")
	var noted bool
	for _, n := range g.Notes {
		noted = noted || strings.Contains(n, "no content baseline") && strings.Contains(n, "fastmath-sys/native/x.c")
	}
	if !noted {
		t.Fatalf("want a note that the content of x.c is unknown; notes: %q", g.Notes)
	}

	if says := cargoSays(t, p, "--release"); strings.Contains(says, "Dirty") {
		t.Fatalf("premise: cargo should call the restored file fresh:\n%s", says)
	}
}

func containsRoot(f check.Finding, root string) bool {
	for _, r := range f.Roots {
		if r == root {
			return true
		}
	}
	return false
}
