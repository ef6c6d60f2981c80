package truth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// The event engine judges every event from a known-fresh state, so that an earlier miss cannot mask a
// later edit: each project is built once from nothing, checked once (stalecheck records its content
// baselines then, as it does for a user who checks after building), and saved whole (the workspace with
// its build folders, stalecheck's state, Go's build cache). Each event restores that saved state in
// place (the same paths: CMake, Meson and Cargo record absolute ones), makes its edits, is judged
// ("edited": what the user has before building), runs the user's build, and is judged again ("built").
// An interrupted build is judged between the two ("interrupted": the project's partial build, the
// library rebuilt and the program not linked).
//
// A judgement compares, for every program of the project, what the program on disk prints with what a
// from-scratch build of the same sources and configuration prints (every content edit changes a printed
// token; a comment-only edit or a touch changes nothing the compiler keeps), and scores stalecheck's
// findings by reason: an error is right for an edit only when its subjects or evidence name a file the
// edit changed (or a file made from it).

// EventOptions select what an event run covers.
type EventOptions struct {
	Work       string
	Stalecheck string
	Projects   []string // names (default: all)
	Seed       uint64
	Quick      bool // one event of each edit kind per build system, spread over its projects (quickKinds)
	Pairs      int  // seeded pairs of edits per project, after the single edits
	Repeat     int  // runs of the single edits (each a separate event); 0 or 1: once
	Jobs       int
	Log        io.Writer
}

// Judgement is one program judged in one phase of one event.
type Judgement struct {
	Project, System, Kind, Event, Phase, Root string
	Stale                                     bool
	Outcome                                   string // see Outcomes
	Findings                                  []string
	BinaryOut, FreshOut                       string
	// Which: the native libraries with several copies whose copy inside this program `stalecheck which`
	// and `verify --matches` were asked for (judgeCopies); wrong answers; "cannot tell"; why each was wrong.
	Which, WhichWrong, WhichCannot int
	WhichNotes                     []string
}

// Outcomes, in table order. right: a stale program named by an error that names the edited file; other:
// named by an error for another reason; cannot-tell: only warnings name it; missed: nothing does; crash:
// stalecheck failed (exit status 2, no JSON); false-error: an error names a program that prints what a
// fresh build prints; conservative: the same, before the build, for an edit the build system itself
// rebuilds (a touch, a comment); noise: a warning new since the fresh state names a healthy program;
// healthy: nothing named a healthy program.
var Outcomes = []string{"right", "other", "cannot-tell", "missed", "crash", "false-error", "conservative", "noise", "healthy"}

// EventResult is a whole event run.
type EventResult struct {
	Events     int
	Judgements []Judgement
	Skipped    []string
	Elapsed    time.Duration
	Seed       uint64
}

