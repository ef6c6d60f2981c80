// Package systems finds the build systems at or under a folder, reads each with its adapter into a
// graph.Graph, and merges the graphs into one (path edges between systems, liveness walked again).
//
//   - Register: each System (name, Detect, Descend, Driven, Read); cargo, ninja, make and go are
//     registered here, in that order, which is the order Detect tries them in a folder.
//   - Detect: which systems apply at or under PATH (Cargo.toml at or above it; below it, a loop over the
//     registered systems: build.ninja, a makefile with built files, go.mod).
//   - ReadAll: read each system found and merge; a Make or Ninja build inside a Cargo package with a
//     build script is read as the records of the run that drives it (graph.AttachDriven).
//   - Merge: one graph from several.
package systems

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/gocgo"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/install"
	"github.com/stalecheck/stalecheck/internal/makefile"
	"github.com/stalecheck/stalecheck/internal/ninja"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Options are what every reader is handed.
type Options struct {
	// StateDir is stalecheck's state folder (caches, content baselines); "" for none.
	StateDir string
	// NoNative skips opening archives, objects and binaries (no DWARF or archive-member clues).
	NoNative bool
	// CargoTargetDir and CargoBuildDir are `check --target-dir` and `--build-dir`: Cargo's only.
	CargoTargetDir, CargoBuildDir string
	// CargoProfiles are `check --profile`: the only Cargo profile folders read (cargo.ReadOptions.Profiles).
	CargoProfiles []string
	// OnCargoLockWait is cargo.ReadOptions.OnLockWait: told when a running cargo build makes the read wait.
	OnCargoLockWait func(lock string)
}

// ReadFunc reads the build of one system in dir (a folder Detect returned) into a graph. Its error
// names the folder or file that could not be read.
type ReadFunc func(ctx context.Context, dir string, opt Options) (*graph.Graph, error)

// A System is one build system stalecheck reads: its name (graph.Step.System), how a folder is known to
// hold one of its builds, and its reader. Detection is a loop over the registered systems, in the order
// they were registered; Cargo, found at or above PATH rather than below it, is the first.
type System struct {
	Name string
	// Detect says why dir holds a build of the system ("" when it does not), e.g. "build.ninja".
	// nil for Cargo, which cargoAt finds at or above PATH.
	Detect func(dir string) string
	// Descend: folders below a folder found are searched too (a Go module holding other builds); a
	// Make or Ninja folder is one build, whose subfolders are its own.
	Descend bool
	// Driven: a folder of this system inside a Cargo package with a build script may be that script's
	// build (make or ninja run from build.rs): Found.Package names the package, and ReadAll reads it as
	// the records of the run that links what it writes (graph.AttachDriven).
	Driven bool
	Read   ReadFunc
}

var (
	mu      sync.Mutex
	systems []System
)

// Register adds a system (its Detect, then its Read, in ReadAll); a second call for the same name
// replaces the first in place.
func Register(sys System) {
	mu.Lock()
	defer mu.Unlock()
	for i := range systems {
		if systems[i].Name == sys.Name {
			systems[i] = sys
			return
		}
	}
	systems = append(systems, sys)
}

