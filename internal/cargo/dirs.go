package cargo

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// The two build-dir layouts of cargo 1.95 (docs/cargo-new-layout.md): the legacy one (the default:
// `<prof>/.fingerprint/<pkg>-<hash>/`, `<prof>/build/<pkg>-<hash>/`, `<prof>/deps/`) and the new one
// (`-Zbuild-dir-new-layout`, to become the default: `<prof>/build/<pkg>/<hash>/{fingerprint,out,run}`,
// no `.fingerprint/` or `deps/`). Which one a profile folder holds is read from disk, per profile
// folder; a folder can hold both (a build with the flag on a folder built without it), and then each
// unit is read in the layout its records are in (unit.PathsOf).

// ProfileLayouts reports which layouts the profile folder prof (relative to buildDir) holds records
// in: legacy when it has a `.fingerprint` folder, newLayout when `build/` holds a unit folder
// `<pkg>/<16 hex>/` with a `fingerprint`, `run` or `out` folder. Symlinks are never followed.
func ProfileLayouts(buildDir, prof string) (legacy, newLayout bool) {
	dir := filepath.Join(buildDir, prof)
	return isRealDir(filepath.Join(dir, ".fingerprint")), len(newLayoutUnits(dir, 1)) > 0
}

// unitFolder is one `build/<pkg>/<hash>` folder of the new layout.
type unitFolder struct {
	pkg, hash, path string
}

