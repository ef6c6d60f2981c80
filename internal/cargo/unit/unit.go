// Package unit holds what only Cargo knows about a step of the provenance graph: the unit's fingerprint
// hash and folder, its rustflags and compile kind, a moved tree. The Cargo adapter (internal/cargo)
// stores a *Unit in each graph.Step's Origin. What the rules need of it they read as neutral data or
// through the adapter contract (internal/graph/origin.go): the Unit embeds graph.Records (features, the
// build script's rerun-if declarations, the Precalculated fingerprint as a scan key, dangling deps
// entries, where Cargo takes the package from) and answers graph.Worded, Watcher, Decider (ByRecord),
// Rebuilder (the cargo build of the root's configuration), ConfigDiffer, DepOutputChooser (pipelining)
// and Declarer. Commands that speak Cargo's own terms (explain, clean, which) read it through Of.
//
// It is its own small package so that those readers use the Cargo type without importing the adapter,
// and the imports go one way: graph ← unit ← cargo; internal/check imports neither.
package unit

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// System is the graph.Step.System of every Cargo step.
const System = "cargo"

// ScriptSource is the graph.How clue of a package-folder file that the build script's source text names
// (a second clue).
const ScriptSource graph.How = "build-script-source"

// Unit is a Cargo unit as recorded under `<profile>/.fingerprint/<pkg>-<hash>/` (cargo 1.95 layout).
type Unit struct {
	Hash string // unit hash (folder suffix), 16 hex digits
	// Target is the fingerprint file name, e.g. "bin-gpu-prover", "run-build-script-build-script-build".
	Target          string // also the step's Label; the step's Name is "<pkg>-<hash>"
	FingerprintDir  string // <profile>/.fingerprint/<pkg>-<hash>, absolute
	FingerprintHash string // contents of the hash file (LE hex); "" when empty or missing; also the step's Key

	// Records are the neutral facts the rules read (graph.Step.Records): the fingerprint's features
	// (Records.Features), the build script's rerun-if declarations (DeclaredPaths, DeclaredEnv;
	// DeclarationsKnown when the fingerprint JSON's `local` list was read), the Precalculated
	// fingerprint of an old-style script (ScanKey, with the newest-file mtime it records in
	// ScanNewestNS), dangling `deps` entries (GoneDeps: "<name> <hash hex>"), the CARGO_PKG_* variables
	// rustc recorded as env-deps (CompiledEnv), a run made in another worktree (BuiltInTree,
	// internal/cargo/othertree.go) and where Cargo takes the package from (internal/cargo/source.go).
	graph.Records

	// The rest of the configuration the unit was built in, as recorded in its fingerprint
	// (graph.Step.Config is the same for people, filled by the adapter from these).
	Rustflags   []string
	CompileKind uint64 // 0 = host; else a hash of the target triple
	Rustc       uint64 // hash of `rustc -vV`

	// MovedFrom and MovedTo are set when the tree was copied or moved since the run (root-output names
	// another OUT_DIR): recorded paths under MovedFrom now lie under MovedTo.
	MovedFrom, MovedTo string

	// BuildFlags are cargo flags every build of this tree needs and a plain one lacks (" --target-dir
	// DIR" when the target folder was named to stalecheck, not found by Cargo's own rules); shared by
	// the units of one read.
	BuildFlags *string

	// NotBuiltByDefault: the unit's package is one a plain `cargo build` at the workspace root does not
	// build (the workspace's default-members leave it out, or the root package is the only one built):
	// only a build that names it (-p) rebuilds it.
	NotBuiltByDefault bool
}

// words are Cargo's words for the rules' messages (graph.Words).
var words = graph.Words{
	Tool:       "Cargo",
	Watched:    "Cargo watches it",
	NotWatched: "Cargo does not watch it",
	Reference:  "the file whose mtime Cargo compares inputs against",
	Untagged:   true,
}

// StepRecords makes a Unit a graph.RecordKeeper: the rules read its neutral Records.
func (u *Unit) StepRecords() *graph.Records { return &u.Records }

// Words makes a Unit a graph.Worded origin: a Cargo step's messages say "Cargo".
func (u *Unit) Words() graph.Words { return words }

// Decides: Cargo decides by its fingerprints (graph.ByRecord).
func (u *Unit) Decides() graph.Decision { return graph.ByRecord }

