package explain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/depfile"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Code names one reason why Cargo will or will not rerun a step for a file. The §11.5 reasons of
// docs/cargo-target-dir.md ("why a rebuild did not happen") carry their case number in Reason.Case.
type Code string

const (
	// Undeclared: the file is not among the run's rerun-if-changed paths (§11.5 case 1).
	Undeclared Code = "undeclared"
	// EnvOnly: the script prints only rerun-if-env-changed lines, which switches off Cargo's package
	// scan (§11.5 case 1, modern cc-rs).
	EnvOnly Code = "env-only"
	// PrecalculatedVersion: an old-style script (no rerun-if line) of a registry, directory or git
	// package is keyed on Precalculated(<version or revision>), which no edit changes (§11.5 case 2).
	PrecalculatedVersion Code = "precalculated-version"
	// RegistryUntracked: Cargo's dep-info of a registry, directory or git package drops the package's
	// own files: its compile units track none of them (§11.5 case 3).
	RegistryUntracked Code = "registry-untracked"
	// CargoHomeSkip: the declared path lies under $CARGO_HOME/registry or $CARGO_HOME/git, which
	// Cargo skips (§11.5 case 4).
	CargoHomeSkip Code = "cargo-home-skip"
	// OtherConfiguration: no current binary uses this unit; building another configuration checked
	// a different hash folder (§11.5 case 5).
	OtherConfiguration Code = "other-configuration"
	// EqualMTime: the file's mtime equals the reference; Cargo counts equal as fresh (§11.5 case 6).
	EqualMTime Code = "equal-mtime"
	// OutDirUnwatched: the file is in OUT_DIR; Cargo tracks only the run's `output` (§11.5 case 7).
	OutDirUnwatched Code = "out-dir-unwatched"
	// BundledInRlib: a library crate bundled the static library into its rlib; the binary links the
	// rlib's copies until that crate is rebuilt (§11.5 case 8).
	BundledInRlib Code = "bundled-in-rlib"

	// Changed: Cargo watches the file and it is newer than the reference: the next build reruns.
	Changed Code = "changed"
	// PrecalculatedChanged: a path package's old-style script: a package file is newer than the one
	// Cargo recorded, so the next build reruns it ("the precalculated components changed").
	PrecalculatedChanged Code = "precalculated-changed"
	// Missing: a watched file is missing: the next build reruns.
	Missing Code = "missing"
	// Unchanged: Cargo watches the file and it is not newer than the reference: fresh.
	Unchanged Code = "unchanged"
	// LastRunFailed: the step's last attempt did not finish: the next build reruns it anyway.
	LastRunFailed Code = "last-run-failed"
)

// cases maps the §11.5 reasons to their case number.
var cases = map[Code]int{Undeclared: 1, EnvOnly: 1, PrecalculatedVersion: 2, RegistryUntracked: 3, CargoHomeSkip: 4,
	OtherConfiguration: 5, EqualMTime: 6, OutDirUnwatched: 7, BundledInRlib: 8}

// Reason is one reason, with its sentence.
type Reason struct {
	Code    Code   `json:"code"`
	Case    int    `json:"case,omitempty"` // §11.5 case number, 0 for the rerun/fresh reasons
	Message string `json:"message"`
}

func reason(c Code, format string, args ...any) Reason {
	return Reason{Code: c, Case: cases[c], Message: fmt.Sprintf(format, args...)}
}

// Clue is one way a step reads the file.
type Clue struct {
	How    string `json:"how"` // declared, rustc-dep-info, command-line, depfile, dwarf, package-folder, links, output, …
	Detail string `json:"detail"`
}