// RunEvents runs the event corpus.
func RunEvents(ctx context.Context, o EventOptions) (*EventResult, error) {
	start := time.Now()
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Jobs < 1 {
		o.Jobs = 1
	}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return nil, err
	}
	work, err := filepath.EvalSymlinks(o.Work)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range o.Projects {
		want[n] = true
	}
	res := &EventResult{Seed: o.Seed}
	var todo []Project
	place := map[string]int{}
	for i, p := range Projects() {
		place[p.Name] = i
		if len(want) > 0 && !want[p.Name] {
			continue
		}
		if miss := missingNeeds(p.Needs); miss != "" {
			res.Skipped = append(res.Skipped, p.Name+": "+miss+" not on PATH")
			continue
		}
		todo = append(todo, p)
	}
	var quick map[string]map[string]bool
	if o.Quick {
		quick = quickKinds(todo)
	}
	var mu sync.Mutex
	var firstErr error
	// One Go build cache holding the standard library (cgo included), copied by hard links into each Go
	// project's caches: compiling the standard library is most of a first Go build. The first worker
	// builds it while the others start on projects that need no Go; a Go project is taken only once the
	// seed is ready.
	seed := ""
	if slices.ContainsFunc(todo, needsGo) {
		seed = filepath.Join(work, "gocache-seed")
	}
	q := &projectQueue{todo: runOrder(todo), seedDone: seed == ""}
	q.cond = sync.NewCond(&q.mu)
	var wg sync.WaitGroup
	for w := 0; w < o.Jobs; w++ {
		wg.Go(func() {
			if w == 0 && seed != "" {
				err := seedGoCache(ctx, seed)
				q.mu.Lock()
				q.seedDone, q.seedErr = true, err
				q.cond.Broadcast()
				q.mu.Unlock()
			}
			for {
				p, err, ok := q.next()
				if !ok {
					return
				}
				var js []Judgement
				n := 0
				if err == nil {
					pr := &projectRun{o: o, p: p, root: filepath.Join(work, p.Name), idx: place[p.Name], fresh: map[string]map[string]string{}, goSeed: seed,
						quick: quick[p.Name]}
					pr.ws = filepath.Join(pr.root, "ws")
					js, n, err = pr.run(ctx)
				}
				mu.Lock()
				res.Judgements = append(res.Judgements, js...)
				res.Events += n
				if err != nil {
					res.Skipped = append(res.Skipped, p.Name+": "+err.Error())
					if firstErr == nil {
						firstErr = fmt.Errorf("project %s: %w", p.Name, err)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	sort.SliceStable(res.Judgements, func(i, j int) bool { return res.Judgements[i].Project < res.Judgements[j].Project })
	res.Elapsed = time.Since(start)
	return res, firstErr
}

func needsGo(p Project) bool { return slices.Contains(p.Needs, "go") }

// projectQueue hands projects to the workers in runOrder, a Go project only once the Go cache seed is
// built (its error then goes with it).
type projectQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	todo     []Project
	seedDone bool
	seedErr  error
}

// next is the first project a worker may take now; it waits while only Go projects are left and the
// seed is being built. ok is false when none is left.
func (q *projectQueue) next() (p Project, err error, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.todo) > 0 {
		for i, c := range q.todo {
			if !needsGo(c) || q.seedDone {
				q.todo = slices.Delete(q.todo, i, i+1)
				if needsGo(c) && q.seedErr != nil {
					return c, fmt.Errorf("the Go build cache seed: %w", q.seedErr), true
				}
				return c, nil, true
			}
		}
		q.cond.Wait()
	}
	return Project{}, nil, false
}

// runOrder is the order projects start in, so that the last to finish is a short one: those whose first
// build is slow (Slow) first, then the Go projects (they start once the Go cache seed is built, in the
// slot it frees), then the rest as listed.
func runOrder(ps []Project) []Project {
	out := slices.Clone(ps)
	rank := func(p Project) int {
		switch {
		case p.Slow:
			return 0
		case needsGo(p):
			return 1
		}
		return 2
	}
	slices.SortStableFunc(out, func(a, b Project) int { return rank(a) - rank(b) })
	return out
}

func missingNeeds(needs []string) string {
	for _, n := range needs {
		if _, err := exec.LookPath(n); err != nil {
			return n
		}
	}
	return ""
}

type projectRun struct {
	o        EventOptions
	p        Project
	idx      int
	root, ws string
	// fresh: tree digest and configuration → program → what a from-scratch build prints.
	fresh map[string]map[string]string
	// baseWarn: the warnings of the fresh state's check (rule and subjects): not noise when they stay.
	baseWarn map[string]bool
	js       []Judgement
	events   int
	goSeed   string          // a Go build cache with the standard library built ("" when none)
	tool     bool            // the event's tool edit holds: toolDir comes first on PATH
	quick    map[string]bool // in quick mode, the edit kinds this project runs (quickKinds)
	// whichAsked: the programs and library copies (copiesKey) whose which/verify answers the quick
	// corpus judged already: the same bytes are not asked about twice.
	whichAsked map[string]bool
	spent      map[string]time.Duration // wall time by activity (restore, build, oracle, check, which), logged with -v
}

// timed adds the time until the returned function is called to the activity's total.
func (pr *projectRun) timed(what string) func() {
	t := time.Now()
	return func() {
		if pr.spent == nil {
			pr.spent = map[string]time.Duration{}
		}
		pr.spent[what] += time.Since(t)
	}
}

// quickKinds spreads, for each build system, every edit kind its projects have over those projects: a
// kind goes to the project having it with the fewest kinds so far (the first on a tie). The quick
// corpus so covers each system and edit kind once, and each project with a share of the kinds. A
// chain of two systems (make+cargo, go+cargo) runs only the kinds that change what crosses the seam:
// the edits that change no code the compiler keeps (quietKinds) are judged on each system alone.
func quickKinds(ps []Project) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	bySystem := map[string][]Project{}
	var systems []string
	for _, p := range ps {
		if bySystem[p.System] == nil {
			systems = append(systems, p.System)
		}
		bySystem[p.System] = append(bySystem[p.System], p)
		out[p.Name] = map[string]bool{}
	}
	for _, sys := range systems {
		group := bySystem[sys]
		has := map[string]map[string]bool{}
		var kinds []string
		for _, p := range group {
			has[p.Name] = map[string]bool{}
			for _, e := range p.SingleEdits() {
				if isChain(sys) && quietKinds[e.Kind] {
					continue
				}
				if !slices.Contains(kinds, e.Kind) {
					kinds = append(kinds, e.Kind)
				}
				has[p.Name][e.Kind] = true
			}
		}
		for _, k := range kinds {
			var best string
			for _, p := range group {
				if has[p.Name][k] && (best == "" || len(out[p.Name]) < len(out[best])) {
					best = p.Name
				}
			}
			out[best][k] = true
		}
	}
	return out
}

// copiesKey digests a program and every library copy and object in the workspace that which could
// name (by path and content): equal keys ask which/verify the same question. "" when a file cannot be
// read.
func (pr *projectRun) copiesKey(root string) string {
	h := sha256.New()
	b, err := os.ReadFile(root)
	if err != nil {
		return ""
	}
	h.Write(b)
	err = filepath.WalkDir(pr.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(p) {
		case ".a", ".so", ".o", ".ptx", ".cubin", ".fatbin":
		default:
			return nil
		}
		c, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(c)
		fmt.Fprintf(h, "%s\x00%x\x00", p, sum)
		return nil
	})
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// quietKinds are the edits that change no code a compiler keeps: a comment, a touch, a file in an
// ignored folder.
var quietKinds = map[string]bool{"comment": true, "touch": true, "ignored": true}

// isChain reports whether a system is a chain of two (a program of one linking a library of another).
func isChain(system string) bool { return strings.Contains(system, "+") }

// seedGoCache builds a small cgo program into a fresh Go build cache at dir, with the corpus's Go
// environment, so that the standard library (runtime/cgo included) is compiled once per run.
func seedGoCache(ctx context.Context, dir string) error {
	os.RemoveAll(dir)
	src := filepath.Join(filepath.Dir(dir), "gocache-seed-src")
	os.RemoveAll(src)
	if err := writeFile(filepath.Join(src, "go.mod"), "module seed\n\ngo 1.22\n"); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(src, "main.go"), "package main\n\n// int seed(void) { return 1; }\nimport \"C\"\nimport \"fmt\"\n\nfunc main() { fmt.Println(C.seed()) }\n"); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(src, "seed"), ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), append(goEnv(false), "GOCACHE="+dir)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("seeding the Go build cache: %v\n%s", err, tail(string(out), 2000))
	}
	return os.RemoveAll(src)
}

