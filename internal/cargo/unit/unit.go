// Package unit holds what only Cargo knows about a step of the provenance graph: the unit's fingerprint
// hash and folder, its build script's declarations, the Precalculated fingerprint, where Cargo takes the
// package from. The Cargo adapter (internal/cargo) stores a *Unit in each graph.Step's Origin; Cargo-only
// rules (internal/check) and commands (explain, clean, which) read it through Of.
//
// It is its own small package so that check, explain and the other readers use the Cargo type without
// importing the adapter, and the imports go one way: graph ← unit ← cargo, graph ← unit ← check.
package unit

import (
	"fmt"
	"path/filepath"
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
	HasLocal        bool   // the fingerprint JSON was read and its `local` list is known

	// The configuration the unit was built in, as recorded in its fingerprint (graph.Step.Config is the
	// same for people, filled by the adapter from these).
	Features    []string // enabled Cargo features
	Rustflags   []string
	CompileKind uint64 // 0 = host; else a hash of the target triple
	Rustc       uint64 // hash of `rustc -vV`

	// Build-script run declarations, as the script printed them in its `output`.
	RerunPaths    []string // declared rerun-if-changed paths, absolute
	RerunEnv      []string // declared rerun-if-env-changed variable names
	Precalculated string   // the Precalculated fingerprint string for old-style scripts ("" otherwise)
	// EnvDeps are the CARGO_PKG_* variables rustc recorded as read by a compile unit's code (env-deps of
	// its dep-info), with the values it was compiled with; ManifestEnv what the package's Cargo.toml
	// (Manifest) gives them now. nil when the code reads none.
	EnvDeps     map[string]string
	ManifestEnv map[string]string
	Manifest    graph.FileInfo
	// RunEndNS is when the run's last run ended (root-output's mtime; its start is the step's
	// Reference): a file whose mtime lies in between was written during that run. 0 when unknown.
	RunEndNS int64
	// ScriptNames are the environment variable names the script's source spells out as string literals
	// (`env::var("CARGO_FEATURE_FAST")`, `"PROFILE"`): the settings of Cargo's it reads by name, so
	// what it does may differ between configurations that differ in them. nil when the source was not read.
	ScriptNames []string
	// PrecalculatedNS is, for a path package's old-style script, the newest-file mtime Cargo recorded
	// in Precalculated ("<secs>.<nanos>s (<file>)"); 0 otherwise.
	PrecalculatedNS   int64
	PrecalculatedFile string
	// PrecalculatedNow is that file as it is now (live runs of path packages).
	PrecalculatedNow graph.FileInfo
	// PackageNewest is the newest file found in the package folder (live runs of path packages).
	PackageNewest graph.FileInfo
	// MovedFrom and MovedTo are set when the tree was copied or moved since the run (root-output names
	// another OUT_DIR): recorded paths under MovedFrom now lie under MovedTo.
	MovedFrom, MovedTo string

	// DanglingDeps are `deps` entries whose hash matches no unit on disk: the dependency was rebuilt
	// since, so Cargo will rebuild this unit. Each is "<name> <hash hex>".
	DanglingDeps []string
	// RemovedOtherScripts are the DanglingDeps entries of a build-script run that name another
	// package's build-script run (a `links` dependency whose metadata the script reads) of which no
	// unit is left in the profile folder (`cargo clean -p` of that package), not a rebuild of it.
	RemovedOtherScripts []string
	// RemovedDepContent judges, for a DanglingDeps entry whose records are all gone from the profile
	// folder (`cargo clean -p`), the dependency's sources that changed after this unit was built (as
	// other profiles' units of it record them), path → content against what the removed units used
	// (filled by internal/content.Annotate; nil when not judged).
	RemovedDepContent map[string]*graph.InputContent
	// RemovedDepRuns are, for those entries, the environment the removed build-script runs of the
	// dependency saw in their last runs before this unit was built, as the content store recorded them
	// (internal/content.Annotate): Cargo reruns the script in today's environment.
	RemovedDepRuns []RemovedRun

	// BuiltInTree is set when a build-script run was made in another copy of the workspace sharing this
	// target folder (a git worktree), or an uplifted binary tied to this unit was built there: that
	// copy's root, from the absolute paths the run's output or the binary's `<name>.d` names
	// (BuiltInTreeEvidence is the first; BuiltInTreeRecord the .d file, "" for a run;
	// internal/cargo/othertree.go). OtherTreeDiffers are this workspace's counterparts of its inputs
	// whose bytes differ from that copy's.
	BuiltInTree, BuiltInTreeEvidence, BuiltInTreeRecord string
	// BuiltInTreeDWARF says the tree comes from DWARF compile units (comp_dir and name;
	// BuiltInTreeEvidence is the first unit's source there): of an uplifted binary (BuiltInTreeRecord is
	// then the binary itself: a no-op build here rewrote its `<name>.d` with this workspace's paths), or
	// of the objects a build-script run left in OUT_DIR (its output names no path of that tree).
	BuiltInTreeDWARF bool
	OtherTreeDiffers []string

	// Where Cargo takes the package from (internal/cargo/source.go).
	Version string // the package version, from its Cargo.toml ("" when the package root is unknown)
	// Source is "path", "registry" (under $CARGO_HOME/registry), "directory" (a directory or vendored
	// source replacing a registry), "git" or "" when unknown.
	Source   string
	SourceID string // Cargo.lock's source of the package ("registry+https://…", "git+file:///…#rev"); "" for a path package
}

