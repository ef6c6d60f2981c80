// Package runner is the logic behind `stalecheck run`: check the Cargo build first and refuse to time
// stale code, run the command with its resource usage measured by the kernel (wait4/waitid rusage), and
// describe the build that ran (its identity) so that two timings can be compared later (Diff).
//
// # Order of work
//
//  1. Resolve the program (Command[0]) the way env(1) does: a name without a slash is searched in PATH; not
//     found is exit status 127, found but not executable 126 (*ExecError). Nothing else happens then.
//  2. Find the Cargo workspace from the program's folder, else from the working folder, read its build
//     folder (internal/cargo), add content evidence where library copies compete (internal/evidence, as
//     `check` does) and run every rule (internal/check).
//  3. Choose the binaries that matter: those given with --binary; else the workspace binaries (graph roots)
//     named in the command line, the program included, matched by file identity (device and inode), so a
//     deps/ hard link or a symbolic link counts; else the workspace's release binaries (every binary root
//     when there is no release one). An error finding whose Roots include one of them makes the build
//     stale (Plan.Blocking).
//  4. Compute the build identity (Plan.Identity) before the command starts, so that hashing never competes
//     with the timed command for the CPU; file digests come from the persistent digest cache
//     (internal/digest), native fingerprints and tool versions from a small cache in the state folder.
//  5. Exec runs the command (as often as asked) and measures it.
//
// The identity never runs a compiler: rustc's version and sysroot come from the target folder's
// .rustc_info.json (Cargo's own cache of `rustc -vV`); cargo's and nvcc's versions are asked once per
// executable (path, size and mtime) and cached.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stalecheck/stalecheck/internal/analyze"
	"github.com/stalecheck/stalecheck/internal/systems"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/vcache"
)

// Config describes one `stalecheck run`.
type Config struct {
	// Dir is the working folder of the command (absolute); "" means the process's working folder.
	Dir string
	// Command is the argument vector, program first, as the user gave it.
	Command []string
	// Binaries are the binaries that matter, as given with --binary (relative to Dir); empty for the default
	// choice (see the package comment).
	Binaries []string
	// TargetDir and BuildDir override the folders Cargo would use (as check's flags).
	TargetDir, BuildDir string
	// Environ is the command's environment; nil means os.Environ().
	Environ []string
	// StateDir holds the digest cache and the run cache; "" means digest.DefaultDir(). When no state folder
	// can be found, nothing is cached.
	StateDir string
	// VerdictCache is what the verdict cache does for the pre-run check (internal/vcache; verdict.go):
	// Off (the zero value), On, or Verify.
	VerdictCache vcache.Mode
	// Version is stalecheck's version, part of the verdict cache's key.
	Version string
	// Trace gets the verdict cache's decisions under STALECHECK_VERDICT_CACHE_TRACE (nil: os.Stderr).
	Trace io.Writer
}

// ExecError says the command could not be started: Code is 127 when the program was not found, 126 when
// it was found but could not be executed (the convention of env(1) and timeout(1)).
type ExecError struct {
	Code    int
	Program string
	Err     error
}

func (e *ExecError) Error() string {
	if e.Code == 127 {
		return fmt.Sprintf("%s: command not found (%v)", e.Program, e.Err)
	}
	return fmt.Sprintf("%s: cannot execute: %v", e.Program, e.Err)
}

func (e *ExecError) Unwrap() error { return e.Err }

// Plan is what Prepare found: the checked build, the binaries that matter, whether the build is stale for
// them, and the identity of what is about to run.
type Plan struct {
	outputs map[string]bool // the steps' outputs, for generated (non-Cargo graphs)
	// Program is the absolute path of the executable that Command[0] names.
	Program string
	Dir     string
	Command []string
	Environ []string

	Graph    *graph.Graph
	Findings []check.Finding // every finding of the check
	// Matter are the binaries that matter (absolute paths; a root's own path when the file is a root).
	Matter []string
	// MatterHow says how Matter was chosen: "--binary", "named in the command line", "release binaries",
	// "binaries" (no release binary exists), or "none" (the workspace has no binary).
	MatterHow string
	// Blocking are the error findings whose Roots include a binary that matters: the build is stale.
	Blocking []check.Finding
	// Identity is the build identity recorded with every run of this plan.
	Identity ledger.Identity
	// Notes are things the identity could not establish (an unreadable file, a tool that did not answer).
	Notes []string
	// Unjudged says, per binary that matters and could not be judged, why ("cannot tell whether X is
	// current: …"): no build read has it as a binary, or a record it rests on is unreadable. Not stale,
	// not known current either: said with every run, -q or not.
	Unjudged []string

	state     *stateCache
	dig       *digest.Cache
	workspace string  // the graph's workspace (git is asked there)
	helper    *Helper // started ahead for the next Exec (UseHelper), nil when none
}

