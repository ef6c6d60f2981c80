package unit

import (
	"path/filepath"
	"strings"

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
	if plainName(pkg) && plainName(hash) && base != "" && base != "." && base[len(base)-1] != filepath.Separator {
		// Joined by hand: base is clean and neither name holds a separator or is a dot name, so
		// filepath.Join would give the same strings, at a cost a large tree pays tens of thousands
		// of times per read.
		const sep = string(filepath.Separator)
		if newLayout {
			u := base + sep + "build" + sep + pkg + sep + hash
			out, run := u+sep+"out", u+sep+"run"
			return Paths{New: true, Fingerprint: u + sep + "fingerprint", Unit: u, Folder: u, Run: run, Out: out,
				Stdout: run + sep + "stdout", Artifacts: out, ScriptArtifacts: out}
		}
		d := base + sep + "build" + sep + pkg + "-" + hash
		return Paths{Fingerprint: base + sep + ".fingerprint" + sep + pkg + "-" + hash, Folder: d, Run: d,
			Out: d + sep + "out", Stdout: d + sep + "output", Artifacts: base + sep + "deps", ScriptArtifacts: d}
	}
	return joinedPaths(base, pkg, hash, newLayout)
}

// joinedPaths is LayoutPaths through filepath.Join, for any names: what the paths joined by hand must
// equal.
func joinedPaths(base, pkg, hash string, newLayout bool) Paths {
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

// plainName reports whether name is one path element that filepath.Join keeps as it is: not empty,
// not a dot name, without a separator.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && strings.IndexByte(name, filepath.Separator) < 0
}

// IsNewLayoutRecord reports whether a unit's fingerprint folder (Unit.FingerprintDir) is in the new
// layout: `…/build/<pkg>/<hash>/fingerprint` rather than `…/.fingerprint/<pkg>-<hash>`. It reads the
// path the reader found the records at, never guesses.
func IsNewLayoutRecord(fingerprintDir string) bool {
	if n := len(fingerprintDir); n > 0 && fingerprintDir[n-1] != filepath.Separator &&
		fingerprintDir[strings.LastIndexByte(fingerprintDir, filepath.Separator)+1:] != "fingerprint" {
		return false // filepath.Base's answer, without its work: asked for every unit, many times
	}
	return filepath.Base(fingerprintDir) == "fingerprint" &&
		filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(fingerprintDir)))) == "build"
}