// Registered returns the names of the registered systems, sorted.
func Registered() []string {
	mu.Lock()
	defer mu.Unlock()
	var out []string
	for _, s := range systems {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

func registered() []System {
	mu.Lock()
	defer mu.Unlock()
	return append([]System(nil), systems...)
}

func reader(name string) ReadFunc {
	mu.Lock()
	defer mu.Unlock()
	for _, s := range systems {
		if s.Name == name {
			return s.Read
		}
	}
	return nil
}

func init() {
	Register(System{Name: unit.System, Read: readCargo})
	Register(System{Name: "ninja", Driven: true, Detect: func(dir string) string {
		if !ninja.IsBuildFolder(dir) {
			return ""
		}
		why := "build.ninja"
		if g := ninja.DetectGenerator(dir); g != nil {
			why += " written by " + g.System + " (" + filepath.Base(g.Record) + ")"
		}
		return why
	}, Read: readNinja})
	Register(System{Name: "make", Driven: true, Detect: func(dir string) string {
		if f, err := makefile.Detect(dir); err == nil && f != nil {
			return fmt.Sprintf("%s and %d built file(s)", filepath.Base(f.Makefile), len(f.Built))
		}
		return ""
	}, Read: func(ctx context.Context, dir string, opt Options) (*graph.Graph, error) {
		return makefile.ReadGraph(ctx, dir, makefile.GraphOptions{StateDir: opt.StateDir, NoNative: opt.NoNative})
	}})
	Register(System{Name: gocgo.System, Descend: true, Detect: func(dir string) string {
		if isFile(filepath.Join(dir, "go.mod")) {
			return "go.mod"
		}
		return ""
	}, Read: func(ctx context.Context, dir string, opt Options) (*graph.Graph, error) {
		return gocgo.ReadGraph(ctx, dir, gocgo.GraphOptions{StateDir: opt.StateDir, NoNative: opt.NoNative})
	}})
}

// readCargo is the Cargo adapter as `check` always called it: cargo.Locate at or above dir with
// --target-dir/--build-dir, then cargo.Read (SkipNative from NoNative).
func readCargo(_ context.Context, dir string, opt Options) (*graph.Graph, error) {
	layout, err := cargo.Locate(dir, cargo.LocateOptions{TargetDir: opt.CargoTargetDir, BuildDir: opt.CargoBuildDir})
	if err != nil {
		return nil, err
	}
	return cargo.Read(layout, cargo.ReadOptions{SkipNative: opt.NoNative, StateDir: opt.StateDir, Profiles: opt.CargoProfiles, OnLockWait: opt.OnCargoLockWait, LiveRecords: true})
}

// Found is one build system found by Detect.
type Found struct {
	System string // "cargo", "make", "ninja", "go"
	// Dir is the folder its reader is given (absolute): PATH itself for Cargo (cargo.Locate walks up),
	// the build folder for Ninja, the makefile's folder for Make, the go.mod folder for Go.
	Dir string
	Why string // what was found, e.g. "build.ninja", "Makefile and 3 built files"
	// Package is, for a Make or Ninja folder inside a Cargo package with a build script (the nearest
	// Cargo.toml at or above Dir has a build.rs beside it), that package's folder: its build script
	// most likely drives this build, so ReadAll reads it only when --system names the system.
	Package string
}

// Walk bounds of Detect: folders below PATH, and folders looked at in all.
const (
	maxDepth   = 4
	maxFolders = 5000
)

// Detect returns the build systems at or under path, Cargo first, then by folder: Cargo when a
// Cargo.toml lies at or above path (or path is a Cargo target folder); below path, up to maxDepth
// folders down (hidden folders, node_modules and Cargo target folders skipped: a `cmake` crate's
// build tree in an OUT_DIR is the Cargo run's), each registered System's Detect in registration order:
// Ninja where a build.ninja lies (CMake with the Ninja generator and Meson write one; a CMakeCache.txt
// or meson-info/ without it is nothing built), Make where makefile.Detect finds a makefile with built
// files, Go where a go.mod lies. A folder found by a system that does not Descend (Ninja, Make) is
// not searched further. Unreadable folders are skipped.
func Detect(path string) []Found {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	var out []Found
	all := registered()
	if why := cargoAt(abs); why != "" {
		out = append(out, Found{System: unit.System, Dir: abs, Why: why})
	}
	seen := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if seen >= maxFolders {
			return
		}
		seen++
		if isTargetDir(dir) || filepath.Base(dir) == "target" && isFile(filepath.Join(filepath.Dir(dir), "Cargo.toml")) {
			return
		}
		for _, sys := range all {
			if sys.Detect == nil {
				continue
			}
			why := sys.Detect(dir)
			if why == "" {
				continue
			}
			f := Found{System: sys.Name, Dir: dir, Why: why}
			if sys.Driven {
				f.Package = scriptPackage(dir)
			}
			out = append(out, f)
			if !sys.Descend {
				return // one build: its subfolders are its own
			}
		}
		if depth >= maxDepth {
			return
		}
		ents, err := fsrec.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			n := e.Name()
			if !e.IsDir() || strings.HasPrefix(n, ".") || n == "node_modules" {
				continue
			}
			walk(filepath.Join(dir, n), depth+1)
		}
	}
	if st, err := fsrec.Stat(abs); err == nil && st.IsDir() {
		walk(abs, 0)
	}
	return out
}

