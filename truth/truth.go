// Package truth is stalecheck's ground-truth harness: real Cargo workspaces with native code (the
// corpus, shapes.go) go through sequences of real edits and builds; after each edit and after each build
// stalecheck's verdict is judged against two oracles:
//
//   - stale (ground truth): a from-scratch build of the same sources and configuration in a fresh target
//     folder prints something else than the binary on disk (every content edit changes a printed value),
//     or cannot be built at all;
//   - Cargo's Dirty set: what `cargo build -v` reports Dirty (its own reasons, not the "dependency
//     rebuilt" cascade) on a `cp -a` copy of the workspace, mtimes kept; after an edit the user's next
//     build is that run itself.
//
// stalecheck is right on a state when its error findings name exactly the stale binaries and the units of
// its pending-rebuild findings are exactly Cargo's Dirty ones (per profile).
package truth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config is what the user's build command and environment select.
type Config struct {
	Release   bool
	Fast      bool   // --features app/fast
	RustFlags bool   // RUSTFLAGS=--cfg truth_rf
	CFlags    bool   // CFLAGS=-DTRUTH_CFLAG
	TargetDir string // CARGO_TARGET_DIR, when a build of another copy of the workspace shares this one's
}

// Profile is the profile folder the configuration builds into.
func (c Config) Profile() string {
	if c.Release {
		return "release"
	}
	return "debug"
}

// Key names the configuration in caches and reports.
func (c Config) Key() string {
	return fmt.Sprintf("%s,fast=%v,rf=%v,cf=%v", c.Profile(), c.Fast, c.RustFlags, c.CFlags)
}

// Args are cargo's arguments after the subcommand.
func (c Config) Args() []string {
	var a []string
	if c.Release {
		a = append(a, "--release")
	}
	if c.Fast {
		a = append(a, "--features", "app/fast")
	}
	return a
}

// Env is the environment of the build (and of stalecheck, which runs in the user's shell).
func (c Config) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "RUSTFLAGS" || k == "CFLAGS" || k == "CARGO_TARGET_DIR" || k == "CARGO_BUILD_TARGET_DIR" || k == "MAKEFLAGS" || k == "MFLAGS" || k == "CARGO_ENCODED_RUSTFLAGS":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "CARGO_NET_OFFLINE=true", "CARGO_TERM_COLOR=never", "CARGO_INCREMENTAL=0")
	if c.RustFlags {
		env = append(env, "RUSTFLAGS=--cfg truth_rf")
	}
	if c.CFlags {
		env = append(env, "CFLAGS=-DTRUTH_CFLAG")
	}
	if c.TargetDir != "" {
		env = append(env, "CARGO_TARGET_DIR="+c.TargetDir)
	}
	return env
}

// Options select what a run covers.
type Options struct {
	Work       string // scratch folder (emptied per shape)
	Stalecheck string // the stalecheck binary under test
	Registry   string // Debian's directory source
	Shapes     []string
	Seed       uint64
	Random     int  // random steps per shape after the fixed sequence
	Quick      bool // the fixed sequence only, on a few shapes
	Jobs       int
	Pure       bool // every from-scratch build from nothing (no registry snapshot)
	Smoke      bool // the clean build only: checks that every shape builds
	Log        io.Writer
	Details    io.Writer // one block per wrong verdict
	// NewLayout: every cargo command runs with -Zbuild-dir-new-layout (RUSTC_BOOTSTRAP=1), Cargo's new
	// build-dir layout (docs/cargo-new-layout.md); stalecheck is not told, it detects the layout from disk.
	NewLayout bool
	// Coverage adds the Cargo-coverage set (issue 11): the shapes marked Coverage, and the other-tree
	// edit (a second copy of the workspace built into the shared target folder) in every shape's
	// sequences. Off by default, so the core corpus's figures stay comparable from run to run.
	Coverage bool
}

// QuickShapes are the shapes `--quick` runs.
// (The event corpus, events.go, covers every build system; this one keeps Cargo's Dirty-set oracle,
// `which` and the verdict cache in the quick run.)
var QuickShapes = []string{"cc-include"}

// Verdict is stalecheck's answer and the oracles' for one root (binary) in one state.
type Verdict struct {
	Shape, Kind, State, Root string
	Stale, Error             bool
	Cargo                    *Cargo
	Pending                  []string // package@profile of stalecheck's pending-rebuild findings
	Agree                    bool
	Findings                 []string // rule severity: message (errors and pending only)
	BinaryOut, FreshOut      string
	// Which: libraries with several copies judged by `stalecheck which`; wrong answers; "cannot tell".
	Which, WhichWrong, WhichCannot int
}

// Result is a whole run.
type Result struct {
	States   int // states judged (a state may judge several roots)
	Verdicts []Verdict
	Skipped  []string // shapes not run, and why
	Elapsed  time.Duration
	// CacheDisagreed lists, under STALECHECK_VERDICT_CACHE=verify, the states where stalecheck's
	// verdict cache disagreed with its full check (exit status 3), or where a second check of an
	// unchanged state printed something else than the first.
	CacheDisagreed []string
	// ScopeDisagreed lists the roots where `stalecheck run --binary <root> -- true` (whose pre-run
	// check reads the root's profile folder alone unless it must read them all: runner/scope.go) and
	// the check of the whole build folder disagree: it refused (exit 125) and no error names the root,
	// or the reverse.
	ScopeDisagreed []string
}

