package unit

import (
	"path/filepath"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// Paths are the folders and files of one Cargo unit in a build folder, in the layout its records are
// in (docs/cargo-new-layout.md; cargo 1.95, layout.rs and compilation_files.rs at rust-lang/cargo
// f2d3ce0bd). All paths are absolute (joined to the build folder given).
//
//	                 legacy layout (1.95 default)          new layout (-Zbuild-dir-new-layout)
//	Fingerprint      <prof>/.fingerprint/<pkg>-<hash>      <prof>/build/<pkg>/<hash>/fingerprint
//	Unit             ""                                    <prof>/build/<pkg>/<hash>
//	Folder           <prof>/build/<pkg>-<hash>             <prof>/build/<pkg>/<hash>
//	Run              <prof>/build/<pkg>-<hash>             <prof>/build/<pkg>/<hash>/run
//	Out (OUT_DIR)    <prof>/build/<pkg>-<hash>/out         <prof>/build/<pkg>/<hash>/out
//	Stdout           <Run>/output                          <Run>/stdout
//	Artifacts        <prof>/deps (shared by all units)     <prof>/build/<pkg>/<hash>/out
//	ScriptArtifacts  <prof>/build/<pkg>-<hash>             <prof>/build/<pkg>/<hash>/out
//
// Run holds `invoked.timestamp`, `root-output` and `stderr` in both layouts. Folder is what
// graph.BuildDir lists for a build-script unit (and what a clean removes with it).
type Paths struct {
	New             bool   // the unit's records are in the new layout
	Fingerprint     string // the folder of the hash file, its JSON, dep-info and invoked.timestamp
	Unit            string // the unit's own folder (new layout only; "" in the legacy one)
	Folder          string // the unit's folder under build/
	Run             string // a build-script run's records
	Out             string // a build-script run's OUT_DIR
	Stdout          string // the script's stdout, whose mtime is the run's reference (`output` or `stdout`)
	Artifacts       string // where rustc writes a compile unit's files (legacy: deps/, shared; names carry the hash)
	ScriptArtifacts string // where rustc writes a build-script compile's executable and .d
}

// LayoutPaths returns the paths of the unit <pkg>/<hash> of profile folder prof (relative to buildDir,
// e.g. "debug" or "x86_64-unknown-linux-gnu/release") in the layout newLayout names.
func LayoutPaths(buildDir, prof, pkg, hash string, newLayout bool) Paths {
	base := filepath.Join(buildDir, prof)
	if newLayout {
		u := filepath.Join(base, "build", pkg, hash)
		return Paths{New: true, Fingerprint: filepath.Join(u, "fingerprint"), Unit: u, Folder: u,
			Run: filepath.Join(u, "run"), Out: filepath.Join(u, "out"), Stdout: filepath.Join(u, "run", "stdout"),
			Artifacts: filepath.Join(u, "out"), ScriptArtifacts: filepath.Join(u, "out")}
	}
	d := filepath.Join(base, "build", pkg+"-"+hash)
	return Paths{Fingerprint: filepath.Join(base, ".fingerprint", pkg+"-"+hash), Folder: d, Run: d,
		Out: filepath.Join(d, "out"), Stdout: filepath.Join(d, "output"), Artifacts: filepath.Join(base, "deps"),
		ScriptArtifacts: d}
}

// IsNewLayoutRecord reports whether a unit's fingerprint folder (Unit.FingerprintDir) is in the new
// layout: `…/build/<pkg>/<hash>/fingerprint` rather than `…/.fingerprint/<pkg>-<hash>`. It reads the
// path the reader found the records at, never guesses.
func IsNewLayoutRecord(fingerprintDir string) bool {
	return filepath.Base(fingerprintDir) == "fingerprint" &&
		filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(fingerprintDir)))) == "build"
}

// PathsOf returns the paths of a Cargo step's unit in the layout its records were found in (an empty
// Paths for a step of another system).
func PathsOf(buildDir string, s *graph.Step) Paths {
	u := Of(s)
	if s == nil || u.Hash == "" {
		return Paths{}
	}
	return LayoutPaths(buildDir, s.ProfileDir, s.Package, u.Hash, IsNewLayoutRecord(u.FingerprintDir))
}

// IsHash reports whether s is a unit hash as Cargo writes it in folder names: 16 lowercase hex digits.
func IsHash(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
