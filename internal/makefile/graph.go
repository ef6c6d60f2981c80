package makefile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// System is the graph.Step.System of every Make step.
const System = "make"

// GraphOptions tune ReadGraph (the same two fields as systems.Options).
type GraphOptions struct {
	// StateDir is stalecheck's state folder; the Make adapter keeps nothing there.
	StateDir string
	// NoNative drops the DWARF and archive-member clues from the graph (Read still opens the objects
	// and archives; the members of an archive no rule builds are not reported then).
	NoNative bool
}

// Origin is a Make step's own record in the graph (graph.Step.Origin): the reader's Step, the folder
// it was read in and the facts Read found about it. It supplies Make's words (graph.Worded) and fix
// commands.
type Origin struct {
	Step   *Step
	Folder *Folder
	Build  *Build
	Facts  []Fact
	// GoalPass is false when make's goal pass was not run (ErrTargetShell): no -q verdict then.
	GoalPass bool
}

// What the Origin answers of the adapter contract (internal/graph/origin.go).
var _ interface {
	graph.Worded
	graph.Rebuilder
	graph.Verdicter
	graph.DepfileGapper
} = (*Origin)(nil)

// Words are Make's words for what rules say about the step.
func (o *Origin) Words() graph.Words {
	return graph.Words{
		Tool:       "Make",
		Watched:    "make has it as a prerequisite of " + o.Step.Target,
		NotWatched: "make does not have it as a prerequisite of " + o.Step.Target,
		Reference:  "the target " + o.Step.Target + ", whose mtime make compares prerequisites against",
	}
}

// Rebuild is the command that redoes the step now that make knows it must: make in its folder, naming
// the programs of s's roots that make's default goal does not reach (the first target builds app1
// only), which only a make naming them redoes.
func (o *Origin) Rebuild(s *graph.Step) string {
	var targets []string
	if s != nil && o.Build != nil {
		for _, r := range s.Roots {
			if ro, ok := r.Step.Origin.(*Origin); ok && ro.Build == o.Build && !o.Build.builtByDefault(ro.Step.Target) && !slices.Contains(targets, ro.Step.Target) {
				targets = append(targets, ro.Step.Target)
			}
		}
	}
	cmd := o.Folder.MakeCommand()
	if len(targets) > 0 {
		cmd += " " + strings.Join(targets, " ")
	}
	return o.unmakeableFix() + cmd
}

// unmakeableFix is what must go before make runs at all when a prerequisite of the step is gone and no
// rule makes it (make stops with "No rule to make target"): the depfile that names it removed (the
// next compile writes it afresh), or a word to mend the makefile's rule. "" when nothing is gone.
func (o *Origin) unmakeableFix() string {
	if o.Step == nil || len(o.Step.Unmakeable) == 0 {
		return ""
	}
	var rm []string
	for _, u := range o.Step.Unmakeable {
		if u.Depfile == "" {
			return "remove " + filepath.Base(u.Path) + " from the prerequisites of " + o.Step.Target + " in " + filepath.Base(o.Folder.Makefile) + " (no rule makes it), then: "
		}
		if !slices.Contains(rm, u.Depfile) {
			rm = append(rm, u.Depfile)
		}
	}
	return "rm " + strings.Join(rm, " ") + " && "
}

// ForceRebuild is what makes make see input and redo the step: include the depfiles make writes (or
// name the input as a prerequisite), then remove the stale target and make again.
func (o *Origin) ForceRebuild(_ *graph.Step, input string) string {
	how := "name " + filepath.Base(input) + " as a prerequisite of " + o.Step.Target
	if o.Step.Depfile != "" && !o.Step.Included {
		how = "include the depfiles in " + filepath.Base(o.Folder.Makefile) + " (-include $(OBJS:.o=.d)) so make sees " + filepath.Base(input)
	}
	return how + ", then: rm " + o.Step.Output.Path + " && " + o.Folder.MakeCommand()
}