// Run runs the harness.
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Details == nil {
		o.Details = io.Discard
	}
	if o.Jobs < 1 {
		o.Jobs = 1
	}
	want := map[string]bool{}
	for _, s := range o.Shapes {
		want[s] = true
	}
	if o.Quick && len(want) == 0 {
		for _, s := range QuickShapes {
			want[s] = true
		}
	}
	res := &Result{}
	var todo []Shape
	// Each shape's random sequence is seeded by its place among all shapes, not among those run, so
	// that --shapes NAME with a run's seed replays that shape's sequence of the run.
	place := map[string]int{}
	for i, s := range Shapes() {
		place[s.Name] = i
	}
	for _, s := range Shapes() {
		if len(want) > 0 && !want[s.Name] || len(want) == 0 && s.Coverage && !o.Coverage {
			continue
		}
		if miss := missingTools(s); miss != "" {
			res.Skipped = append(res.Skipped, s.Name+": "+miss+" not on PATH")
			continue
		}
		todo = append(todo, s)
	}
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, o.Jobs)
	var wg sync.WaitGroup
	for i, s := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, s Shape) {
			defer wg.Done()
			defer func() { <-sem }()
			r := &shapeRun{o: o, s: s, idx: place[s.Name], ws: filepath.Join(o.Work, s.Name, "ws"), root: filepath.Join(o.Work, s.Name), fresh: map[string]freshOut{}}
			vs, states, err := r.run(ctx)
			mu.Lock()
			defer mu.Unlock()
			res.Verdicts = append(res.Verdicts, vs...)
			res.States += states
			res.CacheDisagreed = append(res.CacheDisagreed, r.cacheDisagreed...)
			res.ScopeDisagreed = append(res.ScopeDisagreed, r.scopeDisagreed...)
			if err != nil {
				res.Skipped = append(res.Skipped, s.Name+": "+err.Error())
				if firstErr == nil {
					firstErr = fmt.Errorf("shape %s: %w", s.Name, err)
				}
			}
		}(i, s)
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res, firstErr
}

func missingTools(s Shape) string {
	for _, n := range s.Needs {
		if _, err := exec.LookPath(n); err != nil {
			return n
		}
	}
	return ""
}

type saved struct {
	content []byte
	mtime   time.Time
}

type freshOut struct {
	out    string
	failed bool
}

type shapeRun struct {
	o        Options
	s        Shape
	idx      int // the shape's place in Shapes(): its random sequence's stream
	root, ws string
	cfg      Config
	built    map[string]Config // profile → configuration of its last build
	counter  int
	saved    map[string][]saved // knob file → earlier versions
	failing  map[string]string  // knob file → content before the failing edit
	branch   string
	fresh    map[string]freshOut
	snapshot map[string]string // config key → registry-only target folder
	states   int
	verdicts []Verdict
	step     int
	// scopeDisagreed: see Result.ScopeDisagreed.
	scopeDisagreed []string
	// cacheDisagreed: see Result.CacheDisagreed.
	cacheDisagreed []string
}

func (r *shapeRun) logf(format string, a ...any) {
	fmt.Fprintf(r.o.Log, "[%s] "+format+"\n", append([]any{r.s.Name}, a...)...)
}

func (r *shapeRun) run(ctx context.Context) ([]Verdict, int, error) {
	if err := os.RemoveAll(r.root); err != nil {
		return nil, 0, err
	}
	if err := os.MkdirAll(r.ws, 0o755); err != nil {
		return nil, 0, err
	}
	if err := r.s.Materialize(r.ws, r.o.Registry); err != nil {
		return nil, 0, err
	}
	r.built = map[string]Config{}
	r.saved = map[string][]saved{}
	r.failing = map[string]string{}
	r.snapshot = map[string]string{}
	if err := r.gitInit(); err != nil {
		return nil, 0, err
	}
	start := time.Now()
	r.logf("start")
	defer func() { r.logf("%d states in %s", r.states, time.Since(start).Round(time.Second)) }()
	// The initial build from nothing: a clean build must draw no error.
	if err := r.buildAndJudge(ctx, Edit{Kind: "clean-build"}); err != nil {
		return r.verdicts, r.states, err
	}
	if r.o.Smoke {
		return r.verdicts, r.states, nil
	}
	seq := r.fixedSequence()
	rng := rand.New(rand.NewPCG(r.o.Seed, uint64(r.idx)+1))
	if !r.o.Quick {
		n := r.o.Random
		if r.s.Heavy {
			n /= 3
		}
		for i := 0; i < n; i++ {
			seq = append(seq, r.randomEdit(rng))
		}
	}
	for _, e := range seq {
		if err := ctx.Err(); err != nil {
			return r.verdicts, r.states, err
		}
		if err := r.apply(ctx, e); err != nil {
			return r.verdicts, r.states, err
		}
	}
	os.RemoveAll(filepath.Join(r.root, "fresh"))
	return r.verdicts, r.states, nil
}

// Edit is one change the user makes.
type Edit struct {
	Kind string // c-body, header, declared, rust, asm, touch, restore, feature, profile, rustflags, cflags, fail, fix, clean-p, branch, other-tree, clean-build
	Knob *Knob
	Arg  string
}

func (r *shapeRun) knobs(kinds ...string) []Knob {
	var out []Knob
	for _, k := range r.s.Knobs {
		for _, want := range kinds {
			if k.Kind == want {
				out = append(out, k)
			}
		}
	}
	return out
}

