package graph

import "sort"

// Records are what a build system's own records of a step say besides its inputs and outputs, for a
// system that decides ByRecord (Cargo's fingerprints are the model): the configuration it was built in,
// what a build-script run declared, the whole-package scan that stands in for declarations, dependency
// edges whose records are gone, where the package's sources come from. Rules read these neutral facts
// through Step.Records, whatever system keeps them; an Origin offers them by implementing RecordKeeper.
// Every field is zero when the system keeps no such record.
type Records struct {
	// Features are the optional features the step was built with (Cargo's enabled features); Step.Config
	// holds the whole configuration for people. FeaturesUnknown: the record of them could not be read
	// (Features is then empty, which is not "none").
	Features        []string
	FeaturesUnknown bool

	// What a build-script run declared to its build system (Cargo: rerun-if-changed and
	// rerun-if-env-changed lines). DeclarationsKnown is true when the records of them were read.
	DeclaredPaths     []string // absolute
	DeclaredEnv       []string // variable names
	DeclarationsKnown bool
	// DeclaredEnvValues are the values the declared variables had when the run's record was written, where
	// the build system keeps them (Cargo's fingerprint: RerunIfEnvChanged's val): another value in the
	// environment of the next build makes it run the step again.
	DeclaredEnvValues []EnvRead
	// ScanData holds the whole-package scan that stands in for a run's declarations (PackageScan); nil
	// when the records hold none. Read it through Scan, fill it through OwnScan.
	ScanData *PackageScan
	// RunEndNS is when the run's last run ended (its start is the step's Reference): a file whose mtime
	// lies in between was written during that run. 0 when unknown.
	RunEndNS int64
	// SourceNames are the environment variable names the script's source spells out as string literals:
	// settings it reads by name, so what it does may differ between configurations that differ in them.
	// nil when the source was not read.
	SourceNames []string

	// RemovedData holds the dependency edges whose records are gone (RemovedDeps); nil when none.
	// Read it through Removed, fill it through OwnRemoved.
	RemovedData *RemovedDeps
	// CompiledEnv are the package variables the compiler recorded as read by the step's code, with the
	// values it was compiled with; ManifestEnv what the package's manifest (Manifest) gives them now.
	// nil when the code reads none.
	CompiledEnv map[string]string
	ManifestEnv map[string]string
	Manifest    FileInfo

	// OtherTreeData says the step was built in another copy of the workspace (OtherTreeRecords); nil
	// when not. Read it through OtherTree, fill it through OwnOtherTree.
	OtherTreeData *OtherTreeRecords

	// ConfigChanges are the configuration files the build system reads on every build (Cargo's
	// manifests and config.toml) that changed after it last built the step's program, as judged against
	// the settings they held then; nil when none did.
	ConfigChanges []ConfigChange

	// Where the build system takes the package from.
	Version string // the package version ("" when the package root is unknown)
	// Source is "path", "registry", "directory" (a directory or vendored source replacing a registry),
	// "git" or "" when unknown.
	Source   string
	SourceID string // the lock file's source of the package; "" for a path package
}

// The groups of Records that few steps have are kept apart, behind a pointer each, so that the records
// of a large tree's many dead copies stay small. Each is read through a method that gives its value
// (zero when the step has none) and filled through one that makes it on first use.

// PackageScan is the whole-package scan that stands in for a run's declarations.
type PackageScan struct {
	// ScanKey is set when the run declared nothing, so the build system keys it on a scan of the whole
	// package folder instead (Cargo's Precalculated fingerprint: the newest file's mtime, or the version
	// for a package it treats as immutable), as the records spell the key.
	ScanKey string
	// ScanNewestNS and ScanNewestFile are, for a path package, the newest file's mtime and name the key
	// records; ScanNewestNow is that file as it is now and PackageNewest the newest file found in the
	// package folder now (live runs of path packages).
	ScanNewestNS   int64
	ScanNewestFile string
	ScanNewestNow  FileInfo
	PackageNewest  FileInfo
}

// RemovedDeps are a step's dependency edges whose records are gone, and how they are judged.
type RemovedDeps struct {
	// GoneDeps are dependency edges of the step whose recorded identity matches no step on disk: the
	// dependency was rebuilt since, so the build system will redo this step. Each is "<name> <identity>".
	GoneDeps []string
	// RemovedOtherRuns are the GoneDeps entries of a script run that name another package's script run of
	// which no record is left (a clean of that package), not a rebuild of it.
	RemovedOtherRuns []string
	// RemovedDepContent judges, for a GoneDeps entry whose records are all gone, the dependency's sources
	// that changed after this step was built, path → content against what the removed steps used (filled
	// by internal/content; nil when not judged).
	RemovedDepContent map[string]*InputContent
	// RemovedDepRuns are, for those entries, what the removed script runs of the dependency saw in their
	// last runs before this step was built, as the content store recorded them: the build system reruns
	// the script in today's environment.
	RemovedDepRuns []RemovedRun
}