func (pr *projectRun) logf(format string, a ...any) {
	fmt.Fprintf(pr.o.Log, "[%s] "+format+"\n", append([]any{pr.p.Name}, a...)...)
}

func (pr *projectRun) env(fast bool, oracle string) []string {
	var env []string
	drop := map[string]bool{"RUSTFLAGS": true, "CFLAGS": true, "CPPFLAGS": true, "CARGO_TARGET_DIR": true, "CARGO_BUILD_TARGET_DIR": true,
		"MAKEFLAGS": true, "MFLAGS": true, "CARGO_ENCODED_RUSTFLAGS": true, "GOFLAGS": true, "CGO_CFLAGS": true, "CGO_LDFLAGS": true,
		"GOCACHE": true, "XDG_STATE_HOME": true, "STALECHECK_LEDGER": true, "CC": true}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	env = append(env, "CARGO_NET_OFFLINE=true", "CARGO_TERM_COLOR=never", "CARGO_INCREMENTAL=0", "NO_COLOR=1",
		"XDG_STATE_HOME="+filepath.Join(pr.root, "state"), "STALECHECK_LEDGER="+filepath.Join(pr.root, "runs.db"),
		"GOCACHE="+filepath.Join(pr.root, "gocache"))
	if oracle != "" {
		env = append(env, "GOCACHE="+filepath.Join(pr.root, "gocache-oracle"))
	}
	if pr.p.Env != nil {
		env = append(env, pr.p.Env(fast)...)
	}
	if pr.tool { // later entries win (os/exec keeps the last value of a variable)
		env = append(env, "PATH="+filepath.Join(pr.root, toolDir)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	}
	return env
}

func (pr *projectRun) run(ctx context.Context) ([]Judgement, int, error) {
	start := time.Now()
	if err := os.RemoveAll(pr.root); err != nil {
		return nil, 0, err
	}
	for rel, content := range pr.p.Files {
		if err := writeFile(filepath.Join(pr.ws, rel), content); err != nil {
			return nil, 0, err
		}
	}
	for _, c := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "main"}} {
		if err := run(pr.ws, nil, "git", append([]string{"-c", "user.email=truth@stalecheck.invalid", "-c", "user.name=truth", "-c", "commit.gpgsign=false"}, c...)...); err != nil {
			return nil, 0, err
		}
	}
	if pr.goSeed != "" {
		for _, d := range []string{"gocache", "gocache-oracle"} {
			if err := run("", nil, "cp", "-al", pr.goSeed, filepath.Join(pr.root, d)); err != nil {
				return nil, 0, err
			}
		}
	}
	if err := pr.build(ctx, pr.ws, false, true, ""); err != nil {
		return nil, 0, fmt.Errorf("the first build: %w", err)
	}
	// The registry units of each Cargo workspace, for the from-scratch builds.
	for _, c := range pr.p.Cargo {
		snap := filepath.Join(pr.root, "registry-units", c)
		if err := os.MkdirAll(filepath.Dir(snap), 0o755); err != nil {
			return nil, 0, err
		}
		if err := run("", nil, "cp", "-a", filepath.Join(pr.ws, c, "target"), snap); err != nil {
			return nil, 0, err
		}
		if err := stripWorkspaceUnits(snap, filepath.Join(pr.ws, c)); err != nil {
			return nil, 0, err
		}
	}
	// The fresh state, judged: no error, and its warnings are the baseline of noise.
	base := Event{Kind: "clean-build"}
	ans := pr.check(ctx, false)
	pr.baseWarn = map[string]bool{}
	for _, w := range ans.warnings {
		pr.baseWarn[w.key] = true
	}
	if err := pr.judge(ctx, base, "built", false, ans); err != nil {
		return pr.js, 0, err
	}
	pr.events++
	snap := filepath.Join(pr.root, "saved")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		return pr.js, pr.events, err
	}
	for _, d := range []string{"ws", "state", "gocache"} {
		if _, err := os.Stat(filepath.Join(pr.root, d)); err == nil {
			if err := run("", nil, "cp", "-a", filepath.Join(pr.root, d), filepath.Join(snap, d)); err != nil {
				return pr.js, pr.events, err
			}
		}
	}
	events := pr.events_()
	pr.logf("%d events", len(events))
	for _, ev := range events {
		if err := ctx.Err(); err != nil {
			return pr.js, pr.events, err
		}
		if err := pr.restore(snap); err != nil {
			return pr.js, pr.events, err
		}
		if err := pr.event(ctx, ev); err != nil {
			return pr.js, pr.events, fmt.Errorf("event %s: %w", ev.Kind, err)
		}
		pr.events++
	}
	var spent []string
	for _, k := range []string{"restore", "build", "oracle", "check", "which"} {
		spent = append(spent, fmt.Sprintf("%s %s", k, pr.spent[k].Round(100*time.Millisecond)))
	}
	pr.logf("%d events, %d judgements in %s (%s)", pr.events, len(pr.js), time.Since(start).Round(time.Second), strings.Join(spent, ", "))
	return pr.js, pr.events, nil
}