func (r *shapeRun) fixedSequence() []Edit {
	var seq []Edit
	for i := range r.s.Knobs {
		seq = append(seq, Edit{Kind: r.s.Knobs[i].Kind, Knob: &r.s.Knobs[i]})
	}
	// The quick run keeps what the event corpus does not judge (Cargo's own Dirty set over features,
	// profiles, RUSTFLAGS, a failed build, cargo clean -p and a branch switch): touches and restores
	// (the event corpus judges them on every build system), the C flags and the Rust build failure
	// only in a full run.
	full := !r.o.Quick
	native := r.knobs("c-body", "header", "asm", "declared")
	if len(native) > 0 && full {
		seq = append(seq, Edit{Kind: "touch", Knob: &native[0]}, Edit{Kind: "restore", Knob: &native[0]})
		if len(native) > 1 && full {
			seq = append(seq, Edit{Kind: "touch", Knob: &native[1]}, Edit{Kind: "restore", Knob: &native[1]})
		}
	}
	rs := r.knobs("rust")
	if full {
		seq = append(seq, Edit{Kind: "touch", Knob: &rs[len(rs)-1]}, Edit{Kind: "restore", Knob: &rs[len(rs)-1]})
	}
	if len(r.s.Features) > 0 {
		seq = append(seq, Edit{Kind: "feature"}, Edit{Kind: "feature"})
	}
	seq = append(seq, Edit{Kind: "profile"}, Edit{Kind: r.s.Knobs[0].Kind, Knob: &r.s.Knobs[0]}, Edit{Kind: "profile"})
	seq = append(seq, Edit{Kind: "rustflags"}, Edit{Kind: "rustflags"})
	if r.s.CFlags && full {
		seq = append(seq, Edit{Kind: "cflags"}, Edit{Kind: "cflags"})
	}
	if f := r.knobs("c-body", "asm"); len(f) > 0 {
		seq = append(seq, Edit{Kind: "fail", Knob: &f[0]}, Edit{Kind: "fix", Knob: &f[0]})
	}
	if full || len(r.knobs("c-body", "asm")) == 0 {
		seq = append(seq, Edit{Kind: "fail", Knob: &rs[len(rs)-1]}, Edit{Kind: "fix", Knob: &rs[len(rs)-1]})
	}
	if len(r.s.SysPackages) > 0 {
		seq = append(seq, Edit{Kind: "clean-p", Arg: r.s.SysPackages[0]})
	}
	seq = append(seq, Edit{Kind: "branch"}, Edit{Kind: "branch"})
	if len(native) > 0 && r.o.Coverage {
		seq = append(seq, Edit{Kind: "other-tree", Knob: &native[0]})
	}
	return seq
}

func (r *shapeRun) randomEdit(rng *rand.Rand) Edit {
	for {
		switch x := rng.IntN(100); {
		case x < 45:
			k := &r.s.Knobs[rng.IntN(len(r.s.Knobs))]
			return Edit{Kind: k.Kind, Knob: k}
		case x < 55:
			k := &r.s.Knobs[rng.IntN(len(r.s.Knobs))]
			return Edit{Kind: "touch", Knob: k}
		case x < 63:
			k := &r.s.Knobs[rng.IntN(len(r.s.Knobs))]
			if len(r.saved[k.File]) > 0 {
				return Edit{Kind: "restore", Knob: k}
			}
		case x < 70:
			if len(r.s.Features) > 0 {
				return Edit{Kind: "feature"}
			}
		case x < 75:
			return Edit{Kind: "profile"}
		case x < 79:
			return Edit{Kind: "rustflags"}
		case x < 83:
			if r.s.CFlags {
				return Edit{Kind: "cflags"}
			}
		case x < 89:
			f := r.knobs("c-body", "asm", "rust")
			k := &f[rng.IntN(len(f))]
			return Edit{Kind: "fail", Knob: k}
		case x < 93:
			if len(r.s.SysPackages) > 0 {
				return Edit{Kind: "clean-p", Arg: r.s.SysPackages[rng.IntN(len(r.s.SysPackages))]}
			}
		case x < 95:
			if n := r.knobs("c-body", "header", "asm", "declared"); len(n) > 0 && r.o.Coverage {
				return Edit{Kind: "other-tree", Knob: &n[rng.IntN(len(n))]}
			}
		default:
			return Edit{Kind: "branch"}
		}
	}
}

var tokenRE = regexp.MustCompile(`TRUTHV_([A-Za-z0-9]+)_([0-9]+)`)

// tokenRunRE is a token with the printable bytes that follow it: the rest of the string it starts.
var tokenRunRE = regexp.MustCompile(`TRUTHV_[A-Za-z0-9]+_[0-9]+[\x20-\x7e]*`)

// apply makes the edit, judges the edited state (content edits), builds, and judges the built state.
func (r *shapeRun) apply(ctx context.Context, e Edit) error {
	r.step++
	content := true
	switch e.Kind {
	case "c-body", "header", "declared", "rust", "asm":
		p := filepath.Join(r.ws, e.Knob.File)
		if err := r.fixFailing(e.Knob.File); err != nil {
			return err
		}
		old, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		st, _ := os.Stat(p)
		r.saved[e.Knob.File] = append(r.saved[e.Knob.File], saved{old, st.ModTime()})
		r.counter++
		n := 0
		nw := tokenRE.ReplaceAllFunc(old, func(m []byte) []byte {
			sm := tokenRE.FindSubmatch(m)
			if string(sm[1]) != e.Knob.Name {
				return m
			}
			n++
			return []byte(Token(e.Knob.Name, r.counter))
		})
		if n == 0 {
			return fmt.Errorf("knob %s: no token in %s", e.Knob.Name, e.Knob.File)
		}
		if err := writeNewer(p, nw); err != nil {
			return err
		}
	case "touch":
		p := filepath.Join(r.ws, e.Knob.File)
		now := time.Now()
		if err := os.Chtimes(p, now, now); err != nil {
			return err
		}
	case "restore":
		sv := r.saved[e.Knob.File]
		if len(sv) == 0 {
			return nil
		}
		if err := r.fixFailing(e.Knob.File); err != nil {
			return err
		}
		v := sv[len(sv)-1]
		r.saved[e.Knob.File] = sv[:len(sv)-1]
		p := filepath.Join(r.ws, e.Knob.File)
		if err := os.WriteFile(p, v.content, 0o644); err != nil {
			return err
		}
		if err := os.Chtimes(p, v.mtime, v.mtime); err != nil { // cp -p: the older content with its older mtime
			return err
		}
	case "fail":
		if _, ok := r.failing[e.Knob.File]; ok {
			return nil
		}
		p := filepath.Join(r.ws, e.Knob.File)
		old, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r.failing[e.Knob.File] = string(old)
		bad := "\n#error truth-fail\n"
		if e.Knob.Kind == "rust" {
			bad = "\ncompile_error!(\"truth-fail\");\n"
		}
		if err := writeNewer(p, append(old, bad...)); err != nil {
			return err
		}
	case "fix":
		if _, ok := r.failing[e.Knob.File]; !ok {
			return nil
		}
		if err := r.fixFailing(e.Knob.File); err != nil {
			return err
		}
	case "clean-p":
		args := []string{"clean", "-p", e.Arg}
		if r.cfg.Release {
			args = append(args, "--release") // cargo clean takes no --features
		}
		if out, err := r.cargo(ctx, r.ws, r.cfg, args...); err != nil {
			return fmt.Errorf("cargo clean -p: %v\n%s", err, out)
		}
	case "branch":
		if err := r.switchBranch(); err != nil {
			return err
		}
	case "other-tree":
		return r.otherTree(ctx, e)
	default:
		content = false
		switch e.Kind {
		case "feature":
			r.cfg.Fast = !r.cfg.Fast
		case "profile":
			r.cfg.Release = !r.cfg.Release
		case "rustflags":
			r.cfg.RustFlags = !r.cfg.RustFlags
		case "cflags":
			r.cfg.CFlags = !r.cfg.CFlags
		}
	}
	if !content {
		return r.buildAndJudge(ctx, e)
	}
	// The edited state, before the user builds: judged now, Cargo's answer comes from the build itself.
	pending, err := r.judge(ctx, e, "edited", true)
	if err != nil {
		return err
	}
	dirty, err := r.build(ctx)
	if err != nil {
		return err
	}
	for i := range pending {
		v := &r.verdicts[pending[i]]
		if v.Cargo == nil && v.Root == "target/"+r.cfg.Profile()+"/app" {
			v.Cargo = &dirty
			v.Agree = agrees(dirty, v.Pending)
		}
	}
	_, err = r.judge(ctx, e, "built", false)
	return err
}

