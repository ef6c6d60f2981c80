package ninja

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/stalecheck/stalecheck/internal/cinclude"
	"github.com/stalecheck/stalecheck/internal/depfile"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// How says how an input of an edge is known.
type How string

const (
	// HowExplicit, HowImplicit, HowOrderOnly: listed in the manifest (before `|`, after `|`, after `||`).
	// Ninja compares the mtimes of explicit and implicit inputs, never of order-only ones.
	HowExplicit  How = "declared-explicit"
	HowImplicit  How = "declared-implicit"
	HowOrderOnly How = "order-only"
	// HowDepsLog: a .ninja_deps record (deps = gcc|msvc); ninja watches it.
	HowDepsLog How = "deps-log"
	// HowDepfile: a Make-style depfile on disk that the edge names (depfile without deps); ninja reads
	// and watches it at each load.
	HowDepfile How = "depfile"
	// HowCommandLine: the source named on the compile command.
	HowCommandLine How = "command-line"
	// HowIncludeScan: reached by following #include lines through the command's -I folders.
	HowIncludeScan How = "include-scan"
)

// Clue is one way an input is known, with its evidence in words ("build.ninja:4",
// ".ninja_deps record at byte 16", "-I /src/include").
type Clue struct {
	How    How
	Detail string
}

// Input is one file an edge reads.
type Input struct {
	// Path is absolute.
	Path  string
	Clues []Clue
	// MTime is in nanoseconds since the Unix epoch; 0 with Exists false for a missing file. Size is
	// in bytes (from the same stat).
	MTime  int64
	Size   int64
	Exists bool
	// Watched is true when ninja compares this file's mtime against the outputs' (explicit and
	// implicit inputs, deps-log entries of a current record, the entries of a depfile on disk).
	Watched bool
}

// Reference is what ninja compares an edge's inputs against.
type Reference struct {
	// OldestOutput is the output (absolute path) with the oldest mtime, OutputMTime its mtime (ns);
	// ninja calls the edge dirty when any input is newer than any output.
	OldestOutput string
	OutputMTime  int64
	// FromLog: OutputMTime is the mtime .ninja_log recorded for a restat edge's output, which ninja
	// compares inputs against instead of the output's own.
	FromLog bool
	// MissingOutputs lists outputs not on disk (the edge will run).
	MissingOutputs []string
	// Log is the .ninja_log entry of the first output (nil: never recorded, the edge will run);
	// its MTime is the log's reference (Log.MTimeMeaning).
	Log *LogEntry
	// Deps is the .ninja_deps record of the first output (nil: none).
	Deps *DepsRecord
}

// Edge is one manifest edge with what the records on disk say about it.
type Edge struct {
	*ManifestEdge
	// Compile is non-nil when the command compiles a C, C++ or CUDA source.
	Compile *Compile
	Inputs  []*Input
	Ref     Reference
	// DepfilePath is the absolute depfile path the edge names ("" when none); DepfileOnDisk tells
	// whether it is there; DepfileErr is its parse error.
	DepfilePath   string
	DepfileOnDisk bool
	DepfileErr    error
	// DyndepErr is why the edge's dyndep file cannot be read as ninja reads it (parseDyndep).
	DyndepErr error
	// MissingDepfile says, in words, why ninja cannot know the headers this compile reads ("" when it
	// can): a compile edge with neither depfile nor deps, or a depfile the compiler never wrote.
	MissingDepfile string
	// WouldRun is true when the dry run calls one of the edge's outputs dirty; Why holds ninja's
	// explain lines for them.
	WouldRun bool
	Why      []string
	// Pending are watched inputs newer than the reference: ninja will rebuild the edge for them.
	Pending []*Input
	// Unseen are inputs newer than the reference that ninja does not watch: "no work to do", yet stale.
	Unseen []*Input
	// OutputStats are the stats of Outputs then ImplicitOutputs (absolute paths), taken once while
	// reading, for the graph adapter.
	OutputStats []OutputStat
	// SelfDirty is, when Read evaluated ninja's rules itself (Build.SelfCheck), why ninja would run the
	// edge ("" when it would not).
	SelfDirty string
}