// events_ lists the project's events: every single edit (in quick mode one of each kind), then seeded
// pairs of edits of distinct inputs.
func (pr *projectRun) events_() []Event {
	singles := pr.p.SingleEdits()
	var out []Event
	seen := map[string]bool{}
	for _, e := range singles {
		if pr.o.Quick && (seen[e.Kind] || !pr.quick[e.Kind]) {
			continue
		}
		seen[e.Kind] = true
		out = append(out, Event{Kind: e.Kind, Edits: []EvEdit{e}})
	}
	if pr.o.Quick {
		return out
	}
	for i := 1; i < pr.o.Repeat; i++ {
		for _, e := range singles {
			out = append(out, Event{Kind: e.Kind, Edits: []EvEdit{e}})
		}
	}
	rng := rand.New(rand.NewPCG(pr.o.Seed, uint64(pr.idx)+1))
	for n, tries := 0, 0; n < pr.o.Pairs && tries < 100*pr.o.Pairs; tries++ {
		a, b := singles[rng.IntN(len(singles))], singles[rng.IntN(len(singles))]
		if a.Input != nil && b.Input != nil && a.Input.File == b.Input.File || a.Kind == b.Kind && a.Input == nil ||
			a.Kind == "remove-source" || b.Kind == "remove-source" || a.Kind == "interrupted" || b.Kind == "interrupted" {
			continue
		}
		out = append(out, Event{Kind: "pair", Edits: []EvEdit{a, b}})
		n++
	}
	return out
}

func (pr *projectRun) restore(snap string) error {
	defer pr.timed("restore")()
	for _, d := range []string{"ws", "state", "gocache"} {
		if err := os.RemoveAll(filepath.Join(pr.root, d)); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(snap, d)); err == nil {
			flags := "-a"
			if d == "gocache" {
				flags = "-al" // Go writes cache entries once, by new names: hard links are a faithful copy
			}
			if err := run("", nil, "cp", flags, filepath.Join(snap, d), filepath.Join(pr.root, d)); err != nil {
				return err
			}
		}
	}
	return nil
}

