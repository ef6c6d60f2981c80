package gocgo

import (
	"fmt"
	"github.com/stalecheck/stalecheck/internal/sysdirs"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
)

// CargoOrigin places a library inside a Cargo target folder: the edge from a Go binary into the Cargo
// graph. For an uplifted staticlib or cdylib (<target>/[<triple>/]<profile>/lib<name>.a|.so) the file
// is the root of one Cargo unit; in deps/ it is the unit's own output (lib<name>-<hash>.a); under
// build/<pkg>-<hash>/out/ it was written by a build-script run.
type CargoOrigin struct {
	// TargetDir is the Cargo target folder (holding .rustc_info.json or CACHEDIR.TAG).
	TargetDir string `json:"target_dir"`
	// Triple is the target triple folder ("" for the host layout); Profile the profile folder's name
	// ("debug", "release", a custom profile); ProfileDir its path.
	Triple     string `json:"triple,omitempty"`
	Profile    string `json:"profile"`
	ProfileDir string `json:"profile_dir"`
	// Place is "uplifted", "deps" or "build-script-out" (then BuildDir is build/<pkg>-<hash>, or
	// build/<pkg>/<hash> in Cargo's new build-dir layout, where "deps" is a unit's build/<pkg>/<hash>/out).
	Place    string `json:"place"`
	BuildDir string `json:"build_dir,omitempty"`
	// CrateName is the library's name without "lib", the extension and a deps/ "-<hash>" suffix: the
	// crate name Cargo gives the staticlib/cdylib target.
	CrateName string `json:"crate_name"`
	// Workspace is the folder above TargetDir when it holds a Cargo.toml (the default target folder
	// place); "" when the target folder lies elsewhere (CARGO_TARGET_DIR).
	Workspace string `json:"workspace,omitempty"`
}

// CargoOriginOf returns where a library file lies in a Cargo target folder, or nil when it lies in none
// (for any system's link of a Cargo staticlib or cdylib: internal/systems).
func CargoOriginOf(lib string) *CargoOrigin { return cargoOrigin(lib) }

// cargoOrigin returns where a library lies in a Cargo target folder, or nil.
func cargoOrigin(lib string) *CargoOrigin {
	dir := filepath.Dir(lib)
	o := &CargoOrigin{Place: "uplifted"}
	if pl, ok := unit.ParsePath(lib); ok && !strings.ContainsRune(pl.Rest, filepath.Separator) {
		switch {
		case pl.Area == unit.AreaDeps:
			o.Place, dir = "deps", pl.ProfileDir
		case pl.Area == unit.AreaOut && pl.Layout == unit.Legacy:
			o.Place, o.BuildDir, dir = "build-script-out", pl.Unit, pl.ProfileDir
		case pl.Area == unit.AreaOut:
			// Cargo's new build-dir layout: build/<pkg>/<hash>/out is a run's OUT_DIR (beside run/) or a
			// rustc unit's outputs (what deps/ holds in the legacy layout).
			if o.Place = "deps"; isDir(filepath.Join(pl.Unit, "run")) {
				o.Place, o.BuildDir = "build-script-out", pl.Unit
			}
			dir = pl.ProfileDir
		}
	}
	if legacy, fresh := cargo.ProfileLayouts(filepath.Dir(dir), filepath.Base(dir)); !legacy && !fresh {
		return nil
	}
	o.ProfileDir, o.Profile = dir, filepath.Base(dir)
	up := filepath.Dir(dir)
	switch {
	case isTargetDir(up):
		o.TargetDir = up
	case isTargetDir(filepath.Dir(up)):
		o.TargetDir, o.Triple = filepath.Dir(up), filepath.Base(up)
	default:
		return nil
	}
	if ws := filepath.Dir(o.TargetDir); isFile(filepath.Join(ws, "Cargo.toml")) {
		o.Workspace = ws
	}
	name := strings.TrimPrefix(filepath.Base(lib), "lib")
	if i := strings.Index(name, ".so"); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimSuffix(name, ".a")
	if o.Place == "deps" {
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
	}
	o.CrateName = name
	return o
}

func isTargetDir(d string) bool {
	return isFile(filepath.Join(d, ".rustc_info.json")) || isFile(filepath.Join(d, "CACHEDIR.TAG"))
}

func isDir(p string) bool {
	st, err := fsrec.Stat(p)
	return err == nil && st.IsDir()
}

