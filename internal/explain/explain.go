// Package explain answers two questions about a Cargo build folder, from the records Cargo left on
// disk (docs/cargo-target-dir.md):
//
//   - PACKAGE: why several build folders of one package exist. Each unit's fingerprint JSON holds its
//     configuration (features, profile settings, rustflags, compile kind, rustc, the hashes of its
//     dependencies); units of one role (the lib, the build-script run, …) are compared field by field,
//     and each is tied to the binaries (in which profile) that reach it. Where Cargo takes the package
//     from is said too (path, registry, directory source, git checkout; `cargo metadata` with AskCargo).
//   - PATH: every step that compiles or reads a file, whether the step declares it to Cargo, the step's
//     last run against the file's mtime, and the reason Cargo will or will not rerun it. Each reason of
//     §11.5 ("why a rebuild did not happen") is a typed Reason with its own sentence.
//
// Unlike the checks, explain reads records of units that are not live (another configuration), so it
// opens fingerprint JSON, Cargo's binary dep-info and rustc's `.d` files itself.
package explain

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/depfile"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Options tune explain.
type Options struct {
	// AskCargo runs `cargo metadata --format-version 1` in the workspace to say where Cargo takes each
	// package from, next to what the records say.
	AskCargo bool
	// Env is extra environment for that cargo run (tests use a private CARGO_HOME).
	Env []string
	// Cwd resolves relative PATH arguments; "" means the working folder.
	Cwd string
}

// IsPath reports whether an argument names a file rather than a package: it contains a slash, names
// an existing file (relative to cwd), or cannot be a package name (Cargo's are letters, digits, - and _,
// with an optional @VERSION), such as main.c. A bare name of a folder (a package folder in the workspace
// root) is a package name.
func IsPath(arg, cwd string) bool {
	if strings.ContainsRune(arg, '/') {
		return true
	}
	if name, _, _ := strings.Cut(arg, "@"); strings.ContainsFunc(name, func(r rune) bool {
		return r != '-' && r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		return true
	}
	if cwd != "" && !filepath.IsAbs(arg) {
		arg = filepath.Join(cwd, arg)
	}
	st, err := os.Lstat(arg)
	return err == nil && !st.IsDir()
}

// loader reads and caches the records explain needs beyond the graph.
type loader struct {
	g    *graph.Graph
	mu   sync.Mutex
	fps  map[*graph.Step]*cargo.Fingerprint
	deps map[string]map[string][]string // profile -> hash -> deps/ files
}

func newLoader(g *graph.Graph) *loader {
	return &loader{g: g, fps: map[*graph.Step]*cargo.Fingerprint{}, deps: map[string]map[string][]string{}}
}

// fingerprint decodes a unit's fingerprint JSON (nil when unreadable).
func (l *loader) fingerprint(s *graph.Step) *cargo.Fingerprint {
	l.mu.Lock()
	fp, ok := l.fps[s]
	l.mu.Unlock()
	if ok {
		return fp
	}
	if data, err := safeio.ReadFile(filepath.Join(unit.Of(s).FingerprintDir, unit.Of(s).Target+".json"), safeio.MaxRecord); err == nil {
		fp, _ = cargo.ParseFingerprint(data)
	}
	l.mu.Lock()
	l.fps[s] = fp
	l.mu.Unlock()
	return fp
}

// depsFiles returns the files in <profile>/deps (and examples) that carry a unit hash; for a unit in
// the new layout, the files of its own out/ folder (cargo.UnitArtifacts).
func (l *loader) depsFiles(s *graph.Step) []string {
	if files, ok := cargo.UnitArtifacts(l.g.BuildDir, s); ok {
		return files
	}
	prof, hash := s.ProfileDir, unit.Of(s).Hash
	l.mu.Lock()
	defer l.mu.Unlock()
	idx, ok := l.deps[prof]
	if !ok {
		idx = map[string][]string{}
		for _, sub := range []string{"deps", "examples"} {
			dir := filepath.Join(l.g.BuildDir, prof, sub)
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				n := e.Name()
				base := n
				if i := strings.IndexByte(base, '.'); i >= 0 {
					base = base[:i]
				}
				if _, h, ok := cargo.SplitUnitName(base); ok {
					idx[h] = append(idx[h], filepath.Join(dir, n))
				}
			}
		}
		l.deps[prof] = idx
	}
	return idx[hash]
}

