package evidence

import (
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// Copy is one candidate copy of a native library found in a Cargo build folder.
type Copy struct {
	Path    string
	Size    int64 // bytes
	MTimeNS int64 // nanoseconds since the epoch
	// Step is the unit that made the copy: the build-script run for an OUT_DIR archive, the lib unit
	// for an rlib that bundles it.
	Step *graph.Step
	// Bundled is true for an rlib that carries the library's objects as members (rustc's default
	// `+bundle` for static libraries of lib crates).
	Bundled bool
	// Found says, for a copy LinkedArchives found in a joined graph, which step wrote it and which links
	// it ("" for Cargo's own candidates, described from Step).
	Found string
}

// Library is one library name and its copies.
type Library struct {
	Name   string // as linked: "groth16_cuda" for libgroth16_cuda.a
	Copies []Copy
}

// LibName turns "libgroth16_cuda.a", "groth16_cuda", an object "kern.o" or a path into the link name
// ("groth16_cuda", "kern").
func LibName(s string) string {
	s = filepath.Base(s)
	s = strings.TrimPrefix(s, "lib")
	for _, ext := range []string{".a", ".o", ".obj", ".rlib", ".so"} {
		s = strings.TrimSuffix(s, ext)
	}
	return s
}

// FindRoot returns the root (or the rustc unit's deps/ file, or in the new layout its unit folder's
// out/ file) that is the binary at path: same path, else same device and inode, else the unit its
// folder (new layout) or its name's hash (deps/) names. nil when the binary is not in the graph (a
// copied or hand-linked file).
func FindRoot(g *graph.Graph, path string) *graph.Root {
	abs, _ := filepath.Abs(path)
	st, err := fsrec.Stat(abs)
	for _, r := range g.Roots {
		if r.File.Path == abs {
			return r
		}
		if err == nil {
			if rs, err2 := fsrec.Stat(r.File.Path); err2 == nil && fsrec.SameFile(st, rs) {
				return r
			}
		}
	}
	// A new-layout unit's out/ file (build/<pkg>/<hash>/out/<name>): its folder names the unit (a bin
	// there carries no hash in its name).
	if dir := filepath.Dir(abs); filepath.Base(dir) == "out" {
		for _, s := range g.Steps {
			if s.Kind == graph.Compile && unit.Is(s) && unit.IsNew(s) && unit.PathsOf(g.BuildDir, s).Artifacts == dir {
				return &graph.Root{File: graph.FileInfo{Path: abs, Exists: err == nil}, Kind: "bin", Step: s, TiedBy: "unit folder"}
			}
		}
	}
	// A deps/ file: its name carries the unit hash.
	base := filepath.Base(abs)
	if i := strings.LastIndexByte(base, '-'); i > 0 && len(base)-i-1 >= 16 {
		h := base[i+1 : i+17]
		for _, s := range g.Steps {
			if s.Kind == graph.Compile && unit.Of(s).Hash == h && strings.HasPrefix(abs, filepath.Join(g.BuildDir, s.ProfileDir)) {
				return &graph.Root{File: graph.FileInfo{Path: abs, Exists: true}, Kind: "bin", Step: s, TiedBy: "name"}
			}
		}
	}
	return nil
}

// Libraries lists the native static libraries to examine for a binary and every copy of each in the
// build folder: all `build/*/out/lib<name>.a` of every profile, the archive a run's link-search
// folders lead to (inside OUT_DIR or not), and the rlibs that bundle one. only
// (a link name or file name) limits it to one library; with a root, the libraries are those its
// build-script runs link; without, every library name found in an OUT_DIR.
func Libraries(g *graph.Graph, root *graph.Root, only string) []Library {
	names := map[string]bool{}
	switch {
	case only != "":
		names[LibName(only)] = true
	case root != nil && root.Step != nil:
		for _, s := range root.Reach() {
			for _, l := range s.Script().Links {
				if IsStaticLink(l) {
					names[l.Name] = true
				}
			}
		}
	default:
		for _, s := range g.Steps {
			for _, o := range s.Outputs {
				if b := filepath.Base(o.Path); s.Kind == graph.ScriptRun && strings.HasPrefix(b, "lib") && strings.HasSuffix(b, ".a") {
					names[LibName(b)] = true
				}
			}
		}
	}
	var out []Library
	// Each profile's deps/ folder is listed once (a Glob per dependent read it again each time).
	listings := map[string][]string{}
	rlibs := func(dir, hash string) []string {
		names, ok := listings[dir]
		if !ok {
			ents, _ := fsrec.ReadDir(dir)
			for _, e := range ents {
				names = append(names, e.Name())
			}
			listings[dir] = names
		}
		// The names Glob("lib*-<hash>.rlib") matches (the hash is hex: no pattern characters).
		suffix := "-" + hash + ".rlib"
		var m []string
		for _, n := range names {
			if len(n) >= len("lib")+len(suffix) && strings.HasPrefix(n, "lib") && strings.HasSuffix(n, suffix) {
				m = append(m, filepath.Join(dir, n))
			}
		}
		return m
	}
	for n := range names {
		lib := Library{Name: n}
		for _, s := range g.Steps {
			if s.Kind != graph.ScriptRun {
				continue
			}
			for _, o := range s.Outputs {
				if filepath.Base(o.Path) == "lib"+n+".a" {
					lib.Copies = append(lib.Copies, Copy{Path: o.Path, Size: o.Size, MTimeNS: o.MTimeNS, Step: s})
				}
			}
			// The archive the run's link-search folders lead to, wherever it lies (a library built in
			// the source tree by make, a prefix outside OUT_DIR): the linker took that file.
			for _, l := range s.Script().Links {
				if l.Name == n && filepath.Base(l.Path) == "lib"+n+".a" {
					if st, err := fsrec.Stat(l.Path); err == nil && st.Mode().IsRegular() {
						lib.Copies = append(lib.Copies, Copy{Path: l.Path, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Step: s})
					}
				}
			}
			if !linksStatic(s, n) {
				continue
			}
			for _, d := range s.Dependents {
				if d.Kind != graph.Compile || !strings.HasPrefix(unit.Of(d).Target, "lib-") {
					continue
				}
				m := rlibs(unit.PathsOf(g.BuildDir, d).Artifacts, unit.Of(d).Hash)
				for _, p := range m {
					if st, err := fsrec.Stat(p); err == nil {
						lib.Copies = append(lib.Copies, Copy{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Step: d, Bundled: true})
					}
				}
			}
		}
		sort.Slice(lib.Copies, func(i, j int) bool { return lib.Copies[i].Path < lib.Copies[j].Path })
		lib.Copies = dedupe(lib.Copies)
		out = append(out, lib)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// IsStaticLink reports whether a build script's `rustc-link-lib` links a static archive: kind
// `static`, or no kind where the library found in the run's link-search folders is a `lib<name>.a`
// (rustc passes `-l<name>` and the linker takes the archive). No kind with no archive found is rustc's
// default, a shared library (a -sys crate linking the system's libz, libbz2, libssl…): no copy of it
// is in the build folder.
func IsStaticLink(l graph.Link) bool {
	return l.Kind == "static" || l.Kind == "" && strings.HasSuffix(l.Path, ".a")
}

// linksStatic reports whether a run links name as a static library that rustc bundles into the rlib
// of its package (kind `static` without `-bundle`; rustc bundles no other kind).
func linksStatic(s *graph.Step, name string) bool {
	for _, l := range s.Script().Links {
		if l.Name == name && l.Kind == "static" && !strings.Contains(l.Modifiers, "-bundle") {
			return true
		}
	}
	return false
}

func dedupe(cs []Copy) []Copy {
	var out []Copy
	for i, c := range cs {
		if i > 0 && cs[i-1].Path == c.Path {
			continue
		}
		out = append(out, c)
	}
	return out
}

// FileKey identifies a file's content version for caches: device, inode, size and mtime.
func FileKey(path string) (key [4]uint64, ok bool) {
	st, err := fsrec.Stat(path)
	if err != nil {
		return key, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return key, false
	}
	return [4]uint64{uint64(sys.Dev), sys.Ino, uint64(st.Size()), uint64(st.ModTime().UnixNano())}, true
}
