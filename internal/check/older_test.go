package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A library whose mtime is newer than the binary (touched, here with the same content): the binary is
// older than what it links, but by content it holds it, so that is info, not an error (repro 07; the
// content-changed case is TestTouchedArchiveIsNotStale). A dependency's rlib newer than the binary is an
// error: Rust libraries are not compared by content.
func TestBinaryOlderThanInput(t *testing.T) {
	p := testutil.NewProject(t, testutil.SysCrate("seed-sys", "groth16_cuda",
		map[string]string{"cuda/groth16.c": groth16V1}, nil, []string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=cuda"}))
	p.Cargo("build", "--release")
	fs, _ := p.Check()
	none(t, fs, "binary-older-than-input")

	lib := filepath.Join(testutil.OutDirOf(runDirs(t, p, "release", "seed-sys")[0]), "libgroth16_cuda.a")
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(lib, later, later); err != nil {
		t.Fatal(err)
	}
	fs, _ = p.Check()
	var named bool
	for _, f := range testutil.Rule(fs, "binary-older-than-input") {
		if f.Severity == check.Info && f.Subjects[0] == p.Path("target/release/app") && f.Subjects[1] == lib &&
			strings.Contains(f.Message, msgTime(t, lib)) && strings.Contains(f.Message, msgTime(t, p.Path("target/release/app"))) {
			named = true
		}
	}
	if !named {
		t.Fatalf("want binary-older-than-input for app vs %s:\n%s", lib, testutil.Dump(fs))
	}

	// An rlib newer than the binary: Cargo relinks on the next build.
	os.Chtimes(lib, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	rlibs := p.UnitFiles("release", "seed-sys", "libseed_sys-*.rlib")
	if len(rlibs) == 0 {
		t.Fatal("the premise fails: no libseed_sys rlib in either layout")
	}
	for _, r := range rlibs {
		os.Chtimes(r, later, later)
	}
	fs, _ = p.Check()
	if len(testutil.AtLeast(testutil.Rule(fs, "binary-older-than-input"), check.Error)) == 0 || len(testutil.Rule(fs, "pending-rebuild")) == 0 {
		t.Fatalf("want binary-older-than-input and pending-rebuild for the newer rlib:\n%s", testutil.Dump(fs))
	}

	p.Write("seed-sys/build.rs", mustRead(t, p.Path("seed-sys/build.rs")))
	p.Cargo("build", "--release")
	fs, _ = p.Check()
	none(t, fs, "binary-older-than-input")
	noErrors(t, fs)
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// After a feature toggle, the other configuration's run and compile folders are orphaned (info, with bytes);
// the live ones are not.
func TestOrphanedBuildDir(t *testing.T) {
	p := testutil.NewProject(t, testutil.SysCrate("seed-sys", "groth16_cuda",
		map[string]string{"cuda/groth16.c": groth16V1}, nil, []string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=cuda"}))
	p.Cargo("build", "--release", "--features", "timing")
	fs, g := p.Check()
	none(t, fs, "orphaned-build-dir")
	timingDirs := map[string]bool{}
	for _, d := range g.BuildDirs {
		timingDirs[d.Path] = true
	}
	p.Cargo("build", "--release")
	fs, g = p.Check()
	got := testutil.Rule(fs, "orphaned-build-dir")
	if len(got) != 2 {
		t.Fatalf("want the timing run and compile folders orphaned, got:\n%s", testutil.Dump(fs))
	}
	for _, f := range got {
		if !timingDirs[f.Subjects[0]] || f.Severity != check.Info || f.Evidence[0].Size <= 0 || !strings.Contains(f.Message, `features ["timing"]`) {
			t.Errorf("unexpected orphan finding:\n%s", testutil.Dump([]check.Finding{f}))
		}
	}
	for _, d := range g.BuildDirs {
		if !timingDirs[d.Path] {
			for _, f := range got {
				if f.Subjects[0] == d.Path {
					t.Errorf("live folder %s reported orphaned", d.Path)
				}
			}
		}
	}
}
