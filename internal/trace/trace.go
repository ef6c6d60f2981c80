// Package trace runs a build under strace (Debian's strace 6.1, `--seccomp-bpf`), streams its output
// into a compact store in the state folder keyed by the build folder, and answers what the build's
// processes read, looked up and ran: the inputs no build record names (a data file a Cargo build script
// reads without declaring it, a tool found or not found on PATH, a header no depfile lists).
//
// Facts are what strace printed, per process: every open/openat/openat2/creat, stat/lstat/newfstatat/
// statx, access/faccessat/faccessat2, readlink/readlinkat and execve/execveat with its result (a failed
// lookup is kept: ENOENT is an input too), the calls that change the file system (mkdir, unlink, rename, …),
// the process tree (fork/vfork/clone/clone3; threads are folded into their process), the working folder
// (the initial one, then chdir/fchdir) and each exec's argv and environment. Paths are made absolute
// against the process's working folder (lexically, filepath.Join) or, for an `openat(fd, …)`, against the
// path the fd was opened with; a path whose folder is not known stays relative.
package trace

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
)

// Mode holds the open(2) access bits of an Access (0 for calls other than open).
type Mode uint8

const (
	ModeRead      Mode = 1 << iota // O_RDONLY or O_RDWR
	ModeWrite                      // O_WRONLY or O_RDWR
	ModeCreate                     // O_CREAT
	ModeTrunc                      // O_TRUNC
	ModeDirectory                  // O_DIRECTORY
)

// Trace is one traced build as stored.
type Trace struct {
	File       string   // the store file it was loaded from ("" while recording)
	BuildDir   string   // the key: the Cargo build folder, or the working folder of another build
	Cwd        string   // the working folder `trace` ran the build in
	Command    []string // the build command as given
	Start, End int64    // wall clock, nanoseconds since the epoch (strace timestamps)
	// ExitStatus is the build's status as a shell gives it: the exit code, or 128+N for signal N.
	ExitStatus   int
	Failed       bool // ExitStatus != 0
	Processes    []Process
	Accesses     []Access // in the order strace printed them; within a process the first of each (path, op, errno, mode)
	SkippedLines int64    // strace lines the parser did not understand

	nproc, naccess int
	children       [][]int
	byProc         [][]int
}

// Process is one process (its threads folded in) with the programs it ran.
type Process struct {
	ID      int // index in Trace.Processes
	PID     int
	Parent  int   // the parent's ID, -1 for the build's first process (or one whose parent was not seen)
	Start   int64 // ns since the epoch: its fork, or its first line
	End     int64 // ns since the epoch: strace's exit line; 0 when Running
	Exit    int   // exit status (0…255), or 128+N when killed by signal N; -1 unknown
	Signal  string
	Core    bool
	Running bool   // still running when the build's first process exited (tracing was detached)
	Cwd     string // the working folder when it started
	Execs   []Exec // successful execve/execveat calls, in order
}

// Exec is one program a process ran.
type Exec struct {
	Time      int64
	Path      string   // the program, absolute
	Cwd       string   // the working folder at the exec
	Argv      []string // as passed
	Env       []string // "K=V", as passed (empty when strace did not print it)
	Truncated bool     // an argv or env string was cut at strace's -s limit (4096 bytes)
}

// Access is one file-system call of a process.
type Access struct {
	Proc  int    // Process.ID
	Time  int64  // ns since the epoch
	Op    string // the system call: "openat", "newfstatat", "execve", "access", "readlink", "unlink", …
	Path  string // absolute (relative only when its folder was not known)
	Errno string // "" on success, else the error name ("ENOENT")
	Mode  Mode
}

// Input tells whether the access reads the file system (an open for reading, a stat, an access check, a
// readlink, an exec attempt), as opposed to creating, writing or removing.
func (a *Access) Input() bool {
	switch a.Op {
	case "open", "openat", "openat2", "creat":
		return a.Mode&(ModeWrite|ModeCreate|ModeTrunc) == 0
	}
	return inputOps[a.Op]
}

// Opened tells whether the access opened the file (open, openat, openat2, creat), as opposed to
// looking it up (a stat, an access check, a readlink) or running it.
func (a *Access) Opened() bool {
	switch a.Op {
	case "open", "openat", "openat2", "creat":
		return true
	}
	return false
}

var inputOps = map[string]bool{
	"stat": true, "lstat": true, "newfstatat": true, "fstatat64": true, "statx": true, "stat64": true, "lstat64": true,
	"access": true, "faccessat": true, "faccessat2": true, "readlink": true, "readlinkat": true,
	"execve": true, "execveat": true,
}