// OutputStat is one output of an edge as stat'd: absolute path, mtime in ns, size in bytes.
type OutputStat struct {
	Path   string
	MTime  int64
	Size   int64
	Exists bool
}

// Build is a Ninja build folder read from its records.
type Build struct {
	// Dir is the build folder (absolute).
	Dir      string
	Manifest *Manifest
	// LogPath and DepsPath are where ninja keeps its logs ($builddir/.ninja_log, .ninja_deps).
	LogPath, DepsPath string
	Log               *Log
	Deps              *DepsLog
	// LogErr and DepsErr are the logs' read errors (nil when read or absent; a *CorruptError for damage).
	LogErr, DepsErr error
	Tool            *Tool
	// DryRun is ninja's answer (nil when not asked, ninja is absent or the logs were unsafe: see DryRunErr).
	// It runs concurrently with the reading of the records.
	DryRun    *DryRun
	DryRunErr error
	// SelfCheck is Read's own evaluation of ninja's rules (nil when not made: see Options.AskNinja and
	// canSelfCheck). When it finds no work, DryRun is its answer (DryRun.Self) and ninja is not run.
	SelfCheck *SelfCheck
	Edges     []*Edge
	// ByOutput maps each output (manifest path) to its edge.
	ByOutput map[string]*Edge
	// defaults are the manifest paths a plain ninja builds (builtByDefault); nil: every one.
	defaults     map[string]bool
	defaultsOnce sync.Once
	// Generator is the CMake or Meson configuration that wrote build.ninja (nil for a hand-written one).
	Generator *Generator
	// ManifestName is the manifest read (DefaultManifest, or another Options.Manifest named).
	ManifestName string
	Notes        []string

	depsName string
}

// Options tune Read.
type Options struct {
	// NoDryRun skips `ninja -n`.
	NoDryRun bool
	// NoIncludeScan skips following #include lines of compile edges.
	NoIncludeScan bool
	// AlwaysScan follows #include lines of every compile edge, also those whose headers ninja knows
	// from a deps record or depfile (by default only the others are scanned).
	AlwaysScan bool
	// AllowDryRunWrites runs `ninja -n` even where it would create output folders or write response
	// files (see ErrLogsUnsafe); by default the dry run is skipped there.
	AllowDryRunWrites bool
	// AskNinja runs `ninja -n` even where Read's own evaluation of ninja's rules (SelfCheck) finds no
	// work; by default ninja is asked only when that evaluation finds work or cannot be made.
	AskNinja bool
	// StateDir, when not "", keeps the include scan's parses between reads (cinclude.StoreFile).
	StateDir string
	// Manifest is the manifest file read, relative to the build folder: "" is build.ninja, another is
	// one ninja runs with -f (CMake's Ninja Multi-Config writes build-<Config>.ninja per configuration).
	Manifest string
}

// DefaultManifest is the manifest ninja reads without -f.
const DefaultManifest = "build.ninja"