// Stale reports whether an error finding touches a binary that matters.
func (p *Plan) Stale() bool { return len(p.Blocking) > 0 }

// Prepare resolves the program, checks the workspace, chooses the binaries that matter and computes the
// build identity. Errors: *ExecError when the program cannot be found or executed; otherwise an error
// naming what could not be read (no workspace, nothing built, an unreadable build folder).
func Prepare(ctx context.Context, cfg Config) (*Plan, error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, errors.New("no command to run")
	}
	if cfg.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cfg.Dir = wd
	}
	if cfg.Environ == nil {
		cfg.Environ = os.Environ()
	}
	// The verdict cache (verdict.go) answers an unchanged build's plan; git is asked every time.
	p, err := cachedPrepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p.gitIdentity(ctx, p.workspace)
	return p, nil
}

// prepareFull is Prepare without the verdict cache and git.
func prepareFull(ctx context.Context, cfg Config) (*Plan, error) {
	getenv := envLookup(cfg.Environ)
	prog, err := resolveProgram(cfg.Command[0], cfg.Dir, getenv("PATH"))
	if err != nil {
		return nil, err
	}
	p := &Plan{Program: prog, Dir: cfg.Dir, Command: cfg.Command, Environ: cfg.Environ}
	for _, b := range cfg.Binaries {
		if fi, err := fsrec.Stat(absIn(cfg.Dir, b)); err != nil {
			return nil, fmt.Errorf("--binary %s: %w", b, errors.Unwrap(err))
		} else if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("--binary %s: not a file", b)
		}
	}

	// The workspace: from the first --binary or the program's folder, else the working folder.
	var starts []string
	if len(cfg.Binaries) > 0 {
		starts = append(starts, filepath.Dir(absIn(cfg.Dir, cfg.Binaries[0])))
	}
	starts = append(starts, filepath.Dir(prog), cfg.Dir)
	lopt := cargo.LocateOptions{TargetDir: cfg.TargetDir, BuildDir: cfg.BuildDir, Getenv: getenv, Cwd: cfg.Dir}
	var layout *cargo.Layout
	var wdErr error
	// A program whose own folder holds a Make, Ninja or Go build is that build's, even inside a Cargo
	// workspace (a C program beside the crates whose staticlib it links): its joined graph is read,
	// with the Cargo build it links from (internal/systems), not the workspace's other binaries.
	own := systems.BuildAbove(starts[0], 0) != ""
	bare := "" // the bare target folder (no Cargo.toml above) a start folder lies in
	for i, s := range starts {
		if own {
			break
		}
		l, err := cargo.Locate(s, lopt)
		last := i == len(starts)-1
		if i == 0 && lopt.TargetDir == "" && (err != nil || l.Workspace == "") {
			bare = cargo.TargetDirAbove(s, 3)
		}
		if err == nil && l.Workspace != "" && bare != "" && l.TargetDir != bare {
			// The program lies in a target folder of its own (cargo build --target-dir ../out) and the
			// workspace is found from another start folder: its build is in that target folder.
			o := lopt
			o.TargetDir = bare
			if l2, err2 := cargo.Locate(s, o); err2 == nil {
				l = l2
			}
		}
		// A bare target folder (no Cargo.toml above) counts only as the working folder.
		if err == nil && (l.Workspace != "" || last) {
			layout = l
			break
		}
		if err != nil && last {
			wdErr = err
		}
	}
	stateDir := cfg.StateDir
	if stateDir == "" {
		stateDir, _ = digest.DefaultDir()
	}
	var g *graph.Graph
	if layout == nil {
		// Not a Cargo build: a Go binary or a Make/Ninja program (joined.go).
		target := prog
		if len(cfg.Binaries) > 0 {
			target = absIn(cfg.Dir, cfg.Binaries[0])
		}
		jg, err := joinedGraph(ctx, starts, target, stateDir)
		if err != nil {
			return nil, err
		}
		if jg == nil {
			if wdErr == nil {
				wdErr = fmt.Errorf("no Cargo workspace at or above %s", cfg.Dir)
			}
			return nil, fmt.Errorf("no Cargo workspace, and no Make, Ninja or Go build, for %s (looked from the program's folder and %s): %w", cfg.Command[0], cfg.Dir, wdErr)
		}
		g = jg
	}
	if stateDir != "" {
		p.dig, _ = digest.OpenCache(stateDir)
	}
	// The check of the profile folders that can hold the binaries that matter (scope.go), or of the whole
	// build folder when those cannot be told before reading it or the scoped read chose otherwise.
	// The files the command names (read once: scripts are read for the names they hold).
	var cands []candidate
	var vars []string
	if len(cfg.Binaries) == 0 {
		cands, vars = commandCandidates(prog, cfg.Command, cfg.Dir, getenv("HOME"))
	}
	scope, scopedBy := matterProfiles(layout, cfg, cands)
	for {
		if layout != nil {
			var err error
			g, err = cargo.Read(layout, cargo.ReadOptions{CargoHome: getenv("CARGO_HOME"), StateDir: stateDir, Profiles: scope, NoLock: true, LiveRecords: true})
			if err != nil {
				return nil, err
			}
		}
		// The annotations and rules of `check` (the one pipeline: internal/analyze).
		p.Graph = g
		p.Findings = analyze.Annotate(g, analyze.Options{StateDir: stateDir, Digests: p.dig, Getenv: getenv})
		p.Matter, p.MatterHow, p.Notes, p.Unjudged = nil, "", nil, nil
		p.chooseMatter(cfg.Binaries, cands, vars)
		if scope == nil || scopeHeld(g, scopedBy, p.MatterHow) {
			break
		}
		scope = nil
	}
	matter := map[string]bool{}
	for _, m := range p.Matter {
		matter[m] = true
	}
	for _, f := range p.Findings {
		if f.Rule == "unreadable-record" {
			// Not stale, not known current either: said with the run (and kept in its record), not
			// refused, as check says it with a warning.
			for _, r := range f.Roots {
				if matter[r] {
					p.Unjudged = append(p.Unjudged, fmt.Sprintf("cannot tell whether %s is current: %s", r, f.Message))
					break
				}
			}
		}
		if f.Severity < check.Error {
			continue
		}
		for _, r := range f.Roots {
			if matter[r] {
				p.Blocking = append(p.Blocking, f)
				break
			}
		}
	}

	if stateDir != "" {
		p.state = openState(stateDir)
	}
	p.identity(ctx, getenv)
	p.workspace = g.Workspace
	return p, nil
}

