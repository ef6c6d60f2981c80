package testutil

import (
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
)

// CargoLayoutEnv is the environment variable that makes every Project build in Cargo's new build-dir
// layout: STALECHECK_TEST_CARGO_LAYOUT=new runs `RUSTC_BOOTSTRAP=1 cargo -Zbuild-dir-new-layout …`
// (cargo 1.95; docs/cargo-new-layout.md); unset or anything else, cargo 1.95's default (legacy) layout.
const CargoLayoutEnv = "STALECHECK_TEST_CARGO_LAYOUT"

// newLayoutDefault is what NewProject gives Project.NewLayout.
var newLayoutDefault = os.Getenv(CargoLayoutEnv) == "new"

// InNewLayout runs f with every Project that NewProject makes meanwhile building in the new layout. It
// sets a package-wide default, so it is not for tests that run in parallel.
func InNewLayout(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	old := newLayoutDefault
	newLayoutDefault = true
	defer func() { newLayoutDefault = old }()
	f(t)
}

// BothLayouts runs f as two subtests, "legacy" and "new", building in each layout.
func BothLayouts(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	t.Run("legacy", func(t *testing.T) {
		old := newLayoutDefault
		newLayoutDefault = false
		defer func() { newLayoutDefault = old }()
		f(t)
	})
	t.Run("new", func(t *testing.T) { InNewLayout(t, f) })
}

// newLayoutRuns counts the cargo commands run in the new layout (NewLayoutRuns).
var newLayoutRuns atomic.Int64

// NewLayoutRuns returns how many cargo commands Projects have run in the new layout so far: a test
// that means to exercise it can check that it did.
func NewLayoutRuns() int64 { return newLayoutRuns.Load() }

// cargoArgs returns the command line Project.CargoErr runs and the environment it adds for the layout.
func (p *Project) cargoArgs(args []string) ([]string, []string) {
	if !p.NewLayout {
		return args, nil
	}
	newLayoutRuns.Add(1)
	return append([]string{"-Zbuild-dir-new-layout"}, args...), []string{"RUSTC_BOOTSTRAP=1"}
}

// RunDirs returns the build-script run folders of package pkg in profile folder prof ("release",
// "x86_64-unknown-linux-gnu/debug") of the project's target folder that hold the script's stdout, in
// either layout: `build/<pkg>-<hash>` with `output` (legacy), `build/<pkg>/<hash>/run` with `stdout`
// (new). Sorted.
func (p *Project) RunDirs(prof, pkg string) []string {
	base := p.Path(filepath.Join("target", prof, "build"))
	legacy, _ := filepath.Glob(filepath.Join(base, pkg+"-*", "output"))
	fresh, _ := filepath.Glob(filepath.Join(base, pkg, "*", "run", "stdout"))
	var out []string
	for _, m := range append(legacy, fresh...) {
		out = append(out, filepath.Dir(m))
	}
	sort.Strings(out)
	return out
}

// StdoutFile returns the file holding a build script's stdout in a run folder (as RunDirs and
// graph.Step.RunDir give it): `run/stdout` in the new layout, `output` in the legacy one.
func StdoutFile(runDir string) string {
	if filepath.Base(runDir) == "run" {
		return filepath.Join(runDir, "stdout")
	}
	return filepath.Join(runDir, "output")
}

// OutDirOf returns the OUT_DIR of a run folder: `<unit>/out` beside `run/` in the new layout,
// `<run>/out` in the legacy one.
func OutDirOf(runDir string) string {
	if filepath.Base(runDir) == "run" {
		return filepath.Join(filepath.Dir(runDir), "out")
	}
	return filepath.Join(runDir, "out")
}
