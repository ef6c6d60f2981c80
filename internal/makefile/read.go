package makefile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/cmaketree"
	"github.com/stalecheck/stalecheck/internal/depfile"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// How says how an input of a step is known (the neutral graph's edge clues).
type How string

const (
	// Declared: a prerequisite make knows (explicit, or from the implicit rule make chose); Detail is
	// the rule's origin ("Makefile:12", "built-in").
	Declared How = "declared"
	// Depfile: a prerequisite in the object's `.d` file; Detail is the depfile's path.
	Depfile How = "depfile"
	// DWARF: a file of the object's DWARF line table; Detail is the object's path.
	DWARF How = "dwarf"
	// ArchiveMember: an object inside the archive; Detail is "archive:member".
	ArchiveMember How = "archive-member"
)

// StepKind is what a Make rule builds.
type StepKind string

const (
	Compile StepKind = "compile" // an object (.o, .obj, .lo)
	Archive StepKind = "archive" // a static library (.a)
	Link    StepKind = "link"    // a program or shared library whose prerequisites are objects or libraries
	// Generate is a rule with a recipe that makes a file another step names as a prerequisite (normal or
	// order-only): a header from a template, a source from a generator.
	Generate StepKind = "generate"
)

// Stat is a file's state on disk when it was read.
type Stat struct {
	Path    string // absolute
	Exists  bool
	Size    int64 // bytes
	MTimeNS int64 // modification time, nanoseconds since the Unix epoch
}

// Input is one input of a step, with every clue that names it.
type Input struct {
	Stat
	Name   string   // as make or the depfile spells it (relative to the make folder unless absolute)
	How    []How    // clues, in the order found
	Detail []string // parallel to How: where each clue comes from
	// Known: make has it as a prerequisite of the step, so an edit makes make rebuild the step.
	Known bool
	// System: a header under /usr/include, /usr/lib or /usr/local/include (never reported as changed).
	System bool
}

// Member is one member of an archive step.
type Member struct {
	Name string // as stored in the archive (a base name)
	Size int64  // bytes
	// Object is the absolute path of the object a rule of the Makefile builds for this member (a
	// prerequisite of the archive with the same base name, else any compile target with that base
	// name); "" when no rule builds it.
	Object string
}

// Step is one Make rule that builds an object, archive or program.
type Step struct {
	Kind   StepKind
	Target string // make's name for the target
	// Forced are the phony or force prerequisites (FORCE, a .PHONY sub-build) that make Make run the
	// recipe on every build; they are not inputs.
	Forced []string
	// Output is the target file; its mtime is the step's reference time (make compares prerequisites
	// against it).
	Output Stat
	// Producer is the DW_AT_producer of the output's first compile unit that has one, as the DWARF read
	// for its line tables found it ("" when none: no -g, not ELF).
	Producer string
	RuleFrom string   // where the recipe comes from ("Makefile:12", "built-in"), "" with no recipe
	Recipe   []string // unexpanded
	// Commands are the recipe lines expanded as make would run them (expand.go); a line with a
	// reference the reader does not evaluate (a function call) is left out, and Complete is false then.
	Commands []string
	Complete bool
	Stem     string // implicit/static pattern stem make matched
	// Declared are make's prerequisites (order-only ones excluded: they never trigger a rebuild).
	Declared []*Input
	// OrderOnly are the absolute paths of the order-only prerequisites: make builds them first, so
	// their steps are live whenever this one is.
	OrderOnly []string
	// Discovered are the inputs depfiles, DWARF units and archive members show, Known or not.
	Discovered []*Input
	// declaredAt and discoveredAt index Declared and Discovered by path (built when first asked, again
	// when the list grew past what they cover): a depfile of 40,000 entries was quadratic.
	declaredAt   map[string]bool
	declaredN    int
	discoveredAt map[string]*Input
	discoveredN  int
	// Depfile is the absolute path of the object's `.d` file ("" when none was found), Included is
	// true when make read it (it is in MAKEFILE_LIST); Looked lists the paths looked at.
	Depfile  string
	Included bool
	// Unmakeable are the prerequisites that are gone and that no rule makes: make stops on them.
	Unmakeable []Unmakeable
	// MergedBy, for a depfile make does not include, names the record that says a step of every build
	// merges it into a makefile make reads before the object's rule is judged (CMake's Makefiles
	// generator: the target's depend step turns the depfiles DependInfo.cmake lists into
	// compiler_depend.make); make watches what it lists then. "" when none does.
	MergedBy string
	Looked   []string
	// MakeRemakes is make's verdict under -q: "Needs to be updated".
	MakeRemakes bool
	Members     []Member // archives only
	// Config holds the compile and link variables make has for the step (CC, CFLAGS, CPPFLAGS, CXX,
	// CXXFLAGS, LDFLAGS, LDLIBS, AR, ARFLAGS when set), target-specific values first-class, values as
	// make printed them (a recursive variable is not expanded), in that order.
	Config []KV
}