// SaveCaches writes the digest cache and the run cache when they changed. Errors are returned for
// diagnostics only: a cache that cannot be saved costs time later, nothing else.
func (p *Plan) SaveCaches() error {
	err := p.dig.Save()
	if serr := p.state.save(); err == nil {
		err = serr
	}
	return err
}

// resolveProgram finds the executable the way execvp does (through PATH for a name without a slash).
func resolveProgram(name, dir, path string) (string, error) {
	if strings.ContainsRune(name, '/') {
		p := absIn(dir, name)
		fi, err := fsrec.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", &ExecError{127, name, fs.ErrNotExist}
		case err != nil:
			return "", &ExecError{126, name, err}
		case fi.IsDir():
			return "", &ExecError{126, name, errors.New("is a folder")}
		case fi.Mode().Perm()&0o111 == 0:
			return "", &ExecError{126, name, fs.ErrPermission}
		}
		return p, nil
	}
	var denied error
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		c := absIn(dir, filepath.Join(d, name))
		fi, err := fsrec.Stat(c)
		if err != nil || fi.IsDir() {
			continue
		}
		if fi.Mode().Perm()&0o111 == 0 {
			if denied == nil {
				denied = fmt.Errorf("%s: %w", c, fs.ErrPermission)
			}
			continue
		}
		return c, nil
	}
	if denied != nil {
		return "", &ExecError{126, name, denied}
	}
	return "", &ExecError{127, name, exec.ErrNotFound}
}

func absIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// envLookup returns a getenv over an environment list (the last setting of a name wins, as in exec).
func envLookup(env []string) func(string) string {
	m := make(map[string]string, len(env))
	for _, e := range env {
		if k, v, ok := strings.Cut(e, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}

// chooseMatter picks the binaries that matter (see the package comment): given (--binary), else the
// roots among the files the command names (cands and vars, from commandCandidates).
func (p *Plan) chooseMatter(given []string, cands []candidate, vars []string) {
	g := p.Graph
	type rootStat struct {
		r  *graph.Root
		fi os.FileInfo
	}
	var roots []rootStat
	for _, r := range g.Roots {
		if fi, err := fsrec.Stat(r.File.Path); err == nil {
			roots = append(roots, rootStat{r, fi})
		}
	}
	rootOf := func(path string) (string, bool) {
		fi, err := fsrec.Stat(path)
		if err != nil {
			return "", false
		}
		for _, rs := range roots {
			if fsrec.SameFile(fi, rs.fi) {
				return rs.r.File.Path, true
			}
		}
		return "", false
	}
	seen := map[string]bool{}
	add := func(path string) {
		if !seen[path] {
			seen[path] = true
			p.Matter = append(p.Matter, path)
		}
	}
	if len(given) > 0 {
		p.MatterHow = "--binary"
		for _, b := range given {
			abs := absIn(p.Dir, b)
			if r, ok := rootOf(abs); ok {
				abs = r
			} else {
				// Named, but no build read has it as a binary (a build stalecheck does not find or read):
				// nothing says it is current. It was run as if it were.
				where := g.Workspace
				if where == "" {
					where = g.BuildDir
				}
				p.Unjudged = append(p.Unjudged, fmt.Sprintf("cannot tell whether %s is current: it is no binary of the build read (%s), so no record says how it was built", b, where))
			}
			add(abs)
		}
		return
	}
	var hows []string
	for _, c := range cands {
		if r, ok := rootOf(c.path); ok {
			if seen[r] {
				continue
			}
			add(r)
			how := "named in the command line"
			switch {
			case c.from == "an argument string":
				how = "named in an argument string of the command line"
			case c.from != "":
				how = "named in the script " + p.displayAny(c.from)
			}
			if !slices.Contains(hows, how) {
				hows = append(hows, how)
			}
		}
	}
	for _, v := range vars {
		if strings.ContainsRune(v, '/') {
			p.note("the command names %s: which file that is only its execution decides; the binaries checked are those its text names", v)
		}
	}
	if len(p.Matter) > 0 {
		p.MatterHow = strings.Join(hows, "; ")
		return
	}
	for _, r := range g.Roots {
		if r.Kind == "bin" && isRelease(g, r) {
			add(r.File.Path)
		}
	}
	if len(p.Matter) > 0 {
		p.MatterHow = "release binaries"
		return
	}
	for _, r := range g.Roots {
		if r.Kind == "bin" {
			add(r.File.Path)
		}
	}
	p.MatterHow = "binaries"
	if len(p.Matter) == 0 {
		p.MatterHow = "none"
	}
}

// isRelease reports whether a root was built in the release profile (`release` or `<triple>/release`).
func isRelease(g *graph.Graph, r *graph.Root) bool {
	prof := ""
	if r.Step != nil {
		prof = r.Step.ProfileDir
	} else if rel, err := filepath.Rel(g.TargetDir, filepath.Dir(r.File.Path)); err == nil {
		prof = filepath.ToSlash(rel)
	}
	return prof == "release" || strings.HasSuffix(prof, "/release")
}

// root returns the graph root at path, or nil.
func (p *Plan) root(path string) *graph.Root {
	for _, r := range p.Graph.Roots {
		if r.File.Path == path {
			return r
		}
	}
	return nil
}

// StaleInputs returns the changed inputs the blocking findings name (sources and libraries newer than
// the build, or missing), in the order first named, without repeats. Content evidence (which copy a
// binary holds) is not a changed input and is left out.
func (p *Plan) StaleInputs() []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range p.Blocking {
		// A changed lookup's change is what the search finds now; its "input" is the file that searches
		// (the source whose #include line it is), which did not change.
		kind := "input"
		if slices.ContainsFunc(f.Evidence, func(e check.Evidence) bool { return e.Kind == "now" && e.Path != "" }) {
			kind = "now"
		}
		for _, e := range f.Evidence {
			if e.Kind == kind && e.How != "content-match" && e.Path != "" && !seen[e.Path] {
				seen[e.Path] = true
				out = append(out, e.Path)
			}
		}
	}
	return out
}

// Display shortens a path for messages: relative to the workspace (or the folder above the build
// folder) when inside it.
func (p *Plan) Display(path string) string {
	return displayPath(path, p.Graph.Workspace, filepath.Dir(p.Graph.BuildDir))
}

// displayAny is Display before the graph is read in full (the working folder stands in for the workspace).
func (p *Plan) displayAny(path string) string {
	if p.Graph != nil {
		return p.Display(path)
	}
	return displayPath(path, p.Dir)
}

func displayPath(path string, bases ...string) string {
	for _, base := range bases {
		if base == "" || base == "/" {
			continue
		}
		if rel, err := filepath.Rel(base, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rel
		}
	}
	return path
}