// DepfileGap says why make cannot know the headers the step's compile reads: the rule, the recipe,
// the depfile path looked for and whether it is on disk, and why in words; why is "" when there is
// no gap (Read's missing-depfile fact).
func (o *Origin) DepfileGap() (rule, command, depfile string, onDisk bool, why string) {
	for _, f := range o.Facts {
		if f.Kind == MissingDepfile {
			rule = o.Step.RuleFrom
			if rule == "" || rule == "built-in" {
				rule = "make's built-in %.o rule"
			}
			return rule, strings.Join(o.Step.Recipe, "; "), f.Path, false,
				"the recipe writes no depfile: looked for " + strings.Join(f.Detail, ", ")
		}
	}
	return "", "", "", false, ""
}

// Verdict is what make's own -q pass says of the target, for evidence.
func (o *Origin) Verdict() (string, bool) {
	if !o.GoalPass {
		return "", false
	}
	if o.Step.MakeRemakes {
		return "make -q -n -p says " + o.Step.Target + " needs to be updated", true
	}
	return "make -q -n -p does not call " + o.Step.Target + " out of date", true
}

// DepfileFix is the change that makes make see the headers of a compile with no depfile.
func (o *Origin) DepfileFix() string {
	return "add -MMD -MP to the compile flags and -include $(OBJS:.o=.d) to " + filepath.Base(o.Folder.Makefile) +
		", then: rm " + o.Step.Output.Path + " && " + o.Folder.MakeCommand()
}

// ReadGraph reads the Make build in dir (Detect, then Read) into the neutral graph: one graph.Step per
// object, archive and program (System "make", Kind graph.Compile, ID "make:" + the target's absolute
// path, Reference and Outputs the target file), with Inputs from make's prerequisites (graph.Declared,
// Watched), its depfile (graph.Depfile), DWARF line tables (graph.DWARF) and archive members
// (graph.ArchiveMember; a member no rule builds is an input at <archive folder>/<member> with only
// that clue), Watched when make has the file as a prerequisite; headers under /usr/include and
// /usr/lib are left out, as Read never reports them. Deps: the steps that make an input. Roots: every
// step whose target exists and no other step consumes (Kind "bin", "lib" for .a/.so, "object").
// Errors: dir is not a Make folder with built files, or Read's (make refused the makefile, a deadline);
// unreadable depfiles, objects and archives are graph problems.
func ReadGraph(ctx context.Context, dir string, opt GraphOptions) (*graph.Graph, error) {
	f, err := Detect(dir)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, fmt.Errorf("%s: no makefile with built objects, archives or programs", dir)
	}
	b, err := Read(ctx, f)
	if err != nil {
		return nil, err
	}
	return b.Graph(opt), nil
}

// ReadGraphFile is ReadGraph of the makefile file (absolute) read in dir, as a recipe's
// `$(MAKE) -f file` runs it: no built file is required (a makefile that only runs others, as CMake's
// CMakeFiles/Makefile2 does, yields sub-makes and no step).
func ReadGraphFile(ctx context.Context, dir, file string, opt GraphOptions) (*graph.Graph, error) {
	if err := safeio.Regular(file); err != nil {
		return nil, err
	}
	f := &Folder{Dir: filepath.Clean(dir), Makefile: filepath.Clean(file)}
	if err := walkBuilt(f.Dir, 0, func(p string) bool {
		f.Built = append(f.Built, p)
		return len(f.Built) < maxBuilt
	}); err != nil {
		return nil, err
	}
	sort.Strings(f.Built)
	b, err := Read(ctx, f)
	if err != nil {
		return nil, err
	}
	return b.Graph(opt), nil
}