// OtherTreeRecords say that a step was built in another copy of the workspace.
type OtherTreeRecords struct {
	// BuiltInTree is set when the step's outputs were made in another copy of the workspace that shares
	// this build folder (a git worktree): that copy's root, from the absolute paths its records name
	// (BuiltInTreeEvidence is the first; BuiltInTreeRecord the record that names it, "" for a run).
	// BuiltInTreeDWARF says the tree comes from DWARF compile units. OtherTreeDiffers are this
	// workspace's counterparts of its inputs whose bytes differ from that copy's.
	BuiltInTree, BuiltInTreeEvidence, BuiltInTreeRecord string
	BuiltInTreeDWARF                                    bool
	OtherTreeDiffers                                    []string
}

// Scan returns the package scan of the records (zero when none).
func (r *Records) Scan() PackageScan {
	if r.ScanData == nil {
		return PackageScan{}
	}
	return *r.ScanData
}

// OwnScan returns the package scan to fill, made on first use.
func (r *Records) OwnScan() *PackageScan {
	if r.ScanData == nil {
		r.ScanData = new(PackageScan)
	}
	return r.ScanData
}

// Removed returns the records' gone dependency edges (zero when none).
func (r *Records) Removed() RemovedDeps {
	if r.RemovedData == nil {
		return RemovedDeps{}
	}
	return *r.RemovedData
}

// OwnRemoved returns the gone dependency edges to fill, made on first use.
func (r *Records) OwnRemoved() *RemovedDeps {
	if r.RemovedData == nil {
		r.RemovedData = new(RemovedDeps)
	}
	return r.RemovedData
}

// OtherTree returns where else the step was built (zero when here).
func (r *Records) OtherTree() OtherTreeRecords {
	if r.OtherTreeData == nil {
		return OtherTreeRecords{}
	}
	return *r.OtherTreeData
}

// OwnOtherTree returns the other-tree records to fill, made on first use.
func (r *Records) OwnOtherTree() *OtherTreeRecords {
	if r.OtherTreeData == nil {
		r.OtherTreeData = new(OtherTreeRecords)
	}
	return r.OtherTreeData
}

// RemovedRun is a script run whose records a clean removed, as the content store recorded it while it
// was on disk: what its tools read from the environment and whether it made a static library.
type RemovedRun struct {
	Dep        string // the dependency edge's name
	StepID     string // the removed run's step ID
	RunNS      int64  // its reference's mtime, ns since the epoch
	RecordedNS int64  // when the store recorded it, ns since the epoch
	EnvReads   []EnvRead
	FlagsSeen  []FlagsSeen
	Archive    bool   // it made a static library (lib*.a)
	Record     string // its output record, gone now
	// OldMembers: one sentence per archive member the run left duplicated (`ar q`) whose copy the
	// linker takes is older code than the run's own: what a step linked after the run holds.
	OldMembers []string
	// LinkedNow: the run left duplicated members and every copy the linker takes was written by a run
	// whose inputs had the content the files have now.
	LinkedNow bool
}

// RecordKeeper is implemented by an Origin whose build system keeps Records of its steps.
type RecordKeeper interface {
	StepRecords() *Records
}

// Records returns what the step's build system records of it besides inputs and outputs: its Origin's
// Records when it is a RecordKeeper, else a fresh zero value (never nil).
func (s *Step) Records() *Records {
	if s != nil {
		if k, ok := s.Origin.(RecordKeeper); ok {
			if r := k.StepRecords(); r != nil {
				return r
			}
		}
	}
	return &Records{}
}

// PackageCopy is one folder holding a package's sources that a build may use: where the build system
// takes a package from (a registry, a vendored directory, a git checkout), or an override path of the
// workspace (Cargo's [patch]).
type PackageCopy struct {
	Name    string
	Version string // from the folder's manifest
	Root    string
	// Source is "registry", "directory", "git" for a copy the build system builds from, "patch" for an
	// override path.
	Source   string
	SourceID string // the lock file's source ("" for an override path)
	// Patch is the table that names the folder, e.g. "[patch.crates-io] in /ws/Cargo.toml".
	Patch string
	// Used is true when some step on disk was built from this folder.
	Used bool
	// UnusedPatch is true when the lock file lists the override as unused.
	UnusedPatch bool
	// Since is the earliest last build (reference mtime, ns) of the live steps of package Name;
	// Edited lists the folder's files modified after it, newest first (at most 20), EditedCount all.
	Since       int64
	Edited      []FileInfo
	EditedCount int
}

// CopyLister is implemented by a Graph.Origins value that knows the folders holding package copies.
type CopyLister interface {
	PackageCopies() []*PackageCopy
}

// PackageCopies returns the package copies every system's record of the graph knows, in the order of
// the systems' names.
func (g *Graph) PackageCopies() []*PackageCopy {
	var names []string
	for n, o := range g.Origins {
		if _, ok := o.(CopyLister); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []*PackageCopy
	for _, n := range names {
		out = append(out, g.Origins[n].(CopyLister).PackageCopies()...)
	}
	return out
}

// ConfigChange is one configuration file that changed after the build system last built a program:
// Deciding are the settings that differ and decide how a step is built (a profile's, a feature, a
// flag: the next build redoes it), Other those that differ and are not known to; Unknown is true when
// no version of the file from that build was kept to compare with.
type ConfigChange struct {
	Path             string
	MTimeNS, BuiltNS int64
	Deciding, Other  []string
	Unknown          bool
}
