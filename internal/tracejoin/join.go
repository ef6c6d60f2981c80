// Package tracejoin joins a stored build trace (`stalecheck trace`, internal/trace) to the steps of a
// provenance graph, so that check sees what no build record names: files a step's processes opened that
// its build system does not watch (inputs with the graph.Trace clue) and the searches they made for a
// program on PATH or a header in include folders, answered again now (graph.Step.Lookups).
//
// A trace describes a step only while the step has not run again since (trace.Process.RanAgain against
// the step's Reference, whose mtime the build system sets to the start of each run: Cargo's build-script
// `output` and dep-info files carry the invocation time; Make's and Ninja's outputs are written before
// the compiler exits). Steps that ran again are named in a graph note and not joined.
//
// Which processes make a step: a Cargo build-script run is the process running
// build/<pkg>-<hash>/build-script-build whose OUT_DIR is the step's, with its children (cc, c++, nvcc,
// cmake, make, ar); a rustc unit is the rustc process whose -C extra-filename is -<unit hash> and whose
// --out-dir lies in the step's profile folder; a Make rule or Ninja edge is the first process that ran a
// program with `-o OUTPUT` (OUTPUT the step's reference, relative to that program's working folder or
// absolute), with its children.
//
// What is left out, so that findings are about the user's files: failed opens, directories, files
// the traced build wrote, created, renamed or removed (temporary files, generated code), anything
// under the target and build folders or the state folder, system folders (/usr, /etc, /proc, /sys,
// /dev, /lib*, /bin, /sbin, /run, /var: sysdirs.System, which leaves the workspace's and build
// folders' own files to the user wherever they are, /dev/shm or /var/lib/jenkins), and the toolchain folders ($RUSTUP_HOME and $CARGO_HOME, from
// the traced processes' environment, the environment stalecheck runs in, else ~/.rustup and ~/.cargo).
// stat, access and readlink calls are lookups, not reads of content: they feed Lookups only.
package tracejoin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/sysdirs"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/trace"
)

// Options configure Join.
type Options struct {
	StateDir string // the state folder holding traces/ ("" = none: Join does nothing)
	// Getenv is the environment the next build will run in (PATH, RUSTUP_HOME, CARGO_HOME, HOME);
	// nil = os.Getenv.
	Getenv func(string) string
}

// Result says what Join did, for notes and tests.
type Result struct {
	Traces    []string // the store files joined
	Joined    int      // steps a trace was joined to
	OutOfDate []string // names of steps that ran again after their trace
	Inputs    int      // inputs added or given the trace clue
	Lookups   int      // lookups recorded
}

// Join loads the trace of each build folder of g (Cargo's build folder, the folders of Make and Ninja
// steps) and joins it to the steps. A damaged trace is a graph problem naming the store file; no trace
// is nothing. Join reads the disk (stat of each candidate input and lookup answer); rules do not.
func Join(g *graph.Graph, opt Options) Result {
	var res Result
	if opt.StateDir == "" {
		return res
	}
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	seen := map[string]bool{}
	var keys []string
	add := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	add(g.BuildDir)
	for _, s := range g.Steps {
		if s.System != unit.System && s.System != "" && s.System != "go" {
			add(s.RecordDir)
		}
	}
	for _, k := range keys {
		t, err := trace.Load(opt.StateDir, k)
		if errors.Is(err, trace.ErrNoTrace) || errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			// stalecheck's own record: no build system rewrites it, tracing the build again does.
			g.Problems = append(g.Problems, graph.Problem{Path: trace.Path(opt.StateDir, k), Err: err.Error(),
				Fix: fmt.Sprintf("run stalecheck trace -- BUILD again (the build command you traced, for the build in %s): it replaces the damaged trace; or remove the file", k)})
			continue
		}
		j := newJoiner(g, t, opt)
		j.join()
		res.Traces = append(res.Traces, t.File)
		res.Joined += j.joined
		res.Inputs += j.inputs
		res.Lookups += j.lookups
		res.OutOfDate = append(res.OutOfDate, j.outOfDate...)
		j.note()
	}
	return res
}

type joiner struct {
	g       *graph.Graph
	t       *trace.Trace
	opt     Options
	written map[string]bool
	skip    []string // folders whose files are never joined
	own     []string // the graph's own folders: never system folders, wherever they are (sysdirs.System)
	tools   []string // toolchain folders (for the next PATH)
	stats   map[string]graph.FileInfo

	joined, inputs, lookups int
	outOfDate               []string
}

