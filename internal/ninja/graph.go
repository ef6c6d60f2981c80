package ninja

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// System is the graph.Step.System of every Ninja step.
const System = "ninja"

// GraphOptions tune ReadGraph (the same two fields as systems.Options).
type GraphOptions struct {
	// StateDir is stalecheck's state folder: the include scan keeps its parses there
	// (cinclude.StoreFile).
	StateDir string
	// NoNative is accepted for symmetry: the Ninja reader opens no archive or object.
	NoNative bool
	// Manifest is Options.Manifest: "" reads build.ninja.
	Manifest string
}

// Origin is a Ninja edge's own record in the graph (graph.Step.Origin): the edge as Read read it and
// the build it belongs to. It supplies Ninja's words (graph.Worded) and fix commands.
type Origin struct {
	Edge  *Edge
	Build *Build
}

// What the Origin answers of the adapter contract (internal/graph/origin.go).
var _ interface {
	graph.Worded
	graph.Rebuilder
	graph.Verdicter
	graph.DepfileGapper
	graph.OwnReasoner
} = (*Origin)(nil)

// Words are Ninja's words for what rules say about the edge.
func (o *Origin) Words() graph.Words {
	ref := "the edge's oldest output, whose mtime Ninja compares inputs against"
	if o.Edge.Ref.FromLog {
		ref = "the mtime .ninja_log recorded for this restat edge's output (the newest input's when its command left the output alone), which Ninja compares inputs against"
	}
	return graph.Words{
		Tool:       "Ninja",
		Watched:    "Ninja watches it for " + firstOut(o.Edge),
		NotWatched: "the Ninja edge " + firstOut(o.Edge) + " (rule " + o.Edge.Rule + ") has no depfile or deps entry naming it",
		Reference:  ref,
	}
}

// Rebuild is the command that redoes the edge now that Ninja knows it must: the plain build, naming
// the programs of s's roots that it does not build (the manifest's `default` statements leave them
// out: CMake's EXCLUDE_FROM_ALL, a hand-written `default app1`), which only a build naming them redoes.
func (o *Origin) Rebuild(s *graph.Step) string {
	var targets []string
	if s != nil {
		for _, r := range s.Roots {
			if ro, ok := r.Step.Origin.(*Origin); ok && ro.Build == o.Build {
				if out := firstOut(ro.Edge); !o.Build.builtByDefault(out) && !slices.Contains(targets, out) {
					targets = append(targets, out)
				}
			}
		}
	}
	other := o.Build.ManifestName != "" && o.Build.ManifestName != DefaultManifest
	if g := o.Build.Generator; g != nil && g.System == "cmake" {
		cmd := "cmake --build " + o.Build.Dir
		if cfg, ok := strings.CutPrefix(strings.TrimSuffix(o.Build.ManifestName, ".ninja"), "build-"); other && ok && cfg != "" {
			cmd += " --config " + cfg // Ninja Multi-Config: the configuration's own manifest
			other = false
		}
		if !other {
			if len(targets) > 0 {
				return cmd + " --target " + strings.Join(targets, " ")
			}
			return cmd
		}
	}
	cmd := "ninja -C " + o.Build.Dir
	if other {
		cmd += " -f " + o.Build.ManifestName
	}
	if len(targets) > 0 {
		return cmd + " " + strings.Join(targets, " ")
	}
	return cmd
}

// builtByDefault reports whether a plain ninja builds the manifest path out: there is no `default`
// statement (ninja then builds every output no edge takes in), or out is a default target or an input,
// at any depth, of an edge that makes one.
func (b *Build) builtByDefault(out string) bool {
	b.defaultsOnce.Do(func() {
		if b.Manifest == nil || len(b.Manifest.Defaults) == 0 {
			return
		}
		b.defaults = map[string]bool{}
		byOut := map[string]*ManifestEdge{}
		for _, e := range b.Manifest.Edges {
			for _, o := range append(append([]string{}, e.Outputs...), e.ImplicitOutputs...) {
				byOut[o] = e
			}
		}
		stack := append([]string{}, b.Manifest.Defaults...)
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if b.defaults[p] {
				continue
			}
			b.defaults[p] = true
			if e := byOut[p]; e != nil {
				for _, l := range [][]string{e.Explicit, e.Implicit, e.OrderOnly} {
					stack = append(stack, l...)
				}
			}
		}
	})
	return b.defaults == nil || b.defaults[out]
}

