// Package gentarget writes a synthetic but faithful Cargo 1.95 build tree: a workspace of path packages
// with their sources, a $CARGO_HOME/registry/src of registry packages, and the `target/release` folder a
// clean `cargo build --release` of it would leave (legacy layout), following
// /work/shared/docs/cargo-target-dir.md §0, §1, §3.1, §11 and the Addendum:
//
//   - `.fingerprint/<pkg>-<hash>/`: the hash file (the LE hex of the u64 that dependents list in decimal
//     in their JSON `deps`), the JSON fingerprint (deps chains bin → lib → build-script run →
//     build-script compile, run → run for `links` dependencies; `local` CheckDepInfo for rustc units,
//     RerunIfChanged / RerunIfEnvChanged / Precalculated for runs), the binary `dep-<kind>-<name>`
//     dep-info (format v1, §1.5), `invoked.timestamp`, now and then cached diagnostics `output-*`;
//   - `build/<pkg>-<hash>/` compile folders (the script executable, its hard link `build-script-build`,
//     rustc's `.d`) and run folders (`output` with cargo: directives, `root-output`, `stderr`,
//     `invoked.timestamp`, `out/` with ELF objects, a real ar archive `lib<name>.a`, generated files);
//   - `deps/` (`lib<crate>-<hash>.rlib` (an ar archive), `.rmeta`, `.d`, `.so` for proc-macros,
//     executables), uplifted binaries and workspace rlibs as hard links with their uplifted `.d`;
//   - `incremental/` session folders for the workspace's rustc units ([profile.release] incremental).
//
// Mtimes are those of a clean build: sources older than everything, each unit's dep-info and
// invoked.timestamp at its start, `output` rewound to the run's start, outputs during the unit, the hash
// file and JSON at its end; dependencies before dependents. Feature toggles leave a second set of
// units (duplicate native libraries in two OUT_DIRs of one package, orphaned once the default
// configuration is built again) and an older toolchain leaves orphaned units too. With Options.Stale,
// a few native sources are touched after the build so that findings appear.
package gentarget

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Options tune the generated tree.
type Options struct {
	Units int // at least this many Cargo units (fingerprint entries); default 2000
	Files int // at least this many files under the target folder; default 200000
	Seed  uint64
	// Stale touches this many native sources of live build-script packages after the build (0: a
	// clean tree on which stalecheck must report no error).
	Stale int
	// RegistryShare is the share of library packages that come from the registry ($CARGO_HOME);
	// default 0.5, negative for none.
	RegistryShare float64
	// IncrementalShare is the share of filler files (files beyond the records) placed in incremental/
	// rather than in build-script OUT_DIRs; default 0.5, negative for none.
	IncrementalShare float64
	// CC compiles the native object templates and links the binaries ("" = cc; "-" = none: archive
	// members and binaries are then placeholders, not ELF).
	CC string
	// BinRodataKB is the size of the string literals standing in for each binary's Rust code
	// (default 2048).
	BinRodataKB int
	// ToggleAfter builds the feature-toggle copies after the default configuration (build default,
	// build --features simd, build default again: docs §3); default: before it (the toggle was tried
	// first), so that the binaries hold the newest copy of every library.
	ToggleAfter bool
	// TieLinks makes the two build-script runs that share a fingerprint hash both `links`
	// dependencies of other build scripts (see planUnits).
	TieLinks bool
	// Now is the time the tree is generated at (mtimes are before it); zero means time.Now().
	Now     time.Time
	Workers int       // parallel file writers; default 8
	Log     io.Writer // progress lines; nil for none
}

// Result describes a generated tree.
type Result struct {
	Workspace, TargetDir, CargoHome string
	Packages, Units, LiveUnits      int
	Files                           int // files (and hard links) under TargetDir
	SourceFiles                     int
	Roots                           int
	Variants, OldToolchain          int      // packages with a feature-toggle copy, with old-toolchain units
	ELF                             bool     // archive members are real ELF objects with DWARF
	LinkedBins                      bool     // binaries are really linked from the archives they reach
	Touched                         []string // native sources touched newer than the build (Stale)
	// Edges are the true dependency edges: unit id → the ids of the units its fingerprint `deps`
	// name, where a unit id is "release/<pkg>-<hash>/<fingerprint file>" (stalecheck's Step.ID).
	Edges map[string][]string
	// Tie names two build-script runs of different packages whose hash files hold the same value.
	Tie [2]string
	// Live are the ids of the units a root reaches.
	Live map[string]bool
}

const (
	profile    = "release"
	rustcNow   = uint64(7458672600737419911)
	rustcOld   = uint64(13029283766040567712)
	configHash = uint64(8247474407144887393)
	regIndex   = "index.crates.io-1949cf8c6b5b557f"
	hostTriple = "x86_64-unknown-linux-gnu"
)

type pkgKind int

const (
	kLib pkgKind = iota
	kSys
	kProcMacro
	kBin
)

// bsStyle is how a package's build script behaves and what it prints.
type bsStyle int

const (
	stDeclaredDir bsStyle = iota // old cc-rs (running: lines), rerun-if-changed=native and build.rs
	stBuildOnly                  // hand-rolled cc + ar, rerun-if-changed=build.rs only (the seed example)
	stEnvOnly                    // modern cc-rs: only rerun-if-env-changed lines
	stOldStyle                   // old cc-rs, no rerun-if line: Precalculated
	stCMake                      // the cmake crate: OUT_DIR/build with .o and .o.d files, rerun-if-changed=native
)

var styleNames = []string{"declared-dir", "build-only", "env-only", "old-style", "cmake"}

type srcFile struct {
	rel   string
	data  []byte
	mtime time.Time
}

type pkg struct {
	i          int
	name       string
	crate      string
	version    string
	registry   bool
	kind       pkgKind
	style      bsStyle
	root       string
	rel        string // relative to the workspace (path packages)
	pkgID      uint64
	id         string // 16 hex, used in C symbol names
	deps       []*pkg
	dependents int
	buildDeps  []*pkg
	lib        string   // native library name (sys)
	stems      []string // cc-style sources native/<stem>.c
	cmakeN     int      // cmake-style sources native/src/unit_NNN.c
	bindings   bool     // the lib include!s OUT_DIR/bindings.rs
	optEnv     string   // an option_env! the lib reads ("" none)
	modules    []string
	files      []srcFile
	newest     srcFile
	cur        *unitSet
	variant    *unitSet
	old        *unitSet
}

type unitKind int

const (
	uCompile unitKind = iota
	uRun
	uLib
	uBin
)

type depEdge struct {
	pkgID uint64
	name  string
	u     *unit
}

type unit struct {
	p        *pkg
	kind     unitKind
	set      *unitSet
	hash     string
	fp       uint64
	deps     []depEdge
	t0, t1   time.Time
	target   uint64
	profileH uint64
	pathH    uint64
	live     bool
}

type unitSet struct {
	features          []string
	rustc             uint64
	compile, run, lib *unit
	bins              map[*pkg]*unit // variant bin units, by bin package
	session           string         // "A" main, "B" feature toggle, "O" old toolchain
}

type gen struct {
	opt      Options
	rng      *rand.Rand
	dir      string
	ws       string
	target   string
	rel      string // target/release
	home     string
	regSrc   string
	pkgs     []*pkg
	bins     []*pkg
	units    []*unit
	w        *fsWriter
	objs     *objectSet
	now      time.Time
	sessA    time.Time
	sessC    time.Time
	names    map[string]bool
	incr     []incrSess
	binLinks []binLink
	res      Result
}

// Generate writes the tree under dir: dir/ws (the workspace, its sources and target/) and
// dir/cargo-home (registry sources). dir must be empty or missing.
func Generate(dir string, opt Options) error {
	_, err := Run(dir, opt)
	return err
}

// Paths returns the workspace, target folder and CARGO_HOME that Generate writes under dir.
func Paths(dir string) (workspace, targetDir, cargoHome string) {
	abs, _ := filepath.Abs(dir)
	return filepath.Join(abs, "ws"), filepath.Join(abs, "ws", "target"), filepath.Join(abs, "cargo-home")
}