// KV is one configuration entry of a step.
type KV struct {
	Key, Value string
	// From is where make has the value from: "Makefile:3", "default", "environment", "target-specific".
	From string
}

var configVars = []string{"CC", "CFLAGS", "CPPFLAGS", "CXX", "CXXFLAGS", "LDFLAGS", "LDLIBS", "AR", "ARFLAGS"}

func (r *reader) config(f *File) []KV {
	var out []KV
	for _, k := range configVars {
		v, ok := r.db.Variables[k]
		from := v.From
		if from == "" {
			from = v.Origin
		}
		for _, tv := range f.TargetVars {
			if tv.Name == k {
				v, ok, from = tv, true, "target-specific"
			}
		}
		if ok && v.Value != "" {
			out = append(out, KV{Key: k, Value: v.Value, From: from})
		}
	}
	return out
}

// FactKind names a fact about a step; the names are the rule names of the checks they feed.
type FactKind string

const (
	MissingDepfile        FactKind = "missing-depfile"
	UntrackedInputChanged FactKind = "untracked-input-changed"
	PendingRebuild        FactKind = "pending-rebuild"
	BinaryOlderThanInput  FactKind = "binary-older-than-input"
	// ArchiveMemberWithoutRule: an archive holds an object no rule builds any more (`ar rcs` keeps the
	// member of a removed source).
	ArchiveMemberWithoutRule FactKind = "archive-member-without-rule"
)

// Fact is one finding-shaped fact with its evidence.
type Fact struct {
	Kind FactKind
	Step string // the step's output (absolute path)
	Path string // the input, depfile candidate or archive member concerned (absolute; "archive:member" for members)
	How  []How
	// Detail is parallel to How (depfile path, object path, rule origin).
	Detail []string
	// InputMTimeNS and ReferenceMTimeNS: the input's and the step output's mtimes in nanoseconds (0 when
	// not applicable or the file is missing).
	InputMTimeNS     int64
	ReferenceMTimeNS int64
	// MakeRemakes repeats the step's make -q verdict.
	MakeRemakes bool
	Message     string
}

// Problem is something that could not be read; the rest of the reading goes on.
type Problem struct {
	Path string
	Err  error
}

// Build is what Read learnt about a Make folder.
type Build struct {
	Folder   *Folder
	Query    *Query
	Steps    []*Step
	Facts    []Fact
	Problems []Problem
	// SubMakes are the makes a recipe runs in another folder or with another makefile ($(MAKE) -C lib,
	// cd lib && $(MAKE), CMake's $(MAKE) -f CMakeFiles/Makefile2 in the same folder), sorted: builds of
	// their own, whose rules make the files the recipe stands for (read and joined by internal/systems).
	SubMakes []SubMake
	// defaults are the targets make's default goal reaches (builtByDefault); nil: not known.
	defaults map[string]bool
	// Makefiles are the makefiles make read (MAKEFILE_LIST), absolute, less those it includes as
	// dependency files (.d and the like): the files a recipe's variables may come from.
	Makefiles []string
}

// SubMake is one make a recipe runs: the folder it runs in (absolute) and the makefile it reads there
// (absolute; "" for the one make finds by its own names).
type SubMake struct {
	Dir, Makefile string
}

// Read runs make (RunMake: two dry passes under ctx's deadline) in folder and joins what make says with
// the files on disk: per object, archive and program a Step with make's prerequisites (Declared), the
// inputs its depfile and DWARF compile units name and the members of archives (Discovered), its mtime
// (the reference); and the Facts: missing-depfile (a compile of a C-family source whose existing object
// has no `.d` file), untracked-input-changed (a discovered input newer than the object that make does
// not have as a prerequisite: make will not rebuild), pending-rebuild (a prerequisite make knows is
// newer: make will), binary-older-than-input (a program or shared library older than an object or
// library its rule links), archive-member-without-rule.
//
// Errors: those of RunMake (the Makefile refused, a deadline, a data base that does not parse), except
// ErrTargetShell, after which Read goes on with the first pass's data base (no implicit rule search).
// Unreadable or corrupt depfiles, objects and archives become Problems naming the file.
func Read(ctx context.Context, folder *Folder) (*Build, error) {
	q, err := RunMake(ctx, folder.Dir, folder.Makefile)
	if err != nil && !errors.Is(err, ErrTargetShell) {
		return nil, err
	}
	b := &Build{Folder: folder, Query: q}
	if err != nil {
		b.Problems = append(b.Problems, Problem{Path: folder.Makefile, Err: err})
	}
	r := &reader{b: b, db: q.DB, dir: folder.Dir, stats: map[string]Stat{}}
	for _, m := range q.DB.MakefilesRead {
		if !depfileExt[filepath.Ext(m)] {
			b.Makefiles = append(b.Makefiles, r.abs(m))
		}
	}
	r.analyse()
	b.defaults = defaultReach(q.DB)
	return b, nil
}