func isFile(p string) bool {
	st, err := fsrec.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// ldWord is one LDFLAGS word and where it came from.
type ldWord struct {
	w, from string
}

// resolveLibs reads the link flags (CGO_LDFLAGS of the build first, then the package's #cgo LDFLAGS, as
// (*Builder).CFlags orders them) and resolves each library the way GNU ld does: every -L folder applies
// to every -l (ld's manual: "All -L options apply to all -l options, regardless of the order"), folders
// in order, lib<name>.so before lib<name>.a unless -static or -Wl,-Bstatic is in force; -l:<file> names
// the file; a word that is a path to a .a, .so or .o is the file itself (relative to the package
// folder, where cgo runs the compiler). A -l found in no -L folder goes to unresolved: the linker then
// searches its default folders, which are not read here (system libraries).
func resolveLibs(p *Package, env []string, discovered []Input, unresolved []string) ([]string, []Input, []string) {
	var words []ldWord
	for _, w := range env {
		words = append(words, ldWord{w, "CGO_LDFLAGS of the build"})
	}
	for _, w := range p.Flags.LDFLAGS {
		words = append(words, ldWord{w, "#cgo LDFLAGS of " + p.ImportPath})
	}
	abs := func(d string) string {
		if !filepath.IsAbs(d) {
			d = filepath.Join(p.Dir, d)
		}
		return filepath.Clean(d)
	}
	// Pass 1: -L folders.
	var libDirs []string
	seenDir := map[string]bool{}
	for i := 0; i < len(words); i++ {
		w := words[i].w
		if !strings.HasPrefix(w, "-L") {
			continue
		}
		d := w[2:]
		if d == "" && i+1 < len(words) {
			i++
			d = words[i].w
		}
		if d != "" && !seenDir[abs(d)] {
			seenDir[abs(d)] = true
			libDirs = append(libDirs, abs(d))
		}
	}
	for _, d := range libDirs {
		if !isDir(d) {
			p.Problems = append(p.Problems, fmt.Sprintf("library folder -L %s is missing or not a folder", d))
		}
	}
	static := false
	seen := map[string]int{}
	add := func(path string, kind FileKind, clue string) {
		if i, ok := seen[path]; ok {
			discovered[i].Clues = append(discovered[i].Clues, Clue{How: HowLDFlags, Detail: clue})
			return
		}
		in := Input{Path: path, Kind: kind, Clues: []Clue{{How: HowLDFlags, Detail: clue}}, Cargo: cargoOrigin(path)}
		statInput(&in)
		seen[path] = len(discovered)
		discovered = append(discovered, in)
	}
	for i := 0; i < len(words); i++ {
		w, from := words[i].w, words[i].from
		switch {
		case w == "-static":
			static = true
		case strings.HasPrefix(w, "-Wl,"):
			for _, o := range strings.Split(w[4:], ",") {
				switch o {
				case "-Bstatic", "-static", "-dn", "-non_shared":
					static = true
				case "-Bdynamic", "-dy", "-call_shared":
					static = false
				}
			}
		case strings.HasPrefix(w, "-L"):
			if w == "-L" {
				i++
			}
		case strings.HasPrefix(w, "-l"):
			name := w[2:]
			if name == "" && i+1 < len(words) {
				i++
				name = words[i].w
			}
			if name == "" {
				continue
			}
			var cands []string
			if strings.HasPrefix(name, ":") {
				cands = []string{name[1:]}
			} else if static {
				cands = []string{"lib" + name + ".a"}
			} else {
				cands = []string{"lib" + name + ".so", "lib" + name + ".a"}
			}
			found := false
			for _, d := range libDirs {
				for _, c := range cands {
					path := filepath.Join(d, c)
					if isFile(path) {
						add(path, libKind(path), fmt.Sprintf("-l%s found in -L %s (%s)", name, d, from))
						found = true
						break
					}
				}
				if found {
					break
				}
			}
			if !found {
				// In no -L folder now. When no folder the linker searches by default has it either and a
				// -L folder is the project's, the link took it from there and it is gone since (cargo
				// clean -p of a staticlib): a missing input, which the rules judge as such.
				if d := goneFrom(libDirs, cands); d != "" {
					add(filepath.Join(d, cands[len(cands)-1]), libKind(cands[len(cands)-1]),
						fmt.Sprintf("-l%s: in no -L folder now, nor in the linker's default folders: the link took it from -L %s (%s)", name, d, from))
					continue
				}
				unresolved = append(unresolved, fmt.Sprintf("-l%s in %s (in no -L folder: a system library from the linker's default folders, not read)", name, from))
			}
		case !strings.HasPrefix(w, "-") && (strings.HasSuffix(w, ".a") || strings.HasSuffix(w, ".o") || strings.Contains(w, ".so")):
			add(abs(w), libKind(w), fmt.Sprintf("named by path in %s", from))
		}
	}
	return libDirs, discovered, unresolved
}

// linkerDefaults are the folders GNU ld searches after the -L folders on a Debian-like system.
var linkerDefaults = []string{"/usr/local/lib", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// goneFrom returns the first -L folder outside the system's folders when no default folder of the
// linker holds any of cands (the file names -l looks for): the library the link found must have been
// in a -L folder; "" when a default folder has one, or every -L folder is the system's.
func goneFrom(libDirs, cands []string) string {
	for _, d := range linkerDefaults {
		for _, c := range cands {
			if isFile(filepath.Join(d, c)) {
				return ""
			}
		}
	}
	for _, d := range libDirs {
		if !sysdirs.System(d) {
			return d
		}
	}
	return ""
}

func libKind(path string) FileKind {
	base := filepath.Base(path)
	switch {
	case strings.HasSuffix(base, ".a"):
		return KindArchive
	case strings.HasSuffix(base, ".o"):
		return KindObject
	case strings.HasSuffix(base, ".so") || strings.Contains(base, ".so."):
		return KindShared
	}
	return KindLinkFile
}