// WatchedBy makes a Unit a graph.Watcher: the declaration that makes Cargo rerun the build script of s
// when p changes ("" when none does): a rerun-if-changed path equal to p or a folder above it, or,
// for a path package whose script prints no rerun-if line, Cargo's whole-package scan. (Declarations
// under Cargo's own registry or git folders, which Cargo skips, are the reader's to leave out.)
func (u *Unit) WatchedBy(s *graph.Step, p string) string {
	if u.Scan().ScanKey != "" && s.PathPackage && under(p, s.PackageRoot) {
		return "Cargo's package scan (the script prints no rerun-if line)"
	}
	for _, d := range u.DeclaredPaths {
		if p != d && !under(p, d) {
			continue
		}
		rel, err := filepath.Rel(s.PackageRoot, d)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = d
		}
		return "rerun-if-changed=" + rel
	}
	return ""
}

func under(p, dir string) bool {
	return dir != "" && len(p) > len(dir) && p[len(dir)] == filepath.Separator && strings.HasPrefix(p, dir)
}

// Of returns the Cargo unit behind a step. A step of another system (or one built by hand in a test) has
// none: Of then returns a fresh empty Unit, so a reader sees zero values rather than a nil pointer.
func Of(s *graph.Step) *Unit {
	if s != nil {
		if u, ok := s.Origin.(*Unit); ok {
			return u
		}
	}
	return &Unit{}
}

// Is reports whether the step is a Cargo unit.
func Is(s *graph.Step) bool {
	_, ok := s.Origin.(*Unit)
	return ok
}

// Config is the configuration of a unit built into the profile folder prof, as graph.Step.Config holds
// it: "profile <prof>", "features [\"a\", \"b\"]", then "rustflags <flags>" when any are set and
// "compile kind <hash>" when the unit is not built for the host.
func Config(u *Unit, prof string) graph.Config {
	b := make([]byte, 0, 64)
	b = append(b, '[')
	for i, x := range u.Features {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendQuote(b, x) // fmt's %q
	}
	b = append(b, ']')
	feats := string(b)
	if u.FeaturesUnknown {
		feats = "unknown (the fingerprint could not be read)"
	}
	c := make(graph.Config, 2, 4)
	c[0], c[1] = graph.KV{Key: "profile", Value: prof}, graph.KV{Key: "features", Value: feats}
	if len(u.Rustflags) > 0 {
		c = append(c, graph.KV{Key: "rustflags", Value: strings.Join(u.Rustflags, " ")})
	}
	if u.CompileKind != 0 {
		c = append(c, graph.KV{Key: "compile kind", Value: strconv.FormatUint(u.CompileKind, 10)})
	}
	return c
}

// KindName is Cargo's name of a step kind: "build-script-run" (RunCustomBuild), "build-script-compile"
// (the rustc unit that compiles build.rs), "rustc" (any other rustc unit: lib, bin, test, example,
// proc-macro).
func KindName(k graph.StepKind) string {
	switch k {
	case graph.ScriptRun:
		return "build-script-run"
	case graph.ScriptCompile:
		return "build-script-compile"
	case graph.Compile:
		return "rustc"
	}
	return string(k)
}

// Tree is what Cargo's adapter knows of the whole tree it read (graph.Graph.Origins["cargo"]).
type Tree struct {
	// CargoHome is the $CARGO_HOME the graph was read with (rerun-if-changed paths under its registry/
	// and git/ folders are not watched by Cargo).
	CargoHome string
	// Copies are the folders holding a copy of a package that a build may use: the non-path sources of
	// live units and every [patch] path (internal/cargo/source.go).
	Copies []*graph.PackageCopy
}

// PackageCopies makes a Tree a graph.CopyLister.
func (t *Tree) PackageCopies() []*graph.PackageCopy { return t.Copies }

// TreeOf returns Cargo's record of the graph; a graph no Cargo adapter read has none, and TreeOf then
// returns a fresh empty Tree.
func TreeOf(g *graph.Graph) *Tree {
	if t, ok := g.Origins[System].(*Tree); ok {
		return t
	}
	return &Tree{}
}

// scriptVars are variables Cargo itself sets for a build script from the unit's own configuration
// (Cargo's "Environment variables Cargo sets for build scripts"): a change in them makes a new unit, and
// the environment stalecheck runs in does not have them.
var scriptVars = map[string]bool{
	"TARGET": true, "HOST": true, "OPT_LEVEL": true, "DEBUG": true, "PROFILE": true, "NUM_JOBS": true,
	"OUT_DIR": true, "RUSTC": true, "RUSTDOC": true, "RUSTC_LINKER": true, "RUSTC_WRAPPER": true,
	"RUSTC_WORKSPACE_WRAPPER": true,
}

// SetForScripts reports whether Cargo sets the variable for a build script (scriptVars, CARGO_*, DEP_*).
func SetForScripts(name string) bool {
	return scriptVars[name] || strings.HasPrefix(name, "CARGO_") || strings.HasPrefix(name, "DEP_")
}