// Run is Generate that also describes what it wrote.
func Run(dir string, opt Options) (*Result, error) {
	if opt.Units <= 0 {
		opt.Units = 2000
	}
	if opt.Files <= 0 {
		opt.Files = 200000
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	if opt.RegistryShare == 0 {
		opt.RegistryShare = 0.5
	}
	if opt.RegistryShare < 0 {
		opt.RegistryShare = 0
	}
	if opt.IncrementalShare == 0 {
		opt.IncrementalShare = 0.5
	}
	if opt.IncrementalShare < 0 {
		opt.IncrementalShare = 0
	}
	if opt.BinRodataKB <= 0 {
		opt.BinRodataKB = 2048
	}
	if opt.Workers <= 0 {
		opt.Workers = 8
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	g := &gen{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15)), now: opt.Now, names: map[string]bool{}}
	g.ws, g.target, g.home = Paths(dir)
	g.dir = filepath.Dir(g.ws)
	g.rel = filepath.Join(g.target, profile)
	g.regSrc = filepath.Join(g.home, "registry", "src", regIndex)
	if ents, err := os.ReadDir(g.dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("%s is not empty", g.dir)
	}
	g.w = newWriter(g.dir)
	g.logf("planning %d units", opt.Units)
	g.planPackages()
	g.planUnits()
	g.schedule()
	maxRoot := 0
	for _, p := range g.pkgs {
		if len(p.root) > maxRoot {
			maxRoot = len(p.root)
		}
	}
	objs, err := buildTemplates(opt.CC, maxRoot+8)
	if err != nil {
		return nil, err
	}
	g.objs = objs
	g.res.ELF = objs.elf
	g.emitSources()
	g.emitWorkspaceFiles()
	for _, u := range g.units {
		g.emitUnit(u)
	}
	g.emitUplifts()
	g.emitFiller()
	g.res.Files = g.w.countUnder(g.target)
	g.logf("writing %d files (%d under the target folder)", len(g.w.files)+len(g.w.links), g.res.Files)
	if err := g.w.flush(opt.Workers); err != nil {
		return nil, err
	}
	linked, err := g.linkBins()
	if err != nil {
		return nil, err
	}
	g.res.LinkedBins = linked
	if err := g.touchStale(); err != nil {
		return nil, err
	}
	g.res.Workspace, g.res.TargetDir, g.res.CargoHome = g.ws, g.target, g.home
	g.res.Packages = len(g.pkgs)
	g.res.Units = len(g.units)
	g.res.Edges, g.res.Live = map[string][]string{}, map[string]bool{}
	for _, u := range g.units {
		for _, d := range u.deps {
			g.res.Edges[u.id()] = append(g.res.Edges[u.id()], d.u.id())
		}
		if u.live {
			g.res.LiveUnits++
			g.res.Live[u.id()] = true
		}
	}
	return &g.res, nil
}

func (g *gen) logf(format string, args ...any) {
	if g.opt.Log != nil {
		fmt.Fprintf(g.opt.Log, "gentarget: "+format+"\n", args...)
	}
}

// ---------------------------------------------------------------------------------------------------
// Planning

var words = []string{
	"amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
	"kestrel", "lumen", "marble", "nebula", "onyx", "prism", "quartz", "raven", "sierra", "tundra",
	"umber", "vertex", "willow", "xenon", "yarrow", "zephyr", "atlas", "beacon", "cobalt", "dune",
	"echo", "flint", "glacier", "helix", "ion", "jade", "karst", "lotus", "mesa", "nimbus",
	"orbit", "pulsar", "quill", "ridge", "slate", "tide", "ultra", "vapor", "wren", "yukon",
}

var domains = []string{"core", "net", "store", "proto", "util", "exec", "query", "auth", "codec", "sched"}

func (g *gen) uniq(name string) string {
	base := name
	for n := 2; g.names[name]; n++ {
		name = fmt.Sprintf("%s%d", base, n)
	}
	g.names[name] = true
	return name
}

func fnv64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func (g *gen) hex16() string { return fmt.Sprintf("%016x", g.rng.Uint64()) }

func (g *gen) newPkg(name string, kind pkgKind, registry bool) *pkg {
	p := &pkg{i: len(g.pkgs), name: g.uniq(name), kind: kind, registry: registry}
	p.crate = strings.ReplaceAll(p.name, "-", "_")
	if registry {
		p.version = fmt.Sprintf("%d.%d.%d", g.rng.IntN(2), g.rng.IntN(40), g.rng.IntN(20))
		p.root = filepath.Join(g.regSrc, p.name+"-"+p.version)
		p.pkgID = fnv64("registry+https://github.com/rust-lang/crates.io-index#" + p.name + "@" + p.version)
	} else {
		p.version = "0.1.0"
		sub := "crates"
		if kind == kBin {
			sub = "bins"
		}
		p.rel = filepath.Join(sub, p.name)
		p.root = filepath.Join(g.ws, p.rel)
		p.pkgID = fnv64(p.name)
	}
	p.id = g.hex16()
	g.pkgs = append(g.pkgs, p)
	return p
}

// unitsOf is how many current-configuration units a package gives.
func unitsOf(k pkgKind) int {
	if k == kSys {
		return 3
	}
	return 1
}

func (g *gen) planPackages() {
	nBins := g.opt.Units / 250
	if nBins < 2 {
		nBins = 2
	}
	// Build tools every -sys crate uses.
	cc := g.newPkg("cc", kLib, true)
	cmake := g.newPkg("cmake", kLib, true)
	cmake.deps = []*pkg{cc}
	units := 2 + nBins
	// Expected extra units from feature toggles (10% of sys) and an old toolchain (3% of sys).
	var libs []*pkg
	for units < g.opt.Units {
		registry := g.rng.Float64() < g.opt.RegistryShare
		// Registry packages first (the bottom of the graph), then the workspace's own.
		r := g.rng.Float64()
		kind := kLib
		switch {
		case r < 0.30:
			kind = kSys
		case r < 0.34 && registry:
			kind = kProcMacro
		}
		var name string
		w := words[g.rng.IntN(len(words))]
		switch {
		case kind == kSys:
			name = w + "-sys"
		case kind == kProcMacro:
			name = w + "-derive"
		case registry:
			name = w
		default:
			name = domains[g.rng.IntN(len(domains))] + "-" + w
		}
		p := &pkg{name: name, kind: kind, registry: registry}
		libs = append(libs, p)
		units += unitsOf(kind)
		if kind == kSys {
			units += 0 // variants and old units come on top; the minimum is met by the current set
		}
	}
	// Registry packages first.
	sort.SliceStable(libs, func(i, j int) bool { return libs[i].registry && !libs[j].registry })
	for _, l := range libs {
		p := g.newPkg(l.name, l.kind, l.registry)
		g.planPkg(p)
	}
	for i := 0; i < nBins; i++ {
		p := g.newPkg("tool-"+words[g.rng.IntN(len(words))], kBin, false)
		g.planPkg(p)
		g.bins = append(g.bins, p)
	}
	// Every registry package is somebody's dependency (else it would not have been built).
	for _, p := range g.pkgs {
		if !p.registry || p.dependents > 0 || p.name == "cc" {
			continue
		}
		for tries := 0; tries < 50; tries++ {
			q := g.pkgs[p.i+1+g.rng.IntN(len(g.pkgs)-p.i-1)]
			if q.kind == kProcMacro && p.kind != kLib && p.kind != kProcMacro {
				continue
			}
			if q.registry && p.kind == kSys && q.kind == kProcMacro {
				continue
			}
			q.deps = append(q.deps, p)
			p.dependents++
			break
		}
	}
	for _, p := range g.pkgs {
		sort.Slice(p.deps, func(i, j int) bool { return p.deps[i].i < p.deps[j].i })
	}
}

