package clean

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/report"
)

// Item kinds.
const (
	KindBuildDir    = "build-dir"   // <profile>/build/<pkg>-<hash>: a build-script run or compile folder
	KindFingerprint = "fingerprint" // <profile>/.fingerprint/<pkg>-<hash>
	KindDepsFile    = "deps-file"   // <profile>/deps/<crate>-<hash>[.ext] (and examples/)
	KindIncremental = "incremental" // <profile>/incremental/<entry>
	// KindUnitDir is a rustc unit's own folder in Cargo's new build-dir layout,
	// <profile>/build/<pkg>/<hash> (its fingerprint/ and out/: what .fingerprint/<pkg>-<hash> and the
	// deps/ files are in the legacy layout). A build-script unit's folder there is a KindBuildDir.
	KindUnitDir = "unit-dir"
)

// Item statuses.
const (
	Planned = "planned"
	Removed = "removed"
	Skipped = "skipped"
)

// Item is one thing a clean removes.
type Item struct {
	Kind string `json:"kind"`
	// Rel is the path relative to the build folder (what is opened through os.Root); RelBytes carries
	// its raw bytes in base64 when it is not valid UTF-8 (JSON cannot hold them).
	Rel      string `json:"rel"`
	RelBytes string `json:"rel_bytes,omitempty"`
	Path     string `json:"path"`
	Profile  string `json:"profile"`
	Package  string `json:"package,omitempty"`
	Hash     string `json:"hash,omitempty"`
	What     string `json:"what"`
	Bytes    int64  `json:"bytes"`
	Dev      uint64 `json:"dev"`
	Ino      uint64 `json:"ino"`
	// CtimeNS is a file's status-change time when planned: a file written again or made anew under
	// the same inode (ext4 reuses a freed one) has another, and is not the file planned. Not kept for a
	// folder, whose entries may come and go.
	CtimeNS int64  `json:"ctime_ns,omitempty"`
	Dir     bool   `json:"dir"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
}

// RelPath returns the item's relative path with its exact bytes.
func (it *Item) RelPath() (string, error) {
	if it.RelBytes != "" {
		b, err := base64.StdEncoding.DecodeString(it.RelBytes)
		if err != nil {
			return "", fmt.Errorf("rel_bytes of %q: %w", it.Rel, err)
		}
		return string(b), nil
	}
	return it.Rel, nil
}

// Plan is what a clean removes; its JSON form (`--format json`) is what `clean --plan FILE --yes`
// executes.
type Plan struct {
	report.Envelope
	Workspace   string   `json:"workspace"`
	TargetDir   string   `json:"target_dir"`
	BuildDir    string   `json:"build_dir"`
	Profile     string   `json:"profile,omitempty"` // --profile, "" for all
	Incremental bool     `json:"incremental"`
	Profiles    []string `json:"profiles"` // the profile folders judged
	Locks       []string `json:"locks"`
	Items       []Item   `json:"items"`
	TotalBytes  int64    `json:"total_bytes"`
	Executed    bool     `json:"executed"`
	FreedBytes  int64    `json:"freed_bytes"`
	Notes       []string `json:"notes"`
}

// Options select what a plan covers.
type Options struct {
	Profile     string // a profile name or folder; "" for every profile folder
	Incremental bool   // also remove the incremental caches
}

// MakePlan computes what is not live in the graph, by the graph's one notion of live (graph.MarkLive,
// the one check's orphaned-build-dir uses): only profile folders the graph judges are cleaned, the
// others are left alone and said so in Notes (no tied root, e.g. after only `cargo check`; a root that
// could not be tied to its unit; an unreadable fingerprint record). A unit is kept when graph.Kept says
// so: reached from a root (a failed unit of a live configuration included), or its hash-file content
// equals a live unit's (a tie could hide a live unit). Build folders are graph.OrphanedBuildDirs.
func MakePlan(g *graph.Graph, opt Options) (*Plan, error) {
	touched, _, err := SelectProfiles(g.ProfileDirs, opt.Profile)
	if err != nil {
		return nil, err
	}
	p := &Plan{Workspace: g.Workspace, TargetDir: g.TargetDir, BuildDir: g.BuildDir, Profile: opt.Profile,
		Incremental: opt.Incremental, Items: []Item{}, Notes: []string{}, Locks: []string{}}
	judged := map[string]bool{}
	for _, prof := range touched {
		if ok, why := g.Judged(prof); !ok {
			p.Notes = append(p.Notes, fmt.Sprintf("profile %s is not cleaned: %s", prof, why))
			continue
		}
		judged[prof] = true
		p.Profiles = append(p.Profiles, prof)
	}
	if p.Profiles == nil {
		p.Profiles = []string{}
	}
	// Units by folder (profile, <pkg>-<hash>): a folder goes only when every unit in it goes.
	type unitDir struct {
		prof, pkg, hash string
		steps           []*graph.Step
		keep            bool
	}
	dirs := map[string]*unitDir{}
	var keys []string
	for _, s := range g.Steps {
		k := s.ProfileDir + "\x00" + unit.Of(s).FingerprintDir // <pkg>-<hash> in either layout
		d := dirs[k]
		if d == nil {
			d = &unitDir{prof: s.ProfileDir, pkg: s.Package, hash: unit.Of(s).Hash}
			dirs[k] = d
			keys = append(keys, k)
		}
		d.steps = append(d.steps, s)
		if g.Kept(s) {
			d.keep = true
		}
	}
	sort.Strings(keys)
	var items []Item
	// build/ folders.
	planned := map[string]bool{}
	for _, bd := range g.OrphanedBuildDirs() {
		planned[bd.Path] = true
		if !judged[bd.ProfileDir] {
			continue
		}
		what := "a build folder no fingerprint names"
		if len(bd.Steps) > 0 {
			what = describe(bd.Steps)
		}
		items = append(items, Item{Kind: KindBuildDir, Path: bd.Path, Profile: bd.ProfileDir, Package: bd.Package, Hash: bd.Hash,
			What: what, Bytes: bd.Bytes, Dir: true})
	}
	// .fingerprint/ folders and deps/ files of units no root reaches.
	keptHash := map[string]bool{} // profile \x00 hash of kept units
	for _, k := range keys {
		if d := dirs[k]; d.keep {
			keptHash[d.prof+"\x00"+d.hash] = true
		}
	}
	deps := map[string]map[string][]string{}
	for _, k := range keys {
		d := dirs[k]
		if d.keep || !judged[d.prof] {
			continue
		}
		if up := unit.PathsOf(g.BuildDir, d.steps[0]); up.New {
			// New layout: the unit's folder holds its fingerprint and outputs together; a build-script
			// unit's folder is planned above when no root reaches it.
			if !planned[up.Unit] && !hasScriptStep(d.steps) {
				items = append(items, Item{Kind: KindUnitDir, Path: up.Unit, Profile: d.prof, Package: d.pkg, Hash: d.hash,
					What: "unit folder (fingerprint and outputs) of " + describe(d.steps), Dir: true})
			}
			continue
		}
		items = append(items, Item{Kind: KindFingerprint, Path: unit.Of(d.steps[0]).FingerprintDir, Profile: d.prof, Package: d.pkg, Hash: d.hash,
			What: "fingerprint of " + describe(d.steps), Dir: true})
		if keptHash[d.prof+"\x00"+d.hash] {
			continue
		}
		rustc := false
		for _, s := range d.steps {
			if s.Kind == graph.Compile {
				rustc = true
			}
		}
		if !rustc {
			continue
		}
		if deps[d.prof] == nil {
			deps[d.prof] = listDeps(filepath.Join(g.BuildDir, d.prof))
		}
		for _, f := range deps[d.prof][d.hash] {
			items = append(items, Item{Kind: KindDepsFile, Path: f, Profile: d.prof, Package: d.pkg, Hash: d.hash,
				What: "output of " + describe(d.steps)})
		}
	}
	if opt.Incremental {
		for _, prof := range p.Profiles {
			dir := filepath.Join(g.BuildDir, prof, "incremental")
			ents, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range ents {
				items = append(items, Item{Kind: KindIncremental, Path: filepath.Join(dir, e.Name()), Profile: prof,
					What: "incremental cache (Cargo does not fingerprint it; the next compile of its crate starts afresh)"})
			}
		}
	}
	// Measure each item (lstat, never following a symlink) and record its identity.
	cargo.Parallel(len(items), func(i int) { measure(g.BuildDir, &items[i]) })
	sort.SliceStable(items, func(i, j int) bool { return items[i].Path < items[j].Path })
	for _, it := range items {
		if it.Status == Planned {
			p.TotalBytes += it.Bytes
		}
	}
	p.Items = items
	return p, nil
}

// measure fills an item's relative path, identity, size and file count; a symlink or a folder that
// is gone is marked skipped.
func measure(base string, it *Item) {
	rel, err := filepath.Rel(base, it.Path)
	if err != nil || !filepath.IsLocal(rel) {
		it.Status, it.Reason = Skipped, "not inside the build folder"
		return
	}
	it.Rel = rel
	if !utf8.ValidString(rel) {
		it.RelBytes = base64.StdEncoding.EncodeToString([]byte(rel))
	}
	st, err := os.Lstat(it.Path)
	if err != nil {
		it.Status, it.Reason = Skipped, "gone: "+errString(err)
		return
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		it.Status, it.Reason = Skipped, "a symlink (never followed or removed)"
		return
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		it.Dev, it.Ino = uint64(sys.Dev), sys.Ino
		if !st.IsDir() {
			it.CtimeNS = sys.Ctim.Nano()
		}
	}
	it.Dir = st.IsDir()
	it.Status = Planned
	if it.Dir {
		var unreadable error
		it.Bytes, unreadable = treeBytes(it.Path)
		if unreadable != nil {
			// Removing it would stop there, with part of it gone: not planned.
			it.Status, it.Reason = Skipped, "cannot read inside it ("+errString(unreadable)+"): a removal would stop there, part done"
			return
		}
	} else {
		it.Bytes = st.Size()
	}
}

// treeBytes sums the sizes of everything under a folder (lstat: symlinks count as themselves), each
// hard-linked file once (a compile folder holds the build script twice: build-script-build is a hard
// link of build_script_build-<hash>).
func treeBytes(dir string) (int64, error) {
	var n int64
	var seen map[[2]uint64]bool
	var first error
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if first == nil && !errors.Is(err, fs.ErrNotExist) {
				first = err
			}
			return nil
		}
		if e.IsDir() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		if sys, ok := info.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
			k := [2]uint64{uint64(sys.Dev), sys.Ino}
			if seen[k] {
				return nil
			}
			if seen == nil {
				seen = map[[2]uint64]bool{}
			}
			seen[k] = true
		}
		n += info.Size()
		return nil
	})
	return n, first
}

// listDeps indexes a profile's deps/ and examples/ files by the unit hash in their names.
func listDeps(prof string) map[string][]string {
	out := map[string][]string{}
	for _, sub := range []string{"deps", "examples"} {
		dir := filepath.Join(prof, sub)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			base := n
			if i := strings.IndexByte(base, '.'); i >= 0 {
				base = base[:i]
			}
			if _, h, ok := cargo.SplitUnitName(base); ok {
				out[h] = append(out[h], filepath.Join(dir, n))
			}
		}
	}
	return out
}

// hasScriptStep reports whether a unit folder's steps include a build-script compile or run (whose
// folder graph.OrphanedBuildDirs judges).
func hasScriptStep(steps []*graph.Step) bool {
	for _, s := range steps {
		if s.Kind != graph.Compile {
			return true
		}
	}
	return false
}

// describe names the units of one folder for people.
func describe(steps []*graph.Step) string {
	var parts []string
	for _, s := range steps {
		var w string
		switch s.Kind {
		case graph.ScriptRun:
			w = "build-script run of " + s.Package
		case graph.ScriptCompile:
			w = "build-script compile of " + s.Package
		default:
			w = s.Package + " " + unit.Of(s).Target
		}
		w += " (" + configWords(s) + ")"
		if s.Failed != "" {
			w += ", last build failed"
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, "; ") + "; no current binary reaches it"
}

func configWords(s *graph.Step) string {
	feats := unit.Of(s).Features
	if s.Kind == graph.ScriptRun {
		// A run's fingerprint records no features; its compile unit's does (read without details).
		for _, d := range s.Deps {
			if d.Kind == graph.ScriptCompile {
				feats = unit.Of(d).Features
			}
		}
	}
	f := make([]string, len(feats))
	for i, x := range feats {
		f[i] = fmt.Sprintf("%q", x)
	}
	w := "features [" + strings.Join(f, ", ") + "]"
	if len(unit.Of(s).Rustflags) > 0 {
		w += ", rustflags " + strings.Join(unit.Of(s).Rustflags, " ")
	}
	return w
}

func errString(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