// StepVerdict is what one step does with the file and whether Cargo will rerun it.
type StepVerdict struct {
	Unit    string    `json:"unit"`
	Kind    string    `json:"kind"`
	Target  string    `json:"target"`
	Profile string    `json:"profile"`
	Config  string    `json:"config"`
	Live    bool      `json:"live"`
	UsedBy  []RootUse `json:"used_by"`
	Reads   []Clue    `json:"reads"`
	// Declared is true when the step declares the file to Cargo (Cargo checks it); DeclaredBy says how.
	Declared   bool   `json:"declared"`
	DeclaredBy string `json:"declared_by,omitempty"`
	// LastRun is the reference whose mtime Cargo compares against (the run's output, the unit's
	// dep-info file); Compared is the mtime Cargo compares (the file, or a declared folder's newest file).
	LastRun      string `json:"last_run_path"`
	LastRunNS    int64  `json:"last_run_ns"`
	LastRunTime  string `json:"last_run"`
	ComparedPath string `json:"compared_path,omitempty"`
	ComparedNS   int64  `json:"compared_ns,omitempty"`
	// WillRerun is true when Cargo reruns the step on the next build of the step's configuration.
	WillRerun bool        `json:"will_rerun"`
	Reasons   []Reason    `json:"reasons"`
	Step      *graph.Step `json:"-"`
	// System is the step's build system when it is not Cargo ("make", "ninja", "go"; then Unit is the
	// step's name, Kind "<system> step", Declared means the system watches the file), and Tool its name
	// for people ("Make"); Rebuild the command that redoes the step whatever its records say.
	System  string `json:"system,omitempty"`
	Tool    string `json:"-"`
	Rebuild string `json:"rebuild,omitempty"`
}

// PathReport explains one file.
type PathReport struct {
	Path    string        `json:"path"`
	Exists  bool          `json:"exists"`
	MTimeNS int64         `json:"mtime_ns"`
	MTime   string        `json:"mtime"`
	Size    int64         `json:"size"`
	Steps   []StepVerdict `json:"steps"`
	// Note says what the file is when no step reads it.
	Note string `json:"note,omitempty"`
}