func newJoiner(g *graph.Graph, t *trace.Trace, opt Options) *joiner {
	j := &joiner{g: g, t: t, opt: opt, written: map[string]bool{}, stats: map[string]graph.FileInfo{}}
	for i := range t.Accesses {
		if a := &t.Accesses[i]; !a.Input() {
			j.written[a.Path] = true
		}
	}
	j.own = []string{g.Workspace, g.TargetDir, g.BuildDir}
	j.skip = append(j.skip, filepath.Clean(opt.StateDir))
	// Cargo's profile folders (the parent of .fingerprint/<unit>): what Cargo writes.
	prof := map[string]bool{}
	for _, s := range g.Steps {
		if s.System == unit.System && s.RecordDir != "" {
			if d := filepath.Dir(filepath.Dir(s.RecordDir)); !prof[d] {
				prof[d] = true
				j.skip = append(j.skip, d)
			}
		}
	}
	home := opt.Getenv("HOME")
	tool := map[string]bool{}
	addTool := func(d string) {
		if d != "" && filepath.IsAbs(d) && !tool[filepath.Clean(d)] {
			tool[filepath.Clean(d)] = true
			j.tools = append(j.tools, filepath.Clean(d))
		}
	}
	for _, k := range []string{"RUSTUP_HOME", "CARGO_HOME"} {
		addTool(opt.Getenv(k))
		for i := range t.Processes {
			if v, ok := t.Processes[i].Getenv(k); ok {
				addTool(v)
			}
		}
	}
	if home != "" {
		addTool(filepath.Join(home, ".rustup"))
		addTool(filepath.Join(home, ".cargo"))
	}
	j.skip = append(j.skip, j.tools...)
	return j
}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/") || dir == "/"
}

func (j *joiner) skipped(p string) bool {
	if sysdirs.System(p, j.own...) {
		return true
	}
	for _, d := range j.skip {
		if under(p, d) {
			return true
		}
	}
	return false
}

func (j *joiner) stat(p string) graph.FileInfo {
	if fi, ok := j.stats[p]; ok {
		return fi
	}
	fi := graph.FileInfo{Path: p}
	if st, err := fsrec.Stat(p); err == nil && st.Mode().IsRegular() {
		fi = graph.FileInfo{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true}
	}
	j.stats[p] = fi
	return fi
}

func (j *joiner) join() {
	runs := map[string]*graph.Step{}
	units := map[string][]*graph.Step{}
	var others []*graph.Step
	for _, s := range j.g.Steps {
		switch {
		case s.System == unit.System && s.Kind == graph.ScriptRun && s.Script().OutDir != "":
			runs[filepath.Clean(s.Script().OutDir)] = s
		case s.System == unit.System:
			if h := unit.Of(s).Hash; h != "" {
				units[h] = append(units[h], s)
			}
		case s.System != "go" && s.Reference.Path != "":
			others = append(others, s)
		}
	}
	for _, r := range j.t.BuildScriptRuns() {
		if s := runs[filepath.Clean(r.OutDir)]; s != nil && r.OutDir != "" {
			j.joinStep(s, r.Proc, true)
		}
	}
	for _, u := range j.t.RustcUnits() {
		if u.Hash == "" {
			continue
		}
		for _, s := range units[u.Hash] {
			// The same hash names a unit in each layout of a profile folder that holds both: the
			// process is the one whose --out-dir is in the step's layout.
			if under(filepath.Clean(u.OutDir), filepath.Join(j.g.BuildDir, s.ProfileDir)) && unit.IsNew(s) == u.NewLayout {
				j.joinStep(s, u.Proc, false)
			}
		}
	}
	if len(others) > 0 {
		byOut := map[string]*graph.Step{}
		for _, s := range others {
			byOut[s.Reference.Path] = s
		}
		done := map[*graph.Step]bool{}
		for i := range j.t.Processes {
			p := &j.t.Processes[i]
			for _, e := range p.Execs {
				s := byOut[outputOf(e)]
				if s != nil && !done[s] {
					done[s] = true
					j.joinStep(s, p, false)
				}
			}
		}
	}
}

// outputOf returns the absolute path a program's `-o OUT` (or `-oOUT`) names, "" when none.
func outputOf(e trace.Exec) string {
	for i, a := range e.Argv {
		o := ""
		switch {
		case a == "-o" && i+1 < len(e.Argv):
			o = e.Argv[i+1]
		case strings.HasPrefix(a, "-o") && len(a) > 2 && i > 0:
			o = a[2:]
		}
		if o == "" {
			continue
		}
		if !filepath.IsAbs(o) {
			o = filepath.Join(e.Cwd, o)
		}
		return filepath.Clean(o)
	}
	return ""
}