type reader struct {
	b     *Build
	db    *Database
	dir   string
	stats map[string]Stat
	// includedDeps maps an object's absolute path to the included depfile naming it.
	includedDeps map[string]string
	// dependInfo: per DependInfo.cmake read, the depfiles it lists (mergedDepfile).
	dependInfo map[string]map[string]bool
	parsedDeps map[string]*depfile.File
}

func (r *reader) abs(name string) string {
	if filepath.IsAbs(name) {
		return filepath.Clean(name)
	}
	return filepath.Join(r.dir, name)
}

func (r *reader) stat(p string) Stat {
	if s, ok := r.stats[p]; ok {
		return s
	}
	s := Stat{Path: p}
	if st, err := fsrec.Stat(p); err == nil {
		s.Exists, s.Size, s.MTimeNS = true, st.Size(), st.ModTime().UnixNano()
	}
	r.stats[p] = s
	return s
}

func (r *reader) problem(p string, err error) {
	r.b.Problems = append(r.b.Problems, Problem{Path: p, Err: err})
}

// depfileExt are the names of included makefiles read as depfiles (gcc's .d, automake's .Po/.Plo).
var depfileExt = map[string]bool{".d": true, ".Po": true, ".Plo": true, ".dep": true}

var objectExt = map[string]bool{".o": true, ".obj": true, ".lo": true}
var headerExt = map[string]bool{".h": true, ".hh": true, ".hpp": true, ".hxx": true, ".h++": true, ".H": true, ".cuh": true, ".inl": true, ".inc": true, ".tcc": true}
var sourceExt = map[string]bool{".c": true, ".cc": true, ".cpp": true, ".cxx": true, ".C": true, ".c++": true, ".m": true, ".mm": true, ".S": true, ".cu": true, ".F": true}

func isLibrary(name string) bool {
	ext := filepath.Ext(name)
	return ext == ".a" || ext == ".so" || strings.Contains(filepath.Base(name), ".so.")
}

func (r *reader) kindOf(f *File) (StepKind, bool) {
	if f.NotATarget || f.Phony || strings.HasPrefix(f.Name, ".") && !strings.Contains(f.Name, "/") {
		return "", false
	}
	ext := filepath.Ext(f.Name)
	switch {
	case objectExt[ext]:
		return Compile, true
	case ext == ".a":
		return Archive, true
	}
	for _, p := range f.Prereqs {
		if objectExt[filepath.Ext(p)] || isLibrary(p) {
			return Link, true
		}
	}
	// A program compiled and linked by one rule (app: main.c, or make's built-in %: %.c): a link
	// step whose inputs are the sources themselves.
	if len(f.Recipe) > 0 {
		for _, p := range f.Prereqs {
			if sourceExt[filepath.Ext(p)] {
				return Link, true
			}
		}
	}
	return "", false
}

// generated lists the targets with a recipe that a compile, archive or link step names as a
// prerequisite, normal or order-only (config.h from config.h.in), and the other file targets with a
// recipe whose file exists (a header CMake's custom command writes, which objects name only through
// their depfiles): they become Generate steps, so that an edit of what they are made from (or of what
// their command names) reaches the programs built from their output. One no step reads stays dead.
func (r *reader) generated() map[string]bool {
	out := map[string]bool{}
	for _, n := range r.db.Order {
		g := r.db.Files[n]
		if g == nil || len(g.Recipe) == 0 || g.Phony || g.NotATarget || strings.ContainsAny(n, "%") {
			continue
		}
		if _, ok := r.kindOf(g); !ok && r.stat(r.abs(n)).Exists {
			out[n] = true
		}
	}
	for _, n := range r.db.Order {
		f := r.db.Files[n]
		if k, ok := r.kindOf(f); !ok || k == "" {
			continue
		}
		for _, l := range [][]string{f.Prereqs, f.OrderOnly} {
			for _, p := range l {
				g := r.db.Files[p]
				if g == nil || len(g.Recipe) == 0 || g.Phony || g.NotATarget {
					continue
				}
				if _, ok := r.kindOf(g); !ok {
					out[p] = true
				}
			}
		}
	}
	return out
}