// Path explains every step that compiles or reads a file.
func Path(g *graph.Graph, arg string, opt Options) (*PathReport, error) {
	p := arg
	if !filepath.IsAbs(p) {
		cwd := opt.Cwd
		if cwd == "" {
			var err error
			if cwd, err = os.Getwd(); err != nil {
				return nil, err
			}
		}
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	fi := stat(p)
	if !fi.Exists {
		// A deleted file the records still name is worth explaining (Cargo reruns what watched it);
		// a name nothing knows is a typo.
		if _, err := os.Lstat(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	rep := &PathReport{Path: p, Exists: fi.Exists, MTimeNS: fi.MTimeNS, MTime: rfc3339(fi.MTimeNS), Size: fi.Size, Steps: []StepVerdict{}}
	e := &pathExplainer{g: g, l: newLoader(g), p: p, fi: fi}
	steps := append([]*graph.Step(nil), g.Steps...)
	sort.SliceStable(steps, func(i, j int) bool {
		if steps[i].Live() != steps[j].Live() {
			return steps[i].Live()
		}
		return steps[i].ID < steps[j].ID
	})
	for _, s := range steps {
		var v *StepVerdict
		switch {
		case foreignSystem(s):
			v = e.foreign(s)
		case s.Kind == graph.ScriptRun:
			v = e.run(s)
		default:
			v = e.compile(s)
		}
		if v != nil {
			rep.Steps = append(rep.Steps, *v)
		}
	}
	if len(rep.Steps) == 0 {
		if !fi.Exists {
			return nil, &fs.PathError{Op: "explain", Path: p, Err: errors.New("no such file, and no record of the build names it")}
		}
		rep.Note = e.noStep()
	}
	return rep, nil
}

type pathExplainer struct {
	g  *graph.Graph
	l  *loader
	p  string
	fi graph.FileInfo
}

func (e *pathExplainer) newVerdict(s *graph.Step) *StepVerdict {
	v := &StepVerdict{Unit: unitName(s), Kind: kindWords(s), Target: unit.Of(s).Target, Profile: s.ProfileDir,
		Config: configWords(s), Live: s.Live(), UsedBy: rootUses(s), Step: s}
	if v.UsedBy == nil {
		v.UsedBy = []RootUse{}
	}
	return v
}

func (v *StepVerdict) setRef(ref graph.FileInfo) {
	v.LastRun, v.LastRunNS, v.LastRunTime = ref.Path, ref.MTimeNS, rfc3339(ref.MTimeNS)
}

func (e *pathExplainer) rel(p string) string { return e.g.Display(p) }

// run explains a build-script run: the file is its input (declared or read by a record), or one of
// its OUT_DIR outputs.
func (e *pathExplainer) run(s *graph.Step) *StepVerdict {
	if s.Script().OutDir != "" && within(e.p, s.Script().OutDir) && e.p != s.Script().OutDir {
		return e.outDirFile(s)
	}
	clues := e.runClues(s)
	decl := ""
	for _, d := range unit.Of(s).DeclaredPaths {
		if within(e.p, d) {
			decl = d
			break
		}
	}
	if !e.fi.Exists && decl != e.p {
		decl = "" // a declared folder does not make a file that is not there one of its inputs
	}
	precalcScan := e.fi.Exists && unit.Of(s).Scan().ScanKey != "" && s.PathPackage && within(e.p, s.PackageRoot)
	if len(clues) == 0 && decl == "" && !precalcScan {
		return nil
	}
	v := e.newVerdict(s)
	v.Reads = clues
	ref := s.Reference
	v.setRef(ref)
	name := e.rel(e.p)
	switch {
	case s.Failed != "":
		v.WillRerun = true
		v.Reasons = append(v.Reasons, reason(LastRunFailed, "the last run of %s did not finish (%s): Cargo reruns it on the next build", unitName(s), s.Failed))
	case !ref.Exists:
		v.WillRerun = true
		// The script's stdout record: `output` in the legacy layout, `run/stdout` in the new one.
		what := "stdout file"
		if ref.Path != "" {
			what = filepath.Base(ref.Path) + " file"
		}
		v.Reasons = append(v.Reasons, reason(LastRunFailed, "%s has no %s: the script never finished, Cargo reruns it", s.Script().RunDir, what))
	case unit.Of(s).Scan().ScanKey != "" && precalcScan:
		v.Declared, v.DeclaredBy = true, "Cargo's scan of the whole package (the script prints no rerun-if line)"
		v.ComparedPath, v.ComparedNS = e.p, e.fi.MTimeNS
		switch {
		case e.fi.MTimeNS > unit.Of(s).Scan().ScanNewestNS:
			v.WillRerun = true
			v.Reasons = append(v.Reasons, reason(PrecalculatedChanged, "%s (modified %s) is newer than the newest package file Cargo recorded, %s at %s, in Precalculated(%q): Cargo reruns the script (\"the precalculated components changed\")",
				name, FmtTime(e.fi.MTimeNS), unit.Of(s).Scan().ScanNewestFile, FmtTime(unit.Of(s).Scan().ScanNewestNS), unit.Of(s).Scan().ScanKey))
		default:
			v.Reasons = append(v.Reasons, reason(Unchanged, "%s (modified %s) is not newer than the newest package file Cargo recorded (%s at %s): fresh",
				name, FmtTime(e.fi.MTimeNS), unit.Of(s).Scan().ScanNewestFile, FmtTime(unit.Of(s).Scan().ScanNewestNS)))
		}
	case unit.Of(s).Scan().ScanKey != "":
		v.Reasons = append(v.Reasons, reason(PrecalculatedVersion, "the build script of %s prints no rerun-if line, so Cargo keys the run on Precalculated(%q): for a %s package that is its %s, which no edit of %s changes; Cargo never reruns the script for it",
			s.Package, unit.Of(s).Scan().ScanKey, sourceName(s), versionWord(s), name))
		e.addAge(v, ref)
	case decl != "" && e.cargoHomeSkip(decl):
		v.DeclaredBy = "rerun-if-changed=" + e.rel(decl) + " (skipped by Cargo)"
		v.Reasons = append(v.Reasons, reason(CargoHomeSkip, "the script declares rerun-if-changed=%s, but that path lies under %s, which Cargo assumes immutable and never checks", decl, e.cargoHomeDir(decl)))
		e.addAge(v, ref)
	case decl != "":
		v.Declared = true
		rel, err := filepath.Rel(s.PackageRoot, decl)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = decl
		}
		v.DeclaredBy = "rerun-if-changed=" + rel
		cmp, newest := statTree(decl)
		v.ComparedPath, v.ComparedNS = newest, cmp.MTimeNS
		what := fmt.Sprintf("%s (modified %s)", name, FmtTime(e.fi.MTimeNS))
		if decl != e.p {
			what = fmt.Sprintf("the declared folder %s, whose newest file is %s (modified %s)", e.rel(decl), e.rel(newest), FmtTime(cmp.MTimeNS))
		}
		e.mtimeVerdict(v, cmp, what, ref, "the script's last run started", "the file `"+rel+"` has changed")
	default:
		if len(unit.Of(s).DeclaredPaths) == 0 && len(unit.Of(s).DeclaredEnv) > 0 {
			v.Reasons = append(v.Reasons, reason(EnvOnly, "the build script of %s prints only rerun-if-env-changed lines (%s), which switches off Cargo's scan of the package: Cargo reruns it only when those variables change, never for %s",
				s.Package, strings.Join(unit.Of(s).DeclaredEnv, ", "), name))
		} else {
			v.Reasons = append(v.Reasons, reason(Undeclared, "%s is not among the run's rerun-if-changed paths (%s), so Cargo never checks it", name, declaredList(s)))
		}
		e.addAge(v, ref)
	}
	e.otherConfig(v, s)
	return v
}

// addAge adds, to a "Cargo does not check it" verdict, whether the file changed after the last run.
func (e *pathExplainer) addAge(v *StepVerdict, ref graph.FileInfo) {
	v.ComparedPath, v.ComparedNS = e.p, e.fi.MTimeNS
	if !ref.Exists || !e.fi.Exists || len(v.Reasons) == 0 {
		return
	}
	r := &v.Reasons[len(v.Reasons)-1]
	switch {
	case e.fi.MTimeNS > ref.MTimeNS:
		r.Message += fmt.Sprintf(". It was modified at %s, after the last run at %s: the build uses what it made from an older %s", FmtTime(e.fi.MTimeNS), FmtTime(ref.MTimeNS), filepath.Base(e.p))
	default:
		r.Message += fmt.Sprintf(". It was last modified at %s, before the last run at %s", FmtTime(e.fi.MTimeNS), FmtTime(ref.MTimeNS))
	}
}

// mtimeVerdict applies Cargo's test to a watched input: strictly newer than the reference reruns,
// equal or older is fresh; a missing input reruns.
func (e *pathExplainer) mtimeVerdict(v *StepVerdict, cmp graph.FileInfo, what string, ref graph.FileInfo, refWords, cargoWords string) {
	switch {
	case !cmp.Exists:
		v.WillRerun = true
		v.Reasons = append(v.Reasons, reason(Missing, "%s is missing: Cargo reruns %s on the next build (\"the file … is missing\")", e.rel(cmp.Path), v.Unit))
	case cmp.MTimeNS > ref.MTimeNS:
		v.WillRerun = true
		v.Reasons = append(v.Reasons, reason(Changed, "%s is newer than %s (%s, %s): Cargo reruns %s on the next build (\"%s\")",
			what, refWords, FmtTime(ref.MTimeNS), e.rel(ref.Path), v.Unit, cargoWords))
	case cmp.MTimeNS == ref.MTimeNS:
		v.Reasons = append(v.Reasons, reason(EqualMTime, "%s has exactly the mtime of %s (%s, %s); Cargo counts equal as fresh (its test is mtime <= reference), so an edit stamped in the same tick (a coarse-mtime file system, mtimes restored by cp or tar) is not seen",
			what, refWords, FmtTime(ref.MTimeNS), e.rel(ref.Path)))
	default:
		v.Reasons = append(v.Reasons, reason(Unchanged, "%s is older than %s (%s): fresh, Cargo has nothing to redo", what, refWords, FmtTime(ref.MTimeNS)))
	}
}

// otherConfig adds §11.5 case 5 to a unit no current binary uses.
func (e *pathExplainer) otherConfig(v *StepVerdict, s *graph.Step) {
	if s.Live() {
		return
	}
	var live []string
	for _, o := range e.g.Steps {
		if o != s && o.Live() && o.Package == s.Package && unit.Of(o).Target == unit.Of(s).Target {
			live = append(live, fmt.Sprintf("%s (%s)", unitName(o), configWords(o)))
		}
	}
	sort.Strings(live)
	checked := "no unit of this role is used by a current binary"
	if len(live) > 0 {
		checked = "the current binaries use " + strings.Join(live, ", ")
	}
	when := "building that configuration again would not rerun it for this file either"
	if v.WillRerun {
		when = "Cargo reruns it only when that configuration is built again"
	}
	v.Reasons = append(v.Reasons, reason(OtherConfiguration, "%s belongs to another configuration (%s) that no current binary uses; %s, so building those checked their own folders, not this one; %s",
		unitName(s), configWords(s), checked, when))
}

// runClues gathers how a run reads the file: the live run's inputs as the graph holds them; for a
// run that is not live, its declarations, `running:` lines, compiler depfiles in OUT_DIR and the
// native sources of its package folder.
func (e *pathExplainer) runClues(s *graph.Step) []Clue {
	var out []Clue
	if s.Live() {
		for _, in := range s.Inputs {
			if in.File.Path != e.p {
				continue
			}
			for i, h := range in.How {
				out = append(out, Clue{How: string(h), Detail: in.Detail[i]})
			}
		}
		return out
	}
	for _, d := range unit.Of(s).DeclaredPaths {
		if within(e.p, d) && (e.fi.Exists || d == e.p) {
			out = append(out, Clue{How: string(graph.Declared), Detail: "rerun-if-changed in " + s.Reference.Path})
		}
	}
	if s.Reference.Exists {
		if data, err := safeio.ReadFile(s.Reference.Path, safeio.MaxRecord); err == nil {
			rootOut, _ := safeio.ReadFile(filepath.Join(s.Script().RunDir, "root-output"), safeio.MaxRecord)
			bo := cargo.ParseBuildOutput(data, strings.TrimSpace(string(rootOut)), s.Script().OutDir)
			for _, cmd := range bo.Commands {
				for _, src := range cargo.CommandSources(cmd) {
					if pkgPath(s, src) == e.p {
						out = append(out, Clue{How: string(graph.CommandLine), Detail: "running: " + truncate(strings.Join(cmd, " "), 160)})
					}
				}
			}
		}
	}
	for _, o := range s.Outputs {
		if !strings.HasSuffix(o.Path, ".d") {
			continue
		}
		if f, err := depfile.ParseFile(o.Path); err == nil {
			for _, in := range f.Inputs() {
				if pkgPath(s, in) == e.p {
					out = append(out, Clue{How: string(graph.Depfile), Detail: o.Path})
				}
			}
		}
	}
	if e.fi.Exists && s.PackageRoot != "" && within(e.p, s.PackageRoot) && cargo.IsNativeSource(e.p) && !within(e.p, e.g.BuildDir) {
		out = append(out, Clue{How: string(graph.PackageFolder), Detail: s.PackageRoot})
	}
	return out
}

func pkgPath(s *graph.Step, p string) string {
	if filepath.IsAbs(p) || s.PackageRoot == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(s.PackageRoot, p)
}

// outDirFile explains a file in a run's OUT_DIR: the run's output, and what each consumer does with it.
func (e *pathExplainer) outDirFile(s *graph.Step) *StepVerdict {
	v := e.newVerdict(s)
	v.setRef(s.Reference)
	v.Reads = []Clue{{How: "output", Detail: "written into OUT_DIR " + s.Script().OutDir}}
	v.Reasons = append(v.Reasons, reason(OutDirUnwatched, "%s is an output of the build script, in its OUT_DIR: Cargo tracks only the run folder's output file, so editing, replacing or deleting %s never reruns the script (and Cargo never empties OUT_DIR before a rerun)",
		e.rel(e.p), filepath.Base(e.p)))
	e.otherConfig(v, s)
	return v
}

// linkClue reports whether a rustc unit links the file: a library one of its build-script runs links.
func (e *pathExplainer) linkClue(s *graph.Step) (*graph.Step, *graph.Link) {
	for _, d := range s.Deps {
		if d.Kind != graph.ScriptRun || d.Package != s.Package {
			continue
		}
		for i := range d.Script().Links {
			if d.Script().Links[i].Path == e.p {
				return d, &d.Script().Links[i]
			}
		}
	}
	return nil, nil
}

// compile explains a rustc unit (or a build-script compile unit): rustc read the file (its `.d`),
// Cargo checks it when its fingerprint dep-info lists it; or the unit links it from OUT_DIR.
func (e *pathExplainer) compile(s *graph.Step) *StepVerdict {
	read, dfile := e.l.rustcDepfile(s)
	reads := false
	for _, in := range read {
		if in == e.p {
			reads = true
		}
	}
	declared, ref, haveDI := e.l.depInfo(s)
	isDecl := false
	for _, in := range declared {
		if in == e.p {
			isDecl = true
		}
	}
	run, link := e.linkClue(s)
	if !reads && !isDecl && link == nil {
		return nil
	}
	v := e.newVerdict(s)
	v.setRef(ref)
	if reads {
		v.Reads = append(v.Reads, Clue{How: "rustc-dep-info", Detail: dfile})
	}
	if isDecl {
		v.Reads = append(v.Reads, Clue{How: string(graph.Declared), Detail: "Cargo's dep-info " + ref.Path})
	}
	name := e.rel(e.p)
	switch {
	case s.Failed != "":
		v.WillRerun = true
		v.Reasons = append(v.Reasons, reason(LastRunFailed, "the last build of %s did not finish (%s): Cargo rebuilds it on the next build", unitName(s), s.Failed))
	case isDecl:
		v.Declared, v.DeclaredBy = true, "Cargo's dep-info "+e.rel(ref.Path)
		v.ComparedPath, v.ComparedNS = e.p, e.fi.MTimeNS
		e.mtimeVerdict(v, e.fi, fmt.Sprintf("%s (modified %s)", name, FmtTime(e.fi.MTimeNS)), ref, "the unit's last compile (its dep-info file)",
			"the file `"+name+"` has changed")
	case link != nil:
		v.Reads = append(v.Reads, Clue{How: "links", Detail: fmt.Sprintf("rustc-link-lib=%s=%s printed by %s", orDefault(link.Kind), link.Name, unitName(run))})
		v.Reasons = append(v.Reasons, reason(OutDirUnwatched, "%s links %s from the OUT_DIR of %s; Cargo does not track OUT_DIR contents, so replacing %s does not relink %s",
			unitName(s), name, unitName(run), filepath.Base(e.p), unitName(s)))
		if strings.HasPrefix(unit.Of(s).Target, "lib-") && (link.Kind == "static" || link.Kind == "") {
			v.Reasons = append(v.Reasons, e.bundled(s))
		}
		v.ComparedPath, v.ComparedNS = e.p, e.fi.MTimeNS
	case reads && !haveDI:
		v.Reasons = append(v.Reasons, reason(Undeclared, "rustc read %s, but %s's dep-info file (%s) is missing or unreadable, so Cargo cannot check it", name, unitName(s), ref.Path))
	case reads && unit.Of(s).Source != "path" && !s.PathPackage:
		v.Reasons = append(v.Reasons, reason(RegistryUntracked, "rustc read %s when it compiled %s, but %s is a %s package: Cargo's dep-info drops the package's own files (%s lists none of them), so Cargo never checks %s",
			name, unitName(s), s.Package, sourceName(s), e.rel(ref.Path), filepath.Base(e.p)))
		e.addAge(v, ref)
	default:
		v.Reasons = append(v.Reasons, reason(Undeclared, "rustc read %s, but Cargo's dep-info %s does not list it, so Cargo never checks it", name, e.rel(ref.Path)))
		e.addAge(v, ref)
	}
	e.otherConfig(v, s)
	return v
}

// bundled says that a library crate's rlib carries the static library's members.
func (e *pathExplainer) bundled(s *graph.Step) Reason {
	var rlib string
	for _, p := range e.l.depsFiles(s) {
		if strings.HasSuffix(p, ".rlib") {
			rlib = p
		}
	}
	held := ""
	if rlib != "" {
		if members := archiveMembers(e.p); len(members) > 0 {
			in := map[string]bool{}
			for _, m := range archiveMembers(rlib) {
				in[m] = true
			}
			var found []string
			for _, m := range members {
				if in[m] {
					found = append(found, m)
				}
			}
			if len(found) > 0 {
				held = fmt.Sprintf(" (it holds %s)", strings.Join(found, ", "))
			}
		}
	}
	if rlib == "" {
		rlib = "its rlib"
	} else {
		rlib = e.rel(rlib)
	}
	return reason(BundledInRlib, "%s is a library crate: rustc bundled the members of %s into %s%s when it compiled it, and binaries link the rlib's copies; a changed %s has no effect until %s is rebuilt, and Cargo does not rebuild it for that",
		unitName(s), filepath.Base(e.p), rlib, held, filepath.Base(e.p), unitName(s))
}

func archiveMembers(p string) []string {
	if safeio.Regular(p) != nil {
		return nil // a FIFO or a device is no archive: never open it
	}
	a, err := binfmt.OpenArchive(p)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range a.Members {
		out = append(out, m.Name)
	}
	return out
}

// noStep says what the file is when no step reads it.
func (e *pathExplainer) noStep() string {
	if !e.fi.Exists {
		return "the file does not exist, and no record on disk names it"
	}
	if within(e.p, e.g.BuildDir) || within(e.p, e.g.TargetDir) {
		return "the file lies in the build folder, and no step's record names it as an input"
	}
	for _, s := range e.g.Steps {
		if s.PackageRoot != "" && within(e.p, s.PackageRoot) {
			return fmt.Sprintf("the file lies in package %s (%s), but no record on disk ties it to a step: no dep-info, rerun-if-changed path, compiler command line or depfile names it", s.Package, s.PackageRoot)
		}
	}
	return "no record on disk names the file: no step of this build compiles or reads it"
}

func (e *pathExplainer) cargoHomeDir(p string) string {
	for _, sub := range []string{"registry", "git"} {
		d := filepath.Join(unit.TreeOf(e.g).CargoHome, sub)
		if within(p, d) {
			return "$CARGO_HOME/" + sub + " (" + d + ")"
		}
	}
	return "$CARGO_HOME"
}

func (e *pathExplainer) cargoHomeSkip(p string) bool {
	if unit.TreeOf(e.g).CargoHome == "" {
		return false
	}
	return within(p, filepath.Join(unit.TreeOf(e.g).CargoHome, "registry")) || within(p, filepath.Join(unit.TreeOf(e.g).CargoHome, "git"))
}

func declaredList(s *graph.Step) string {
	parts := unit.Of(s).Declarations(s)
	if len(parts) == 0 {
		return "it declares none"
	}
	return "it declares " + strings.Join(parts, ", ")
}

func sourceName(s *graph.Step) string {
	switch unit.Of(s).Source {
	case "registry":
		return "registry"
	case "directory":
		return "directory-source (vendored registry)"
	case "git":
		return "git"
	case "path":
		return "path"
	}
	return "non-path"
}

func versionWord(s *graph.Step) string {
	if unit.Of(s).Source == "git" {
		return "revision"
	}
	return "version"
}

func configWords(s *graph.Step) string {
	f := make([]string, len(unit.Of(s).Features))
	for i, x := range unit.Of(s).Features {
		f[i] = fmt.Sprintf("%q", x)
	}
	parts := []string{"profile " + s.ProfileDir, "features [" + strings.Join(f, ", ") + "]"}
	if len(unit.Of(s).Rustflags) > 0 {
		parts = append(parts, "rustflags "+strings.Join(unit.Of(s).Rustflags, " "))
	}
	return strings.Join(parts, ", ")
}

func orDefault(k string) string {
	if k == "" {
		return "(default)"
	}
	return k
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