// event applies the event's edits to the restored fresh state, judges it, builds and judges again.
func (pr *projectRun) event(ctx context.Context, ev Event) error {
	fast, content := false, false
	pr.tool = false
	defer func() { pr.tool = false }()
	for _, e := range ev.Edits {
		if e.Kind == "config" {
			fast = true
			continue
		}
		if e.Kind == "tool" {
			if err := writeFile(filepath.Join(pr.root, toolDir, "cc"), toolWrapper); err != nil {
				return err
			}
			if err := os.Chmod(filepath.Join(pr.root, toolDir, "cc"), 0o755); err != nil {
				return err
			}
			pr.tool, content = true, true
			continue
		}
		content = true
		if e.Kind == "branch" {
			if err := pr.branchSwitch(ctx, e); err != nil {
				return fmt.Errorf("%s: %w", e.label(), err)
			}
			continue
		}
		if err := pr.apply(e); err != nil {
			return fmt.Errorf("%s: %w", e.label(), err)
		}
	}
	if content {
		if err := pr.judge(ctx, ev, "edited", false, pr.check(ctx, false)); err != nil {
			return err
		}
	}
	if ev.Kind == "interrupted" { // the build stopped before the program was linked, then the whole build
		if err := pr.buildLines(ctx, pr.p.Partial(fast), fast); err != nil {
			return err
		}
		if err := pr.judge(ctx, ev, "interrupted", fast, pr.check(ctx, fast)); err != nil {
			return err
		}
	}
	if err := pr.build(ctx, pr.ws, fast, false, ""); err != nil {
		return err
	}
	return pr.judge(ctx, ev, "built", fast, pr.check(ctx, fast))
}

func bump(b []byte, knob string, n int, prefix string) ([]byte, int) {
	re := regexp.MustCompile(prefix + regexp.QuoteMeta(knob) + `_[0-9]+`)
	c := 0
	out := re.ReplaceAllFunc(b, func([]byte) []byte { c++; return []byte(fmt.Sprintf("%s%s_%d", prefix, knob, n)) })
	return out, c
}

// branchSwitch is a branch switch: the user checks out a branch whose commit changes the input, builds
// there, and checks the first branch out again (git rewrites the input with the old content and a new
// mtime). The program on disk holds the branch's code; the sources are the fresh state's again.
func (pr *projectRun) branchSwitch(ctx context.Context, e EvEdit) error {
	g := func(args ...string) error {
		return run(pr.ws, nil, "git", append([]string{"-c", "user.email=truth@stalecheck.invalid", "-c", "user.name=truth", "-c", "commit.gpgsign=false"}, args...)...)
	}
	if err := g("checkout", "-q", "-b", "truth-branch-"+e.Input.Knob); err != nil {
		return err
	}
	if err := pr.apply(EvEdit{Kind: "content", Input: e.Input}); err != nil {
		return err
	}
	if err := g("commit", "-qm", "branch", "--", e.Input.File); err != nil { // other edits stay uncommitted: git carries them
		return err
	}
	if err := pr.build(ctx, pr.ws, false, false, ""); err != nil {
		return err
	}
	time.Sleep(15 * time.Millisecond) // the checkout's mtimes after the build's outputs
	return g("checkout", "-q", "-")
}

func (pr *projectRun) apply(e EvEdit) error {
	var p string
	if e.Input != nil {
		p = filepath.Join(pr.ws, e.Input.File)
	}
	switch e.Kind {
	case "content", "content-older", "interrupted":
		old, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		nw, n := bump(old, e.Input.Knob, 1, "TRUTHV_")
		if n == 0 {
			return fmt.Errorf("no token of knob %s in %s", e.Input.Knob, e.Input.File)
		}
		if err := writeNewer(p, nw); err != nil {
			return err
		}
		if e.Kind == "content-older" { // cp -p, a restored cache: new content with the old mtime
			return os.Chtimes(p, st.ModTime(), st.ModTime())
		}
	case "comment":
		old, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		nw, n := bump(old, "note", 1, "TRUTHC_")
		if n == 0 {
			return fmt.Errorf("no comment token in %s", e.Input.File)
		}
		return writeNewer(p, nw)
	case "touch":
		time.Sleep(15 * time.Millisecond)
		now := time.Now()
		return os.Chtimes(p, now, now)
	case "shadow":
		old, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		nw, _ := bump(old, e.Input.Knob, 7, "TRUTHV_")
		return writeNewer(filepath.Join(pr.ws, pr.p.Shadow, filepath.Base(p)), nw)
	case "remove-source":
		old, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		nw, _ := bump(old, e.Input.Knob, 3, "TRUTHV_")
		if err := os.Remove(p); err != nil {
			return err
		}
		if err := writeNewer(strings.TrimSuffix(p, ".c")+"2.c", nw); err != nil {
			return err
		}
		cur := map[string]string{}
		for rel := range pr.p.Files {
			if b, err := os.ReadFile(filepath.Join(pr.ws, rel)); err == nil {
				cur[rel] = string(b)
			}
		}
		for rel, content := range pr.p.Rename(cur) {
			if err := writeNewer(filepath.Join(pr.ws, rel), []byte(content)); err != nil {
				return err
			}
		}
	case "manifest", "version", "manifest-unread":
		// A [package] field: the description and the version the program prints, or the homepage,
		// which it does not (Cargo rebuilds for each: they are package metadata).
		q := filepath.Join(pr.ws, pr.p.Manifest)
		old, err := os.ReadFile(q)
		if err != nil {
			return err
		}
		var nw []byte
		switch e.Kind {
		case "manifest":
			nw, _ = bump(old, "d", 1, "TRUTHV_")
		case "version":
			nw = bytes.Replace(old, []byte(`version = "0.1.0"`), []byte(`version = "0.1.1"`), 1)
		default:
			nw = bytes.Replace(old, []byte("example.invalid/h0"), []byte("example.invalid/h1"), 1)
		}
		if bytes.Equal(nw, old) {
			return fmt.Errorf("the %s edit changed nothing in %s", e.Kind, pr.p.Manifest)
		}
		return writeNewer(q, nw)
	case "description":
		q := filepath.Join(pr.ws, pr.p.Description)
		old, err := os.ReadFile(q)
		if err != nil {
			return err
		}
		nw := pr.p.DescEdit(string(old))
		if nw == string(old) {
			return fmt.Errorf("the description edit changed nothing in %s", pr.p.Description)
		}
		return writeNewer(q, []byte(nw))
	case "ignored":
		d := filepath.Join(pr.ws, pr.p.Ignored)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := writeNewer(filepath.Join(d, "notes.c"), []byte("int truth_scratch = 1;\n")); err != nil {
			return err
		}
		return writeNewer(filepath.Join(d, "lib.h"), []byte("#define LIB_HDR \"scratch\"\n"))
	case "clean-p":
		return pr.cleanPackages()
	default:
		return fmt.Errorf("unknown edit kind %q", e.Kind)
	}
	return nil
}