// Exe is the program the process ran last ("" if it never exec'd: a fork that only exited).
func (p *Process) Exe() string {
	if len(p.Execs) == 0 {
		return ""
	}
	return p.Execs[len(p.Execs)-1].Path
}

// Argv is the argv of the last program the process ran.
func (p *Process) Argv() []string {
	if len(p.Execs) == 0 {
		return nil
	}
	return p.Execs[len(p.Execs)-1].Argv
}

// Getenv returns the variable k of the process's last exec ("" and false when unset or unknown).
func (p *Process) Getenv(k string) (string, bool) {
	if len(p.Execs) == 0 {
		return "", false
	}
	return getenv(p.Execs[len(p.Execs)-1].Env, k)
}

func getenv(env []string, k string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], k+"="); ok {
			return v, true
		}
	}
	return "", false
}

func (t *Trace) index() {
	if t.children != nil {
		return
	}
	t.children = make([][]int, len(t.Processes))
	t.byProc = make([][]int, len(t.Processes))
	for i := range t.Processes {
		if p := t.Processes[i].Parent; p >= 0 && p < len(t.Processes) {
			t.children[p] = append(t.children[p], i)
		}
	}
	for i := range t.Accesses {
		a := t.Accesses[i].Proc
		t.byProc[a] = append(t.byProc[a], i)
	}
}

// Children returns the IDs of the processes id forked.
func (t *Trace) Children(id int) []int {
	t.index()
	return t.children[id]
}

// Tree returns id and every process below it, parents before children.
func (t *Trace) Tree(id int) []int {
	t.index()
	out := []int{id}
	for i := 0; i < len(out); i++ {
		out = append(out, t.children[out[i]]...)
	}
	return out
}

// AccessesOf returns the accesses of one process (not of its children), in order.
func (t *Trace) AccessesOf(id int) []*Access {
	t.index()
	out := make([]*Access, 0, len(t.byProc[id]))
	for _, i := range t.byProc[id] {
		out = append(out, &t.Accesses[i])
	}
	return out
}

// ProcessesUnder returns the processes that ran a program with a working folder at or under dir (or
// started there), in ID order.
func (t *Trace) ProcessesUnder(dir string) []*Process {
	dir = filepath.Clean(dir)
	var out []*Process
	for i := range t.Processes {
		p := &t.Processes[i]
		in := under(p.Cwd, dir)
		for _, e := range p.Execs {
			in = in || under(e.Cwd, dir)
		}
		if in {
			out = append(out, p)
		}
	}
	return out
}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/") || dir == "/" && strings.HasPrefix(p, "/")
}

// ReadsOf returns the input accesses (Access.Input) of the process tree rooted at id, the first of
// each (path, op, errno) in time order: what the step that process is read, looked for and ran.
func (t *Trace) ReadsOf(id int) []*Access {
	return t.treeAccesses(id, true)
}

// WritesOf returns the other accesses of the tree (opens for writing, creations, removals, renames).
func (t *Trace) WritesOf(id int) []*Access {
	return t.treeAccesses(id, false)
}

func (t *Trace) treeAccesses(id int, input bool) []*Access {
	type key struct{ path, op, errno string }
	seen := map[key]bool{}
	var out []*Access
	for _, p := range t.Tree(id) {
		for _, a := range t.AccessesOf(p) {
			if a.Input() != input {
				continue
			}
			k := key{a.Path, a.Op, a.Errno}
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, a)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	return out
}

// BuildScriptRun is a Cargo build-script process: its program is the compiled script,
// build-script-build (or build-script-<name>), in either of Cargo's build-dir layouts
// (docs/cargo-new-layout.md): `<prof>/build/<pkg>-<hash>/build-script-build` (legacy, cargo 1.95's
// default) or `<prof>/build/<pkg>/<hash>/out/build-script-build` (`-Zbuild-dir-new-layout`). Its tree
// holds the compilers and tools it ran.
type BuildScriptRun struct {
	Proc *Process
	// Unit is "<pkg>-<hash>", the build-script compile unit whose program this is, named as stalecheck
	// names Cargo units in both layouts.
	Unit     string
	BuildDir string // the profile folder holding build/ (e.g. target/debug)
	// NewLayout is true when the program lies in the new layout's `build/<pkg>/<hash>/out/`.
	NewLayout bool
	// OutDir is the run's OUT_DIR from its environment ("" when strace did not print the env): it
	// names the run step exactly, `build/<pkg>-<run hash>/out` (legacy: the run folder is its parent)
	// or `build/<pkg>/<run hash>/out` (new: the run's records are in `run/` beside it).
	OutDir string
}

// BuildScriptRuns returns every build-script run the trace holds, in start order: each process whose
// program is a build-script-* file in a build-script compile unit's folder of either layout
// (BuildScriptRun). A program of that name elsewhere is not one.
func (t *Trace) BuildScriptRuns() []BuildScriptRun {
	var out []BuildScriptRun
	for i := range t.Processes {
		p := &t.Processes[i]
		exe := p.Exe()
		if !strings.HasPrefix(filepath.Base(exe), "build-script-") {
			continue
		}
		r, ok := scriptUnit(filepath.Dir(exe))
		if !ok {
			continue
		}
		r.Proc = p
		r.OutDir, _ = p.Getenv("OUT_DIR")
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Proc.Start < out[j].Proc.Start })
	return out
}