// joinStep adds what the process tree rooted at p read and looked up to s, when the trace still
// describes s's last run.
func (j *joiner) joinStep(s *graph.Step, p *trace.Process, lookups bool) {
	if s.Failed != "" || !s.Reference.Exists || p.Exit != 0 {
		return
	}
	if p.RanAgain(s.Reference.MTimeNS) {
		j.outOfDate = append(j.outOfDate, fmt.Sprintf("%s (ran again at %d ns, after the traced run ended at %d ns)", s.Name, s.Reference.MTimeNS, p.End))
		return
	}
	j.joined++
	own := []string{s.Script().RunDir, s.Script().OutDir}
	byPath := map[string]*graph.Input{}
	for _, in := range s.Inputs {
		byPath[in.File.Path] = in
	}
	for _, a := range j.t.ReadsOf(p.ID) {
		if a.Errno != "" || !filepath.IsAbs(a.Path) || a.Mode&trace.ModeDirectory != 0 {
			continue
		}
		if !strings.HasPrefix(a.Op, "open") && a.Op != "creat" && !strings.HasPrefix(a.Op, "exec") {
			continue
		}
		if j.written[a.Path] || j.skipped(a.Path) || ownFile(a.Path, own) {
			continue
		}
		fi := j.stat(a.Path)
		if !fi.Exists {
			continue
		}
		pr := &j.t.Processes[a.Proc]
		read := &graph.TraceRead{File: j.t.File, PID: pr.PID, Exe: j.exe(pr), Op: a.Op, TimeNS: a.Time}
		detail := fmt.Sprintf("%s: %s by pid %d (%s) at %d ns", j.t.File, a.Op, pr.PID, filepath.Base(read.Exe), a.Time)
		if in := byPath[a.Path]; in != nil {
			if in.Watched || in.Has(graph.Trace) {
				continue
			}
			in.How = append(in.How, graph.Trace)
			in.Detail = append(in.Detail, detail)
			in.Trace = read
		} else {
			in := &graph.Input{File: fi, How: []graph.How{graph.Trace}, Detail: []string{detail}, Trace: read}
			s.Inputs = append(s.Inputs, in)
			byPath[a.Path] = in
		}
		j.inputs++
	}
	if lookups {
		j.pathLookups(s, p)
	}
	j.includeLookups(s, p)
}

// exe is the program a process ran, or for a fork that never exec'd (a spawn whose execve attempts
// along PATH all failed) its nearest ancestor's, marked as such.
func (j *joiner) exe(p *trace.Process) string {
	if e := p.Exe(); e != "" {
		return e
	}
	for id := p.Parent; id >= 0 && id < len(j.t.Processes); id = j.t.Processes[id].Parent {
		if e := j.t.Processes[id].Exe(); e != "" {
			return e + " (a fork of it)"
		}
	}
	return ""
}

func ownFile(p string, own []string) bool {
	for _, d := range own {
		if d != "" && under(p, filepath.Clean(d)) {
			return true
		}
	}
	return false
}

// pathLookups records the PATH searches of p's tree, the first of each (name, PATH), answered now on
// the same PATH and on the PATH the next build will search.
func (j *joiner) pathLookups(s *graph.Step, p *trace.Process) {
	seen := map[string]bool{}
	cur := j.opt.Getenv("PATH")
	for _, l := range j.t.PathLookups(p.ID) {
		k := l.Name + "\x00" + l.PATH
		if seen[k] {
			continue
		}
		seen[k] = true
		pr := &j.t.Processes[l.Proc]
		gl := graph.Lookup{Kind: graph.LookupPATH, Name: l.Name, Search: l.PATH, Then: l.Found, Tried: len(l.Tried),
			Now: l.Now(), TraceFile: j.t.File, PID: pr.PID, Exe: j.exe(pr), TimeNS: l.Time}
		if next := j.nextPATH(l.PATH, cur); next != "" && cleanPATH(next) != cleanPATH(l.PATH) {
			gl.NextSearch, gl.NowNext = next, l.NowWith(next)
		}
		s.OwnCmd().Lookups = append(s.OwnCmd().Lookups, gl)
		j.lookups++
	}
}

// nextPATH is the PATH the next build's step will search: the environment stalecheck runs in, after the
// toolchain folders the traced PATH began with (rustup's proxy puts its toolchain's bin folder first)
// that it lacks. "" when stalecheck runs without PATH.
func (j *joiner) nextPATH(traced, cur string) string {
	if cur == "" {
		return ""
	}
	have := map[string]bool{}
	for _, d := range strings.Split(cur, ":") {
		have[filepath.Clean(d)] = true
	}
	var pre []string
	for _, d := range strings.Split(traced, ":") {
		d = filepath.Clean(d)
		tool := false
		for _, t := range j.tools {
			tool = tool || under(d, t)
		}
		if !tool || have[d] {
			break
		}
		pre = append(pre, d)
	}
	return strings.Join(append(pre, cur), ":")
}