// Graph turns what Read learnt into the neutral graph (see ReadGraph).
func (b *Build) Graph(opt GraphOptions) *graph.Graph {
	g := &graph.Graph{System: System, Workspace: b.Folder.Dir, TargetDir: b.Folder.Dir, BuildDir: b.Folder.Dir, Origins: map[string]any{System: b}}
	for _, p := range b.Problems {
		g.AddProblem(p.Path, p.Err)
	}
	goal := true
	for _, p := range b.Problems {
		if errors.Is(p.Err, ErrTargetShell) {
			goal = false
		}
	}
	facts := map[string][]Fact{}
	for _, f := range b.Facts {
		facts[f.Step] = append(facts[f.Step], f)
	}
	byOut := map[string]*graph.Step{}
	for _, s := range b.Steps {
		gs := &graph.Step{System: System, ID: "make:" + s.Output.Path, Kind: graph.Compile, Name: s.Target, Label: s.Target,
			RecordDir: b.Folder.Dir, Reference: fileInfo(s.Output), Outputs: []graph.FileInfo{fileInfo(s.Output)},
			// The project's own files: make tracks them, and they change (content baselines judge them).
			PathPackage: true}
		switch {
		case subMake(s):
			// Its command is a recursive make: the command that makes the file is the sub-build's step's
			// (internal/systems reads that build), whose command baseline is keyed by the same file.
		case s.Complete && len(s.Commands) > 0 && s.RuleFrom != "" && s.RuleFrom != "built-in":
			// make compares mtimes only: a recipe edited in the makefile does not redo the target.
			gs.Command = strings.Join(s.Commands, "\n")
			gs.OwnCmd().CommandFrom = ruleFile(s.RuleFrom)
		case s.Complete && len(s.Commands) > 0 && s.RuleFrom == "built-in":
			gs.Command, gs.OwnCmd().CommandFrom = strings.Join(s.Commands, "\n"), b.Folder.Makefile // its variables are the makefile's
		}
		if gs.Command != "" {
			gs.OwnCmd().CommandDir = b.Folder.Dir // make runs each recipe line in its own folder
			for _, m := range b.Makefiles {
				if m != gs.Cmd().CommandFrom {
					gs.OwnCmd().CommandReads = append(gs.OwnCmd().CommandReads, m) // an included config.mk's variables
				}
			}
			gs.Program = graph.CommandProgram(strings.TrimLeft(s.Commands[0], "@-+ \t"))
		}
		if s.Producer != "" {
			gs.OwnCmd().Producer = s.Producer // read once, with the line tables: internal/compileflags uses it
		}
		for _, c := range compileRuns(s.Commands, b.Folder.Dir) {
			gs.OwnCmd().Compiles = append(gs.OwnCmd().Compiles, graph.CompilerRun{Source: c.source, Dir: b.Folder.Dir,
				Quote: c.sp.Quote, Dirs: c.sp.Dirs, System: c.sp.System, After: c.sp.After})
		}
		for _, kv := range s.Config {
			gs.Config = append(gs.Config, graph.KV{Key: kv.Key, Value: kv.Value})
		}
		o := &Origin{Step: s, Folder: b.Folder, Build: b, Facts: facts[s.Output.Path], GoalPass: goal}
		if opt.NoNative {
			var keep []Fact
			for _, f := range o.Facts {
				if f.Kind != ArchiveMemberWithoutRule {
					keep = append(keep, f)
				}
			}
			o.Facts = keep
		}
		gs.Origin = o
		byPath := map[string]*graph.Input{}
		add := func(st Stat, how How, detail string, watched bool, watchedBy string) {
			in := byPath[st.Path]
			if in == nil {
				in = &graph.Input{File: fileInfo(st)}
				byPath[st.Path] = in
				gs.Inputs = append(gs.Inputs, in)
			}
			for i, h := range in.How {
				if h == graph.How(how) && in.Detail[i] == detail {
					return
				}
			}
			in.How, in.Detail = append(in.How, graph.How(how)), append(in.Detail, detail)
			if watched && !in.Watched {
				in.Watched, in.WatchedBy = true, watchedBy
			}
		}
		for _, d := range s.Declared {
			for i, h := range d.How {
				add(d.Stat, h, d.Detail[i], true, "prerequisite of "+s.Target+" ("+d.Detail[i]+")")
			}
		}
		for _, d := range s.Discovered {
			if d.System || opt.NoNative && (d.How[0] == DWARF || d.How[0] == ArchiveMember) {
				continue
			}
			for i, h := range d.How {
				detail := ""
				if i < len(d.Detail) {
					detail = d.Detail[i]
				}
				add(d.Stat, h, detail, d.Known, "prerequisite of "+s.Target)
			}
		}
		if !opt.NoNative {
			for _, f := range o.Facts {
				if f.Kind == ArchiveMemberWithoutRule {
					member := f.Path[strings.LastIndexByte(f.Path, ':')+1:]
					st := b.stat(filepath.Join(filepath.Dir(s.Output.Path), member))
					add(st, ArchiveMember, f.Path, false, "")
				}
			}
		}
		g.Steps = append(g.Steps, gs)
		byOut[s.Output.Path] = gs
	}
	consumed := map[*graph.Step]bool{}
	for _, gs := range g.Steps {
		// A target with no recipe whose file does not exist (`all: app lib.a`, not marked .PHONY) is a
		// goal, not a file: what it names stays a root.
		goal := !gs.Reference.Exists && len(gs.Origin.(*Origin).Step.Recipe) == 0
		for _, in := range gs.Inputs {
			if d := byOut[in.File.Path]; d != nil && d != gs && !contains(gs.Deps, d) {
				gs.Deps = append(gs.Deps, d)
				d.Dependents = append(d.Dependents, gs)
				consumed[d] = consumed[d] || !goal
			}
		}
		// An order-only prerequisite is made before the target whenever the target is.
		for _, p := range gs.Origin.(*Origin).Step.OrderOnly {
			if d := byOut[p]; d != nil && d != gs && !slices.Contains(gs.KeepsLive, d) {
				gs.KeepsLive = append(gs.KeepsLive, d)
				consumed[d] = consumed[d] || !goal
			}
		}
	}
	for _, gs := range g.Steps {
		if consumed[gs] || !gs.Reference.Exists {
			continue
		}
		kind := "bin"
		switch s := gs.Origin.(*Origin).Step; {
		case s.Kind == Archive || isLibrary(s.Target):
			kind = "lib"
		case s.Kind == Compile:
			kind = "object"
		}
		g.Roots = append(g.Roots, &graph.Root{File: gs.Reference, Kind: kind, Step: gs, TiedBy: "rule"})
	}
	if b.Folder != nil && cmakeTree(b.Folder.Dir) && !fileExists(filepath.Join(b.Folder.Dir, "CMakeLists.txt")) {
		g.GeneratedDirs = []string{b.Folder.Dir} // CMake's out-of-source build folder
	}
	if c := b.cmakeConfigure(); c != nil {
		// CMake's configure step comes first in every build of the tree (cmake.go).
		for _, gs := range g.Steps {
			gs.KeepsLive = append(gs.KeepsLive, c)
		}
		g.Steps = append(g.Steps, c)
	}
	if len(b.Steps) == 0 && len(b.SubMakes) == 0 {
		// A makefile that only runs others (CMake's top Makefile and Makefile2) is read through them.
		g.Notes = append(g.Notes, fmt.Sprintf("make's data base for %s shows no rule that builds an object, archive or program, nor a recipe that runs make", b.Folder.Makefile))
	}
	g.MarkLive()
	return g
}

// stat is the reader's stat, for paths Read did not look at.
func (b *Build) stat(p string) Stat {
	r := &reader{b: b, dir: b.Folder.Dir, stats: map[string]Stat{}}
	return r.stat(p)
}

// BuildFolder is the folder read (for reports).
func (b *Build) BuildFolder() string { return b.Folder.Dir }

func fileInfo(s Stat) graph.FileInfo {
	return graph.FileInfo{Path: s.Path, Size: s.Size, MTimeNS: s.MTimeNS, Exists: s.Exists}
}

func contains(ss []*graph.Step, s *graph.Step) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// ruleFile is the makefile of a rule's origin "FILE:LINE".
func ruleFile(from string) string {
	if i := strings.LastIndexByte(from, ':'); i > 0 {
		return from[:i]
	}
	return from
}

func fileExists(p string) bool {
	st, err := fsrec.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