// newLayoutUnits lists the new-layout unit folders of a profile folder (absolute), sorted; at most max
// of them when max > 0. A folder counts when its name is 16 lowercase hex digits, it lies in a package
// folder under build/ whose name is not a legacy `<pkg>-<hash>` folder, and it holds a `fingerprint`,
// `run` or `out` folder (Cargo creates `out/` for every unit, `fingerprint/` once it records one), or
// anything named `fingerprint` (which reading then names as a record that is not a folder).
func newLayoutUnits(profDir string, max int) []unitFolder {
	root := filepath.Join(profDir, "build")
	pkgs, err := fsrec.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []unitFolder
	for _, p := range pkgs {
		if !p.IsDir() {
			continue
		}
		if _, _, legacy := SplitUnitName(p.Name()); legacy {
			continue
		}
		hashes, err := fsrec.ReadDir(filepath.Join(root, p.Name()))
		if err != nil {
			continue
		}
		for _, h := range hashes {
			if !h.IsDir() || !unit.IsHash(h.Name()) {
				continue
			}
			u := filepath.Join(root, p.Name(), h.Name())
			if _, err := fsrec.Lstat(filepath.Join(u, "fingerprint")); err != nil && !isRealDir(filepath.Join(u, "run")) && !isRealDir(filepath.Join(u, "out")) {
				continue
			}
			out = append(out, unitFolder{pkg: p.Name(), hash: h.Name(), path: u})
			if max > 0 && len(out) >= max {
				return out
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// fingerprintFolder is one unit's fingerprint folder, in either layout.
type fingerprintFolder struct {
	pkg, hash string
	dir       string // absolute
	newLayout bool
	isDir     bool // false: something else stands in its place (legacy layout: a file or symlink)
	mode      os.FileMode
}

// fingerprintFolders lists the fingerprint folders of a profile folder in the layouts it holds: the
// entries of `.fingerprint/` named `<pkg>-<hash>` (legacy) and `build/<pkg>/<hash>/fingerprint`
// (new). The error is that of reading `.fingerprint/` when the profile has no new-layout unit either.
func fingerprintFolders(buildDir, prof string) ([]fingerprintFolder, string, error) {
	dir := filepath.Join(buildDir, prof)
	var out []fingerprintFolder
	legacyRoot := filepath.Join(dir, ".fingerprint")
	ents, legacyErr := fsrec.ReadDir(legacyRoot)
	out = make([]fingerprintFolder, 0, len(ents))
	for _, e := range ents {
		pkg, hash, ok := SplitUnitName(e.Name())
		if !ok {
			continue
		}
		out = append(out, fingerprintFolder{pkg: pkg, hash: hash, dir: filepath.Join(legacyRoot, e.Name()), isDir: e.IsDir(), mode: e.Type()})
	}
	news := newLayoutUnits(dir, 0)
	for _, u := range news {
		fp := filepath.Join(u.path, "fingerprint")
		st, err := fsrec.Lstat(fp)
		if err != nil {
			// Cargo creates out/ for units it never records (a doctest's), and a unit folder whose
			// fingerprint is gone holds nothing to read.
			continue
		}
		out = append(out, fingerprintFolder{pkg: u.pkg, hash: u.hash, dir: fp, newLayout: true, isDir: st.IsDir(), mode: st.Mode().Type()})
	}
	if legacyErr != nil && len(news) > 0 && os.IsNotExist(legacyErr) {
		legacyErr = nil
	}
	return out, legacyRoot, legacyErr
}

// isRecordPath reports whether path lies in a unit's records of profile folder prof (absolute
// buildDir): under `.fingerprint/` (legacy) or a `build/<pkg>/<hash>/fingerprint` folder (new), or is
// a new-layout package or unit folder itself (reading it failed, so its records are unknown).
func isRecordPath(buildDir, prof, path string) bool {
	sep := string(filepath.Separator)
	base := filepath.Join(buildDir, prof)
	fp := filepath.Join(base, ".fingerprint")
	if path == fp || strings.HasPrefix(path, fp+sep) {
		return true
	}
	rel, err := filepath.Rel(filepath.Join(base, "build"), path)
	if err != nil || !filepath.IsLocal(rel) {
		return false
	}
	parts := strings.Split(rel, sep)
	if _, _, legacy := SplitUnitName(parts[0]); legacy {
		return false
	}
	if len(parts) >= 2 && !unit.IsHash(parts[1]) {
		return false
	}
	return len(parts) <= 2 || parts[2] == "fingerprint"
}

// newLayoutArtifacts adds to a profile's listing the files rustc wrote into the out/ folder of each
// new-layout compile unit (bins, rlibs, test binaries and their .d files; a build-script unit's out/
// is its executable or OUT_DIR, never a rustc artifact of the crate), keyed by the unit's hash.
func (r *reader) newLayoutArtifacts(prof string, d *depsDir) {
	for _, s := range r.g.Steps {
		if s.ProfileDir != prof || s.Kind != graph.Compile {
			continue
		}
		if !unit.IsNew(s) {
			continue
		}
		p := unit.PathsOf(r.l.BuildDir, s)
		h := unitKey(s)
		if _, done := d.byHash[h]; done {
			continue
		}
		ents, err := fsrec.ReadDir(p.Artifacts)
		if err != nil {
			continue
		}
		d.byHash[h] = []string{}
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			f := filepath.Join(p.Artifacts, e.Name())
			d.byHash[h] = append(d.byHash[h], f)
		}
	}
}

// newLayoutBuildDirs returns the new-layout unit folders of a profile that are what the legacy
// layout keeps under build/: those of build-script compiles and runs (byKey: unit folder → its
// non-rustc steps), and folders no fingerprint names that hold a run/ folder or a build-script
// executable (a run or compile whose records are gone). A rustc unit's folder (the legacy
// `.fingerprint/` and `deps/` entries together) is not one, nor a folder holding nothing but an empty
// out/ (Cargo creates one for units it never records, e.g. a doctest's).
func (r *reader) newLayoutBuildDirs(prof string, byKey map[string][]*graph.Step) []*graph.BuildDir {
	var out []*graph.BuildDir
	compiled := map[string]bool{}
	for _, s := range r.g.Steps {
		if s.ProfileDir == prof && s.Kind == graph.Compile && unit.IsNew(s) {
			compiled[unit.PathsOf(r.l.BuildDir, s).Folder] = true
		}
	}
	for _, u := range newLayoutUnits(filepath.Join(r.l.BuildDir, prof), 0) {
		steps := byKey[u.path]
		if len(steps) == 0 && (compiled[u.path] || !looksLikeScriptFolder(u.path)) {
			continue
		}
		out = append(out, &graph.BuildDir{Path: u.path, ProfileDir: prof, Package: u.pkg, Hash: u.hash, Steps: steps})
	}
	return out
}

// looksLikeScriptFolder reports whether a new-layout unit folder holds a build-script run's records
// (run/) or a compiled build script (out/build-script-*).
func looksLikeScriptFolder(dir string) bool {
	if isRealDir(filepath.Join(dir, "run")) {
		return true
	}
	m, _ := fsrec.Glob(filepath.Join(dir, "out", "build-script-*"))
	return len(m) > 0
}

// UnitArtifacts returns the files rustc wrote for a new-layout unit (its `build/<pkg>/<hash>/out/`
// folder, absolute paths, sorted) and true; for a unit in the legacy layout it returns nil and false
// (its files are the `deps/` entries whose names carry its hash).
func UnitArtifacts(buildDir string, s *graph.Step) ([]string, bool) {
	p := unit.PathsOf(buildDir, s)
	if !p.New {
		return nil, false
	}
	ents, err := fsrec.ReadDir(p.Artifacts)
	if err != nil {
		return nil, true
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			out = append(out, filepath.Join(p.Artifacts, e.Name()))
		}
	}
	return out, true
}

// unitKey keys a unit's files in a profile's depsDir: its hash, prefixed for a new-layout unit, so that a
// profile folder holding both layouts (which can carry the same hashes) keeps each unit's files apart.
func unitKey(s *graph.Step) string {
	if unit.IsNewLayoutRecord(unit.Of(s).FingerprintDir) {
		return "new:" + unit.Of(s).Hash
	}
	return unit.Of(s).Hash
}

// sameLayout keeps the candidates in the layout of s when some are and others are not (a profile
// folder holding both layouts: Cargo reads only the records of the layout it builds in).
func sameLayout(s *graph.Step, cands []*graph.Step) []*graph.Step {
	if len(cands) < 2 {
		return cands
	}
	want := unit.IsNewLayoutRecord(unit.Of(s).FingerprintDir)
	var out []*graph.Step
	for _, c := range cands {
		if unit.IsNewLayoutRecord(unit.Of(c).FingerprintDir) == want {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return cands
	}
	return out
}