func cleanPATH(p string) string {
	var out []string
	for _, d := range strings.Split(p, ":") {
		if filepath.IsAbs(d) {
			out = append(out, filepath.Clean(d))
		}
	}
	return strings.Join(out, ":")
}

// compilerProper are the programs whose failed-then-found opens of one name are an include-folder search.
var compilerProper = map[string]bool{"cc1": true, "cc1plus": true, "cc1obj": true, "cudafe++": true, "cicc": true, "clang": true, "clang++": true}

// includeLookups records the header searches of the compilers in p's tree: a run of failed opens of one
// relative name in successive folders ending at an open that found it. The answer now is the first of
// the tried paths that exists as a file (the build did not write it), else the one found then.
func (j *joiner) includeLookups(s *graph.Step, p *trace.Process) {
	for _, id := range j.t.Tree(p.ID) {
		pr := &j.t.Processes[id]
		exe := filepath.Base(pr.Exe())
		if !compilerProper[exe] && !strings.HasPrefix(exe, "clang-") {
			continue
		}
		type try struct {
			path string
			at   int64
		}
		failed := map[string][]try{} // base name → failed opens, in order
		for _, a := range j.t.AccessesOf(id) {
			if !strings.HasPrefix(a.Op, "open") || !filepath.IsAbs(a.Path) {
				continue
			}
			base := filepath.Base(a.Path)
			if a.Errno == "ENOENT" {
				failed[base] = append(failed[base], try{a.Path, a.Time})
				continue
			}
			if a.Errno != "" {
				continue
			}
			tried := failed[base]
			delete(failed, base)
			if len(tried) == 0 || a.Mode&(trace.ModeRead|trace.ModeDirectory) != trace.ModeRead || !j.stat(a.Path).Exists {
				continue // a folder (locale data), or gone now: nothing to compare
			}
			name := commonSuffix(tried[0].path, a.Path)
			if name == "" {
				continue
			}
			now := ""
			var dirs []string
			for _, c := range tried {
				if !strings.HasSuffix(c.path, "/"+name) {
					break
				}
				dirs = append(dirs, strings.TrimSuffix(c.path, "/"+name))
				if now == "" && !j.written[c.path] && j.stat(c.path).Exists {
					now = c.path
				}
			}
			if len(dirs) != len(tried) {
				continue // not one name in several folders
			}
			if now == "" {
				now = a.Path
			}
			dirs = append(dirs, strings.TrimSuffix(a.Path, "/"+name))
			s.OwnCmd().Lookups = append(s.OwnCmd().Lookups, graph.Lookup{Kind: graph.LookupInclude, Name: name, Search: strings.Join(dirs, ":"),
				Then: a.Path, Tried: len(dirs), Now: now, TraceFile: j.t.File, PID: pr.PID, Exe: j.exe(pr), TimeNS: tried[0].at})
			j.lookups++
		}
	}
}

// commonSuffix returns the longest run of whole path elements both paths end with ("" when the
// base names differ).
func commonSuffix(a, b string) string {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	n := 0
	for n < len(as)-1 && n < len(bs)-1 && as[len(as)-1-n] == bs[len(bs)-1-n] {
		n++
	}
	return strings.Join(as[len(as)-n:], "/")
}

// note tells, in the graph's notes, which trace was joined and which steps it no longer describes.
func (j *joiner) note() {
	status := "ok"
	if j.t.Failed {
		status = fmt.Sprintf("failed, exit status %d", j.t.ExitStatus)
	}
	j.g.Notes = append(j.g.Notes, fmt.Sprintf("trace %s (%s, %s, ended %d ns): joined to %d steps (%d inputs, %d lookups)",
		j.t.File, strings.Join(j.t.Command, " "), status, j.t.End, j.joined, j.inputs, j.lookups))
	if len(j.outOfDate) == 0 {
		return
	}
	sort.Strings(j.outOfDate)
	shown := j.outOfDate
	more := ""
	if len(shown) > 5 {
		more = fmt.Sprintf(" and %d more", len(shown)-5)
		shown = shown[:5]
	}
	j.g.Notes = append(j.g.Notes, fmt.Sprintf("trace %s is out of date for %d steps, which ran again after it was taken; it is not used for them: %s%s (trace the build again: stalecheck trace -- BUILD)",
		j.t.File, len(j.outOfDate), strings.Join(shown, "; "), more))
}