func (r *reader) analyse() {
	makefiles := map[string]bool{}
	r.includedDeps, r.parsedDeps = map[string]string{}, map[string]*depfile.File{}
	for _, m := range r.db.MakefilesRead {
		p := r.abs(m)
		makefiles[p] = true
		if p == r.b.Folder.Makefile {
			continue
		}
		// An included makefile whose rules are a depfile's (gcc -MD output is valid make syntax).
		if !depfileExt[filepath.Ext(p)] {
			continue
		}
		df, err := r.parseDepfile(p)
		if err != nil {
			continue // an ordinary makefile make read; not ours to judge
		}
		for _, rule := range df.Rules {
			for _, t := range rule.Targets {
				if len(rule.Prereqs) > 0 {
					r.includedDeps[r.abs(t)] = p
				}
			}
		}
	}
	compileByBase := map[string]string{}
	generated := r.generated()
	for _, n := range r.db.Order {
		f := r.db.Files[n]
		kind, ok := r.kindOf(f)
		if !ok && generated[n] {
			kind, ok = Generate, true
		}
		if !ok || makefiles[r.abs(n)] {
			continue
		}
		s := &Step{Kind: kind, Target: n, Output: r.stat(r.abs(n)), RuleFrom: f.RecipeFrom, Recipe: f.Recipe,
			Stem: f.Stem, MakeRemakes: f.NeedsUpdate, Config: r.config(f)}
		s.Commands, s.Complete = r.expandRecipe(f, n)
		seen := map[string]bool{}
		for _, p := range f.Prereqs {
			if seen[p] {
				continue // make prints a prerequisite named by two rules (depfile and pattern) twice
			}
			seen[p] = true
			if r.forcing(p, recipeRunsMake(f.Recipe)) {
				// A phony prerequisite, or the FORCE of a recursive $(MAKE), has no file and no time: Make
				// runs the recipe on every build by design, and whether that changes anything is the
				// recipe's (the sub-make's) business. It is no input gone missing.
				s.Forced = append(s.Forced, p)
				continue
			}
			in := &Input{Stat: r.stat(r.abs(p)), Name: p, Known: true}
			in.How, in.Detail = []How{Declared}, []string{ruleOrigin(f)}
			s.Declared = append(s.Declared, in)
		}
		for _, p := range f.OrderOnly {
			s.OrderOnly = append(s.OrderOnly, r.abs(p))
		}
		if kind == Compile {
			compileByBase[filepath.Base(n)] = s.Output.Path
		}
		r.b.Steps = append(r.b.Steps, s)
	}
	// The folders recipes run make in, phony targets' included (sublib: ; $(MAKE) -C lib).
	for _, n := range r.db.Order {
		f := r.db.Files[n]
		if f == nil || !recipeRunsMake(f.Recipe) {
			continue
		}
		cmds, _ := r.expandRecipe(f, n)
		for _, d := range subMakes(cmds, r.b.Folder) {
			if !slices.Contains(r.b.SubMakes, d) {
				r.b.SubMakes = append(r.b.SubMakes, d)
			}
		}
	}
	r.outOfTree()
	slices.SortFunc(r.b.SubMakes, func(a, b SubMake) int {
		return strings.Compare(a.Dir+"\x00"+a.Makefile, b.Dir+"\x00"+b.Makefile)
	})
	for _, s := range r.b.Steps {
		switch s.Kind {
		case Compile:
			r.compile(s)
		case Archive:
			r.archive(s, compileByBase)
		case Link:
			if compiles(s) {
				r.compile(s) // its depfile, DWARF and header clues, as for an object
			}
			r.link(s)
		}
		r.pending(s)
	}
	sort.SliceStable(r.b.Facts, func(i, j int) bool {
		a, b := r.b.Facts[i], r.b.Facts[j]
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Path < b.Path
	})
}

func ruleOrigin(f *File) string {
	switch {
	case f.RecipeFrom == "built-in" && f.Stem != "":
		return fmt.Sprintf("built-in rule, stem '%s'", f.Stem)
	case f.RecipeFrom != "":
		return f.RecipeFrom
	}
	return "make data base"
}

func (r *reader) parseDepfile(p string) (*depfile.File, error) {
	if df, ok := r.parsedDeps[p]; ok {
		return df, nil
	}
	df, err := depfile.ParseFile(p)
	if err != nil {
		return nil, err
	}
	r.parsedDeps[p] = df
	return df, nil
}

func (s *Step) known(p string) bool {
	if s.declaredAt == nil || s.declaredN != len(s.Declared) {
		s.declaredAt, s.declaredN = make(map[string]bool, len(s.Declared)), len(s.Declared)
		for _, d := range s.Declared {
			s.declaredAt[d.Path] = true
		}
	}
	return s.declaredAt[p]
}