// otherTree is a second copy of the workspace (a git worktree, a copy for a bisect) built into this
// workspace's target folder (CARGO_TARGET_DIR), with the knob at another version there: Cargo's unit
// hashes of path packages do not depend on where the workspace lies, so the copy's build replaces this
// workspace's units, and this workspace's next build finds them Fresh (nubjs/nub #614). Judged after the
// copy's build, then the user's fix: the knob's file touched here and rebuilt.
func (r *shapeRun) otherTree(ctx context.Context, e Edit) error {
	if err := r.fixFailing(e.Knob.File); err != nil {
		return err
	}
	other := filepath.Join(r.root, "other", "ws")
	os.RemoveAll(filepath.Dir(other))
	if err := os.MkdirAll(other, 0o755); err != nil {
		return err
	}
	if err := copySources(r.ws, other); err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(other))
	p := filepath.Join(other, e.Knob.File)
	old, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	r.counter++
	nw := tokenRE.ReplaceAllFunc(old, func(m []byte) []byte {
		if string(tokenRE.FindSubmatch(m)[1]) != e.Knob.Name {
			return m
		}
		return []byte(Token(e.Knob.Name, 100000+r.counter))
	})
	if err := writeNewer(p, nw); err != nil {
		return err
	}
	cfg := r.cfg
	cfg.TargetDir = filepath.Join(r.ws, "target")
	out, err := r.cargo(ctx, other, cfg, append([]string{"build"}, cfg.Args()...)...)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(r.failing) == 0 {
			return fmt.Errorf("build of the other tree failed without a failing edit: %v\n%s", err, tail(out, 3000))
		}
	}
	r.built[r.cfg.Profile()] = r.cfg
	if _, err := r.judge(ctx, e, "other-built", false); err != nil {
		return err
	}
	here := filepath.Join(r.ws, e.Knob.File)
	time.Sleep(15 * time.Millisecond)
	now := time.Now()
	if err := os.Chtimes(here, now, now); err != nil {
		return err
	}
	return r.buildAndJudge(ctx, e)
}

func (r *shapeRun) fixFailing(rel string) error {
	old, ok := r.failing[rel]
	if !ok {
		return nil
	}
	delete(r.failing, rel)
	return writeNewer(filepath.Join(r.ws, rel), []byte(old))
}

// writeNewer writes content so that its mtime is later than anything before it (Linux stamps files from
// a coarse clock).
func writeNewer(p string, content []byte) error {
	time.Sleep(15 * time.Millisecond)
	return os.WriteFile(p, content, 0o644)
}

func (r *shapeRun) buildAndJudge(ctx context.Context, e Edit) error {
	if _, err := r.build(ctx); err != nil {
		return err
	}
	_, err := r.judge(ctx, e, "built", false)
	return err
}

// build runs the user's build (cargo build -v) in place and returns what Cargo did.
func (r *shapeRun) build(ctx context.Context) (Cargo, error) {
	out, err := r.cargo(ctx, r.ws, r.cfg, append([]string{"build", "-v"}, r.cfg.Args()...)...)
	r.built[r.cfg.Profile()] = r.cfg
	if err != nil && ctx.Err() != nil {
		return Cargo{}, ctx.Err()
	}
	if err != nil && len(r.failing) == 0 {
		return Cargo{}, fmt.Errorf("cargo build %s failed without a failing edit: %v\n%s", r.cfg.Key(), err, tail(out, 3000))
	}
	c := parseCargo(out, r.cfg.Profile())
	c.Failed = err != nil
	return c, nil
}