// Read reads the Ninja build folder dir: build.ninja (ParseManifest), .ninja_log, .ninja_deps, the
// depfiles on disk, each compile command's source and include folders, the mtimes of every input and
// output, the CMake or Meson configuration, and (unless opts.NoDryRun) `ninja -n -d explain`, which
// is run only when both logs are absent or of a version ninja keeps and undamaged (otherwise ninja
// would delete or truncate them). Errors: the manifest's (a missing build.ninja is fs.ErrNotExist);
// log and dry-run problems are kept in the Build, not returned.
func Read(ctx context.Context, dir string, opts Options) (*Build, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	b := &Build{Dir: abs, ByOutput: map[string]*Edge{}, ManifestName: opts.Manifest}
	if b.ManifestName == "" {
		b.ManifestName = DefaultManifest
	}
	m, err := ParseManifest(abs, b.ManifestName)
	if err != nil {
		return nil, err
	}
	b.Manifest = m
	logDir := abs
	if m.Builddir != "" {
		logDir = absIn(abs, m.Builddir)
	}
	b.LogPath, b.DepsPath = filepath.Join(logDir, ".ninja_log"), filepath.Join(logDir, ".ninja_deps")
	if b.Log, b.LogErr = ReadLog(b.LogPath); isNotExist(b.LogErr) {
		b.LogErr = nil
	}
	if b.Deps, b.DepsErr = ReadDeps(b.DepsPath); isNotExist(b.DepsErr) {
		b.DepsErr = nil
	}
	// ninja -n runs in its own process while the records are read here, unless Read can evaluate
	// ninja's rules itself (selfcheck.go): then ninja -n is asked only when that finds work.
	done := make(chan struct{})
	// The concurrent ninja -n is stopped when the read finds a depfile ninja would block on.
	dctx, stopDryRun := context.WithCancel(ctx)
	defer stopDryRun()
	var writes []string
	if !opts.NoDryRun && !opts.AllowDryRunWrites {
		writes = dryRunWrites(m)
	}
	// The evaluation writes nothing: it answers whatever ninja -n would write (an edge it finds dirty
	// then asks ninja, which is not run when it would write).
	self := !opts.NoDryRun && !opts.AskNinja
	if self {
		if why := b.canSelfCheck(); why != "" {
			self = false
		}
	}
	var toolErr error
	if self {
		// The answer holds for the ninja on PATH only if it reads these logs (else it deletes them and
		// rebuilds everything): its version, asked while the records are read.
		go func() { defer close(done); b.Tool, toolErr = FindTool(ctx) }()
	} else if opts.NoDryRun {
		close(done)
	} else {
		go func() { defer close(done); b.dryRun(dctx, writes) }()
	}
	b.Generator = DetectGenerator(abs)
	b.depsName = relTo(abs, b.DepsPath)
	for _, me := range m.Edges {
		if me.Rule == "phony" {
			continue
		}
		e := &Edge{ManifestEdge: me}
		b.Edges = append(b.Edges, e)
		for _, o := range append(append([]string{}, me.Outputs...), me.ImplicitOutputs...) {
			b.ByOutput[o] = e
		}
	}
	// The edges are read in a few contiguous shares, each with its own stat cache (what they share, a
	// few headers, is stat'd once per share); the include scan parses each file once per Read.
	workers := min(runtime.GOMAXPROCS(0), 4, 1+len(b.Edges)/500)
	var wg sync.WaitGroup
	rels := map[string]string{}
	for _, f := range m.Files {
		rels[f] = relTo(abs, f)
	}
	store := cinclude.OpenStore(opts.StateDir)
	defer store.Save()
	parsed := cinclude.NewCacheIn(store)
	for w := 0; w < workers; w++ {
		lo, hi := w*len(b.Edges)/workers, (w+1)*len(b.Edges)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := newStatCache(4 * (hi - lo))
			sc := newScanner(parsed)
			for _, e := range b.Edges[lo:hi] {
				b.readEdge(e, st, sc, opts, rels[e.File])
			}
		}()
	}
	wg.Wait()
	blocking := b.blockingDepfile()
	if blocking != "" {
		stopDryRun()
	}
	<-done
	if blocking != "" {
		// Not run (or stopped): ninja opens the depfile of every edge it considers, and waits for a
		// writer on a FIFO (until its deadline: 2 minutes). The record is reported unreadable (Graph).
		b.DryRun, b.DryRunErr, self = nil, fmt.Errorf("ninja -n not run: %s, a depfile or dyndep file ninja reads for an edge, is not a regular file, and ninja would wait reading it", blocking), false
	}
	if self && (toolErr != nil || !b.Tool.ReadsLogVersion(b.Log.Version) || b.Deps != nil && !b.Tool.ReadsDepsVersion(b.Deps.Version)) {
		self = false
		b.dryRun(ctx, writes) // says why ninja -n is not run, or runs it
	}
	if self {
		b.SelfCheck = b.selfCheck()
		if b.SelfCheck.Dirty == 0 {
			// What ninja -n would print: no work to do. Its explain lines are not needed for that.
			b.DryRun = &DryRun{NoWork: true, Dirty: map[string][]string{}, Self: true}
		} else {
			b.dryRun(ctx, writes)
		}
	}
	if b.DryRun != nil {
		b.applyDryRun()
	}
	return b, nil
}