// IsNew reports whether s is a Cargo step whose unit's records are in the new layout: PathsOf(…, s).New,
// without building the paths.
func IsNew(s *graph.Step) bool {
	u := Of(s)
	return s != nil && u.Hash != "" && IsNewLayoutRecord(u.FingerprintDir)
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

// Layout is the layout of a Cargo build folder's units (docs/cargo-new-layout.md).
type Layout uint8

const (
	// Legacy is cargo 1.95's default: build/<pkg>-<hash>, .fingerprint/<pkg>-<hash>, deps/.
	Legacy Layout = iota + 1
	// NewLayout is -Zbuild-dir-new-layout: build/<pkg>/<hash>/{fingerprint,run,out}.
	NewLayout
)

// Area is the part of a unit's records or outputs a path lies in.
type Area string

const (
	AreaOut         Area = "out"         // a run's OUT_DIR; in the new layout also a compile unit's outputs
	AreaRun         Area = "run"         // a run's records (legacy: the unit folder itself, outside out/)
	AreaFingerprint Area = "fingerprint" // the unit's fingerprint records
	AreaDeps        Area = "deps"        // legacy <prof>/deps/, shared by the compile units (names carry the hash)
)

// Place is what a path inside a Cargo build folder is: which profile folder, which unit and which area
// of it. ParsePath is the one reverse of LayoutPaths.
type Place struct {
	Layout     Layout
	ProfileDir string // <build>/<prof>: the folder holding build/, deps/ and .fingerprint/
	Package    string // the unit's package ("" for a deps/ file, whose name carries the crate, not the package)
	Hash       string // the unit's hash (a deps/ file's: the 16 hex digits its name ends with, "" when none)
	Area       Area   // "" for the new layout's unit folder itself
	// Unit is the unit's folder under build/ (legacy build/<pkg>-<hash>, new build/<pkg>/<hash>); "" for
	// deps/ and legacy .fingerprint/ paths.
	Unit string
	Rest string // the path below the area's folder ("" for the folder itself)
}

// ParsePath finds the Cargo unit a cleaned absolute path lies in, by the names of its folders alone
// (nothing is read): <prof>/build/<pkg>-<hash>[/out]/…, <prof>/build/<pkg>/<hash>/{out,run,fingerprint}/…,
// <prof>/.fingerprint/<pkg>-<hash>/…, <prof>/deps/<file>. The hash must be 16 lowercase hex digits. ok is
// false for any other path (an uplifted file, a file outside a build folder).
func ParsePath(p string) (pl Place, ok bool) {
	parts := strings.Split(filepath.Clean(p), string(filepath.Separator))
	join := func(ps []string) string {
		if len(ps) == 1 && ps[0] == "" {
			return string(filepath.Separator)
		}
		return strings.Join(ps, string(filepath.Separator))
	}
	// The innermost build/, .fingerprint/ or deps/ component that makes a unit path decides.
	for i := len(parts) - 2; i >= 1; i-- {
		prof := join(parts[:i])
		rest := func(from int) string {
			if from >= len(parts) {
				return ""
			}
			return join(parts[from:])
		}
		switch parts[i] {
		case "build":
			// New layout: build/<pkg>/<hash>/<area>.
			if i+3 < len(parts) && IsHash(parts[i+2]) {
				switch a := Area(parts[i+3]); a {
				case AreaOut, AreaRun, AreaFingerprint:
					return Place{Layout: NewLayout, ProfileDir: prof, Package: parts[i+1], Hash: parts[i+2], Area: a,
						Unit: join(parts[:i+3]), Rest: rest(i + 4)}, true
				}
			}
			if i+3 == len(parts) && IsHash(parts[i+2]) {
				// The new layout's unit folder itself.
				return Place{Layout: NewLayout, ProfileDir: prof, Package: parts[i+1], Hash: parts[i+2], Unit: join(parts)}, true
			}
			if pkg, hash, ok := splitUnitName(parts[i+1]); ok {
				pl := Place{Layout: Legacy, ProfileDir: prof, Package: pkg, Hash: hash, Area: AreaRun, Unit: join(parts[:i+2]), Rest: rest(i + 2)}
				if i+2 < len(parts) && parts[i+2] == "out" {
					pl.Area, pl.Rest = AreaOut, rest(i+3)
				}
				return pl, true
			}
		case ".fingerprint":
			if pkg, hash, ok := splitUnitName(parts[i+1]); ok {
				return Place{Layout: Legacy, ProfileDir: prof, Package: pkg, Hash: hash, Area: AreaFingerprint, Rest: rest(i + 2)}, true
			}
		case "deps":
			if i+2 == len(parts) {
				name := parts[i+1]
				if j := strings.IndexByte(name, '.'); j > 0 {
					name = name[:j]
				}
				hash := ""
				if _, h, ok := splitUnitName(name); ok {
					hash = h
				}
				return Place{Layout: Legacy, ProfileDir: prof, Hash: hash, Area: AreaDeps, Rest: parts[i+1]}, true
			}
		}
	}
	return Place{}, false
}

// splitUnitName splits "<pkg>-<hash>" (hash: 16 lowercase hex digits).
func splitUnitName(n string) (pkg, hash string, ok bool) {
	i := strings.LastIndexByte(n, '-')
	if i <= 0 || !IsHash(n[i+1:]) {
		return "", "", false
	}
	return n[:i], n[i+1:], true
}