func (r *shapeRun) cargo(ctx context.Context, dir string, c Config, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	env := c.Env()
	if r.o.NewLayout {
		args = append([]string{"-Zbuild-dir-new-layout"}, args...)
		env = append(env, "RUSTC_BOOTSTRAP=1")
	}
	cmd := exec.CommandContext(ctx, "cargo", args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var (
	dirtyRE     = regexp.MustCompile(`(?m)^\s+Dirty (\S+) v\S+(?: \([^)]*\))?: (.*)$`)
	compilingRE = regexp.MustCompile(`(?m)^\s+Compiling (\S+) v`)
)

// Cargo is what one cargo build -v did, as package@profile sets.
type Cargo struct {
	Own     []string // Dirty for a reason of the unit's own (not "the dependency … was rebuilt")
	Rebuilt []string // every package it compiled or reran
	// Failed: the build stopped at an error, so units after it were never judged and Rebuilt is not an
	// upper bound.
	Failed bool
}

// parseCargo reads cargo build -v's stderr. Cargo prints one reason per unit, the first it finds
// (dependencies are compared before the unit's own files), so Own is a lower bound of what changed and
// Rebuilt the upper bound.
func parseCargo(out, profile string) Cargo {
	own, all := map[string]bool{}, map[string]bool{}
	for _, m := range dirtyRE.FindAllStringSubmatch(out, -1) {
		all[m[1]+"@"+profile] = true
		// "the dependency X was rebuilt", "info of dependency `x` changed": a reason of another unit.
		if !strings.Contains(m[2], "dependency") {
			own[m[1]+"@"+profile] = true
		}
	}
	for _, m := range compilingRE.FindAllStringSubmatch(out, -1) {
		all[m[1]+"@"+profile] = true
	}
	return Cargo{Own: keys(own), Rebuilt: keys(all)}
}

// agrees: stalecheck's pending-rebuild units include every unit Cargo calls Dirty for a reason of its
// own, and name nothing Cargo does not rebuild.
func agrees(c Cargo, pending []string) bool {
	return subset(c.Own, pending) && (c.Failed || subset(pending, c.Rebuilt))
}

func subset(a, b []string) bool {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	for _, x := range a {
		if !in[x] {
			return false
		}
	}
	return true
}

func filterProfile(xs []string, profile string) []string {
	out := []string{}
	for _, x := range xs {
		if strings.HasSuffix(x, "@"+profile) {
			out = append(out, x)
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// check is stalecheck's JSON answer, the parts the harness reads.
type check struct {
	Findings []struct {
		Rule     string   `json:"rule"`
		Severity string   `json:"severity"`
		Message  string   `json:"message"`
		Roots    []string `json:"roots"`
		Evidence []struct {
			Kind string `json:"kind"`
			Path string `json:"path"`
		} `json:"evidence"`
	} `json:"findings"`
}

// unitRE finds a unit's package in a record path of either build-dir layout: legacy
// `<prof>/.fingerprint/<pkg>-<hash>`, `<prof>/build/<pkg>-<hash>`; new `<prof>/build/<pkg>/<hash>`.
var unitRE = regexp.MustCompile(`/(debug|release)/(?:(?:\.fingerprint|build)/([^/]+)-[0-9a-f]{16}|build/([^/]+)/[0-9a-f]{16})(?:/|$)`)

// answer is stalecheck's verdict on a state, as the harness scores it.
type answer struct {
	pending  []string            // package@profile of pending-rebuild findings
	errRoots map[string][]string // root path → rules of error findings naming it
	summary  []string
}

// runRefuses runs `stalecheck run -q --binary bin -- true` in the environment of cfg and reports
// whether it refused (exit status 125: an error finding names bin), with its stderr. Any other failure
// counts as not refusing, and says why; exit status 3 (verify mode: the cached plan differs from the
// full check) is also a cache disagreement.
func (r *shapeRun) runRefuses(ctx context.Context, cfg Config, bin string) (bool, string) {
	cmd := exec.CommandContext(ctx, r.o.Stalecheck, "run", "-q", "--binary", bin, "--", "true")
	cmd.Dir = r.ws
	cmd.Env = append(cfg.Env(), "XDG_STATE_HOME="+filepath.Join(r.root, "state"), "NO_COLOR=1",
		"STALECHECK_LEDGER="+filepath.Join(r.root, "runs.db"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 125 {
		return true, stderr.String()
	}
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		// STALECHECK_VERDICT_CACHE=verify: run's cached plan disagreed with its full pre-run check.
		r.cacheDisagreed = append(r.cacheDisagreed, fmt.Sprintf("%s state %d: run --binary %s: %s", r.s.Name, r.states, bin, tail(stderr.String(), 6000)))
	}
	if err != nil {
		return false, fmt.Sprintf("run failed: %v: %s", err, stderr.String())
	}
	return false, stderr.String()
}

// stalecheck runs check --format json in the environment of cfg (the shell its profile is built in).
func (r *shapeRun) stalecheck(ctx context.Context, cfg Config) answer {
	args := []string{"check", "--all", "--format", "json", "--fail-on", "none"}
	cmd := exec.CommandContext(ctx, r.o.Stalecheck, args...)
	cmd.Dir = r.ws
	cmd.Env = append(cfg.Env(), "XDG_STATE_HOME="+filepath.Join(r.root, "state"), "NO_COLOR=1")
	if os.Getenv("STALECHECK_VERDICT_CACHE") == "verify" {
		cmd.Env = append(cmd.Env, "STALECHECK_VERDICT_CACHE_TRACE=1")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if os.Getenv("STALECHECK_VERDICT_CACHE") == "verify" {
		// The verdict cache must never answer what the full check would not: its verify mode fails with
		// exit status 3 on a hit that differs, and a second check of the same state (a hit, once
		// stored) must print the same.
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			r.cacheDisagreed = append(r.cacheDisagreed, fmt.Sprintf("%s state %d: %s", r.s.Name, r.states, tail(stderr.String(), 6000)))
		} else if err == nil {
			again := exec.CommandContext(ctx, r.o.Stalecheck, args...)
			again.Dir, again.Env = r.ws, cmd.Env
			var stderr2 bytes.Buffer
			again.Stderr = &stderr2
			_, err2 := again.Output()
			// (Its output may differ from the first one's: a first check records content baselines
			// that the next one judges by. Only a disagreement of the cache with the full check counts.)
			if errors.As(err2, &ee) && ee.ExitCode() == 3 {
				r.cacheDisagreed = append(r.cacheDisagreed, fmt.Sprintf("%s state %d: a second check of the same state (the first said %q): %s", r.s.Name, r.states, tail(stderr.String(), 400), tail(stderr2.String(), 6000)))
			}
		}
	}
	var c check
	a := answer{errRoots: map[string][]string{}}
	if err != nil || json.Unmarshal(out, &c) != nil {
		// An answer stalecheck cannot give is wrong on every stale root: recorded, not fatal.
		a.summary = append(a.summary, fmt.Sprintf("stalecheck failed: %v: %s", err, tail(stderr.String(), 500)))
		return a
	}
	pendingSet := map[string]bool{}
	for _, f := range c.Findings {
		if f.Rule == "pending-rebuild" {
			for _, ev := range f.Evidence {
				if ev.Kind == "reference" {
					if m := unitRE.FindStringSubmatch(ev.Path); m != nil {
						pendingSet[m[2]+m[3]+"@"+m[1]] = true
					}
				}
			}
		}
		if f.Severity == "error" || f.Rule == "pending-rebuild" {
			a.summary = append(a.summary, fmt.Sprintf("%s %s: %s", f.Severity, f.Rule, f.Message))
		}
		if f.Severity == "error" {
			for _, root := range f.Roots {
				a.errRoots[root] = append(a.errRoots[root], f.Rule)
			}
		}
	}
	a.pending = keys(pendingSet)
	return a
}

// judge runs stalecheck on the state and both oracles; deferCargo leaves Cargo's answer for the current
// profile to the build that follows. It returns the indexes of the verdicts added.
func (r *shapeRun) judge(ctx context.Context, e Edit, state string, deferCargo bool) ([]int, error) {
	r.states++
	answers := map[string]answer{}
	var added []int
	profiles := make([]string, 0, len(r.built))
	for p := range r.built {
		profiles = append(profiles, p)
	}
	sort.Strings(profiles)
	for _, p := range profiles {
		cfg := r.built[p]
		bin := filepath.Join(r.ws, "target", p, "app")
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		envKey := fmt.Sprintf("rf=%v,cf=%v", cfg.RustFlags, cfg.CFlags)
		ans, ok := answers[envKey]
		if !ok {
			ans = r.stalecheck(ctx, cfg)
			answers[envKey] = ans
		}
		got := runBinary(ctx, bin)
		want, err := r.freshBuild(ctx, cfg)
		if err != nil {
			return added, err
		}
		v := Verdict{Shape: r.s.Name, Kind: e.Kind, State: fmt.Sprintf("%d:%s", r.step, state), Root: "target/" + p + "/app",
			Stale: want.failed || want.out != got, Error: len(ans.errRoots[bin]) > 0, Findings: ans.summary, BinaryOut: got, FreshOut: want.out,
			Pending: filterProfile(ans.pending, p)}
		if want.failed {
			v.FreshOut = "(the sources do not build)"
		}
		// `run` of this binary reads its profile folder alone: it must refuse exactly when an error names it.
		if refused, out := r.runRefuses(ctx, cfg, bin); refused != v.Error {
			r.scopeDisagreed = append(r.scopeDisagreed, fmt.Sprintf("%s state %s %s: the whole check's error rules %v, run refused %v: %s",
				r.s.Name, v.State, v.Root, ans.errRoots[bin], refused, tail(out, 2000)))
		}
		if state == "built" {
			var notes []string
			v.Which, v.WhichWrong, v.WhichCannot, notes = r.judgeWhich(ctx, bin, got)
			v.Findings = append(v.Findings, notes...)
		}
		if !(deferCargo && p == r.cfg.Profile()) {
			var d Cargo
			var err error
			if p == r.cfg.Profile() {
				// Just built: the user's next build of this profile is a no-op unless Cargo disagrees
				// with itself; running it in place is what the user would see.
				d, err = r.build(ctx)
			} else {
				d, err = r.cargoOnCopy(ctx, cfg)
			}
			if err != nil {
				return added, err
			}
			v.Cargo = &d
			v.Agree = agrees(d, v.Pending)
		}
		r.verdicts = append(r.verdicts, v)
		added = append(added, len(r.verdicts)-1)
	}
	return added, nil
}

func runBinary(ctx context.Context, bin string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	if err != nil {
		return string(out) + "(exit: " + err.Error() + ")"
	}
	return string(out)
}

// cargoOnCopy asks Cargo what it would rebuild in a profile the user is not building now: cargo build -v
// on a cp -a copy (mtimes kept to the nanosecond) of the sources and of that profile's folder. Not tar:
// GNU tar's default format keeps whole seconds, and a package-scanned build script's Precalculated
// fingerprint records its newest file's mtime to the nanosecond, so a tar copy made Cargo rerun every
// such script ("the precalculated components changed") where the user's own build would not.
func (r *shapeRun) cargoOnCopy(ctx context.Context, cfg Config) (Cargo, error) {
	cp := filepath.Join(r.root, "oracle")
	os.RemoveAll(cp)
	if err := run("", nil, "sh", "-c", `mkdir -p "$2/target" && cd "$1" && find . -mindepth 1 -maxdepth 1 ! -name target -exec cp -a {} "$2/" \; && cd target && cp -a "$3" .rustc_info.json CACHEDIR.TAG "$2/target/" 2>/dev/null; test -d "$2/target/$3"`, "sh", r.ws, cp, cfg.Profile()); err != nil {
		return Cargo{}, err
	}
	defer os.RemoveAll(cp)
	out, err := r.cargo(ctx, cp, cfg, append([]string{"build", "-v"}, cfg.Args()...)...)
	if err != nil && ctx.Err() != nil {
		return Cargo{}, ctx.Err()
	}
	c := parseCargo(out, cfg.Profile())
	c.Failed = err != nil
	return c, nil
}

// sourceFiles lists the workspace's sources as git sees them: tracked files and untracked ones git does
// not ignore (target/ and build outputs a shape's .gitignore names are not sources).
func sourceFiles(dir string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-co", "--exclude-standard", "-z")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %v", dir, err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, nil
}

// treeDigest digests the workspace's sources (sourceFiles).
func treeDigest(dir string) (string, error) {
	files, err := sourceFiles(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted, not yet staged
			}
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copySources copies the workspace's sources (sourceFiles) into dst.
func copySources(src, dst string) error {
	files, err := sourceFiles(src)
	if err != nil {
		return err
	}
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return err
		}
		st, err := os.Stat(filepath.Join(src, rel))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, rel), b, st.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// freshBuild builds the current sources with cfg in a fresh target folder and returns what the binary
// prints. The registry dependencies (read-only Debian sources) come from a from-scratch build of the
// same configuration made once per shape, stripped of every workspace unit (unless Pure).
func (r *shapeRun) freshBuild(ctx context.Context, cfg Config) (freshOut, error) {
	dg, err := treeDigest(r.ws)
	if err != nil {
		return freshOut{}, err
	}
	key := dg + "|" + cfg.Key()
	if f, ok := r.fresh[key]; ok {
		return f, nil
	}
	dir := filepath.Join(r.root, "fresh", "ws")
	os.RemoveAll(filepath.Dir(dir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return freshOut{}, err
	}
	if err := copySources(r.ws, dir); err != nil {
		return freshOut{}, err
	}
	snap, haveSnap := r.snapshot[cfg.Key()]
	if haveSnap && !r.o.Pure {
		if err := run("", nil, "cp", "-a", snap, filepath.Join(dir, "target")); err != nil {
			return freshOut{}, err
		}
	}
	out, err := r.cargo(ctx, dir, cfg, append([]string{"build"}, cfg.Args()...)...)
	var f freshOut
	if err != nil {
		if ctx.Err() != nil {
			return f, ctx.Err()
		}
		if len(r.failing) == 0 {
			return f, fmt.Errorf("from-scratch build %s failed without a failing edit:\n%s", cfg.Key(), tail(out, 3000))
		}
		f.failed = true
	} else {
		f.out = runBinary(ctx, filepath.Join(dir, "target", cfg.Profile(), "app"))
	}
	if !haveSnap && !r.o.Pure && !f.failed {
		snap = filepath.Join(r.root, "snap-"+sanitize(cfg.Key()))
		os.RemoveAll(snap)
		if err := os.Rename(filepath.Join(dir, "target"), snap); err != nil {
			return f, err
		}
		if err := stripWorkspaceUnits(snap, dir); err != nil {
			return f, err
		}
		r.snapshot[cfg.Key()] = snap
	}
	r.fresh[key] = f
	return f, nil
}

func sanitize(s string) string { return regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(s, "_") }

// stripWorkspaceUnits removes from a target folder everything a workspace (path) package made, leaving
// the registry packages' units: the packages without a source in Cargo.lock.
func stripWorkspaceUnits(target, ws string) error {
	lock, err := os.ReadFile(filepath.Join(ws, "Cargo.lock"))
	if err != nil {
		return err
	}
	var names []string
	for _, blk := range strings.Split(string(lock), "[[package]]") {
		m := regexp.MustCompile(`(?m)^name = "([^"]+)"`).FindStringSubmatch(blk)
		if m != nil && !strings.Contains(blk, "\nsource = ") {
			names = append(names, m[1], strings.ReplaceAll(m[1], "-", "_"))
		}
	}
	// Legacy `deps/lib<crate>-<hash>.rlib`, `.fingerprint/<pkg>-<hash>`, `build/<pkg>-<hash>`; new layout
	// `build/<pkg>` (the unit folders `<hash>` under it).
	unit := regexp.MustCompile(`^(?:lib)?(` + strings.Join(quoteAll(names), "|") + `)(?:-[0-9a-f]{16}(?:\..*)?)?$`)
	profiles, _ := os.ReadDir(target)
	for _, p := range profiles {
		if !p.IsDir() {
			continue
		}
		pd := filepath.Join(target, p.Name())
		ents, _ := os.ReadDir(pd)
		for _, e := range ents {
			switch e.Name() {
			case ".fingerprint", "build", "deps":
				sub, _ := os.ReadDir(filepath.Join(pd, e.Name()))
				for _, s := range sub {
					if unit.MatchString(s.Name()) {
						if err := os.RemoveAll(filepath.Join(pd, e.Name(), s.Name())); err != nil {
							return err
						}
					}
				}
			default:
				if !strings.HasPrefix(e.Name(), ".") || e.Name() == ".cargo-lock" {
					if err := os.RemoveAll(filepath.Join(pd, e.Name())); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = regexp.QuoteMeta(x)
	}
	return out
}

func run(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, tail(string(out), 2000))
	}
	return nil
}

func (r *shapeRun) git(args ...string) error {
	return run(r.ws, nil, "git", append([]string{"-c", "user.email=truth@stalecheck.invalid", "-c", "user.name=truth", "-c", "commit.gpgsign=false"}, args...)...)
}

// gitInit makes branch main (the sources as written) and branch alt (the first knob at another version).
func (r *shapeRun) gitInit() error {
	if err := r.git("init", "-q", "-b", "main"); err != nil {
		return err
	}
	if err := r.git("add", "-A"); err != nil {
		return err
	}
	if err := r.git("commit", "-qm", "main"); err != nil {
		return err
	}
	if err := r.git("checkout", "-qb", "alt"); err != nil {
		return err
	}
	k := r.s.Knobs[0]
	p := filepath.Join(r.ws, k.File)
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), Token(k.Name, 0), Token(k.Name, 999))), 0o644); err != nil {
		return err
	}
	if err := r.git("commit", "-qam", "alt"); err != nil {
		return err
	}
	r.branch = "main"
	return r.git("checkout", "-q", "main")
}

// switchBranch commits the work in progress on the current branch and checks out the other one, as a
// developer does: git writes the files that differ with the current time as their mtime.
func (r *shapeRun) switchBranch() error {
	for rel := range r.failing {
		if err := r.fixFailing(rel); err != nil {
			return err
		}
	}
	if err := r.git("add", "-A"); err != nil {
		return err
	}
	_ = r.git("commit", "-qm", "wip") // nothing to commit is fine
	other := "alt"
	if r.branch == "alt" {
		other = "main"
	}
	if err := r.git("checkout", "-q", other); err != nil {
		return err
	}
	r.branch = other
	r.saved = map[string][]saved{}
	return nil
}

// whichReport is the part of `stalecheck which --format json` the harness reads.
type whichReport struct {
	Libraries []struct {
		Name       string           `json:"name"`
		Outcome    string           `json:"outcome"`
		Candidates []whichCandidate `json:"candidates"`
	} `json:"libraries"`
}

type whichCandidate struct {
	Path    string `json:"path"`
	Matched bool   `json:"matched"`
}

// judgeWhich judges `stalecheck which` and `verify --matches` on one binary of a shape (judgeCopies).
func (r *shapeRun) judgeWhich(ctx context.Context, bin, printed string) (judged, wrong, cannot int, notes []string) {
	rust := map[string]bool{}
	for _, k := range r.s.Knobs {
		if k.Kind == "rust" {
			rust[k.Name] = true
		}
	}
	return judgeCopies(ctx, r.o.Stalecheck, r.ws, append(Config{}.Env(), "XDG_STATE_HOME="+filepath.Join(r.root, "state")), bin, printed, rust)
}

// judgeCopies asks `stalecheck which` which copy of each native library the binary holds (or, with
// one copy, whether it holds that one), and compares it with the copy known by construction: the binary prints every
// token its native code carries, so a copy holds what the binary holds when every native token in its
// bytes (each string whole, with its +fast/+cflag markers) is in what the binary printed (rust names the knobs whose tokens
// are Rust's, never a native copy's). Then `stalecheck verify BIN --matches COPY` for every candidate
// must answer as which did: 0 for the copies which names as inside, 1 for the others. It returns the
// libraries judged, the wrong answers and the "cannot tell" ones, with a note per wrong answer.
func judgeCopies(ctx context.Context, stalecheck, dir string, env []string, bin, printed string, rust map[string]bool) (judged, wrong, cannot int, notes []string) {
	cmd := exec.CommandContext(ctx, stalecheck, "which", bin, "--format", "json")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	var w whichReport
	if err != nil || json.Unmarshal(out, &w) != nil {
		msg := ""
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg = tail(string(ee.Stderr), 400)
		}
		return 1, 1, 0, []string{fmt.Sprintf("which %s failed: %v: %s", bin, err, msg)}
	}
	// carries reports whether a copy holds knob tokens at all: only such libraries are known by
	// construction (a Debian crate's own archives carry none).
	carries := func(path string) bool {
		b, err := os.ReadFile(path)
		return err == nil && tokenRE.Match(b)
	}
	holds := func(path string) bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		// A native string runs from its first token to its NUL; the binary prints it whole, so its
		// markers (+fast, +cflag) are judged with the tokens they sit beside, not with another line's.
		for _, run := range tokenRunRE.FindAll(b, -1) {
			toks := tokenRE.FindAllSubmatch(run, -1)
			if slices.ContainsFunc(toks, func(m [][]byte) bool { return rust[string(m[1])] }) {
				// Rust's strings are not NUL-terminated, so the run may hold its neighbours: token by token.
				for _, m := range toks {
					if !rust[string(m[1])] && !strings.Contains(printed, string(m[0])) {
						return false
					}
				}
				continue
			}
			if !strings.Contains(printed, string(run)) {
				return false
			}
		}
		return true
	}
	// twoOfOne reports whether an archive holds two members of one name (`ar q` appends): it carries the
	// tokens of both, and which of them the binary took is not known by construction.
	twoOfOne := func(path string) bool {
		out, err := exec.CommandContext(ctx, "ar", "t", path).Output()
		seen := map[string]bool{}
		for _, m := range strings.Split(string(out), "\n") {
			if m != "" && seen[m] {
				return true
			}
			seen[m] = true
		}
		return err != nil
	}
	// verify answers `verify BIN --matches COPY`: 0 inside, 1 not, 2 cannot tell or error.
	verify := func(copy string) int {
		cmd := exec.CommandContext(ctx, stalecheck, "verify", bin, "--matches", copy)
		cmd.Dir, cmd.Env = dir, env
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			return 2
		}
		return 0
	}
	for _, lib := range w.Libraries {
		if len(lib.Candidates) == 0 || !carries(lib.Candidates[0].Path) || slices.ContainsFunc(lib.Candidates, func(c whichCandidate) bool { return twoOfOne(c.Path) }) {
			continue
		}
		judged++
		var right, matched []string
		for _, c := range lib.Candidates {
			if holds(c.Path) {
				right = append(right, c.Path)
			}
			if c.Matched {
				matched = append(matched, c.Path)
			}
		}
		switch lib.Outcome {
		case "unprovable", "unknown":
			cannot++
			continue
		case "none-inside":
			if len(right) > 0 {
				wrong++
				notes = append(notes, fmt.Sprintf("which %s: none-inside, but %v holds what the binary prints", lib.Name, right))
			}
			continue
		}
		if len(matched) == 0 || !subset(matched, right) {
			wrong++
			notes = append(notes, fmt.Sprintf("which %s: %s %v, but the copies holding what the binary prints are %v (it prints %q)", lib.Name, lib.Outcome, matched, right, tail(printed, 300)))
			continue
		}
		for _, c := range lib.Candidates {
			want := 1
			if c.Matched {
				want = 0
			}
			if got := verify(c.Path); got != want {
				wrong++
				notes = append(notes, fmt.Sprintf("verify %s --matches %s: exit %d, but which says %s of it (exit %d expected)", bin, c.Path, got, map[bool]string{true: "inside", false: "not inside"}[c.Matched], want))
				break
			}
		}
	}
	return judged, wrong, cannot, notes
}

// ScratchRoot is where a run's scratch folder goes: a memory file system (/dev/shm) when it is there,
// writable and has need bytes free, else the temporary folder. The corpus writes and deletes thousands
// of small files per event (copies of target folders, object files); in memory that costs a tenth of
// the quick run's time less than on a virtual disk.
func ScratchRoot(need uint64) string {
	const shm = "/dev/shm"
	var st syscall.Statfs_t
	if err := syscall.Statfs(shm, &st); err != nil || st.Bavail*uint64(st.Bsize) < need || syscall.Access(shm, 0o2|0o1) != nil {
		return os.TempDir()
	}
	return shm
}

// QuickScratch is the free space the quick corpus needs in its scratch folder (it uses about 1.2 GB).
const QuickScratch = 3 << 30