// applyDryRun marks the edges the dry run would run: by their command (what `-v` prints; equal
// commands mark every edge that has it), and by the dirty nodes; each explain line goes to the edges
// whose output or depfile it names.
func (b *Build) applyDryRun() {
	byCmd := map[string][]*Edge{}
	byDepfile := map[string]*Edge{}
	for _, e := range b.Edges {
		byCmd[e.Command] = append(byCmd[e.Command], e)
		if e.Depfile != "" {
			byDepfile[e.Depfile] = e
		}
	}
	for _, c := range b.DryRun.Commands {
		for _, e := range byCmd[c] {
			e.WouldRun = true
		}
	}
	for node := range b.DryRun.Dirty {
		if e := b.ByOutput[node]; e != nil {
			e.WouldRun = true
		}
	}
	for _, l := range b.DryRun.Explain {
		seen := map[*Edge]bool{}
		for _, w := range strings.Fields(l) {
			w = strings.Trim(w, "'\"(),")
			e := b.ByOutput[w]
			if e == nil {
				e = byDepfile[w]
			}
			if e != nil && !seen[e] {
				seen[e] = true
				e.Why = append(e.Why, l)
			}
		}
	}
}

// blockingDepfile is the first depfile on disk ninja reads (an edge without a deps log record for it)
// that is not a regular file, or "".
func (b *Build) blockingDepfile() string {
	for _, e := range b.Edges {
		if e.DepfileErr != nil && errors.Is(e.DepfileErr, safeio.ErrNotRegular) {
			return e.DepfilePath
		}
		if e.DyndepErr != nil && errors.Is(e.DyndepErr, safeio.ErrNotRegular) {
			return b.abs(e.Dyndep) // ninja loads it the same way (a FIFO: until the dry run's deadline)
		}
	}
	return ""
}

// dryRunWrites lists what `ninja -n` would write into the build folder (ninja 1.11 and 1.13, src/build.cc
// Builder::StartEdge, which runs for every edge a dry run "starts"): the folders of outputs that do
// not exist (MakeDirs) and response files. Up to three are named, then a count.
func dryRunWrites(m *Manifest) []string {
	var w []string
	dirs := map[string]bool{}
	n := 0
	note := func(s string) {
		n++
		if len(w) < 3 {
			w = append(w, s)
		}
	}
	for _, e := range m.Edges {
		if e.Rule == "phony" {
			continue
		}
		if e.Rspfile != "" {
			note(fmt.Sprintf("edge %s names rspfile %s, which ninja writes even under -n", firstOutM(e), e.Rspfile))
		}
		for _, o := range append(append([]string{}, e.Outputs...), e.ImplicitOutputs...) {
			d := filepath.Dir(absIn(m.Dir, o))
			if _, ok := dirs[d]; ok {
				continue
			}
			st, err := fsrec.Stat(d)
			dirs[d] = err == nil && st.IsDir()
			if !dirs[d] {
				note(fmt.Sprintf("folder %s of output %s does not exist; ninja -n creates it", d, o))
			}
		}
	}
	if n > len(w) {
		w = append(w, fmt.Sprintf("and %d more", n-len(w)))
	}
	return w
}

func firstOutM(e *ManifestEdge) string {
	if len(e.Outputs) > 0 {
		return e.Outputs[0]
	}
	return e.ImplicitOutputs[0]
}

func (b *Build) dryRun(ctx context.Context, writes []string) {
	t, err := FindTool(ctx)
	if err != nil {
		b.DryRunErr = err
		return
	}
	b.Tool = t
	unsafe := append([]string{}, writes...)
	if t.Major == 1 && t.Minor == 12 {
		unsafe = append(unsafe, "ninja 1.12 writes "+filepath.Join(filepath.Dir(b.LogPath), ".ninja_lock")+" under -n")
	}
	if b.LogErr != nil {
		unsafe = append(unsafe, b.LogErr.Error())
	} else if b.Log != nil && !t.ReadsLogVersion(b.Log.Version) {
		unsafe = append(unsafe, fmt.Sprintf("%s is log v%d, which ninja %s deletes", b.LogPath, b.Log.Version, t.Version))
	}
	if b.DepsErr != nil {
		unsafe = append(unsafe, b.DepsErr.Error())
	} else if b.Deps != nil && !t.ReadsDepsVersion(b.Deps.Version) {
		unsafe = append(unsafe, fmt.Sprintf("%s is deps log v%d, which ninja %s deletes", b.DepsPath, b.Deps.Version, t.Version))
	}
	if len(unsafe) > 0 {
		b.DryRunErr = fmt.Errorf("ninja -n not run (%w): %s", ErrLogsUnsafe, strings.Join(unsafe, "; "))
		return
	}
	b.DryRun, b.DryRunErr = t.DryRun(ctx, b.Dir, b.ManifestName)
}