// cleanPackages runs `cargo clean -p NAME` for every package with a build script of each Cargo workspace
// of the project (as cargo metadata lists them), in the user's environment.
func (pr *projectRun) cleanPackages() error {
	for _, c := range pr.p.Cargo {
		dir := filepath.Join(pr.ws, c)
		cmd := exec.Command("cargo", "metadata", "--no-deps", "--format-version", "1", "--offline")
		cmd.Dir, cmd.Env = dir, pr.env(false, "")
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("cargo metadata in %s: %v", c, err)
		}
		var md struct {
			Packages []struct {
				Name    string `json:"name"`
				Targets []struct {
					Kind []string `json:"kind"`
				} `json:"targets"`
			} `json:"packages"`
		}
		if err := json.Unmarshal(out, &md); err != nil {
			return fmt.Errorf("cargo metadata in %s: %v", c, err)
		}
		n := 0
		for _, p := range md.Packages {
			if !slices.ContainsFunc(p.Targets, func(t struct {
				Kind []string `json:"kind"`
			}) bool {
				return slices.Contains(t.Kind, "custom-build")
			}) {
				continue
			}
			n++
			for _, prof := range []string{"", "--release"} {
				args := []string{"clean", "-q", "-p", p.Name}
				if prof != "" {
					args = append(args, prof)
				}
				cmd := exec.Command("cargo", args...)
				cmd.Dir, cmd.Env = dir, pr.env(false, "")
				if out, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("cargo %v in %s: %v\n%s", args, c, err, out)
				}
			}
		}
		if n == 0 {
			return fmt.Errorf("clean-p: no package with a build script in %s", c)
		}
	}
	return nil
}

// build runs the user's build lines in dir.
func (pr *projectRun) build(ctx context.Context, dir string, fast, first bool, oracle string) error {
	return pr.runLines(ctx, dir, pr.p.Build(fast, first), fast, oracle)
}

// buildLines runs build lines of the user's in the workspace.
func (pr *projectRun) buildLines(ctx context.Context, lines []string, fast bool) error {
	return pr.runLines(ctx, pr.ws, lines, fast, "")
}