// discover adds (or adds a clue to) a discovered input of s.
// unmakeable lists the prerequisites of s that are gone and that no rule makes (Step.Unmakeable): make
// stops on them ("No rule to make target"), whatever else it would do. A header a depfile names, which
// the source no longer includes, is the usual one (a depfile written without -MP).
func (r *reader) unmakeable(s *Step) {
	for _, in := range s.Declared {
		if in.Exists {
			continue
		}
		if f := r.db.Files[in.Name]; f != nil && (!f.NotATarget || len(f.Recipe) > 0 || f.Phony) {
			continue // a rule of its own, even an empty one (gcc -MP's "h.h:"): make remakes the target
		}
		from := ""
		if s.Depfile != "" && slices.ContainsFunc(s.Discovered, func(d *Input) bool { return d.Path == in.Path && slices.Contains(d.How, Depfile) }) {
			from = s.Depfile
		}
		s.Unmakeable = append(s.Unmakeable, Unmakeable{Path: in.Path, Depfile: from})
	}
}

// Unmakeable is a prerequisite make has no file and no rule for; Depfile is the depfile that names it
// ("" when a makefile does).
type Unmakeable struct {
	Path, Depfile string
}

func (r *reader) discover(s *Step, name string, how How, detail string) {
	p := r.abs(name)
	if s.discoveredAt == nil || s.discoveredN != len(s.Discovered) {
		s.discoveredAt, s.discoveredN = make(map[string]*Input, len(s.Discovered)), len(s.Discovered)
		for _, in := range s.Discovered {
			if _, ok := s.discoveredAt[in.Path]; !ok {
				s.discoveredAt[in.Path] = in // the first, as the list's scan found it
			}
		}
	}
	if in := s.discoveredAt[p]; in != nil {
		for _, h := range in.How {
			if h == how {
				return
			}
		}
		in.How, in.Detail = append(in.How, how), append(in.Detail, detail)
		return
	}
	known := s.known(p) || how == Depfile && s.MergedBy != ""
	in := &Input{Stat: r.stat(p), Name: name, How: []How{how}, Detail: []string{detail}, Known: known, System: isSystem(p)}
	s.Discovered = append(s.Discovered, in)
	s.discoveredAt[p], s.discoveredN = in, len(s.Discovered)
}

// mergedDepfile returns the record that says the build merges depfile into a makefile it includes
// before each build ("" when none): CMake's Makefiles generator lists each compile's depfile in the
// CMAKE_DEPENDS_DEPENDENCY_FILES of the target's DependInfo.cmake (source, object, format, depfile,
// relative to the build folder), and the target's depend step, which every build runs first, writes
// them into compiler_depend.make, which build.make includes.
func (r *reader) mergedDepfile(depfile string) string {
	// The target's folder (CMakeFiles/<target>.dir) holds DependInfo.cmake; an object of a source in a
	// subfolder has its depfile further down (CMakeFiles/<target>.dir/src/a.c.o.d).
	info := ""
	for d := filepath.Dir(depfile); strings.HasPrefix(d, r.dir+string(filepath.Separator)); d = filepath.Dir(d) {
		if p := filepath.Join(d, "DependInfo.cmake"); r.stat(p).Exists {
			info = p
			break
		}
	}
	if info == "" {
		return ""
	}
	if r.dependInfo == nil {
		r.dependInfo = map[string]map[string]bool{}
	}
	listed, ok := r.dependInfo[info]
	if !ok {
		listed = map[string]bool{}
		if data, err := safeio.ReadFile(info, 16<<20); err == nil {
			words := cmaketree.List(string(data), "CMAKE_DEPENDS_DEPENDENCY_FILES")
			for i := 3; i < len(words); i += 4 {
				listed[r.abs(words[i])] = true
			}
		}
		r.dependInfo[info] = listed
	}
	if listed[depfile] {
		return info + " (CMake's depend step merges it into compiler_depend.make before each build)"
	}
	return ""
}