type stat struct {
	mtime, size int64
	ok          bool
}

type statCache struct{ m map[string]stat }

func newStatCache(n int) *statCache { return &statCache{m: make(map[string]stat, n)} }

func (c *statCache) get(p string) stat {
	if s, ok := c.m[p]; ok {
		return s
	}
	var s stat
	if fi, err := fsrec.Stat(p); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			s = stat{mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, size: st.Size, ok: true}
		}
	}
	c.m[p] = s
	return s
}

// abs makes a manifest path absolute; manifest paths are canonical already, so most need no Clean.
func (b *Build) abs(p string) string {
	if p != "" && p[0] != '/' && p != "." && p != ".." && !strings.HasPrefix(p, "../") {
		return b.Dir + "/" + p
	}
	return absIn(b.Dir, p)
}

func (b *Build) readEdge(e *Edge, st *statCache, sc *scanner, opts Options, file string) {
	// Most edges have a handful of inputs: a linear search beats a map until there are many.
	var byPath map[string]*Input
	add := func(p string, how How, detail string, watched bool) {
		var in *Input
		if byPath != nil {
			in = byPath[p]
		} else {
			for _, x := range e.Inputs {
				if x.Path == p {
					in = x
					break
				}
			}
		}
		if in == nil {
			s := st.get(p)
			in = &Input{Path: p, MTime: s.mtime, Size: s.size, Exists: s.ok}
			e.Inputs = append(e.Inputs, in)
			if byPath != nil {
				byPath[p] = in
			} else if len(e.Inputs) > 16 {
				byPath = make(map[string]*Input, 2*len(e.Inputs))
				for _, x := range e.Inputs {
					byPath[x.Path] = x
				}
			}
		}
		in.Clues = append(in.Clues, Clue{How: how, Detail: detail})
		in.Watched = in.Watched || watched
	}
	where := file + ":" + strconv.Itoa(e.Line)
	for _, p := range e.Explicit {
		add(b.abs(p), HowExplicit, where, true)
	}
	for _, p := range e.Implicit {
		add(b.abs(p), HowImplicit, where, true)
	}
	for _, p := range e.OrderOnly {
		add(b.abs(p), HowOrderOnly, where, false)
	}
	// Implicit inputs a dyndep file adds (dyndep.go): ninja loads it before it judges the edge.
	if e.Dyndep != "" {
		dd, err := parseDyndep(b.abs(e.Dyndep))
		if err != nil {
			e.DyndepErr = err
		}
		for _, o := range e.Outputs {
			for _, p := range dd[o] {
				add(b.abs(p), HowImplicit, "dyndep "+e.Dyndep, true)
			}
		}
	}
	// Reference.
	outs := e.Outputs
	if len(e.ImplicitOutputs) > 0 {
		outs = append(append([]string{}, e.Outputs...), e.ImplicitOutputs...)
	}
	first := true
	e.OutputStats = make([]OutputStat, 0, len(outs))
	for _, o := range outs {
		ao := b.abs(o)
		s := st.get(ao)
		e.OutputStats = append(e.OutputStats, OutputStat{Path: ao, MTime: s.mtime, Size: s.size, Exists: s.ok})
		if !s.ok {
			e.Ref.MissingOutputs = append(e.Ref.MissingOutputs, ao)
			continue
		}
		if first || s.mtime < e.Ref.OutputMTime {
			e.Ref.OldestOutput, e.Ref.OutputMTime, first = ao, s.mtime, false
		}
	}
	if b.Log != nil && len(outs) > 0 {
		e.Ref.Log = b.Log.Entries[outs[0]]
	}
	if e.Restat && e.Ref.Log != nil && e.Ref.OldestOutput != "" && len(e.Ref.MissingOutputs) == 0 {
		// A restat edge whose command left its output alone keeps the output's old mtime; ninja
		// compares its inputs against the mtime its log recorded instead (the newest input's then).
		e.Ref.OutputMTime, e.Ref.FromLog = e.Ref.Log.MTime, true
	}
	if b.Deps != nil && len(outs) > 0 {
		e.Ref.Deps = b.Deps.Records[outs[0]]
	}
	// Deps log.
	if r := e.Ref.Deps; r != nil && e.Deps != "" {
		current := e.Ref.OldestOutput == "" || r.MTime >= e.Ref.OutputMTime
		detail := b.depsName + " record at byte " + strconv.FormatInt(r.Offset, 10) + " (output mtime " + strconv.FormatInt(r.MTime, 10) + " ns)"
		for _, p := range r.Inputs {
			add(b.abs(p), HowDepsLog, detail, current)
		}
	}
	// Depfile on disk.
	if e.Depfile != "" {
		e.DepfilePath = b.abs(e.Depfile)
		// deps = gcc|msvc: ninja read the depfile into the deps log and deleted it; it is looked for
		// only when the deps log holds nothing for the output.
		look := e.Deps == "" || e.Ref.Deps == nil || len(e.Ref.Deps.Inputs) == 0
		if look && st.get(e.DepfilePath).ok {
			e.DepfileOnDisk = true
			f, err := depfile.ParseNinjaFile(e.DepfilePath)
			if err != nil {
				e.DepfileErr = err
			} else {
				for _, p := range f.Inputs() {
					// deps = gcc: ninja moved the depfile into the deps log and deletes it; one left over
					// is not what ninja reads.
					add(absIn(b.Dir, p), HowDepfile, relTo(b.Dir, e.DepfilePath), e.Deps == "")
				}
			}
		}
	}
	// Compile command.
	e.Compile = ParseCompile(e.Command, b.Dir)
	if c := e.Compile; c != nil {
		add(c.Source, HowCommandLine, "source of "+filepath.Base(c.Compiler)+" -c", false)
		e.MissingDepfile = b.missingDepfile(e)
		// The include scan stands in for the compiler's own list where ninja has none: a current deps
		// record or a depfile on disk is what the compiler read at the last compile (a new #include
		// edits the source, which ninja watches).
		tracked := e.MissingDepfile == "" && (e.Deps != "" && e.Ref.Deps != nil && len(e.Ref.Deps.Inputs) > 0 || e.Deps == "" && e.DepfileOnDisk && e.DepfileErr == nil)
		if !opts.NoIncludeScan && (!tracked || opts.AlwaysScan) {
			for _, h := range sc.scan(c) {
				add(h.path, HowIncludeScan, h.via, false)
			}
		}
	}
	// Newer inputs.
	if len(e.Ref.MissingOutputs) > 0 || e.Ref.OldestOutput == "" {
		return
	}
	for _, in := range e.Inputs {
		if !in.Exists || in.MTime <= e.Ref.OutputMTime {
			continue
		}
		if in.Watched {
			e.Pending = append(e.Pending, in)
		} else {
			e.Unseen = append(e.Unseen, in)
		}
	}
}