func (pr *projectRun) runLines(ctx context.Context, dir string, lines []string, fast bool, oracle string) error {
	if oracle == "" {
		defer pr.timed("build")()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for _, line := range lines {
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir = dir
		cmd.Env = pr.env(fast, oracle)
		if out, err := cmd.CombinedOutput(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%s: %v\n%s", line, err, tail(string(out), 3000))
		}
	}
	return nil
}

// freshOutputs builds the current sources from nothing (with the registry units of the first build)
// and returns what each program prints.
func (pr *projectRun) freshOutputs(ctx context.Context, fast bool) (map[string]string, error) {
	dg, err := treeDigest(pr.ws) // the sequence corpus's digest and copy of a workspace's sources
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s|fast=%v|tool=%v", dg, fast, pr.tool)
	if out, ok := pr.fresh[key]; ok {
		return out, nil
	}
	defer pr.timed("oracle")()
	dir := filepath.Join(pr.root, "fresh", "ws")
	os.RemoveAll(filepath.Dir(dir))
	if err := copySources(pr.ws, dir); err != nil {
		return nil, err
	}
	files, err := sourceFiles(pr.ws)
	if err != nil {
		return nil, err
	}
	for _, c := range pr.p.Cargo {
		if err := run("", nil, "cp", "-a", filepath.Join(pr.root, "registry-units", c), filepath.Join(dir, c, "target")); err != nil {
			return nil, err
		}
	}
	// Go's build cache keys a cgo package by the files of its own folder, not the C it includes from
	// elsewhere nor the libraries it links: a file naming the tree's digest in each Go main package
	// makes the oracle compile and link those packages anew (the standard library stays cached).
	for _, rel := range files {
		if filepath.Base(rel) == "go.mod" {
			if err := writeFile(filepath.Join(dir, filepath.Dir(rel), "zz_truth_oracle.go"), "package main\n\n// truth oracle "+dg+"\n"); err != nil {
				return nil, err
			}
		}
	}
	if err := pr.build(ctx, dir, fast, true, "oracle"); err != nil {
		return nil, fmt.Errorf("from-scratch build: %w", err)
	}
	out := map[string]string{}
	for _, r := range pr.p.Roots {
		out[r] = runBinary(ctx, resolveRoot(dir, r))
	}
	os.RemoveAll(filepath.Dir(dir))
	pr.fresh[key] = out
	return out, nil
}

// resolveRoot is the program r names in dir. A pattern (a test binary, target/debug/deps/probe-*) names
// the newest executable file it matches, the one the user's last build made; none matched gives the
// pattern's path, which does not run.
func resolveRoot(dir, r string) string {
	p := filepath.Join(dir, r)
	if !strings.Contains(r, "*") {
		return p
	}
	ms, _ := filepath.Glob(p)
	best, bestT := p, time.Time{}
	for _, m := range ms {
		st, err := os.Stat(m)
		if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			continue
		}
		if st.ModTime().After(bestT) {
			best, bestT = m, st.ModTime()
		}
	}
	return best
}

type finding struct {
	Rule     string   `json:"rule"`
	Severity string   `json:"severity"`
	Message  string   `json:"message"`
	Subjects []string `json:"subjects"`
	Roots    []string `json:"roots"`
	Evidence []struct {
		Kind string `json:"kind"`
		Path string `json:"path"`
	} `json:"evidence"`
}

type warning struct {
	key   string
	roots []string
}

// evAnswer is stalecheck's answer on a state.
type evAnswer struct {
	crash    string
	findings []finding
	warnings []warning
}

// check runs `stalecheck check --format json` in the workspace, in the user's environment.
func (pr *projectRun) check(ctx context.Context, fast bool) evAnswer {
	defer pr.timed("check")()
	cmd := exec.CommandContext(ctx, pr.o.Stalecheck, "check", "--all", "--format", "json", "--fail-on", "none")
	cmd.Dir = filepath.Join(pr.ws, pr.p.CheckDir)
	cmd.Env = pr.env(fast, "")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var a evAnswer
	var c struct {
		Findings []finding `json:"findings"`
	}
	if err != nil || json.Unmarshal(out, &c) != nil {
		var ee *exec.ExitError
		code := -1
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		a.crash = fmt.Sprintf("stalecheck check: exit %d (%v): %s", code, err, tail(stderr.String(), 600))
		return a
	}
	a.findings = c.Findings
	for _, f := range c.Findings {
		if f.Severity == "warning" {
			subj := append([]string(nil), f.Subjects...)
			sort.Strings(subj)
			a.warnings = append(a.warnings, warning{key: f.Rule + " " + strings.Join(subj, " "), roots: f.Roots})
		}
	}
	return a
}

// names reports whether a finding's subjects or evidence name one of the files (absolute; an entry
// "*/x" matches any path ending in /x, and "*/pattern" without a slash any path whose name matches it).
func (f finding) names(files []string) bool {
	paths := append([]string(nil), f.Subjects...)
	for _, e := range f.Evidence {
		paths = append(paths, e.Path)
	}
	for _, p := range paths {
		for _, want := range files {
			rest, ok := strings.CutPrefix(want, "*/")
			if ok && strings.HasSuffix(p, "/"+rest) || p == want {
				return true
			}
			if ok && !strings.Contains(rest, "/") && strings.Contains(rest, "*") {
				if m, _ := filepath.Match(rest, filepath.Base(p)); m {
					return true
				}
			}
		}
	}
	return false
}

func (f finding) has(root string) bool {
	for _, r := range f.Roots {
		if r == root {
			return true
		}
	}
	return false
}

// staleRules are the rules whose findings claim that something built is old (in their warning form:
// that it may be). Such a warning on a program that equals a fresh build, new since the fresh state, is
// noise; the warnings about how the build is set up (duplicate copies, a disabled package scan, a missing
// depfile) stay true of a healthy build.
var staleRules = map[string]bool{"untracked-input-changed": true, "pending-rebuild": true, "binary-older-than-input": true,
	"linked-copy-not-newest": true, "edited-copy-not-built": true, "built-in-other-tree": true, "untracked-env-changed": true,
	"changed-with-older-mtime": true, "path-lookup-changed": true, "archive-member-without-rule": true, "linked-library-shadowed": true}