// cargoAt says why path belongs to a Cargo build ("" when not): a Cargo.toml at or above it, or path
// being a target folder (cargo.Locate's own fallback).
func cargoAt(path string) string {
	for d := path; ; d = filepath.Dir(d) {
		if isFile(filepath.Join(d, "Cargo.toml")) {
			return filepath.Join(d, "Cargo.toml")
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if isTargetDir(path) {
		return "a Cargo target folder"
	}
	return ""
}

// scriptPackage returns the folder of the nearest Cargo.toml at or above dir when a build.rs lies
// beside it (a package whose build script may run make, cmake or ninja there), else "".
func scriptPackage(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if isFile(filepath.Join(d, "Cargo.toml")) {
			if isFile(filepath.Join(d, "build.rs")) {
				return d
			}
			return ""
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func isFile(p string) bool {
	st, err := fsrec.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// isTargetDir reports whether dir is a Cargo target folder (what cargo writes there: CACHEDIR.TAG,
// .rustc_info.json).
func isTargetDir(dir string) bool {
	for _, n := range []string{".rustc_info.json", "CACHEDIR.TAG"} {
		if _, err := fsrec.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// ErrUnknownSystem is returned by ReadAll for a --system name no reader is registered for.
var ErrUnknownSystem = errors.New("unknown build system")

// ErrNoSystem is returned by ReadAll when --system names systems none of which was found.
var ErrNoSystem = errors.New("no build system found")

// ReadAll detects the systems at or under path (Detect), keeps those named in only (all when empty),
// reads each with its registered reader and merges the graphs (Merge), Cargo's first. When Cargo is
// the only system found, or none is found, it is Cargo's graph and error exactly as cargo.Locate and
// cargo.Read give them (so a folder with nothing gives Cargo's "no Cargo.toml" error). A system found
// with no reader registered, or whose reader fails while another succeeds, is a graph note or
// problem naming its folder; a Make or Ninja folder inside a Cargo package with a build script
// (Found.Package) is read only when only names its system, else a note says why not; when every reader fails, the first error is returned.
// A Cargo target folder a Go binary links a staticlib or cdylib from (a sibling Rust workspace, not at
// or above path) is read too, unless only leaves Cargo out (a note says which, either way), so the
// merge ties the Go binary to the Cargo units behind the library.
// Errors: ErrUnknownSystem for a name in only that is not registered, ErrNoSystem when only names
// none of the systems found.
func ReadAll(ctx context.Context, path string, only []string, opt Options) (*graph.Graph, []Found, error) {
	want := map[string]bool{}
	for _, n := range only {
		if reader(n) == nil {
			return nil, nil, fmt.Errorf("--system %s: %w (known: %s)", n, ErrUnknownSystem, strings.Join(Registered(), ", "))
		}
		want[n] = true
	}
	all := Detect(path)
	var found, driven []Found
	var notes []string
	readsCargo := len(want) == 0 || want[unit.System]
	for _, f := range all {
		if f.Package != "" && readsCargo {
			driven = append(driven, f) // read with Cargo's graph, as the records of the run that drives it
			continue
		}
		if f.Package != "" && !want[f.System] {
			notes = append(notes, fmt.Sprintf("%s build at %s (%s) lies in the Cargo package %s, whose build script most likely drives it: not read on its own (--system %s reads it)",
				f.System, f.Dir, f.Why, f.Package, f.System))
			continue
		}
		if len(want) == 0 || want[f.System] {
			found = append(found, f)
		}
	}
	cargoOnly := len(found) == 0 || len(found) == 1 && found[0].System == unit.System
	if cargoOnly && readsCargo {
		g, err := reader(unit.System)(ctx, path, opt)
		if err != nil {
			if len(found) == 0 {
				if why := unreadableBuildFiles(path); why != "" {
					// Another system's build file is there but cannot be read: say so, not only that
					// the folder is no Cargo build.
					err = fmt.Errorf("%w; %s", err, why)
				}
			}
			return g, found, err
		}
		nested, more, drivenFound := readDriven(ctx, g, driven, want, opt)
		found = append(found, drivenFound...)
		if len(nested) > 0 {
			g = Merge(append([]*graph.Graph{g}, nested...)...)
		}
		g.Notes = append(g.Notes, notes...)
		g.Notes = append(g.Notes, more...)
		return g, found, nil
	}
	if len(found) == 0 {
		var names []string
		for _, f := range all {
			names = append(names, f.System+" at "+f.Dir)
		}
		what := "nothing"
		if len(names) > 0 {
			what = strings.Join(names, ", ")
		}
		return nil, nil, fmt.Errorf("%w for --system %s at or under %s (found: %s)", ErrNoSystem, strings.Join(only, ","), path, what)
	}
	var gs []*graph.Graph
	var firstErr error
	var failed []graph.Problem
	labels := map[*graph.Graph][2]string{} // system and folder of each graph read from found
	for _, f := range found {
		read := reader(f.System)
		if read == nil {
			notes = append(notes, fmt.Sprintf("%s build found at %s (%s), but stalecheck has no %s reader in this build: not checked", f.System, f.Dir, f.Why, f.System))
			continue
		}
		g, err := read(ctx, f.Dir, opt)
		if err != nil && f.System == unit.System && errors.Is(err, cargo.ErrNotBuilt) {
			notes = append(notes, fmt.Sprintf("Cargo workspace found (%s), but nothing is built in it: %v", f.Why, err))
			continue
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			failed = append(failed, graph.Problem{Path: f.Dir, Err: fmt.Sprintf("reading the %s build: %v", f.System, err)})
			continue
		}
		gs = append(gs, g)
		labels[g] = [2]string{f.System, f.Dir}
	}
	subs, subNotes, subFailed := readSubMakes(ctx, gs, found, opt)
	gs, notes, failed = append(gs, subs...), append(notes, subNotes...), append(failed, subFailed...)
	gs, notes, failed = pullLinkedCargo(ctx, gs, notes, failed, want, opt)
	if len(driven) > 0 {
		for _, cg := range gs {
			if cg.System != unit.System {
				continue
			}
			nested, more, drivenFound := readDriven(ctx, cg, driven, want, opt)
			gs = append(gs, nested...)
			notes = append(notes, more...)
			found = append(found, drivenFound...)
			driven = nil
			break
		}
		for _, f := range driven { // no Cargo graph was read
			notes = append(notes, fmt.Sprintf("%s build at %s (%s) lies in the Cargo package %s, whose build script most likely drives it: not read, as the Cargo build could not be",
				f.System, f.Dir, f.Why, f.Package))
		}
	}
	if len(gs) == 0 {
		if firstErr == nil {
			firstErr = fmt.Errorf("%w at or under %s: %s", ErrNoSystem, path, strings.Join(notes, "; "))
		}
		return nil, found, firstErr
	}
	g := Merge(gs...)
	if abs, err := filepath.Abs(path); err == nil && len(want) == 0 && cargoAt(abs) == "" && !slices.ContainsFunc(found, func(f Found) bool { return f.Dir == abs }) {
		if parts := unrelated(gs); len(parts) > 1 {
			return nil, found, severalBuilds(path, gs, parts, labels)
		}
	}
	// What each build folder's install copied out of it (a CMake or Meson install), once the graphs
	// of its sub-makes are joined in (the steps that make what was installed).
	for _, f := range found {
		if f.System != unit.System {
			install.Add(g, f.Dir)
		}
	}
	g.Problems = append(g.Problems, failed...)
	g.Notes = append(g.Notes, notes...)
	return g, found, nil
}

// ErrSeveralBuilds is returned by ReadAll for a PATH that is no build itself but holds several builds
// that share no file (a scratch folder of unrelated projects): one report would mix them.
var ErrSeveralBuilds = errors.New("several unrelated builds")

// unrelated groups the graphs that Merge tied together (a step of one depends on a step of another)
// or that one names a file inside another's build folder (a program linking a staticlib that
// `cargo clean -p` removed) or workspace (a Go module of a go.work that another module's program is
// built from): each group is one build, as the indexes of its graphs.
func unrelated(gs []*graph.Graph) [][]int {
	of := map[*graph.Step]int{}
	for i, g := range gs {
		for _, s := range g.Steps {
			of[s] = i
		}
	}
	parent := make([]int, len(gs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			i = parent[i]
		}
		return i
	}
	for i, g := range gs {
		for _, s := range g.Steps {
			for _, d := range s.Deps {
				if j, ok := of[d]; ok && find(j) != find(i) {
					parent[find(j)] = find(i)
				}
			}
		}
	}
	for i, g := range gs {
		var dirs []string
		for _, d := range []string{g.TargetDir, g.BuildDir, g.Workspace} {
			if d != "" {
				dirs = append(dirs, filepath.Clean(d)+string(filepath.Separator))
			}
		}
		if len(dirs) == 0 {
			continue
		}
		for j, h := range gs {
			if find(j) == find(i) {
				continue
			}
		steps:
			for _, s := range h.Steps {
				for _, in := range s.Inputs {
					for _, d := range dirs {
						if strings.HasPrefix(in.File.Path, d) {
							parent[find(j)] = find(i)
							break steps
						}
					}
				}
			}
		}
	}
	byRoot := map[int][]int{}
	var order []int
	for i := range gs {
		r := find(i)
		if _, ok := byRoot[r]; !ok {
			order = append(order, r)
		}
		byRoot[r] = append(byRoot[r], i)
	}
	var out [][]int
	for _, r := range order {
		out = append(out, byRoot[r])
	}
	return out
}

// severalBuilds says which builds PATH holds (each group of tied graphs, by the system and folder of
// the graphs read from what Detect found) and how to check one.
func severalBuilds(path string, gs []*graph.Graph, parts [][]int, labels map[*graph.Graph][2]string) error {
	var list []string
	first := ""
	for _, part := range parts {
		var names []string
		for _, i := range part {
			l, ok := labels[gs[i]]
			if !ok { // a Cargo build read because another links from it
				l = [2]string{gs[i].System, gs[i].TargetDir}
			}
			names = append(names, l[0]+" at "+l[1])
			if first == "" {
				first = l[1]
			}
		}
		if len(names) > 0 {
			list = append(list, strings.Join(names, " + "))
		}
	}
	return fmt.Errorf("%w under %s, which share no file: %s; check one of them (stalecheck check %s)",
		ErrSeveralBuilds, path, strings.Join(list, "; "), first)
}

// readDriven reads each build folder of cands (Make or Ninja folders inside a Cargo package with a build
// script) and attaches it to the Cargo graph cg (graph.AttachDriven) when a build-script run there
// links what it writes: that nested build is the run's own record of what went into the library. It
// returns the graphs attached and the candidates they came from; a folder nothing links, or one that
// cannot be read, gets a note instead and is left out, unless want names its system, which reads it on
// its own as before.
func readDriven(ctx context.Context, cg *graph.Graph, cands []Found, want map[string]bool, opt Options) (graphs []*graph.Graph, notes []string, found []Found) {
	for _, f := range cands {
		read := reader(f.System)
		if read == nil {
			continue
		}
		g, err := read(ctx, f.Dir, opt)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s build at %s (%s) lies in the Cargo package %s, whose build script most likely drives it, but it could not be read: %v",
				f.System, f.Dir, f.Why, f.Package, err))
			continue
		}
		drivers := graph.AttachDriven(cg, g, f.Dir)
		if len(drivers) == 0 && !want[f.System] {
			notes = append(notes, fmt.Sprintf("%s build at %s (%s) lies in the Cargo package %s, but no build-script run links what it writes: not read (--system %s reads it on its own)",
				f.System, f.Dir, f.Why, f.Package, f.System))
			continue
		}
		if len(drivers) > 0 {
			names := make([]string, len(drivers))
			for i, d := range drivers {
				names[i] = d.Name
			}
			f.Why += "; run by the build script of " + drivers[0].Package + " (" + strings.Join(names, ", ") + "), read as that run's records"
		}
		graphs = append(graphs, g)
		found = append(found, f)
	}
	return graphs, notes, found
}

// unreadableBuildFiles names the build files of the systems stalecheck reads that are in dir but are
// not regular files (a FIFO, a link to a device) or cannot be read, with why; "" when none.
func unreadableBuildFiles(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	var out []string
	for _, n := range []string{"GNUmakefile", "makefile", "Makefile", "build.ninja", "go.mod", "Cargo.toml"} {
		p := filepath.Join(dir, n)
		if _, err := fsrec.Lstat(p); err != nil {
			continue
		}
		if err := safeio.Regular(p); err != nil {
			out = append(out, fmt.Sprintf("%s is here but cannot be read as a build file: %v", p, err))
		}
	}
	return strings.Join(out, "; ")
}

// maxSubMakes bounds the folders read for recursive makes (a makefile that runs make in itself, or a
// tree of hundreds of sub-makes, is not followed for ever).
const maxSubMakes = 64

// readSubMakes reads the folders the Make builds of gs run make in ($(MAKE) -C lib: makefile.Build
// SubMakes), and theirs in turn, each once and not those found already: a recursive make's library is
// made by the rules of the sub-make, which the top makefile's data base does not hold. Merge then ties
// what the top build links (lib/libutil.a) to the sub-build's step that makes it, so its sources are
// judged. A folder that cannot be read is a problem naming it.
func readSubMakes(ctx context.Context, gs []*graph.Graph, found []Found, opt Options) (subs []*graph.Graph, notes []string, failed []graph.Problem) {
	read := reader(makefile.System)
	if read == nil {
		return nil, nil, nil
	}
	done := map[string]bool{} // folder NUL makefile ("" for make's own choice)
	for _, f := range found {
		done[f.Dir+"\x00"] = true
	}
	// first: the steps every build of a graph runs first, as make remakes its makefile before reading
	// it: those of the graph and of the makes that ran it that make their own makefile (CMake's
	// configure step writes the tree's Makefile). Each step of a sub-make keeps them live.
	first := map[*graph.Graph][]*graph.Step{}
	queue := append([]*graph.Graph(nil), gs...)
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		b, ok := g.Origins[makefile.System].(*makefile.Build)
		if !ok {
			continue
		}
		for _, s := range g.Steps {
			for _, o := range s.Outputs {
				if o.Path == b.Folder.Makefile {
					first[g] = append(first[g], s)
					break
				}
			}
		}
		done[b.Folder.Dir+"\x00"] = true
		done[b.Folder.Dir+"\x00"+b.Folder.Makefile] = true
		for _, sm := range b.SubMakes {
			key, what := sm.Dir+"\x00"+sm.Makefile, sm.Dir
			if sm.Makefile != "" {
				what = sm.Makefile + " in " + sm.Dir
			}
			if done[key] {
				continue
			}
			done[key] = true
			if len(subs) >= maxSubMakes {
				notes = append(notes, fmt.Sprintf("recursive make of %s not read: more than %d sub-makes", what, maxSubMakes))
				continue
			}
			var sg *graph.Graph
			var err error
			if sm.Makefile != "" {
				sg, err = makefile.ReadGraphFile(ctx, sm.Dir, sm.Makefile, makefile.GraphOptions{StateDir: opt.StateDir, NoNative: opt.NoNative})
			} else {
				sg, err = read(ctx, sm.Dir, opt)
			}
			if err != nil {
				failed = append(failed, graph.Problem{Path: orStr(sm.Makefile, sm.Dir), Err: fmt.Sprintf("reading the make build a recipe of %s runs (recursive make): %v", b.Folder.Makefile, err)})
				continue
			}
			first[sg] = first[g]
			for _, s := range sg.Steps {
				for _, f := range first[g] {
					if !slices.Contains(s.KeepsLive, f) {
						s.KeepsLive = append(s.KeepsLive, f)
					}
				}
			}
			subs = append(subs, sg)
			queue = append(queue, sg)
		}
	}
	return subs, notes, failed
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readNinja reads the Ninja build folder dir: build.ninja, and each other manifest ninja runs there
// with -f (ninja.OtherManifests: CMake's Ninja Multi-Config writes build-<Config>.ninja, and
// build.ninja builds the default configuration only) whose outputs build.ninja does not make too; they
// share the folder's logs, and their graphs are merged.
func readNinja(ctx context.Context, dir string, opt Options) (*graph.Graph, error) {
	g, err := ninja.ReadGraph(ctx, dir, ninja.GraphOptions{StateDir: opt.StateDir, NoNative: opt.NoNative})
	if err != nil {
		return nil, err
	}
	gs := []*graph.Graph{g}
	made := map[string]bool{}
	for _, s := range g.Steps {
		for _, o := range s.Outputs {
			made[o.Path] = true
		}
	}
	for _, om := range ninja.OtherManifests(dir) {
		path := filepath.Join(dir, om.Name)
		if om.Err != nil {
			if om.MadeBy != "" {
				// A manifest the build makes and expects (CMake's build-Release.ninja): what it builds is
				// not known, which is no pass.
				g.AddProblem(path, fmt.Errorf("%w (%s makes it): ninja -f %s cannot run, and the programs it builds were not checked", om.Err, om.MadeBy, om.Name))
			}
			continue
		}
		other, err := ninja.ReadGraph(ctx, dir, ninja.GraphOptions{StateDir: opt.StateDir, NoNative: opt.NoNative, Manifest: om.Name})
		if err != nil {
			if om.MadeBy != "" {
				g.AddProblem(path, fmt.Errorf("ninja would refuse it (%v): the programs it builds were not checked", err))
			} else {
				// A *.ninja file at the top that nothing makes and that is no manifest of its own (a
				// fragment another tool includes).
				g.Notes = append(g.Notes, fmt.Sprintf("%s not read: %v", path, err))
			}
			continue
		}
		// A manifest of the default configuration again (build-Debug.ninja beside build.ninja) adds
		// nothing: its steps would be the same twice.
		var keep []*graph.Step
		for _, s := range other.Steps {
			if len(s.Outputs) == 0 || !made[s.Outputs[0].Path] {
				keep = append(keep, s)
			}
		}
		if len(keep) == 0 {
			continue
		}
		for _, s := range keep {
			for _, o := range s.Outputs {
				made[o.Path] = true
			}
		}
		gs = append(gs, other)
	}
	return Merge(gs...), nil
}