func (b *Build) missingDepfile(e *Edge) string {
	c := e.Compile
	src := relTo(b.Dir, c.Source)
	switch {
	case e.Depfile == "" && e.Deps == "" && e.Dyndep != "":
		return "" // the build's own scan lists the headers in the dyndep file (the include scan checks it)
	case e.Depfile == "" && e.Deps == "":
		return fmt.Sprintf("rule %s has neither depfile nor deps: ninja never learns the headers %s includes", e.Rule, src)
	case e.Deps == "msvc":
		if !c.WritesDeps() {
			return fmt.Sprintf("rule %s has deps = msvc but the command has no /showIncludes", e.Rule)
		}
	case !c.WritesDeps():
		return fmt.Sprintf("rule %s names depfile %s but the command (%s) has no -MD/-MMD/-MF: the compiler never writes it", e.Rule, e.Depfile, filepath.Base(c.Compiler))
	case e.Deps == "" && !e.DepfileOnDisk && len(e.Ref.MissingOutputs) == 0 && e.Ref.Log != nil:
		return fmt.Sprintf("rule %s names depfile %s, which is not on disk although %s was built", e.Rule, e.Depfile, firstOut(e))
	case e.Deps == "gcc" && e.Ref.Log != nil && len(e.Ref.MissingOutputs) == 0 && (e.Ref.Deps == nil || len(e.Ref.Deps.Inputs) == 0):
		return fmt.Sprintf("rule %s has deps = gcc but %s holds no inputs for %s: the depfile %s was never written", e.Rule, filepath.Base(b.DepsPath), firstOut(e), e.Depfile)
	}
	return ""
}