// conservativeKinds: edits the build system itself rebuilds (cargo clean -p: what it removed) though they change nothing the compiler
// keeps (a package's homepage: Cargo hashes it into the unit's metadata); an error before the build says, rightly, that the next build redoes the work.
var conservativeKinds = map[string]bool{"touch": true, "comment": true, "manifest-unread": true, "clean-p": true}

// inertKinds change nothing a build reads before the build (files in an ignored folder; a configuration
// toggle, which only the build applies): beside a touch or a comment, the event stays conservative.
var inertKinds = map[string]bool{"ignored": true, "config": true}

func (pr *projectRun) judge(ctx context.Context, ev Event, phase string, fast bool, ans evAnswer) error {
	want, err := pr.freshOutputs(ctx, fast)
	if err != nil {
		return err
	}
	var reason, consFiles []string
	anyReason, conservative := false, false
	for _, e := range ev.Edits {
		conservative = conservative || conservativeKinds[e.Kind]
		if conservativeKinds[e.Kind] && e.Input != nil {
			consFiles = append(consFiles, filepath.Join(pr.ws, e.Input.File))
		}
	}
	for _, e := range ev.Edits {
		if e.Reason == nil {
			anyReason = true
		}
		for _, r := range e.Reason {
			if strings.HasPrefix(r, "*/") {
				reason = append(reason, r)
			} else {
				reason = append(reason, filepath.Join(pr.ws, r))
			}
		}
		if !conservativeKinds[e.Kind] && !inertKinds[e.Kind] {
			conservative = false
		}
	}
	var labels []string
	for _, e := range ev.Edits {
		labels = append(labels, e.label())
	}
	for _, r := range pr.p.Roots {
		root := resolveRoot(pr.ws, r)
		if _, err := os.Stat(root); err != nil {
			continue // no program on disk (cargo clean -p removed it): nothing runs stale code
		}
		got := runBinary(ctx, root)
		j := Judgement{Project: pr.p.Name, System: pr.p.System, Kind: ev.Kind, Event: fmt.Sprintf("%d %s", pr.events, strings.Join(labels, " + ")),
			Phase: phase, Root: r, Stale: got != want[r], BinaryOut: got, FreshOut: want[r]}
		var errNamed, errReason, warnNamed, warnNew bool
		// errCons: every error naming the program names a file of a touch or comment edit, which the
		// build system rebuilds: beside an edit that left the program fresh (a branch whose build changed
		// nothing), the claim is the conservative one.
		errCons := len(consFiles) > 0
		for _, f := range ans.findings {
			if f.Severity == "error" && f.has(root) {
				errNamed = true
				if !f.names(consFiles) {
					errCons = false
				}
				if anyReason || f.names(reason) {
					errReason = true
				}
			}
			if f.Severity == "warning" && (f.has(root) || len(f.Roots) == 0 || f.names(reason)) {
				warnNamed = true
				subj := append([]string(nil), f.Subjects...)
				sort.Strings(subj)
				if staleRules[f.Rule] && !pr.baseWarn[f.Rule+" "+strings.Join(subj, " ")] {
					warnNew = true
				}
			}
			if f.Severity == "error" || f.Severity == "warning" {
				j.Findings = append(j.Findings, fmt.Sprintf("%s %s: %s", f.Severity, f.Rule, tail(f.Message, 400)))
			}
		}
		// Which copy of each native library is inside, from the program's bytes, against what it prints.
		// The quick corpus asks only after a build: before it, the program is the saved fresh one.
		if st, err := os.Stat(root); err == nil && st.Mode().IsRegular() && (!pr.o.Quick || phase != "edited") {
			done := pr.timed("which")
			if key := pr.copiesKey(root); !pr.o.Quick || key == "" || !pr.whichAsked[key] {
				j.Which, j.WhichWrong, j.WhichCannot, j.WhichNotes = judgeCopies(ctx, pr.o.Stalecheck, filepath.Join(pr.ws, pr.p.CheckDir), pr.env(fast, ""), root, got, nil)
				if pr.whichAsked == nil {
					pr.whichAsked = map[string]bool{}
				}
				pr.whichAsked[key] = true
			}
			done()
		}
		switch {
		case ans.crash != "":
			j.Outcome = "crash"
			j.Findings = append(j.Findings, ans.crash)
		case j.Stale && errReason:
			j.Outcome = "right"
		case j.Stale && errNamed:
			j.Outcome = "other"
		case j.Stale && warnNamed:
			j.Outcome = "cannot-tell"
		case j.Stale:
			j.Outcome = "missed"
		case errNamed && phase == "edited" && (conservative || errCons):
			j.Outcome = "conservative"
		case errNamed:
			j.Outcome = "false-error"
		case warnNew:
			j.Outcome = "noise"
		default:
			j.Outcome = "healthy"
		}
		pr.js = append(pr.js, j)
	}
	return nil
}