// planPkg picks a package's dependencies, sources and build-script style.
func (g *gen) planPkg(p *pkg) {
	if p.name == "cc" || p.name == "cmake" {
		p.modules = []string{"src/windows_registry.rs", "src/com.rs"}
		return
	}
	var cands []*pkg
	for _, q := range g.pkgs[:p.i] {
		if q.kind == kBin || q.name == "cc" || q.name == "cmake" {
			continue
		}
		if p.registry && !q.registry {
			continue
		}
		cands = append(cands, q)
	}
	n := 0
	switch p.kind {
	case kBin:
		n = 15 + g.rng.IntN(25)
	default:
		n = int(math.Abs(g.rng.NormFloat64()) * 2.5)
	}
	seen := map[*pkg]bool{}
	for i := 0; i < n && len(cands) > 0; i++ {
		var q *pkg
		if p.kind == kBin {
			// Bins use the workspace's own libraries mostly.
			q = cands[len(cands)-1-int(math.Abs(g.rng.NormFloat64())*float64(len(cands))/3)%len(cands)]
		} else {
			q = cands[g.rng.IntN(len(cands))]
		}
		if seen[q] {
			continue
		}
		seen[q] = true
		p.deps = append(p.deps, q)
		q.dependents++
	}
	nMod := 1 + g.rng.IntN(4)
	for i := 0; i < nMod; i++ {
		p.modules = append(p.modules, fmt.Sprintf("src/%s.rs", words[(p.i*7+i*13)%len(words)]))
	}
	p.modules = dedup(p.modules)
	if g.rng.IntN(8) == 0 && p.kind != kBin {
		p.optEnv = strings.ToUpper(p.crate) + "_CONFIG"
	}
	if p.kind != kSys {
		return
	}
	p.lib = strings.ReplaceAll(strings.TrimSuffix(p.name, "-sys"), "-", "_")
	r := g.rng.Float64()
	switch {
	case r < 0.28:
		p.style = stDeclaredDir
	case r < 0.48:
		p.style = stBuildOnly
	case r < 0.70:
		p.style = stEnvOnly
	case r < 0.92:
		p.style = stOldStyle
	default:
		p.style = stCMake
	}
	if p.style == stCMake {
		p.cmakeN = 20 + g.rng.IntN(40)
		p.buildDeps = []*pkg{g.pkgs[0], g.pkgs[1]}
	} else {
		p.stems = nativeStems[:1+g.rng.IntN(len(nativeStems))]
		p.buildDeps = []*pkg{g.pkgs[0]}
	}
	p.bindings = g.rng.IntN(2) == 0
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func (p *pkg) features(extra ...string) []string {
	var f []string
	switch {
	case p.kind == kSys:
		f = []string{"default"}
	case p.registry && p.kind == kLib && p.name != "cc" && p.name != "cmake":
		f = []string{"default", "std"}
	}
	f = append(f, extra...)
	sort.Strings(f)
	return f
}

func (p *pkg) declaredFeatures() []string {
	switch {
	case p.kind == kSys:
		return []string{"default", "simd"}
	case p.registry && p.kind == kLib && p.name != "cc" && p.name != "cmake":
		return []string{"alloc", "default", "std"}
	}
	return nil
}

func (g *gen) newUnit(p *pkg, kind unitKind, set *unitSet) *unit {
	u := &unit{p: p, kind: kind, set: set, hash: g.hex16(), fp: g.rng.Uint64()}
	if kind != uRun {
		u.target, u.profileH, u.pathH = g.rng.Uint64(), g.rng.Uint64(), fnv64(p.root+p.name)
	}
	return u
}

// makeSet creates a package's compile, run and lib (or bin) units for one configuration. libOf
// resolves a dependency package to the lib unit this configuration links.
func (g *gen) makeSet(p *pkg, features []string, rustc uint64, session string, libOf func(*pkg) *unit) *unitSet {
	s := &unitSet{features: features, rustc: rustc, session: session}
	if p.kind == kSys {
		s.compile = g.newUnit(p, uCompile, s)
		for _, b := range p.buildDeps {
			if l := libOf(b); l != nil {
				s.compile.deps = append(s.compile.deps, depEdge{b.pkgID, b.crate, l})
			}
		}
		s.run = g.newUnit(p, uRun, s)
		s.run.deps = append(s.run.deps, depEdge{p.pkgID, "build_script_build", s.compile})
		for _, d := range p.deps {
			if d.kind == kSys {
				if l := libOf(d); l != nil && l.set.run != nil {
					s.run.deps = append(s.run.deps, depEdge{d.pkgID, "build_script_build", l.set.run})
				}
			}
		}
	}
	k := uLib
	if p.kind == kBin {
		k = uBin
	}
	s.lib = g.newUnit(p, k, s)
	for _, d := range p.deps {
		if l := libOf(d); l != nil {
			s.lib.deps = append(s.lib.deps, depEdge{d.pkgID, d.crate, l})
		}
	}
	if s.run != nil {
		s.lib.deps = append(s.lib.deps, depEdge{p.pkgID, "build_script_build", s.run})
	}
	for _, u := range []*unit{s.compile, s.run, s.lib} {
		if u != nil {
			sort.SliceStable(u.deps, func(i, j int) bool {
				if u.deps[i].pkgID != u.deps[j].pkgID {
					return u.deps[i].pkgID < u.deps[j].pkgID
				}
				return u.deps[i].name < u.deps[j].name
			})
		}
	}
	return s
}

func (s *unitSet) list() []*unit {
	var out []*unit
	for _, u := range []*unit{s.compile, s.run, s.lib} {
		if u != nil {
			out = append(out, u)
		}
	}
	return out
}

func (g *gen) planUnits() {
	cur := func(q *pkg) *unit { return q.cur.lib }
	var sys []*pkg
	for _, p := range g.pkgs {
		p.cur = g.makeSet(p, p.features(), rustcNow, "A", cur)
		if p.kind == kSys {
			sys = append(sys, p)
		}
	}
	// Two registry build-script runs with the same fingerprint hash (seen on a real target: two memchr
	// runs, Addendum). By default neither is another build script's `links` dependency, so only their
	// own lib units name them and the dependent's package tells them apart; with TieLinks both are, so
	// that a run → run edge can be told apart only by the deps entry's package id.
	linked := map[*pkg]bool{}
	for _, p := range sys {
		for _, d := range p.deps {
			if d.kind == kSys {
				linked[d] = true
			}
		}
	}
	var regRuns []*pkg
	for _, p := range sys {
		if p.registry && linked[p] == g.opt.TieLinks {
			regRuns = append(regRuns, p)
		}
	}
	if len(regRuns) >= 2 {
		a, b := regRuns[0], regRuns[len(regRuns)-1]
		b.cur.run.fp = a.cur.run.fp
		g.res.Tie = [2]string{a.cur.run.id(), b.cur.run.id()}
	}
	// Feature toggles: 10% of the -sys packages were also built with "simd"; a bin that depends on one
	// directly got its own unit for that configuration too.
	nVar := len(sys) / 10
	if nVar < 1 && len(sys) > 0 {
		nVar = 1
	}
	perm := g.rng.Perm(len(sys))
	for _, i := range perm[:nVar] {
		p := sys[i]
		p.variant = g.makeSet(p, p.features("simd"), rustcNow, "B", func(q *pkg) *unit { return q.cur.lib })
		p.variant.bins = map[*pkg]*unit{}
		for _, b := range g.bins {
			for _, d := range b.deps {
				if d == p {
					bs := g.makeSet(b, b.features(), rustcNow, "B", func(q *pkg) *unit {
						if q == p {
							return p.variant.lib
						}
						return q.cur.lib
					})
					p.variant.bins[b] = bs.lib
				}
			}
		}
		g.res.Variants++
	}
	// An older toolchain left a few -sys packages' units behind (cc's lib unit too).
	nOld := len(sys) * 3 / 100
	if nOld < 1 && len(sys) > 0 {
		nOld = 1
	}
	var oldCC *unitSet
	for _, i := range perm[len(perm)-nOld:] {
		p := sys[i]
		if oldCC == nil {
			oldCC = g.makeSet(g.pkgs[0], g.pkgs[0].features(), rustcOld, "O", func(*pkg) *unit { return nil })
			g.pkgs[0].old = oldCC
		}
		p.old = g.makeSet(p, p.features(), rustcOld, "O", func(q *pkg) *unit {
			if q.old != nil {
				return q.old.lib
			}
			return nil
		})
		g.res.OldToolchain++
	}
	if oldCC != nil {
		// cmake's old build dependency edge points at nothing old; drop it.
		for _, p := range g.pkgs {
			if p.old != nil && p.old.compile != nil {
				var keep []depEdge
				for _, d := range p.old.compile.deps {
					if d.u != nil {
						keep = append(keep, d)
					}
				}
				p.old.compile.deps = keep
			}
		}
	}
	// Order: old toolchain session, main build (topological), feature toggle session.
	for _, p := range g.pkgs {
		if p.old != nil {
			g.units = append(g.units, p.old.list()...)
		}
	}
	for _, p := range g.pkgs {
		g.units = append(g.units, p.cur.list()...)
	}
	for _, p := range g.pkgs {
		if p.variant != nil {
			g.units = append(g.units, p.variant.list()...)
			bins := make([]*pkg, 0, len(p.variant.bins))
			for b := range p.variant.bins {
				bins = append(bins, b)
			}
			sort.Slice(bins, func(i, j int) bool { return bins[i].i < bins[j].i })
			for _, b := range bins {
				g.units = append(g.units, p.variant.bins[b])
			}
		}
	}
	// Live: reached from a root (bins, workspace libs) through deps.
	var walk func(u *unit)
	walk = func(u *unit) {
		if u == nil || u.live {
			return
		}
		u.live = true
		for _, d := range u.deps {
			walk(d.u)
		}
	}
	for _, p := range g.pkgs {
		if !p.registry {
			walk(p.cur.lib)
		}
	}
}

// schedule gives every unit its start and end: one unit after the other, dependencies first.
func (g *gen) schedule() {
	dur := func(u *unit) time.Duration {
		ms := func(lo, hi int) time.Duration {
			return time.Duration(lo+g.rng.IntN(hi-lo)) * time.Millisecond
		}
		switch u.kind {
		case uCompile:
			return ms(150, 700)
		case uRun:
			if u.p.style == stCMake {
				return ms(4000, 20000)
			}
			return ms(60, 1500)
		case uBin:
			return ms(1000, 6000)
		}
		return ms(40, 3000)
	}
	durs := map[*unit]time.Duration{}
	var old, cur, vars []*unit
	for _, u := range g.units {
		durs[u] = dur(u)
		switch u.set.session {
		case "O":
			old = append(old, u)
		case "A":
			cur = append(cur, u)
		default:
			vars = append(vars, u)
		}
	}
	// Build sessions in time order; each builds its units one after the other, dependencies first.
	var sessions [][]*unit
	if g.opt.ToggleAfter {
		// docs §3: build, build --features simd, (build again: a no-op that re-uplifts, session C).
		sessions = [][]*unit{cur, vars}
	} else {
		// `cargo build --features X/simd` first: it builds what the toggled units need, then them;
		// the default build later builds the rest.
		need := map[*unit]bool{}
		var walk func(u *unit)
		walk = func(u *unit) {
			for _, d := range u.deps {
				if d.u.set.session == "A" && !need[d.u] {
					need[d.u] = true
					walk(d.u)
				} else if d.u.set.session == "B" {
					walk(d.u)
				}
			}
		}
		for _, v := range vars {
			walk(v)
		}
		// Each package's toggled units come before its own default units (which a toggled dependent
		// may need), so the default copy of every library is the newest.
		var first, rest, varBins []*unit
		for _, p := range g.pkgs {
			if p.variant != nil {
				first = append(first, p.variant.list()...)
				for _, b := range p.variant.bins {
					varBins = append(varBins, b)
				}
			}
			for _, u := range p.cur.list() {
				if need[u] {
					first = append(first, u)
				} else {
					rest = append(rest, u)
				}
			}
		}
		sort.Slice(varBins, func(i, j int) bool {
			return varBins[i].p.i < varBins[j].p.i || varBins[i].p.i == varBins[j].p.i && varBins[i].hash < varBins[j].hash
		})
		sessions = [][]*unit{append(first, varBins...), rest}
	}
	span := func(us []*unit) time.Duration {
		var d time.Duration
		for _, u := range us {
			d += durs[u] + time.Millisecond
		}
		return d
	}
	g.sessC = g.now.Add(-30 * time.Minute)
	end := g.sessC
	starts := make([]time.Time, len(sessions))
	for i := len(sessions) - 1; i >= 0; i-- {
		starts[i] = end.Add(-10*time.Minute - span(sessions[i]))
		end = starts[i]
	}
	g.sessA = starts[0]
	sessions = append([][]*unit{old}, sessions...)
	starts = append([]time.Time{g.sessA.Add(-10 * 24 * time.Hour)}, starts...)
	for i, us := range sessions {
		t := starts[i]
		for _, u := range us {
			u.t0 = t.Add(time.Duration(g.rng.IntN(1000)) * time.Microsecond)
			u.t1 = u.t0.Add(durs[u])
			t = u.t1.Add(time.Millisecond)
		}
	}
}

// at is the time a fraction f of the way through a unit.
func (u *unit) at(f float64) time.Time {
	return u.t0.Add(time.Duration(f * float64(u.t1.Sub(u.t0))))
}

// ---------------------------------------------------------------------------------------------------
// Sources

func (g *gen) addSrc(p *pkg, rel string, data []byte) {
	p.files = append(p.files, srcFile{rel: rel, data: data})
}

func (g *gen) emitSources() {
	srcLo := g.sessA.Add(-72 * time.Hour)
	for _, p := range g.pkgs {
		g.pkgSources(p)
		// mtimes: workspace files in the three days before the build; registry files when the crate
		// was published (months before).
		lo, span := srcLo, 70*time.Hour
		if p.registry {
			lo, span = g.sessA.Add(-time.Duration(30+g.rng.IntN(300))*24*time.Hour), 48*time.Hour
		}
		for i := range p.files {
			f := &p.files[i]
			f.mtime = lo.Add(time.Duration(g.rng.Int64N(int64(span))))
			if f.mtime.After(p.newest.mtime) {
				p.newest = *f
			}
			g.w.file(filepath.Join(p.root, f.rel), f.data, f.mtime)
		}
		g.res.SourceFiles += len(p.files)
	}
}

func (g *gen) pkgSources(p *pkg) {
	var toml strings.Builder
	fmt.Fprintf(&toml, "[package]\nname = %q\nversion = %q\nedition = \"2021\"\n", p.name, p.version)
	if p.kind == kSys {
		fmt.Fprintf(&toml, "links = %q\nbuild = \"build.rs\"\n", p.lib)
	}
	if p.kind == kProcMacro {
		toml.WriteString("\n[lib]\nproc-macro = true\n")
	}
	if p.kind == kBin {
		fmt.Fprintf(&toml, "\n[[bin]]\nname = %q\npath = \"src/main.rs\"\n", p.name)
	}
	if df := p.declaredFeatures(); len(df) > 0 {
		toml.WriteString("\n[features]\n")
		for _, f := range df {
			switch f {
			case "default":
				if p.kind == kSys {
					toml.WriteString("default = []\n")
				} else {
					toml.WriteString("default = [\"std\"]\n")
				}
			case "std":
				toml.WriteString("std = [\"alloc\"]\n")
			default:
				fmt.Fprintf(&toml, "%s = []\n", f)
			}
		}
	}
	if len(p.deps) > 0 {
		toml.WriteString("\n[dependencies]\n")
		for _, d := range p.deps {
			if d.registry {
				fmt.Fprintf(&toml, "%s = %q\n", d.name, d.version)
			} else {
				rel, _ := filepath.Rel(p.root, d.root)
				fmt.Fprintf(&toml, "%s = { path = %q }\n", d.name, rel)
			}
		}
	}
	if len(p.buildDeps) > 0 {
		toml.WriteString("\n[build-dependencies]\n")
		for _, d := range p.buildDeps {
			fmt.Fprintf(&toml, "%s = %q\n", d.name, d.version)
		}
	}
	g.addSrc(p, "Cargo.toml", []byte(toml.String()))
	if p.registry {
		g.addSrc(p, "Cargo.toml.orig", []byte(toml.String()))
		g.addSrc(p, ".cargo-ok", []byte(`{"v":1}`))
		g.addSrc(p, ".cargo_vcs_info.json", []byte(fmt.Sprintf("{\n  \"git\": {\n    \"sha1\": \"%s%s%s\"\n  },\n  \"path_in_vcs\": \"\"\n}", g.hex16(), g.hex16(), g.hex16()[:8])))
		g.addSrc(p, "LICENSE-MIT", []byte("Permission is hereby granted, free of charge, to any person obtaining a copy...\n"))
	}
	g.addSrc(p, "README.md", []byte("# "+p.name+"\n\nA package of the stalecheck benchmark workspace.\n"))
	var main strings.Builder
	mainRel := "src/lib.rs"
	if p.kind == kBin {
		mainRel = "src/main.rs"
	}
	for _, m := range p.modules {
		fmt.Fprintf(&main, "pub mod %s;\n", strings.TrimSuffix(filepath.Base(m), ".rs"))
		g.addSrc(p, m, []byte(fmt.Sprintf("//! %s\npub fn id() -> &'static str { %q }\n", m, p.name+"::"+m)))
	}
	if p.bindings {
		main.WriteString("include!(concat!(env!(\"OUT_DIR\"), \"/bindings.rs\"));\n")
	}
	if p.optEnv != "" {
		fmt.Fprintf(&main, "pub const CONFIG: Option<&str> = option_env!(%q);\n", p.optEnv)
	}
	if p.kind == kBin {
		main.WriteString("fn main() {\n")
		for _, d := range p.deps {
			fmt.Fprintf(&main, "    let _ = %s::id;\n", d.crate)
		}
		main.WriteString("}\n")
	}
	g.addSrc(p, mainRel, []byte(main.String()))
	if p.kind != kSys {
		return
	}
	var build strings.Builder
	build.WriteString("// Builds the native library this crate links.\nfn main() {\n")
	switch p.style {
	case stCMake:
		fmt.Fprintf(&build, "    let dst = cmake::Config::new(\"native\").build_target(\"install\").build();\n")
		fmt.Fprintf(&build, "    println!(\"cargo:rustc-link-search=native={}/lib\", dst.display());\n    println!(\"cargo:rustc-link-lib=static=%s\");\n", p.lib)
		build.WriteString("    println!(\"cargo:rerun-if-changed=native\");\n    println!(\"cargo:rerun-if-changed=build.rs\");\n")
		var cml strings.Builder
		fmt.Fprintf(&cml, "cmake_minimum_required(VERSION 3.16)\nproject(%s C)\nadd_library(%s STATIC\n", p.lib, p.lib)
		for i := 0; i < p.cmakeN; i++ {
			name := fmt.Sprintf("unit_%03d", i)
			fmt.Fprintf(&cml, "  src/%s.c\n", name)
			g.addSrc(p, "native/src/"+name+".c", []byte(strings.ReplaceAll(strings.ReplaceAll(cSource(unitPH), unitPH, name), idPH, p.id)))
		}
		cml.WriteString(")\ntarget_include_directories(" + p.lib + " PUBLIC include)\ninstall(TARGETS " + p.lib + " DESTINATION lib)\n")
		g.addSrc(p, "native/CMakeLists.txt", []byte(cml.String()))
		g.addSrc(p, "native/include/"+p.lib+".h", []byte("#pragma once\nint "+p.lib+"_version(void);\n"))
	default:
		switch p.style {
		case stBuildOnly:
			build.WriteString("    let out = std::env::var(\"OUT_DIR\").unwrap();\n")
			for _, s := range p.stems {
				fmt.Fprintf(&build, "    run(Command::new(\"cc\").args([\"-c\", \"-O2\", \"-g\", \"-fPIC\", \"native/%s.c\", \"-o\"]).arg(format!(\"{out}/%s.o\")));\n", s, s)
			}
			fmt.Fprintf(&build, "    run(Command::new(\"ar\").arg(\"crs\").arg(format!(\"{out}/lib%s.a\"))%s);\n", p.lib, objArgs(p.stems))
			fmt.Fprintf(&build, "    println!(\"cargo:rustc-link-search=native={out}\");\n    println!(\"cargo:rustc-link-lib=static=%s\");\n    println!(\"cargo:rerun-if-changed=build.rs\");\n", p.lib)
		default:
			build.WriteString("    cc::Build::new()")
			for _, s := range p.stems {
				fmt.Fprintf(&build, "\n        .file(\"native/%s.c\")", s)
			}
			fmt.Fprintf(&build, "\n        .compile(%q);\n", p.lib)
			if p.style == stDeclaredDir {
				build.WriteString("    println!(\"cargo:rerun-if-changed=native\");\n    println!(\"cargo:rerun-if-changed=build.rs\");\n")
			}
		}
		for _, s := range p.stems {
			g.addSrc(p, "native/"+s+".c", []byte(strings.ReplaceAll(cSource(s), idPH, p.id)))
		}
		g.addSrc(p, "native/"+p.lib+".h", []byte("#pragma once\nint "+p.lib+"_version(void);\n"))
	}
	if p.bindings {
		build.WriteString("    std::fs::write(std::path::Path::new(&std::env::var(\"OUT_DIR\").unwrap()).join(\"bindings.rs\"), BINDINGS).unwrap();\n")
	}
	build.WriteString("}\n")
	g.addSrc(p, "build.rs", []byte(build.String()))
}

func objArgs(stems []string) string {
	var b strings.Builder
	for _, s := range stems {
		fmt.Fprintf(&b, ".arg(format!(\"{out}/%s.o\"))", s)
	}
	return b.String()
}

func (g *gen) emitWorkspaceFiles() {
	t := g.sessA.Add(-80 * time.Hour)
	g.w.str(filepath.Join(g.ws, "Cargo.toml"), `[workspace]
members = ["crates/*", "bins/*"]
resolver = "2"

[profile.release]
debug = true
incremental = true
`, t)
	var lock strings.Builder
	lock.WriteString("# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n")
	sorted := append([]*pkg(nil), g.pkgs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, p := range sorted {
		fmt.Fprintf(&lock, "\n[[package]]\nname = %q\nversion = %q\n", p.name, p.version)
		if p.registry {
			fmt.Fprintf(&lock, "source = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"%s%s%s%s\"\n", g.hex16(), g.hex16(), g.hex16(), g.hex16())
		}
		deps := append(append([]*pkg(nil), p.deps...), p.buildDeps...)
		if len(deps) > 0 {
			names := make([]string, 0, len(deps))
			for _, d := range deps {
				names = append(names, d.name)
			}
			sort.Strings(names)
			lock.WriteString("dependencies = [\n")
			for _, n := range dedup(names) {
				fmt.Fprintf(&lock, " %q,\n", n)
			}
			lock.WriteString("]\n")
		}
	}
	g.w.str(filepath.Join(g.ws, "Cargo.lock"), lock.String(), g.sessA.Add(-time.Minute))
	// Target folder records.
	g.w.str(filepath.Join(g.target, "CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by cargo.\n# For information about cache directory tags see https://bford.info/cachedir/\n", g.sessA)
	g.w.str(filepath.Join(g.target, ".rustc_info.json"), `{"rustc_fingerprint":8668999387863862814,"outputs":{"17747080675513052775":{"success":true,"status":"","code":0,"stdout":"rustc 1.95.0 (59807616e 2026-04-14)\nbinary: rustc\ncommit-hash: 59807616e1fa2540724bfbac14d7976d7e4a3860\ncommit-date: 2026-04-14\nhost: x86_64-unknown-linux-gnu\nrelease: 1.95.0\nLLVM version: 22.1.2\n","stderr":""}},"successes":{}}`, g.sessA.Add(time.Second))
	g.w.str(filepath.Join(g.rel, ".cargo-lock"), "", g.sessA)
	g.w.dir(filepath.Join(g.rel, "examples"), g.sessA)
	g.w.dir(filepath.Join(g.rel, "incremental"), g.sessA)
}

// ---------------------------------------------------------------------------------------------------
// Units

func (u *unit) dirName() string { return u.p.name + "-" + u.hash }

func (u *unit) id() string { return profile + "/" + u.dirName() + "/" + u.targetName() }

func (u *unit) targetName() string {
	switch u.kind {
	case uCompile:
		return "build-script-build-script-build"
	case uRun:
		return "run-build-script-build-script-build"
	case uBin:
		return "bin-" + u.p.name
	}
	return "lib-" + u.p.crate
}

func (g *gen) fpDir(u *unit) string    { return filepath.Join(g.rel, ".fingerprint", u.dirName()) }
func (g *gen) buildDir(u *unit) string { return filepath.Join(g.rel, "build", u.dirName()) }
func (g *gen) outDir(u *unit) string   { return filepath.Join(g.buildDir(u), "out") }
func (g *gen) deps() string            { return filepath.Join(g.rel, "deps") }

// HashHex is the hash file's content for a fingerprint value: its little-endian bytes in hex.
func HashHex(v uint64) string {
	var b [8]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
	return fmt.Sprintf("%x", b[:])
}

func debugList(f []string) string {
	q := make([]string, len(f))
	for i, x := range f {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func jstr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fingerprintJSON writes the JSON exactly as Cargo 1.95 does (field order, compact, u64s as decimals).
func (g *gen) fingerprintJSON(u *unit, local string) string {
	var b strings.Builder
	features, declared := debugList(u.set.features), debugList(u.p.declaredFeatures())
	target, prof, path, config := u.target, u.profileH, u.pathH, configHash
	if u.kind == uRun {
		features, declared, config = "", "", 0
	}
	fmt.Fprintf(&b, `{"rustc":%d,"features":%s,"declared_features":%s,"target":%d,"profile":%d,"path":%d,"deps":[`,
		u.set.rustc, jstr(features), jstr(declared), target, prof, path)
	for i, d := range u.deps {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `[%d,%s,false,%d]`, d.pkgID, jstr(d.name), d.u.fp)
	}
	fmt.Fprintf(&b, `],"local":[%s],"rustflags":[],"config":%d,"compile_kind":0}`, local, config)
	return b.String()
}

type depInfoFile struct {
	pkgRel bool
	path   string
}

// encodeDepInfo writes Cargo's binary fingerprint dep-info (format v1, docs §1.5).
func encodeDepInfo(files []depInfoFile, env [][2]*string) []byte {
	var b []byte
	u32 := func(v int) { b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24)) }
	str := func(s string) { u32(len(s)); b = append(b, s...) }
	u32(1)
	b = append(b, 0xFF, 1)
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	u32(len(files))
	for _, f := range files {
		if f.pkgRel {
			b = append(b, 0)
		} else {
			b = append(b, 1)
		}
		str(f.path)
		b = append(b, 0) // no checksum
	}
	u32(len(env))
	for _, e := range env {
		str(*e[0])
		if e[1] == nil {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			str(*e[1])
		}
	}
	return b
}

const invokedText = "This file has an mtime of when this was started."

func (g *gen) emitUnit(u *unit) {
	switch u.kind {
	case uCompile:
		g.emitCompile(u)
	case uRun:
		g.emitRun(u)
	default:
		g.emitRustc(u)
	}
}

// srcPath is how rustc names a package file in its .d: relative to the workspace for a path package
// (rustc runs at the workspace root), absolute for a registry one.
func (g *gen) srcPath(p *pkg, rel string) string {
	if p.registry {
		return filepath.Join(p.root, rel)
	}
	return filepath.Join(p.rel, rel)
}

func rustcDepfile(targets []string, inputs []string, envDeps []string) string {
	var b strings.Builder
	for _, t := range targets {
		fmt.Fprintf(&b, "%s: %s\n\n", t, strings.Join(inputs, " "))
	}
	for _, in := range inputs {
		fmt.Fprintf(&b, "%s:\n", in)
	}
	if len(envDeps) > 0 {
		b.WriteString("\n")
		for _, e := range envDeps {
			fmt.Fprintf(&b, "# env-dep:%s\n", e)
		}
	}
	return b.String()
}

var exeBlob = func() []byte {
	b := make([]byte, 48*1024)
	copy(b, "\x7fELF\x02\x01\x01")
	for i := 64; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	return b
}()

func (g *gen) emitCompile(u *unit) {
	p := u.p
	fd, bd := g.fpDir(u), g.buildDir(u)
	var files []depInfoFile
	if !p.registry {
		files = append(files, depInfoFile{true, "build.rs"})
	}
	tn := u.targetName()
	g.w.str(filepath.Join(fd, "invoked.timestamp"), invokedText, u.t0)
	g.w.file(filepath.Join(fd, "dep-"+tn), encodeDepInfo(files, nil), u.t0)
	local := fmt.Sprintf(`{"CheckDepInfo":{"dep_info":%s,"checksum":false}}`, jstr(filepath.Join(profile, ".fingerprint", u.dirName(), "dep-"+tn)))
	g.w.str(filepath.Join(fd, tn), HashHex(u.fp), u.t1)
	g.w.str(filepath.Join(fd, tn+".json"), g.fingerprintJSON(u, local), u.t1)
	exe := filepath.Join(bd, "build_script_build-"+u.hash)
	g.w.str(exe+".d", rustcDepfile([]string{exe + ".d", exe}, []string{g.srcPath(p, "build.rs")}, nil), u.at(0.3))
	g.w.exe(exe, exeBlob[:16*1024+g.rng.IntN(16*1024)], u.at(0.9))
	g.w.link(filepath.Join(bd, "build-script-build"), exe, u.at(0.95))
}

func (g *gen) emitRun(u *unit) {
	p := u.p
	fd, bd, out := g.fpDir(u), g.buildDir(u), g.outDir(u)
	g.w.str(filepath.Join(bd, "invoked.timestamp"), invokedText, u.t0)
	var o strings.Builder // output
	var stderr strings.Builder
	var rerunPaths, rerunEnv []string
	var local []string
	nObj := 0
	frac := func() float64 { nObj++; return 0.05 + 0.6*float64(nObj)/float64(nObj+8) }
	cfg := u.hash
	libDir := out
	var members []arMember
	ccOld := func(src, obj string) {
		fmt.Fprintf(&o, "running: \"cc\" \"-O3\" \"-ffunction-sections\" \"-fdata-sections\" \"-fPIC\" \"-g\" \"-fno-omit-frame-pointer\" \"-m64\" \"-I\" \"native\" \"-Wall\" \"-Wextra\"")
		if len(u.set.features) > 1 {
			o.WriteString(" \"-DSCG_FEATURE_SIMD\"")
		}
		fmt.Fprintf(&o, " \"-o\" %q \"-c\" %q\nexit status: 0\n", obj, src)
	}
	switch p.style {
	case stCMake:
		libDir = filepath.Join(out, "lib")
		build := filepath.Join(out, "build")
		dotDir := filepath.Join(build, "CMakeFiles", p.lib+".dir")
		fmt.Fprintf(&o, "CMAKE_TOOLCHAIN_FILE_%s = None\nCMAKE_TOOLCHAIN_FILE_%s = None\nHOST_CMAKE_TOOLCHAIN_FILE = None\nCMAKE_TOOLCHAIN_FILE = None\nCMAKE_GENERATOR_%s = None\nCMAKE_GENERATOR = None\nCMAKE_PREFIX_PATH_%s = None\nCMAKE_PREFIX_PATH = None\nCMAKE_%s = None\nCMAKE = None\n",
			hostTriple, strings.ReplaceAll(hostTriple, "-", "_"), hostTriple, hostTriple, hostTriple)
		fmt.Fprintf(&o, "running: cd %q && CMAKE_PREFIX_PATH=\"\" \"cmake\" %q \"-DCMAKE_INSTALL_PREFIX=%s\" \"-DCMAKE_C_FLAGS= -ffunction-sections -fdata-sections -fPIC -g -fno-omit-frame-pointer -m64\" \"-DCMAKE_C_COMPILER=/usr/bin/cc\" \"-DCMAKE_BUILD_TYPE=Release\"\n",
			build, filepath.Join(p.root, "native"), out)
		o.WriteString("-- The C compiler identification is GNU 12.2.0\n-- Detecting C compiler ABI info\n-- Detecting C compiler ABI info - done\n-- Check for working C compiler: /usr/bin/cc - skipped\n-- Configuring done\n-- Generating done\n")
		fmt.Fprintf(&o, "-- Build files have been written to: %s\n", build)
		fmt.Fprintf(&o, "running: cd %q && MAKEFLAGS=\"-j --jobserver-fds=8,9 --jobserver-auth=8,9\" \"cmake\" \"--build\" \".\" \"--target\" \"install\" \"--config\" \"Release\"\n", build)
		for _, f := range []string{"CMakeCache.txt", "Makefile", "cmake_install.cmake", "install_manifest.txt",
			"CMakeFiles/Makefile2", "CMakeFiles/Makefile.cmake", "CMakeFiles/CMakeOutput.log", "CMakeFiles/cmake.check_cache",
			"CMakeFiles/progress.marks", "CMakeFiles/TargetDirectories.txt", "CMakeFiles/3.25.1/CMakeCCompiler.cmake",
			"CMakeFiles/3.25.1/CMakeSystem.cmake", "CMakeFiles/3.25.1/CMakeDetermineCompilerABI_C.bin",
			"CMakeFiles/3.25.1/CompilerIdC/CMakeCCompilerId.c", "CMakeFiles/3.25.1/CompilerIdC/a.out"} {
			g.w.str(filepath.Join(build, f), "# CMake generated file: "+f+"\n", u.at(0.02+0.02*g.rng.Float64()))
		}
		for _, f := range []string{"flags.make", "build.make", "depend.make", "compiler_depend.make", "compiler_depend.ts", "link.txt", "progress.make", "cmake_clean.cmake", "cmake_clean_target.cmake", "DependInfo.cmake"} {
			g.w.str(filepath.Join(dotDir, f), "# CMake generated file: "+f+"\n", u.at(0.04))
		}
		for i := 0; i < p.cmakeN; i++ {
			name := fmt.Sprintf("unit_%03d", i)
			src := filepath.Join(p.root, "native", "src", name+".c")
			objRel := filepath.Join("CMakeFiles", p.lib+".dir", "src", name+".c.o")
			data, syms := g.objs.object(g.objs.stems[unitPH], p.root, p.id, cfg, name)
			t := u.at(frac())
			g.w.file(filepath.Join(build, objRel), data, t)
			g.w.str(filepath.Join(build, objRel+".d"), fmt.Sprintf("%s: \\\n %s /usr/include/stdc-predef.h \\\n %s\n", objRel, src, filepath.Join(p.root, "native", "include", p.lib+".h")), t)
			members = append(members, arMember{Name: name + ".c.o", Data: data, Symbols: syms})
			fmt.Fprintf(&o, "[%3d%%] Building C object %s\n", (i+1)*90/p.cmakeN, objRel)
		}
		fmt.Fprintf(&o, "[ 95%%] Linking C static library lib%s.a\n[100%%] Built target %s\nInstall the project...\n-- Install configuration: \"Release\"\n-- Installing: %s\n",
			p.lib, p.lib, filepath.Join(libDir, "lib"+p.lib+".a"))
		ar := writeAr(members)
		g.w.file(filepath.Join(build, "lib"+p.lib+".a"), ar, u.at(0.8))
		g.w.file(filepath.Join(libDir, "lib"+p.lib+".a"), ar, u.at(0.85))
		g.w.str(filepath.Join(out, "include", p.lib+".h"), "#pragma once\nint "+p.lib+"_version(void);\n", u.at(0.85))
		fmt.Fprintf(&o, "cargo:root=%s\ncargo:rustc-link-search=native=%s\ncargo:rustc-link-lib=static=%s\n", out, libDir, p.lib)
		o.WriteString("cargo:rerun-if-changed=native\ncargo:rerun-if-changed=build.rs\n")
		rerunPaths = []string{"native", "build.rs"}
	case stBuildOnly:
		for _, s := range p.stems {
			data, syms := g.objs.object(g.objs.stems[s], p.root, p.id, cfg, "")
			g.w.file(filepath.Join(out, s+".o"), data, u.at(frac()))
			members = append(members, arMember{Name: s + ".o", Data: data, Symbols: syms})
		}
		g.w.file(filepath.Join(out, "lib"+p.lib+".a"), writeAr(members), u.at(0.75))
		fmt.Fprintf(&o, "cargo:rustc-link-search=native=%s\ncargo:rustc-link-lib=static=%s\ncargo:rerun-if-changed=build.rs\n", out, p.lib)
		rerunPaths = []string{"build.rs"}
	case stEnvOnly:
		envLine := func(v string) {
			fmt.Fprintf(&o, "cargo:rerun-if-env-changed=%s\n%s = None\n", v, v)
			rerunEnv = append(rerunEnv, v)
		}
		envLine("CC_ENABLE_DEBUG_OUTPUT")
		fmt.Fprintf(&o, "OUT_DIR = Some(%s)\n", out)
		for _, v := range []string{"CC_" + hostTriple, "CC_" + strings.ReplaceAll(hostTriple, "-", "_"), "HOST_CC", "CC", "CC_KNOWN_WRAPPER_CUSTOM"} {
			envLine(v)
		}
		o.WriteString("RUSTC_WRAPPER = None\n")
		envLine("CRATE_CC_NO_DEFAULTS")
		fmt.Fprintf(&o, "TARGET = Some(%s)\nCARGO_CFG_TARGET_FEATURE = Some(fxsr,sse,sse2)\nHOST = Some(%s)\n", hostTriple, hostTriple)
		for _, v := range []string{"CFLAGS_" + hostTriple, "CFLAGS_" + strings.ReplaceAll(hostTriple, "-", "_"), "HOST_CFLAGS", "CFLAGS"} {
			envLine(v)
		}
		o.WriteString("CARGO_ENCODED_RUSTFLAGS = Some()\n")
		for _, s := range p.stems {
			data, syms := g.objs.object(g.objs.stems[s], p.root, p.id, cfg, "")
			name := fmt.Sprintf("%016x-%s.o", fnv64(p.root+"/native"), s)
			g.w.file(filepath.Join(out, name), data, u.at(frac()))
			members = append(members, arMember{Name: name, Data: data, Symbols: syms})
		}
		for _, v := range []string{"AR_" + hostTriple, "AR_" + strings.ReplaceAll(hostTriple, "-", "_"), "HOST_AR", "AR", "ARFLAGS_" + hostTriple, "ARFLAGS_" + strings.ReplaceAll(hostTriple, "-", "_"), "HOST_ARFLAGS", "ARFLAGS"} {
			envLine(v)
		}
		g.w.file(filepath.Join(out, "lib"+p.lib+".a"), writeAr(members), u.at(0.75))
		fmt.Fprintf(&o, "cargo:rustc-link-lib=static=%s\ncargo:rustc-link-search=native=%s\n", p.lib, out)
	default: // stDeclaredDir, stOldStyle: cc 1.0.73
		fmt.Fprintf(&o, "TARGET = Some(%q)\nOPT_LEVEL = Some(\"3\")\nHOST = Some(%q)\n", hostTriple, hostTriple)
		for _, v := range []string{"CC_" + hostTriple, "CC_" + strings.ReplaceAll(hostTriple, "-", "_"), "HOST_CC", "CC", "CFLAGS_" + hostTriple, "CFLAGS_" + strings.ReplaceAll(hostTriple, "-", "_"), "HOST_CFLAGS", "CFLAGS", "CRATE_CC_NO_DEFAULTS"} {
			fmt.Fprintf(&o, "%s = None\n", v)
		}
		o.WriteString("DEBUG = Some(\"true\")\nCARGO_CFG_TARGET_FEATURE = Some(\"fxsr,sse,sse2\")\n")
		var objs []string
		for _, s := range p.stems {
			data, syms := g.objs.object(g.objs.stems[s], p.root, p.id, cfg, "")
			obj := filepath.Join(out, "native", s+".o")
			ccOld("native/"+s+".c", obj)
			g.w.file(obj, data, u.at(frac()))
			members = append(members, arMember{Name: s + ".o", Data: data, Symbols: syms})
			objs = append(objs, obj)
		}
		lib := filepath.Join(out, "lib"+p.lib+".a")
		for _, v := range []string{"AR_" + hostTriple, "AR_" + strings.ReplaceAll(hostTriple, "-", "_"), "HOST_AR", "AR"} {
			fmt.Fprintf(&o, "%s = None\n", v)
		}
		fmt.Fprintf(&o, "running: ZERO_AR_DATE=\"1\" \"ar\" \"cq\" %q", lib)
		for _, ob := range objs {
			fmt.Fprintf(&o, " %q", ob)
		}
		fmt.Fprintf(&o, "\nexit status: 0\nrunning: \"ar\" \"s\" %q\nexit status: 0\n", lib)
		g.w.file(lib, writeAr(members), u.at(0.75))
		fmt.Fprintf(&o, "cargo:rustc-link-lib=static=%s\ncargo:rustc-link-search=native=%s\n", p.lib, out)
		if p.style == stDeclaredDir {
			o.WriteString("cargo:rerun-if-changed=native\ncargo:rerun-if-changed=build.rs\n")
			rerunPaths = []string{"native", "build.rs"}
		}
		if g.rng.IntN(4) == 0 {
			fmt.Fprintf(&stderr, "warning: native/%s.c: In function 'scg_%s_%s_sum':\nwarning: native/%s.c:8:9: warning: comparison of integer expressions of different signedness\n", p.stems[0], p.id, p.stems[0], p.stems[0])
		}
	}
	if p.style != stCMake {
		fmt.Fprintf(&o, "cargo:root=%s\ncargo:include=%s\n", out, filepath.Join(out, "include"))
		g.w.str(filepath.Join(out, "include", p.lib+".h"), "#pragma once\nint "+p.lib+"_version(void);\n", u.at(0.8))
	}
	if p.bindings {
		g.w.str(filepath.Join(out, "bindings.rs"), fmt.Sprintf("/* automatically generated */\nextern \"C\" {\n    pub fn scg_%s_kernel_add(a: i32, b: i32) -> i32;\n}\n", p.id), u.at(0.85))
	}
	if len(rerunPaths) > 0 {
		ps := make([]string, len(rerunPaths))
		for i, x := range rerunPaths {
			ps[i] = jstr(x)
		}
		local = append(local, fmt.Sprintf(`{"RerunIfChanged":{"output":%s,"paths":[%s]}}`,
			jstr(filepath.Join(profile, "build", u.dirName(), "output")), strings.Join(ps, ",")))
	}
	for _, v := range dedup(rerunEnv) {
		local = append(local, fmt.Sprintf(`{"RerunIfEnvChanged":{"var":%s,"val":null}}`, jstr(v)))
	}
	if len(local) == 0 {
		pre := u.p.version
		if !p.registry {
			// A path package's Precalculated is the newest file of the package (Cargo's PathSource).
			pre = fmt.Sprintf("%d.%09ds (%s)", p.newest.mtime.Unix(), p.newest.mtime.Nanosecond(), p.newest.rel)
		}
		local = append(local, fmt.Sprintf(`{"Precalculated":%s}`, jstr(pre)))
	}
	g.w.str(filepath.Join(bd, "output"), o.String(), u.t0) // written on success, then rewound to the start
	g.w.str(filepath.Join(bd, "stderr"), stderr.String(), u.at(0.98))
	g.w.str(filepath.Join(bd, "root-output"), out, u.at(0.98))
	g.w.dir(out, u.at(0.01))
	tn := u.targetName()
	g.w.str(filepath.Join(fd, tn), HashHex(u.fp), u.t1)
	g.w.str(filepath.Join(fd, tn+".json"), g.fingerprintJSON(u, strings.Join(local, ",")), u.t1)
}

var rmetaBlob = func() []byte {
	b := make([]byte, 2540)
	copy(b, "rust\x00\x00\x00\x09")
	for i := 8; i < len(b); i++ {
		b[i] = byte(i * 13)
	}
	return b
}()

func (g *gen) emitRustc(u *unit) {
	p := u.p
	fd, d := g.fpDir(u), g.deps()
	tn := u.targetName()
	// Inputs: the package's Rust sources, then OUT_DIR files it include!s.
	mainRel := "src/lib.rs"
	if u.kind == uBin {
		mainRel = "src/main.rs"
	}
	rs := append([]string{mainRel}, p.modules...)
	var files []depInfoFile
	var inputs, envDeps []string
	for _, r := range rs {
		if !p.registry {
			files = append(files, depInfoFile{true, r}) // registry package files are not tracked (§1.5)
		}
		inputs = append(inputs, g.srcPath(p, r))
	}
	if p.bindings && u.set.run != nil {
		files = append(files, depInfoFile{false, filepath.Join(profile, "build", u.set.run.dirName(), "out", "bindings.rs")})
		inputs = append(inputs, filepath.Join(g.outDir(u.set.run), "bindings.rs"))
		envDeps = append(envDeps, "OUT_DIR="+g.outDir(u.set.run))
	}
	var env [][2]*string
	if p.optEnv != "" {
		k := p.optEnv
		env = append(env, [2]*string{&k, nil})
		envDeps = append(envDeps, p.optEnv)
		sort.Strings(envDeps)
	}
	g.w.str(filepath.Join(fd, "invoked.timestamp"), invokedText, u.t0)
	g.w.file(filepath.Join(fd, "dep-"+tn), encodeDepInfo(files, env), u.t0)
	local := fmt.Sprintf(`{"CheckDepInfo":{"dep_info":%s,"checksum":false}}`, jstr(filepath.Join(profile, ".fingerprint", u.dirName(), "dep-"+tn)))
	stem := p.crate + "-" + u.hash
	var outs []string
	switch {
	case u.kind == uBin:
		exe := filepath.Join(d, stem)
		outs = []string{exe}
		g.w.exe(exe, exeBlob, u.at(0.9)) // a placeholder until linkBins links it
		g.binLinks = append(g.binLinks, binLink{u: u, path: exe, mtime: u.at(0.9)})
	case p.kind == kProcMacro:
		so := filepath.Join(d, "lib"+stem+".so")
		outs = []string{so}
		g.w.exe(so, exeBlob[:32*1024], u.at(0.9))
	default:
		rlib, rmeta := filepath.Join(d, "lib"+stem+".rlib"), filepath.Join(d, "lib"+stem+".rmeta")
		outs = []string{rlib, rmeta}
		g.w.file(rmeta, rmetaBlob, u.at(0.5))
		cgu, _ := g.objs.object(g.objs.cgu, p.root, p.id, u.hash, "")
		members := []arMember{{Name: "lib.rmeta", Data: rmetaBlob}, {Name: fmt.Sprintf("%s.%s.%s-cgu.0.rcgu.o", stem, p.crate, g.hex16()), Data: cgu}}
		if p.kind == kSys && u.set.run != nil {
			// rustc bundles the static library's members into the rlib (§6).
			for _, s := range p.stems {
				data, _ := g.objs.object(g.objs.stems[s], p.root, p.id, u.set.run.hash, "")
				members = append(members, arMember{Name: s + ".o", Data: data})
			}
		}
		g.w.file(rlib, writeAr(members), u.at(0.9))
	}
	g.w.str(filepath.Join(d, stem+".d"), rustcDepfile(append([]string{filepath.Join(d, stem+".d")}, outs...), inputs, envDeps), u.at(0.2))
	if !p.registry && g.rng.IntN(20) == 0 {
		g.w.str(filepath.Join(fd, "output-"+tn), fmt.Sprintf(`{"$message_type":"diagnostic","message":"unused variable: `+"`x`"+`","code":{"code":"unused_variables","explanation":null},"level":"warning","spans":[{"file_name":%s,"line_start":3,"line_end":3,"column_start":9,"column_end":10,"is_primary":true}],"children":[],"rendered":"warning: unused variable"}`+"\n", jstr(g.srcPath(p, mainRel))), u.t1)
	}
	g.w.str(filepath.Join(fd, tn), HashHex(u.fp), u.t1)
	g.w.str(filepath.Join(fd, tn+".json"), g.fingerprintJSON(u, local), u.t1)
	if !p.registry {
		g.incremental(u)
	}
}

func (g *gen) base36(n int) string {
	const a = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		b[i] = a[g.rng.IntN(len(a))]
	}
	return string(b)
}

// incremental writes a rustc unit's incremental session folder (the fixed files; cgu objects come
// with the filler).
func (g *gen) incremental(u *unit) {
	crateDir := filepath.Join(g.rel, "incremental", u.p.crate+"-"+g.base36(13))
	sess := "s-" + g.base36(10) + "-" + g.base36(7)
	sd := filepath.Join(crateDir, sess+"-"+g.base36(25))
	g.w.str(filepath.Join(crateDir, sess+".lock"), "", u.t0)
	g.w.file(filepath.Join(sd, "dep-graph.bin"), fillBlob(8192), u.at(0.95))
	g.w.file(filepath.Join(sd, "query-cache.bin"), fillBlob(4096), u.at(0.95))
	g.w.file(filepath.Join(sd, "work-products.bin"), fillBlob(512), u.at(0.95))
	if u.kind == uLib {
		g.w.file(filepath.Join(sd, "metadata.rmeta"), rmetaBlob, u.at(0.5))
	}
	g.incr = append(g.incr, incrSess{u, sd})
}

type incrSess struct {
	u   *unit
	dir string
}

var fill = func() []byte {
	b := make([]byte, 16*1024)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}()

func fillBlob(n int) []byte { return fill[:n] }

// ---------------------------------------------------------------------------------------------------
// Uplifts, filler, stale sources

// depInfoPaths are the files a unit's fingerprint dep-info (or, for a run, its rerun-if-changed list)
// names, absolute: what the uplifted .d of a root lists (output_depinfo.rs).
func (g *gen) depInfoPaths(u *unit) []string {
	p := u.p
	var out []string
	switch u.kind {
	case uCompile:
		if !p.registry {
			out = append(out, filepath.Join(p.root, "build.rs"))
		}
	case uRun:
		switch p.style {
		case stDeclaredDir, stCMake:
			out = append(out, filepath.Join(p.root, "native"), filepath.Join(p.root, "build.rs"))
		case stBuildOnly:
			out = append(out, filepath.Join(p.root, "build.rs"))
		}
	default:
		if !p.registry {
			mainRel := "src/lib.rs"
			if u.kind == uBin {
				mainRel = "src/main.rs"
			}
			for _, r := range append([]string{mainRel}, p.modules...) {
				out = append(out, filepath.Join(p.root, r))
			}
		}
		if p.bindings && u.set.run != nil {
			out = append(out, filepath.Join(g.outDir(u.set.run), "bindings.rs"))
		}
	}
	return out
}

func (g *gen) upliftDepfile(artifact string, root *unit) string {
	seen := map[*unit]bool{}
	paths := map[string]bool{}
	var walk func(u *unit)
	walk = func(u *unit) {
		if seen[u] {
			return
		}
		seen[u] = true
		for _, p := range g.depInfoPaths(u) {
			paths[p] = true
		}
		for _, d := range u.deps {
			walk(d.u)
		}
	}
	walk(root)
	list := make([]string, 0, len(paths))
	for p := range paths {
		list = append(list, p)
	}
	sort.Strings(list)
	return artifact + ": " + strings.Join(list, " ") + "\n"
}

// emitUplifts: the last (no-op) build re-links the uplifted artifacts to the default configuration's
// units and rewrites their .d files (Addendum: a no-op build rewrites them with a new mtime).
func (g *gen) emitUplifts() {
	t := g.sessC
	for _, p := range g.pkgs {
		if p.registry || p.kind == kProcMacro {
			continue
		}
		u := p.cur.lib
		var name, from string
		if p.kind == kBin {
			name, from = p.name, filepath.Join(g.deps(), p.crate+"-"+u.hash)
		} else {
			name, from = "lib"+p.crate+".rlib", filepath.Join(g.deps(), "lib"+p.crate+"-"+u.hash+".rlib")
		}
		art := filepath.Join(g.rel, name)
		g.w.link(art, from, t)
		g.w.str(strings.TrimSuffix(art, ".rlib")+".d", g.upliftDepfile(art, u), t.Add(time.Millisecond))
		g.res.Roots++
		t = t.Add(2 * time.Millisecond)
	}
}

// emitFiller brings the target folder to opt.Files files: generated files in build-script OUT_DIRs
// and codegen-unit objects in incremental session folders.
func (g *gen) emitFiller() {
	base := g.w.countUnder(g.target)
	filler := g.opt.Files - base
	if filler <= 0 {
		return
	}
	nIncr := int(float64(filler) * g.opt.IncrementalShare)
	if len(g.incr) == 0 {
		nIncr = 0
	}
	nOut := filler - nIncr
	var runs []*unit
	for _, u := range g.units {
		if u.kind == uRun {
			runs = append(runs, u)
		}
	}
	if len(runs) == 0 {
		nIncr = filler
		nOut = 0
	}
	// OUT_DIR files: a heavy-tailed share per run folder (cmake builds hold the most).
	weights := make([]float64, len(runs))
	var sum float64
	for i, u := range runs {
		w := math.Exp(g.rng.NormFloat64())
		if u.p.style == stCMake {
			w *= 8
		}
		weights[i] = w
		sum += w
	}
	left := nOut
	for i, u := range runs {
		q := int(float64(nOut) * weights[i] / sum)
		if i == len(runs)-1 {
			q = left
		}
		if q > left {
			q = left
		}
		left -= q
		out := g.outDir(u)
		for j := 0; j < q; j++ {
			var p string
			switch j % 3 {
			case 0:
				p = filepath.Join(out, "include", u.p.lib, fmt.Sprintf("part%02d", j/768), fmt.Sprintf("gen_%05d.h", j))
			case 1:
				p = filepath.Join(out, "gen", fmt.Sprintf("part%02d", j/768), fmt.Sprintf("gen_%05d.rs", j))
			default:
				p = filepath.Join(out, "build", "gen", fmt.Sprintf("part%02d", j/768), fmt.Sprintf("gen_%05d.c", j))
			}
			g.w.file(p, fillBlob(64+g.rng.IntN(1984)), u.at(0.1+0.75*float64(j)/float64(q)))
		}
	}
	// Incremental: codegen-unit objects, proportional to a random size per session.
	weights = make([]float64, len(g.incr))
	sum = 0
	for i := range g.incr {
		weights[i] = math.Exp(g.rng.NormFloat64() * 0.8)
		sum += weights[i]
	}
	left = nIncr
	for i, s := range g.incr {
		q := int(float64(nIncr) * weights[i] / sum)
		if i == len(g.incr)-1 {
			q = left
		}
		if q > left {
			q = left
		}
		left -= q
		for j := 0; j < q; j++ {
			g.w.file(filepath.Join(s.dir, g.base36(25)+".o"), fillBlob(256+g.rng.IntN(3072)), s.u.at(0.3+0.6*float64(j)/float64(q)))
		}
	}
}

// touchStale gives a few live packages' native sources an mtime after the build (as an editor would),
// spread over the build-script styles so that both watched (pending-rebuild) and unwatched
// (untracked-input-changed) edits appear.
func (g *gen) touchStale() error {
	if g.opt.Stale <= 0 {
		return nil
	}
	// Per style, workspace packages first (their edits are the common case), then registry ones.
	byStyle := map[bsStyle][]*pkg{}
	for _, registry := range []bool{false, true} {
		for _, p := range g.pkgs {
			if p.kind == kSys && p.cur.run.live && p.registry == registry {
				byStyle[p.style] = append(byStyle[p.style], p)
			}
		}
	}
	t := g.sessC.Add(10 * time.Minute)
	for n := 0; len(g.res.Touched) < g.opt.Stale && n < 10*g.opt.Stale; n++ {
		list := byStyle[bsStyle(n%len(styleNames))]
		if len(list) == 0 {
			continue
		}
		p := list[(n/len(styleNames))%len(list)]
		rel := ""
		if p.style == stCMake {
			rel = "native/src/unit_000.c"
		} else {
			rel = "native/" + p.stems[0] + ".c"
		}
		path := filepath.Join(p.root, rel)
		if contains(g.res.Touched, path) {
			continue
		}
		if err := os.Chtimes(path, t, t); err != nil {
			return err
		}
		g.res.Touched = append(g.res.Touched, path)
		t = t.Add(time.Second)
	}
	return nil
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