// ForceRebuild is what makes Ninja see input and redo the edge: a depfile the compiler writes, then
// removing the stale output and building again.
func (o *Origin) ForceRebuild(s *graph.Step, input string) string {
	e := o.Edge
	how := "give rule " + e.Rule + " a depfile the compiler writes (depfile = $out.d, deps = gcc, -MD -MF $out.d on the command)"
	if e.Compile != nil && strings.Contains(filepath.Base(e.Compile.Compiler), "nvcc") {
		how = "make nvcc write the depfile rule " + e.Rule + " names (-MD -MF $out.d, nvcc 11.8 writes it only when asked)"
	}
	if e.MissingDepfile == "" {
		how = "name " + filepath.Base(input) + " as an implicit input of " + firstOut(e)
	}
	return how + ", then: rm " + o.Build.abs(firstOut(e)) + " && " + o.Rebuild(s)
}

// DepfileGap says why Ninja cannot know the headers the edge's compile reads: its rule, its command,
// the depfile it names (absolute; "" when none) and whether it is on disk, and why in words (Edge.
// MissingDepfile); why is "" when there is no gap.
func (o *Origin) DepfileGap() (rule, command, depfile string, onDisk bool, why string) {
	e := o.Edge
	if e.MissingDepfile == "" {
		return "", "", "", false, ""
	}
	return e.Rule + " (" + e.File + ":" + fmt.Sprint(e.Line) + ")", e.Command, e.DepfilePath, e.DepfileOnDisk, e.MissingDepfile
}

// DepfileFix is the change that makes Ninja see the headers of a compile with no depfile.
func (o *Origin) DepfileFix() string { return o.ForceRebuild(nil, "") }

// OwnReason is why ninja would redo the edge for a reason of its own besides a newer input: its command
// line differs from the one .ninja_log records (a flag edited in the manifest), or the log has none;
// with the manifest file that holds the edge. ok is false when neither ninja's dry run nor Read's own
// evaluation says so.
func (o *Origin) OwnReason() (why, record string, ok bool) {
	for _, w := range append([]string{o.Edge.SelfDirty}, o.Edge.Why...) {
		if strings.HasPrefix(w, "command line changed") || strings.HasPrefix(w, "command line not found in log") {
			return w, o.commandRecord(), true
		}
	}
	return "", "", false
}

// commandRecord is the manifest file that changed the edge's command: of the files the manifest read
// (build.ninja and what it includes), the newest one modified after the edge's outputs were written (an
// included flags.ninja), else the one that holds the edge's build statement; the log without a
// manifest.
func (o *Origin) commandRecord() string {
	m := o.Build.Manifest
	if m == nil || len(m.Files) == 0 {
		return o.Build.LogPath
	}
	best, bestNS := "", o.Edge.Ref.OutputMTime
	for _, f := range m.Files {
		if fi, err := fsrec.Stat(o.Build.abs(f)); err == nil && fi.ModTime().UnixNano() > bestNS {
			best, bestNS = o.Build.abs(f), fi.ModTime().UnixNano()
		}
	}
	if best != "" {
		return best
	}
	if o.Edge.File != "" {
		return o.Build.abs(o.Edge.File)
	}
	return o.Build.abs(m.Files[0])
}

// Verdict is what ninja's own dry run says of the edge, for evidence: whether `ninja -n` would run it
// and its explain lines; ok is false when no dry run was made (see Build.DryRunErr).
func (o *Origin) Verdict() (verdict string, ok bool) {
	if o.Build.DryRun == nil {
		return "", false
	}
	if o.Build.DryRun.Self {
		return "stalecheck's evaluation of ninja's rules (output and input mtimes, the deps log, the .ninja_log command hash and mtime) finds no work for any edge, as ninja -n would say (not run)", true
	}
	if !o.Edge.WouldRun {
		return "ninja -n -d explain would not run this edge (no work to do for it)", true
	}
	v := "ninja -n -d explain would run this edge"
	if len(o.Edge.Why) > 0 {
		why := o.Edge.Why
		if len(why) > 3 {
			why = append(why[:3:3], fmt.Sprintf("and %d more", len(o.Edge.Why)-3))
		}
		v += ": " + strings.Join(why, "; ")
	}
	return v, true
}