// words are Cargo's words for the rules' messages (graph.Words).
var words = graph.Words{
	Tool:       "Cargo",
	Watched:    "Cargo watches it",
	NotWatched: "Cargo does not watch it",
	Reference:  "the file whose mtime Cargo compares inputs against",
}

// What a Unit answers of the adapter contract (internal/graph/origin.go).
var _ interface {
	graph.Worded
	graph.Watcher
} = (*Unit)(nil)

// Words makes a Unit a graph.Worded origin: a Cargo step's messages say "Cargo".
func (u *Unit) Words() graph.Words { return words }

// Decides: Cargo decides by its fingerprints (graph.ByRecord).
func (u *Unit) Decides() graph.Decision { return graph.ByRecord }

// WatchedBy makes a Unit a graph.Watcher: the declaration that makes Cargo rerun the build script of s
// when p changes ("" when none does): a rerun-if-changed path equal to p or a folder above it, or,
// for a path package whose script prints no rerun-if line, Cargo's whole-package scan. (Declarations
// under Cargo's own registry or git folders, which Cargo skips, are the reader's to leave out.)
func (u *Unit) WatchedBy(s *graph.Step, p string) string {
	if u.Precalculated != "" && s.PathPackage && under(p, s.PackageRoot) {
		return "Cargo's package scan (the script prints no rerun-if line)"
	}
	for _, d := range u.RerunPaths {
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
	return dir != "" && strings.HasPrefix(p, dir+string(filepath.Separator))
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

// Declarations lists what a build-script run declared to Cargo, as the script printed it:
// "rerun-if-changed=<path relative to the package root>" then "rerun-if-env-changed=<VAR>".
func Declarations(s *graph.Step) []string {
	u := Of(s)
	var out []string
	for _, p := range u.RerunPaths {
		rel, err := filepath.Rel(s.PackageRoot, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = p
		}
		out = append(out, "rerun-if-changed="+rel)
	}
	for _, e := range u.RerunEnv {
		out = append(out, "rerun-if-env-changed="+e)
	}
	return out
}

// Config is the configuration of a unit built into the profile folder prof, as graph.Step.Config holds
// it: "profile <prof>", "features [\"a\", \"b\"]", then "rustflags <flags>" when any are set and
// "compile kind <hash>" when the unit is not built for the host.
func Config(u *Unit, prof string) graph.Config {
	q := make([]string, len(u.Features))
	for i, x := range u.Features {
		q[i] = fmt.Sprintf("%q", x)
	}
	c := graph.Config{{Key: "profile", Value: prof}, {Key: "features", Value: "[" + strings.Join(q, ", ") + "]"}}
	if len(u.Rustflags) > 0 {
		c = append(c, graph.KV{Key: "rustflags", Value: strings.Join(u.Rustflags, " ")})
	}
	if u.CompileKind != 0 {
		c = append(c, graph.KV{Key: "compile kind", Value: fmt.Sprintf("%d", u.CompileKind)})
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
	Copies []*PackageCopy
}

// TreeOf returns Cargo's record of the graph; a graph no Cargo adapter read has none, and TreeOf then
// returns a fresh empty Tree.
func TreeOf(g *graph.Graph) *Tree {
	if t, ok := g.Origins[System].(*Tree); ok {
		return t
	}
	return &Tree{}
}

// PackageCopy is one folder holding a package's sources: where Cargo takes a live package from
// (registry, directory source, git checkout), or a [patch] path of the workspace.
type PackageCopy struct {
	Name    string
	Version string // from the folder's Cargo.toml
	Root    string
	// Source is "registry", "directory", "git" for a copy Cargo builds from, "patch" for a [patch] path.
	Source   string
	SourceID string // Cargo.lock's source ("" for a patch path)
	// Patch is the [patch] table that names the folder, e.g. "[patch.crates-io] in /ws/Cargo.toml".
	Patch string
	// Used is true when some unit on disk was built from this folder.
	Used bool
	// UnusedPatch is true when Cargo.lock lists the package and version under [[patch.unused]].
	UnusedPatch bool
	// Since is the earliest last build (reference mtime, ns) of the live units of package Name;
	// Edited lists the folder's files modified after it, newest first (at most 20), EditedCount all.
	Since       int64
	Edited      []graph.FileInfo
	EditedCount int
}

// RemovedRun is a build-script run whose records `cargo clean -p` removed, as the content store
// recorded it while it was on disk: what its tools read from the environment (cc-rs's logged lookups,
// the cmake crate's flags) and whether it made a static library.
type RemovedRun struct {
	Dep        string // the extern name of the deps entry (package name with '-' as '_')
	StepID     string // the removed run's step ID (profile folder, unit folder, fingerprint file)
	RunNS      int64  // its output's mtime, ns since the epoch
	RecordedNS int64  // when the store recorded it, ns since the epoch
	EnvReads   []graph.EnvRead
	FlagsSeen  []graph.FlagsSeen
	Archive    bool   // it made a static library (lib*.a)
	Record     string // its stdout record (`output`, or `stdout` in the new layout), gone now
	// OldMembers: one sentence per archive member the run left duplicated (`ar q`) whose copy the
	// linker takes is older code than the run's own (internal/content/removed.go): what a unit linked
	// after the run holds.
	OldMembers []string
	// LinkedNow: the run left duplicated members and every copy the linker takes was written by a run
	// whose inputs had the content the files have now, so a unit linked after the run holds what they
	// compile to, whatever the run's own inputs were.
	LinkedNow bool
}
