package clean_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/clean"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
	// fixtureOrphans are the entries (relative to target/) of the release default configuration, which
	// the later --features timing build orphans.
	fixtureOrphans []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range []string{fixtureDir, benchDir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// entries lists target/<prof>/{build,.fingerprint,deps}/* relative to target/.
func entries(target, prof string) map[string]bool {
	out := map[string]bool{}
	for _, sub := range []string{"build", ".fingerprint", "deps"} {
		ents, _ := os.ReadDir(filepath.Join(target, prof, sub))
		for _, e := range ents {
			out[filepath.Join(prof, sub, e.Name())] = true
		}
	}
	return out
}

// s02 returns a private copy (cp -a: hard links and mtimes kept, so Cargo finds it Fresh) of a
// workspace built as S02 does: release without and with the timing feature (the timing one is what
// target/release/app is now), plus a debug build and `cargo test --no-run`.
func s02(t *testing.T) *testutil.Project {
	t.Helper()
	need.RealBuild(t)
	fixtureOnce.Do(func() {
		fixtureDir, fixtureErr = os.MkdirTemp("", "stalecheck-clean-")
		if fixtureErr != nil {
			return
		}
		ft := &fixtureT{TB: t}
		p := &testutil.Project{T: ft, Dir: fixtureDir}
		for rel, c := range testutil.SysCrate("seed-sys", "groth16_cuda", map[string]string{"cuda/groth16.c": "int native_run(void) { return 1; }\n"},
			nil, []string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=cuda"}) {
			p.Write(rel, c)
		}
		for _, args := range [][]string{{"build", "--release"}, {"build"}, {"test", "--no-run"}} {
			if out, err := p.CargoErr(args...); err != nil {
				fixtureErr = fmt.Errorf("cargo %v: %v\n%s", args, err, out)
				return
			}
		}
		first := entries(filepath.Join(fixtureDir, "target"), "release")
		if out, err := p.CargoErr("build", "--release", "--features", "timing"); err != nil {
			fixtureErr = fmt.Errorf("cargo build --features timing: %v\n%s", err, out)
			return
		}
		for e := range first {
			fixtureOrphans = append(fixtureOrphans, e)
		}
		sort.Strings(fixtureOrphans)
	})
	if fixtureErr != nil {
		t.Fatalf("building the fixture: %v", fixtureErr)
	}
	dst := filepath.Join(t.TempDir(), "ws")
	if out, err := exec.Command("cp", "-a", fixtureDir, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return &testutil.Project{T: t, Dir: dst}
}

// fixtureT lets the once-built fixture use testutil without failing the first test's T later.
type fixtureT struct{ testing.TB }

func (f *fixtureT) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (f *fixtureT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func layout(t *testing.T, p *testutil.Project) *cargo.Layout {
	t.Helper()
	l, err := cargo.Locate(p.Dir, cargo.LocateOptions{Getenv: func(k string) string {
		if strings.HasPrefix(k, "CARGO_") {
			return ""
		}
		return os.Getenv(k)
	}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func runClean(t *testing.T, p *testutil.Project, req clean.Request) *clean.Plan {
	t.Helper()
	if req.Layout == nil {
		req.Layout = layout(t, p)
	}
	plan, err := clean.Run(req)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// rels returns the relative paths of the items with a status.
func rels(plan *clean.Plan, status string) []string {
	var out []string
	for _, it := range plan.Items {
		if it.Status == status {
			r, _ := it.RelPath()
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// assertFresh runs cargo with -v and fails unless every unit is Fresh.
func assertFresh(t *testing.T, p *testutil.Project, args ...string) {
	t.Helper()
	out := p.Cargo(append(args, "-v")...)
	if strings.Contains(out, "Compiling") || strings.Contains(out, "Dirty") || strings.Contains(out, "Running `") {
		t.Fatalf("cargo %s is not Fresh after the clean:\n%s", strings.Join(args, " "), out)
	}
	if !strings.Contains(out, "Fresh seed-sys") {
		t.Fatalf("cargo %s did not report seed-sys Fresh:\n%s", strings.Join(args, " "), out)
	}
}

func runBin(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}

// sentinel is a tree outside every target folder that must stay byte-for-byte unchanged.
type sentinel struct {
	Dir  string
	snap string
}

// newSentinel makes the tree (files, a nested folder, a symlink, and folders named like the units of
// the fixture so that a followed symlink would find something to delete) and checks it when the test ends.
func newSentinel(t *testing.T, unitNames ...string) *sentinel {
	t.Helper()
	s := &sentinel{Dir: filepath.Join(t.TempDir(), "sentinel")}
	files := map[string]string{
		"precious.txt":          "do not delete\n",
		"nested/deeper/data.c":  "int precious(void) { return 42; }\n",
		"out/libgroth16_cuda.a": "!<arch>\nnot really\n",
		"output":                "cargo:rustc-link-search=native=/nowhere\n",
	}
	for _, n := range unitNames {
		files[n+"/out/libgroth16_cuda.a"] = "!<arch>\nsentinel copy\n"
		files[n+"/output"] = "sentinel\n"
	}
	for rel, c := range files {
		p := filepath.Join(s.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("precious.txt", filepath.Join(s.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	s.snap = snapshot(t, s.Dir)
	t.Cleanup(func() {
		if got := snapshot(t, s.Dir); got != s.snap {
			t.Errorf("the sentinel tree outside the target folder changed:\nbefore:\n%s\nafter:\n%s", s.snap, got)
		}
	})
	return s
}

// snapshot describes every entry of a tree: path, mode, size, mtime, and content digest or link target.
func snapshot(t *testing.T, dir string) string {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "%s: error %v\n", p, err)
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		extra := ""
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			extra, _ = os.Readlink(p)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			extra = hex.EncodeToString(sum[:])
		}
		fmt.Fprintf(&b, "%q %v %d %d %s\n", strings.TrimPrefix(p, dir), info.Mode(), info.Size(), info.ModTime().UnixNano(), extra)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