// ReadGraph reads the Ninja build folder dir (Read, with the dry run) into the neutral graph: one
// graph.Step per non-phony edge (System "ninja", Kind graph.Compile, ID "ninja:" + its first output,
// absolute; Reference its oldest output, Exists false when an output is missing; Outputs every
// output), Inputs from the manifest (explicit and implicit: graph.Declared, Watched), the deps log
// and depfiles (graph.Depfile, Watched as Ninja reads them), the compile command's source
// (graph.CommandLine) and the include scan (graph.IncludeScan); order-only inputs only give Deps.
// Deps: the edges that make an input. Roots: the outputs on disk of edges no other edge consumes
// (Kind "lib" for .a/.so, "object" for .o, else "bin"). Errors: Read's (no or a bad build.ninja);
// the logs' and the dry run's errors are graph problems.
func ReadGraph(ctx context.Context, dir string, opt GraphOptions) (*graph.Graph, error) {
	b, err := Read(ctx, dir, Options{StateDir: opt.StateDir, Manifest: opt.Manifest})
	if err != nil {
		return nil, err
	}
	return b.Graph(), nil
}

var howOf = map[How]graph.How{HowExplicit: graph.Declared, HowImplicit: graph.Declared, HowDepsLog: graph.Depfile,
	HowDepfile: graph.Depfile, HowCommandLine: graph.CommandLine, HowIncludeScan: graph.IncludeScan}