// scriptUnit reads the folder holding a build-script program: `<prof>/build/<pkg>-<hash>` (legacy) or
// `<prof>/build/<pkg>/<hash>/out` (new; <hash> 16 lowercase hex digits, as Cargo's metadata hash).
func scriptUnit(dir string) (BuildScriptRun, bool) {
	pl, ok := unit.ParsePath(dir)
	switch {
	case !ok || pl.Rest != "":
	case pl.Layout == unit.NewLayout && pl.Area == unit.AreaOut:
		return BuildScriptRun{Unit: pl.Package + "-" + pl.Hash, BuildDir: pl.ProfileDir, NewLayout: true}, true
	case pl.Layout == unit.Legacy && pl.Area == unit.AreaRun:
		return BuildScriptRun{Unit: pl.Package + "-" + pl.Hash, BuildDir: pl.ProfileDir}, true
	}
	return BuildScriptRun{}, false
}

// FileAccesses returns every access to path (absolute) in the trace, in order: what `explain PATH` shows.
func (t *Trace) FileAccesses(path string) []*Access {
	path = filepath.Clean(path)
	var out []*Access
	for i := range t.Accesses {
		if t.Accesses[i].Path == path {
			out = append(out, &t.Accesses[i])
		}
	}
	return out
}

// RanAgain tells whether a step whose process this is has run again after the trace: recordMtime is
// the mtime (ns) of a record the build system writes just before it starts the step's process each
// time (Cargo's invoked.timestamp for a build-script run); one written after the process ended means
// a later run, which the trace does not describe. A process still running when tracing stopped
// (Running) describes no finished run: RanAgain is then true.
func (p *Process) RanAgain(recordMtime int64) bool {
	return p.Running || recordMtime > p.End
}

// RustcUnit is a rustc process Cargo ran for one unit.
type RustcUnit struct {
	Proc          *Process
	CrateName     string // --crate-name
	ExtraFilename string // -C extra-filename (Cargo's "-<hash>": the unit's file names in deps/); "" when absent
	OutDir        string // --out-dir
	// Hash is the unit's hash: from ExtraFilename, else from an --out-dir of the new layout
	// (`build/<pkg>/<hash>/out`, where bins, examples and dylibs get no -C extra-filename); "" when
	// neither gives it.
	Hash string
	// NewLayout is true when --out-dir is a unit folder's out/ of the new layout (`build/<pkg>/<hash>/out`).
	NewLayout bool
}

// RustcUnits returns the rustc processes that compiled a crate (argv has --crate-name), in start order.
func (t *Trace) RustcUnits() []RustcUnit {
	var out []RustcUnit
	for i := range t.Processes {
		p := &t.Processes[i]
		if b := filepath.Base(p.Exe()); b != "rustc" && !strings.HasPrefix(b, "rustc-") {
			continue
		}
		u := RustcUnit{Proc: p}
		argv := p.Argv()
		for j := 0; j+1 < len(argv); j++ {
			switch {
			case argv[j] == "--crate-name":
				u.CrateName = argv[j+1]
			case argv[j] == "--out-dir":
				u.OutDir = argv[j+1]
			case argv[j] == "-C" && strings.HasPrefix(argv[j+1], "extra-filename="):
				u.ExtraFilename = strings.TrimPrefix(argv[j+1], "extra-filename=")
			}
		}
		if pl, ok := unit.ParsePath(u.OutDir); u.OutDir != "" && ok && pl.Layout == unit.NewLayout && pl.Area == unit.AreaOut && pl.Rest == "" {
			u.Hash, u.NewLayout = pl.Hash, true
		}
		if h := strings.TrimPrefix(u.ExtraFilename, "-"); unit.IsHash(h) {
			u.Hash = h
		}
		if u.CrateName != "" {
			out = append(out, u)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Proc.Start < out[j].Proc.Start })
	return out
}