func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// UnseenEdges returns every edge with inputs newer than its outputs that ninja does not watch, sorted by
// first output.
func (b *Build) UnseenEdges() []*Edge {
	var out []*Edge
	for _, e := range b.Edges {
		if len(e.Unseen) > 0 {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return firstOut(out[i]) < firstOut(out[j]) })
	return out
}

// IsBuildFolder reports whether dir holds a build.ninja.
func IsBuildFolder(dir string) bool {
	_, err := fsrec.Stat(filepath.Join(dir, "build.ninja"))
	return err == nil
}

func firstOut(e *Edge) string {
	if len(e.Outputs) > 0 {
		return e.Outputs[0]
	}
	return e.ImplicitOutputs[0]
}

// OtherManifest is a manifest of a build folder that ninja runs with -f, besides build.ninja.
type OtherManifest struct {
	Name string // its name at the folder's top
	// MadeBy is the `build` line of build.ninja (or a file it includes) that makes it, "file:line"
	// relative to the folder ("" when none does): CMake's regeneration edge lists every
	// configuration's manifest, so the build expects it.
	MadeBy string
	// Err says why it cannot be read as a file (it is not there, or not a regular file); nil when it
	// can.
	Err error
}

// OtherManifests returns the manifests of build folder dir that ninja runs with -f, besides
// build.ninja, sorted by name: the other *.ninja files at its top that build.ninja does not read itself
// (include or subninja), such as the build-<Config>.ninja of CMake's Ninja Multi-Config generator
// (build.ninja builds its default configuration only), and the top-level *.ninja files an edge makes
// that are not there.
func OtherManifests(dir string) []OtherManifest {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	ents, err := fsrec.ReadDir(abs)
	if err != nil {
		return nil
	}
	m, err := ParseManifest(abs, DefaultManifest)
	if err != nil {
		return nil
	}
	read := map[string]bool{}
	for _, f := range m.Files {
		read[filepath.Clean(f)] = true
	}
	made := map[string]string{}
	for _, e := range m.Edges {
		for _, o := range append(append([]string{}, e.Outputs...), e.ImplicitOutputs...) {
			if o = filepath.Clean(o); strings.HasSuffix(o, ".ninja") && !strings.Contains(o, "/") {
				if _, ok := made[o]; !ok {
					made[o] = relTo(abs, e.File) + ":" + strconv.Itoa(e.Line)
				}
			}
		}
	}
	byName := map[string]*OtherManifest{}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".ninja") || n == DefaultManifest || read[filepath.Join(abs, n)] {
			continue
		}
		om := &OtherManifest{Name: n, MadeBy: made[n]}
		if !e.Type().IsRegular() {
			om.Err = safeio.Regular(filepath.Join(abs, n)) // a link to a manifest is one
		}
		byName[n] = om
	}
	for n, by := range made {
		if _, ok := byName[n]; !ok && n != DefaultManifest && !read[filepath.Join(abs, n)] {
			byName[n] = &OtherManifest{Name: n, MadeBy: by, Err: fs.ErrNotExist}
		}
	}
	out := make([]OtherManifest, 0, len(byName))
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[n])
	}
	return out
}