// Graph turns the build into the neutral graph (see ReadGraph).
func (b *Build) Graph() *graph.Graph {
	g := &graph.Graph{System: System, Workspace: b.Dir, TargetDir: b.Dir, BuildDir: b.Dir, Origins: map[string]any{System: b}}
	if b.Generator != nil && b.Generator.Source != "" {
		g.Workspace = b.Generator.Source
		if !within(b.Generator.Source, b.Dir) {
			g.GeneratedDirs = []string{b.Dir} // CMake's or Meson's out-of-source build folder
		}
	}
	if b.Generator != nil && b.Generator.Err != nil {
		g.AddProblem(b.Generator.Record, b.Generator.Err)
	}
	if b.LogErr != nil {
		g.AddProblem(b.LogPath, b.LogErr)
	}
	if b.DepsErr != nil {
		g.AddProblem(b.DepsPath, b.DepsErr)
	}
	if b.DryRunErr != nil {
		g.Notes = append(g.Notes, "ninja -n: "+b.DryRunErr.Error())
	}
	g.Notes = append(g.Notes, b.Notes...)
	byOut := map[string]*graph.Step{}
	type dep struct {
		s     *graph.Step
		paths []string
	}
	var deps []dep
	for _, e := range b.Edges {
		s := &graph.Step{System: System, ID: "ninja:" + b.abs(firstOut(e)), Kind: graph.Compile, Name: firstOut(e), Label: firstOut(e),
			RecordDir: filepath.Dir(b.LogPath), Origin: &Origin{Edge: e, Build: b},
			// The project's own files: Ninja tracks them, and they change (content baselines judge them).
			PathPackage: true}
		s.Config = graph.Config{{Key: "rule", Value: e.Rule}}
		if e.ManifestEdge != nil {
			s.Program = graph.CommandProgram(e.Command)
			// Ninja redoes an edge whose command changed (the log's command hash).
			s.Command, s.OwnCmd().CommandWatched, s.OwnCmd().CommandDir = e.Command, true, b.Dir
		}
		if c := e.Compile; c != nil {
			sp := c.searchPath()
			s.OwnCmd().Compiles = []graph.CompilerRun{{Source: c.Source, Dir: c.Dir, Quote: sp.Quote, Dirs: sp.Dirs, System: sp.System, After: sp.After}}
		}
		if e.DyndepErr != nil && (!errors.Is(e.DyndepErr, fs.ErrNotExist) || edgeBuilt(e)) {
			// Ninja refuses the edge's dyndep file (or it is gone though the edge was built, which read
			// it): the implicit inputs it adds are unknown, so is whether ninja redoes the edge. The file
			// is an output of the build (its scan edge), not a record of ninja's.
			dd := b.abs(e.Dyndep)
			g.Problems = append(g.Problems, graph.Problem{Path: dd, Err: e.DyndepErr.Error(), Step: s,
				Fix: fmt.Sprintf("let ninja write it again (the edge that makes it reruns, then %s is judged by what it lists): rm -f %s && %s",
					firstOut(e), shellEscape(dd), s.Origin.(*Origin).Rebuild(s))})
		}
		if e.DepfileErr != nil {
			// A depfile ninja reads (or one left over beside a deps log) that cannot be read or parsed:
			// the headers it would list are unknown, and ninja itself fails on it.
			g.AddStepProblem(s, e.DepfilePath, e.DepfileErr)
		}
		for _, o := range e.OutputStats {
			fi := graph.FileInfo{Path: o.Path, MTimeNS: o.MTime, Size: o.Size, Exists: o.Exists}
			s.Outputs = append(s.Outputs, fi)
			byOut[fi.Path] = s
		}
		if e.Ref.OldestOutput != "" {
			s.Reference = graph.FileInfo{Path: e.Ref.OldestOutput, MTimeNS: e.Ref.OutputMTime, Exists: len(e.Ref.MissingOutputs) == 0}
			for _, o := range s.Outputs {
				if o.Path == e.Ref.OldestOutput {
					s.Reference.Size = o.Size
				}
			}
		} else {
			s.Reference = graph.FileInfo{Path: b.abs(firstOut(e))}
		}
		var paths []string
		for _, in := range e.Inputs {
			paths = append(paths, in.Path)
			gi := &graph.Input{File: graph.FileInfo{Path: in.Path, MTimeNS: in.MTime, Size: in.Size, Exists: in.Exists}, Watched: in.Watched}
			for _, c := range in.Clues {
				h, ok := howOf[c.How]
				if !ok {
					continue
				}
				detail := c.Detail
				if string(c.How) != string(h) {
					detail = string(c.How) + " " + c.Detail
				}
				gi.How, gi.Detail = append(gi.How, h), append(gi.Detail, detail)
				if in.Watched && gi.WatchedBy == "" && c.How != HowCommandLine && c.How != HowIncludeScan && c.How != HowOrderOnly {
					gi.WatchedBy = string(c.How) + " " + c.Detail
				}
			}
			if len(gi.How) == 0 {
				continue // order-only only
			}
			s.Inputs = append(s.Inputs, gi)
		}
		g.Steps = append(g.Steps, s)
		deps = append(deps, dep{s, paths})
	}
	consumed := map[*graph.Step]bool{}
	// An edge that regenerates a manifest file (CMake's and Meson's build.ninja from CMakeLists.txt or
	// meson.build) comes first in every build: ninja runs it, reads the new manifest, and judges every
	// other edge by it. So it is live with each of them (KeepsLive), never a root of its own.
	manifests := map[string]bool{}
	if b.Manifest != nil {
		for _, f := range b.Manifest.Files {
			manifests[b.abs(f)] = true
		}
	}
	var regen []*graph.Step
	for _, s := range g.Steps {
		for _, o := range s.Outputs {
			if manifests[o.Path] {
				regen = append(regen, s)
				consumed[s] = true
				break
			}
		}
	}
	for _, s := range g.Steps {
		if !consumed[s] {
			s.KeepsLive = append(s.KeepsLive, regen...)
		}
	}
	if b.Generator != nil {
		for _, s := range regen {
			for _, in := range s.Inputs {
				in.Meaning = b.Generator.Meanings[in.File.Path]
			}
		}
	}
	for _, d := range deps {
		for _, p := range d.paths {
			if p2 := byOut[p]; p2 != nil && p2 != d.s && !contains(d.s.Deps, p2) {
				d.s.Deps = append(d.s.Deps, p2)
				p2.Dependents = append(p2.Dependents, d.s)
				consumed[p2] = true
			}
		}
	}
	for _, s := range g.Steps {
		if consumed[s] {
			continue
		}
		for _, o := range s.Outputs {
			if !o.Exists {
				continue
			}
			kind := "bin"
			switch ext := filepath.Ext(o.Path); {
			case ext == ".a" || ext == ".so" || strings.Contains(filepath.Base(o.Path), ".so."):
				kind = "lib"
			case ext == ".o" || ext == ".obj":
				kind = "object"
			}
			g.Roots = append(g.Roots, &graph.Root{File: o, Kind: kind, Step: s, TiedBy: "edge"})
		}
	}
	g.MarkLive()
	return g
}

// BuildFolder is the folder read (for reports).
func (b *Build) BuildFolder() string { return b.Dir }

func statFile(p string) graph.FileInfo {
	fi := graph.FileInfo{Path: p}
	if info, err := fsrec.Stat(p); err == nil {
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			fi.Exists, fi.Size, fi.MTimeNS = true, st.Size, st.Mtim.Sec*1e9+st.Mtim.Nsec
		}
	}
	return fi
}

func contains(ss []*graph.Step, s *graph.Step) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// within reports whether dir is path or inside it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// edgeBuilt reports whether every output of e is there: it was built (and read its dyndep file).
func edgeBuilt(e *Edge) bool {
	for _, o := range e.OutputStats {
		if !o.Exists {
			return false
		}
	}
	return len(e.OutputStats) > 0
}