func isSystem(p string) bool {
	for _, pre := range []string{"/usr/include/", "/usr/lib/", "/usr/local/include/", "/usr/lib64/"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

func (r *reader) compile(s *Step) {
	obj := s.Output.Path
	isC := false
	for _, d := range s.Declared {
		if sourceExt[filepath.Ext(d.Name)] {
			isC = true
		}
	}
	// The depfile: an included makefile naming the object, else obj minus its extension plus .d, or
	// obj plus .d (the two conventions of -MMD/-MF $@.d).
	if p, ok := r.includedDeps[obj]; ok {
		s.Depfile, s.Included = p, true
	} else {
		cands := []string{strings.TrimSuffix(obj, filepath.Ext(obj)) + ".d", obj + ".d"}
		if cands[0] == cands[1] {
			cands = cands[:1] // a program without an extension: one name
		}
		for _, c := range cands {
			s.Looked = append(s.Looked, c)
			if err := safeio.Regular(c); err == nil {
				s.Depfile = c
				break
			} else if !errors.Is(err, os.ErrNotExist) {
				r.problem(c, err)
				s.Depfile = c
				break
			}
		}
	}
	if s.Depfile != "" && !s.Included {
		s.MergedBy = r.mergedDepfile(s.Depfile)
	}
	if s.Depfile != "" {
		df, err := r.parseDepfile(s.Depfile)
		if err != nil {
			if !errors.Is(err, safeio.ErrNotRegular) {
				r.problem(s.Depfile, err)
			}
		} else {
			matched := false
			for _, rule := range df.Rules {
				for _, t := range rule.Targets {
					if r.abs(t) == obj {
						matched = true
						for _, p := range rule.Prereqs {
							r.discover(s, p, Depfile, s.Depfile)
						}
					}
				}
			}
			switch {
			case matched:
			case s.Included:
				r.problem(s.Depfile, fmt.Errorf("depfile has no rule for %s", s.Target))
			default:
				// Found by its name only (gen.d beside gen.c): the depfile of another target of that
				// stem (gen.o's), not this one's.
				s.Depfile = ""
			}
		}
	}
	r.unmakeable(s)
	if s.Output.Exists {
		r.dwarf(s)
	}
	// Headers among make's own prerequisites (CMake's depend.make for a custom command with
	// IMPLICIT_DEPENDS, or a list kept by hand): make sees those; one the list lacks is the include
	// scan's to find (untracked-input-changed), so no warning that every header edit goes unseen.
	headers := slices.ContainsFunc(s.Declared, func(in *Input) bool { return headerExt[filepath.Ext(in.Name)] })
	if isC && s.Output.Exists && s.Depfile == "" && !headers {
		r.fact(s, Fact{Kind: MissingDepfile, Path: s.Looked[0], Detail: s.Looked,
			Message: fmt.Sprintf("%s is compiled from a C-family source by %s but no depfile was written (looked for %s): header edits go unseen by make",
				s.Target, ruleOriginStep(s), strings.Join(s.Looked, ", "))})
	}
	for _, in := range s.Discovered {
		if in.Known || in.System || !in.Exists || !s.Output.Exists || in.MTimeNS <= s.Output.MTimeNS {
			continue
		}
		r.fact(s, Fact{Kind: UntrackedInputChanged, Path: in.Path, How: in.How, Detail: in.Detail,
			InputMTimeNS: in.MTimeNS,
			Message: fmt.Sprintf("%s changed after %s was built (%s), and make does not have it as a prerequisite: make will not rebuild",
				in.Name, s.Target, cluesText(in))})
	}
}

func ruleOriginStep(s *Step) string {
	if s.RuleFrom == "" {
		return "its rule"
	}
	return "the rule at " + s.RuleFrom
}

func cluesText(in *Input) string {
	var parts []string
	for i, h := range in.How {
		parts = append(parts, string(h)+" "+in.Detail[i])
	}
	return strings.Join(parts, "; ")
}

// dwarf adds the files of the object's DWARF line tables as discovered inputs. A file that is not
// ELF is left alone; corrupt DWARF is a Problem.
func (r *reader) dwarf(s *Step) {
	fh, err := safeio.Open(s.Output.Path)
	if err != nil {
		r.problem(s.Output.Path, err)
		return
	}
	var magic [4]byte
	_, rerr := fh.ReadAt(magic[:], 0)
	fh.Close()
	if rerr != nil || !bytes.Equal(magic[:], []byte("\x7fELF")) {
		return
	}
	ef, err := binfmt.OpenELF(s.Output.Path)
	if err != nil {
		r.problem(s.Output.Path, err)
		return
	}
	defer ef.Close()
	cus, err := ef.CompileUnits()
	if err != nil {
		r.problem(s.Output.Path, err)
		return
	}
	for _, cu := range cus {
		if s.Producer == "" {
			s.Producer = cu.Producer
		}
		for _, f := range cu.Files {
			if filepath.IsAbs(f) {
				r.discover(s, f, DWARF, s.Output.Path)
			}
		}
	}
}

func (r *reader) archive(s *Step, compileByBase map[string]string) {
	for _, d := range s.Declared {
		if objectExt[filepath.Ext(d.Name)] {
			s.Discovered = append(s.Discovered, &Input{Stat: d.Stat, Name: d.Name, How: []How{ArchiveMember}, Known: true})
		}
	}
	if !s.Output.Exists {
		return
	}
	ar, err := binfmt.OpenArchive(s.Output.Path)
	if err != nil {
		r.problem(s.Output.Path, err)
		return
	}
	byBase := map[string]*Input{}
	for _, in := range s.Discovered {
		byBase[filepath.Base(in.Path)] = in
	}
	s.Discovered, s.discoveredAt = s.Discovered[:0], nil
	for _, m := range ar.Members {
		mem := Member{Name: m.Name, Size: m.Size}
		detail := s.Output.Path + ":" + m.Name
		if in, ok := byBase[m.Name]; ok {
			mem.Object = in.Path
			in.Detail = []string{detail}
			s.Discovered = append(s.Discovered, in)
		} else if o, ok := compileByBase[m.Name]; ok {
			mem.Object = o
			st := r.stat(o)
			s.Discovered = append(s.Discovered, &Input{Stat: st, Name: m.Name, How: []How{ArchiveMember}, Detail: []string{detail}})
		} else if !subMake(s) { // a sub-make's rules make the members: not in this data base
			r.fact(s, Fact{Kind: ArchiveMemberWithoutRule, Path: detail, How: []How{ArchiveMember}, Detail: []string{detail},
				Message: fmt.Sprintf("%s holds %s (%d bytes), which no rule of %s builds any more: `ar r` keeps members of removed sources, so whatever links %s may still get its symbols",
					s.Target, m.Name, m.Size, filepath.Base(r.b.Folder.Makefile), s.Target)})
		}
		s.Members = append(s.Members, mem)
	}
}

// forcing reports whether prerequisite p only makes Make run its target's recipe on every build: a
// phony target (.PHONY: never a file), or, for a recipe that runs a sub-make, a rule with no
// prerequisites and no recipe for a file that does not exist (the FORCE idiom; GNU Make: "make imagines
// this target to have been updated whenever its rule is run"). Such an empty rule for a deleted header
// (gcc -MP writes one per header) is no FORCE: the compile it forces makes another object, so the
// header stays an input gone missing.
func (r *reader) forcing(p string, subMake bool) bool {
	f := r.db.Files[p]
	if f == nil {
		return false
	}
	if f.Phony {
		return true
	}
	return subMake && !f.NotATarget && len(f.Prereqs) == 0 && len(f.Recipe) == 0 && !r.stat(r.abs(p)).Exists
}

// subMake reports whether the step's recipe runs make itself ($(MAKE) -C lib): its output is made by
// the rules of another makefile, which this build's data base does not hold.
func subMake(s *Step) bool { return recipeRunsMake(s.Recipe) }

func recipeRunsMake(recipe []string) bool {
	for _, l := range recipe {
		if strings.Contains(l, "$(MAKE)") || strings.Contains(l, "${MAKE}") {
			return true
		}
	}
	return false
}

// compiles reports whether a step's rule names a C-family source as a prerequisite (a program compiled
// and linked by one rule).
func compiles(s *Step) bool {
	for _, d := range s.Declared {
		if sourceExt[filepath.Ext(d.Name)] {
			return true
		}
	}
	return false
}

func (r *reader) link(s *Step) {
	if !s.Output.Exists {
		return
	}
	for _, d := range s.Declared {
		if !(objectExt[filepath.Ext(d.Name)] || isLibrary(d.Name)) || !d.Exists || d.MTimeNS <= s.Output.MTimeNS {
			continue
		}
		r.fact(s, Fact{Kind: BinaryOlderThanInput, Path: d.Path, How: d.How, Detail: d.Detail, InputMTimeNS: d.MTimeNS,
			Message: fmt.Sprintf("%s is older than %s, which its rule links: the binary on disk does not hold the current %s", s.Target, d.Name, d.Name)})
	}
}

// pending reports the inputs make knows that are newer than the output: make's next run redoes the step.
func (r *reader) pending(s *Step) {
	if !s.Output.Exists {
		return
	}
	for _, d := range s.Declared {
		if !d.Exists || d.MTimeNS <= s.Output.MTimeNS {
			continue
		}
		if s.Kind == Link && (objectExt[filepath.Ext(d.Name)] || isLibrary(d.Name)) {
			continue // binary-older-than-input says it
		}
		how, detail := d.How, d.Detail
		for _, in := range s.Discovered {
			if in.Path == d.Path {
				how, detail = append(append([]How{}, how...), in.How...), append(append([]string{}, detail...), in.Detail...)
			}
		}
		r.fact(s, Fact{Kind: PendingRebuild, Path: d.Path, How: how, Detail: detail, InputMTimeNS: d.MTimeNS,
			Message: fmt.Sprintf("%s changed after %s was built; make has it as a prerequisite and will rebuild %s", d.Name, s.Target, s.Target)})
	}
}

func (r *reader) fact(s *Step, f Fact) {
	f.Step, f.ReferenceMTimeNS, f.MakeRemakes = s.Output.Path, s.Output.MTimeNS, s.MakeRemakes
	r.b.Facts = append(r.b.Facts, f)
}

// outOfTree adds, when no file target of the makefile exists in its own folder, a make of the same makefile
// in each subfolder that holds built files and no makefile of its own: an out-of-tree build folder
// (`make -C build -f ../Makefile`, VPATH to the sources), whose targets are relative to it.
func (r *reader) outOfTree() {
	// Only a makefile with rules for files of its own, none of which exists here, and no recursive
	// make (CMake's top Makefile has neither rules for files nor files here: it runs Makefile2).
	if len(r.b.Steps) == 0 || len(r.b.SubMakes) > 0 {
		return
	}
	for _, s := range r.b.Steps {
		if s.Output.Exists {
			return
		}
	}
	seen := map[string]bool{}
	for _, p := range r.b.Folder.Built {
		rel, err := filepath.Rel(r.b.Folder.Dir, p)
		if err != nil || !strings.Contains(rel, string(filepath.Separator)) {
			continue
		}
		sub := filepath.Join(r.b.Folder.Dir, strings.SplitN(rel, string(filepath.Separator), 2)[0])
		if seen[sub] {
			continue
		}
		seen[sub] = true
		own := false
		for _, n := range makefileNames {
			own = own || safeio.Regular(filepath.Join(sub, n)) == nil
		}
		if !own {
			r.b.SubMakes = append(r.b.SubMakes, SubMake{Dir: sub, Makefile: r.b.Folder.Makefile})
		}
	}
}

// subMakes returns the makes the expanded commands of a sub-make recipe run: the folder (-C, --directory,
// a `cd DIR &&` before it, else folder's) and the makefile (-f, --file, --makefile, relative to that
// folder; "" when none is named). The make of folder itself is left out.
func subMakes(commands []string, folder *Folder) []SubMake {
	var out []SubMake
	for _, c := range commands {
		c = strings.TrimLeft(c, "@-+ \t")
		at := folder.Dir
		if rest, ok := strings.CutPrefix(c, "cd "); ok {
			if d, tail, ok := strings.Cut(rest, "&&"); ok {
				at, c = absJoin(folder.Dir, strings.TrimSpace(d)), strings.TrimSpace(tail)
			}
		}
		words := strings.Fields(c)
		if len(words) == 0 || !strings.Contains(filepath.Base(words[0]), "make") {
			continue
		}
		sub := SubMake{Dir: at}
		var file string
		for i := 1; i < len(words); i++ {
			w := words[i]
			switch {
			case w == "-C" || w == "--directory":
				if i+1 < len(words) {
					sub.Dir = absJoin(sub.Dir, words[i+1])
					i++
				}
			case strings.HasPrefix(w, "--directory="):
				sub.Dir = absJoin(sub.Dir, strings.TrimPrefix(w, "--directory="))
			case strings.HasPrefix(w, "-C"):
				sub.Dir = absJoin(sub.Dir, w[2:])
			case w == "-f" || w == "--file" || w == "--makefile":
				if i+1 < len(words) {
					file = words[i+1]
					i++
				}
			case strings.HasPrefix(w, "--file="), strings.HasPrefix(w, "--makefile="):
				file = w[strings.IndexByte(w, '=')+1:]
			case strings.HasPrefix(w, "-f") && !strings.HasPrefix(w, "--"):
				file = w[2:]
			}
		}
		if file != "" {
			sub.Makefile = absJoin(sub.Dir, file) // -C applies first: make reads -f in the new folder
		}
		if sub.Makefile == folder.Makefile || sub.Makefile == "" && sub.Dir == folder.Dir || slices.Contains(out, sub) {
			continue
		}
		out = append(out, sub)
	}
	return out
}

func absJoin(dir, p string) string {
	p = strings.Trim(p, `"'`)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// defaultReach is the set of targets a plain make builds: the default goal (.DEFAULT_GOAL, the first
// target) and every prerequisite of it, at any depth; nil when the data base names no default goal.
func defaultReach(db *Database) map[string]bool {
	if db == nil {
		return nil
	}
	goal, ok := db.Variables[".DEFAULT_GOAL"]
	if !ok || strings.TrimSpace(goal.Value) == "" {
		return nil
	}
	reach := map[string]bool{}
	stack := strings.Fields(goal.Value)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if reach[n] {
			continue
		}
		reach[n] = true
		if f := db.Files[n]; f != nil {
			stack = append(stack, f.Prereqs...)
			stack = append(stack, f.OrderOnly...)
		}
	}
	return reach
}

// builtByDefault reports whether a plain make builds target (true when that is not known).
func (b *Build) builtByDefault(target string) bool { return b.defaults == nil || b.defaults[target] }