// rustcDepfile returns the inputs rustc listed for a unit (its `.d` file), made absolute against the
// workspace root (rustc runs there), and the `.d` path. Build-script compile units keep it in their
// build folder, other units in deps/.
func (l *loader) rustcDepfile(s *graph.Step) ([]string, string) {
	var cands []string
	switch s.Kind {
	case graph.ScriptRun:
		return nil, ""
	case graph.ScriptCompile:
		stem := strings.TrimPrefix(unit.Of(s).Target, "build-script-")
		cands = []string{filepath.Join(unit.PathsOf(l.g.BuildDir, s).ScriptArtifacts,
			strings.ReplaceAll(stem, "-", "_")+"-"+unit.Of(s).Hash+".d")}
	default:
		for _, p := range l.depsFiles(s) {
			if strings.HasSuffix(p, ".d") {
				cands = append(cands, p)
			}
		}
	}
	for _, c := range cands {
		f, err := depfile.ParseFile(c)
		if err != nil {
			continue
		}
		var out []string
		for _, in := range f.Inputs() {
			if !filepath.IsAbs(in) && l.g.Workspace != "" {
				in = filepath.Join(l.g.Workspace, in)
			}
			out = append(out, filepath.Clean(in))
		}
		return out, c
	}
	return nil, ""
}

// depInfo returns the files Cargo's fingerprint dep-info of a compile unit lists (the files Cargo
// checks), absolute, and the dep-info file (the reference whose mtime Cargo compares against).
func (l *loader) depInfo(s *graph.Step) ([]string, graph.FileInfo, bool) {
	p := cargo.DepInfoFile(l.g.BuildDir, s, l.fingerprint(s))
	ref := stat(p)
	data, err := safeio.ReadFile(p, safeio.MaxRecord)
	if err != nil {
		return nil, ref, false
	}
	di, err := cargo.ParseDepInfo(data)
	if err != nil {
		return nil, ref, false
	}
	root := cargo.UnitPackageRoot(l.g, s)
	var out []string
	for _, f := range di.Files {
		q := f.Path
		switch {
		case f.PackageRelative:
			if root == "" {
				continue
			}
			q = filepath.Join(root, q)
		case !filepath.IsAbs(q):
			q = filepath.Join(l.g.BuildDir, q)
		}
		out = append(out, filepath.Clean(q))
	}
	return out, ref, true
}

func stat(p string) graph.FileInfo {
	st, err := os.Stat(p)
	if err != nil {
		return graph.FileInfo{Path: p}
	}
	return graph.FileInfo{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true}
}

// statTree stats a path; for a folder the mtime is the newest of its whole tree (Cargo's
// paths::mtime_recursive for a rerun-if-changed folder), and Path names that newest file.
func statTree(p string) (graph.FileInfo, string) {
	fi := stat(p)
	if !fi.Exists {
		return fi, ""
	}
	st, err := os.Stat(p)
	if err != nil || !st.IsDir() {
		return fi, p
	}
	newest := p
	_ = filepath.Walk(p, func(q string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if info.ModTime().UnixNano() > fi.MTimeNS {
			fi.MTimeNS = info.ModTime().UnixNano()
			newest = q
		}
		return nil
	})
	return fi, newest
}

func within(p, dir string) bool {
	return dir != "" && (p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)))
}

// FmtTime formats nanoseconds since the epoch for people as every stalecheck report does
// (report.TimeLayout: RFC 3339, UTC, nine digits of nanoseconds); 0 is "(none)".
func FmtTime(ns int64) string {
	if ns == 0 {
		return "(none)"
	}
	return report.Timestamp(ns)
}

func rfc3339(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// rootUses lists the roots that reach a step.
func rootUses(s *graph.Step) []RootUse {
	var out []RootUse
	seen := map[string]bool{}
	for _, r := range s.Roots {
		if seen[r.File.Path] {
			continue
		}
		seen[r.File.Path] = true
		u := RootUse{Path: r.File.Path, Kind: r.Kind}
		if r.Step != nil {
			u.Profile = r.Step.ProfileDir
			u.Features = unit.Of(r.Step).Features
		}
		out = append(out, u)
	}
	return out
}

// RootUse is a binary (or library, test, example) that reaches a unit.
type RootUse struct {
	Path     string   `json:"path"`
	Kind     string   `json:"kind"`
	Profile  string   `json:"profile"`
	Features []string `json:"features"`
}

func unitName(s *graph.Step) string { return s.Package + "-" + unit.Of(s).Hash }

func kindWords(s *graph.Step) string {
	switch s.Kind {
	case graph.ScriptRun:
		return "build-script run"
	case graph.ScriptCompile:
		return "build-script compile"
	}
	t := unit.Of(s).Target
	if i := strings.IndexByte(t, '-'); i > 0 {
		t = t[:i]
	}
	return t + " unit"
}
