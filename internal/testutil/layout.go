package testutil

import (
	"os"
	"path/filepath"
	"regexp"
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
// graph.Step.Script().RunDir give it): `run/stdout` in the new layout, `output` in the legacy one.
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

// OutDirs returns the OUT_DIRs of package pkg's build-script runs in profile folder prof, in either
// layout: OutDirOf of each of RunDirs (`build/<pkg>-<hash>/out`, `build/<pkg>/<hash>/out`). Sorted.
func (p *Project) OutDirs(prof, pkg string) []string {
	var out []string
	for _, r := range p.RunDirs(prof, pkg) {
		out = append(out, OutDirOf(r))
	}
	sort.Strings(out)
	return out
}

// OutFiles returns the files matching the glob pattern (a file name, filepath.Match syntax) in the
// OUT_DIRs of package pkg's build-script runs in profile folder prof (OutDirs), in either layout. Sorted.
func (p *Project) OutFiles(prof, pkg, pattern string) []string {
	var out []string
	for _, d := range p.OutDirs(prof, pkg) {
		m, _ := filepath.Glob(filepath.Join(d, pattern))
		out = append(out, m...)
	}
	sort.Strings(out)
	return out
}

// UnitFiles returns rustc's output files of package pkg in profile folder prof that match the glob
// pattern (a file name: "libseed_sys-*.rlib"), in either layout: `<prof>/deps/<pattern>` (legacy:
// one folder for all packages, so the pattern alone selects) and `<prof>/build/<pkg>/<hash>/out/<pattern>`
// (new). Sorted.
func (p *Project) UnitFiles(prof, pkg, pattern string) []string {
	base := p.Path(filepath.Join("target", prof))
	legacy, _ := filepath.Glob(filepath.Join(base, "deps", pattern))
	fresh, _ := filepath.Glob(filepath.Join(base, "build", pkg, "*", "out", pattern))
	out := append(legacy, fresh...)
	sort.Strings(out)
	return out
}

// ScriptExes returns the compiled build-script executables of package pkg in profile folder prof (the
// hashed `build_script_build-<hash>` file, not its `.d`), in either layout: `build/<pkg>-<hash>/`
// (legacy), `build/<pkg>/<hash>/out/` (new). Sorted.
func (p *Project) ScriptExes(prof, pkg string) []string {
	base := p.Path(filepath.Join("target", prof, "build"))
	legacy, _ := filepath.Glob(filepath.Join(base, pkg+"-*", "build_script_*-*"))
	fresh, _ := filepath.Glob(filepath.Join(base, pkg, "*", "out", "build_script_*-*"))
	var out []string
	for _, m := range append(legacy, fresh...) {
		if filepath.Ext(m) != ".d" {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// FingerprintDirRe matches a path inside a fingerprint folder of a unit of package pkg in profile
// folder prof (a path fragment such as "debug" or "release"), in either layout:
// `<prof>/.fingerprint/<pkg>-<hash>/` (legacy), `<prof>/build/<pkg>/<hash>/fingerprint/` (new).
func FingerprintDirRe(prof, pkg string) *regexp.Regexp {
	q, pk := regexp.QuoteMeta(prof), regexp.QuoteMeta(pkg)
	return regexp.MustCompile(`/` + q + `/(\.fingerprint/` + pk + `-[0-9a-f]{16}|build/` + pk + `/[0-9a-f]{16}/fingerprint)/`)
}

// StdoutRe matches the file holding the stdout of a build-script run of package pkg in profile folder
// prof, in either layout: `<prof>/build/<pkg>-<hash>/output` (legacy), `<prof>/build/<pkg>/<hash>/run/stdout`
// (new).
func StdoutRe(prof, pkg string) *regexp.Regexp {
	q, pk := regexp.QuoteMeta(prof), regexp.QuoteMeta(pkg)
	return regexp.MustCompile(`/` + q + `/build/(` + pk + `-[0-9a-f]{16}/output|` + pk + `/[0-9a-f]{16}/run/stdout)$`)
}

// CargoCommand returns the command line (starting with "cargo") and the extra environment that run
// `cargo ARGS…` in the project's layout, as CargoErr runs it: for a test that runs cargo itself (under
// `stalecheck trace`, say). The environment is what the layout needs (RUSTC_BOOTSTRAP=1 in the new one);
// nil in the legacy one.
func (p *Project) CargoCommand(args ...string) (argv, env []string) {
	a, e := p.cargoArgs(append([]string(nil), args...))
	return append([]string{"cargo"}, a...), e
}

// FingerprintFiles returns the files named name (a glob pattern: "lib-seed_sys.json") in the
// fingerprint folders of package pkg's units in profile folder prof, in either layout:
// `<prof>/.fingerprint/<pkg>-<hash>/` (legacy), `<prof>/build/<pkg>/<hash>/fingerprint/` (new). Sorted.
func (p *Project) FingerprintFiles(prof, pkg, name string) []string {
	base := p.Path(filepath.Join("target", prof))
	legacy, _ := filepath.Glob(filepath.Join(base, ".fingerprint", pkg+"-*", name))
	fresh, _ := filepath.Glob(filepath.Join(base, "build", pkg, "*", "fingerprint", name))
	out := append(legacy, fresh...)
	sort.Strings(out)
	return out
}

// ProjectAt returns a Project for the workspace in dir (created by the caller or by its writes), building
// in the layout NewProject would give (CargoLayoutEnv, InNewLayout): for a test that needs the
// workspace at a path of its own choosing.
func ProjectAt(t testing.TB, dir string) *Project {
	return &Project{T: t, Dir: dir, NewLayout: newLayoutDefault}
}
