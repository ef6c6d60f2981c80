// Package graph is stalecheck's provenance graph: which build steps turned which inputs into which
// outputs, how we know each edge, and which roots (the binaries users run) reach which steps.
//
// It names no build system: adapters fill a Graph from the records their build system leaves on disk and
// keep what only they know in each step's Origin (and the graph's Origins); checks read it and never
// touch the disk themselves except to stat inputs they name.
// Times are nanoseconds since the Unix epoch; sizes are bytes; paths are absolute.
package graph

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stalecheck/stalecheck/internal/digest"
)

// How says how we know that a file is an input of a step. Findings quote it as evidence.
type How string

const (
	// Declared: the build system watches the file (a path the step declared, a dependency-info entry).
	Declared How = "declared"
	// Depfile: a compiler dependency file (`-MD` `.d`) in the step's output folder lists it.
	Depfile How = "depfile"
	// DWARF: a compile unit in an object the step produced names it (CU name or line-table file).
	DWARF How = "dwarf"
	// CommandLine: a compiler command line the step logged in its output.
	CommandLine How = "command-line"
	// IncludeScan: a header reached by following the #include lines of a compiled source through the
	// compile's -I/-iquote/-isystem/-idirafter folders and the source's own folder, transitively.
	IncludeScan How = "include-scan"
	// PackageFolder: a native source lying in the package's folder; a candidate, not a proof.
	PackageFolder How = "package-folder"
	// ArchiveMember: an archive the step made holds an object of the same stem (a second clue).
	ArchiveMember How = "archive-member"
	// OutputStem: the step wrote a compiler output named after the file (OUT_DIR/scale.ptx beside
	// kernels/scale.cu: nvcc -ptx, an object, a cubin), or a header of the same name (a copy exported
	// with cargo:include): a second clue as ArchiveMember is.
	OutputStem How = "output-stem"
	// Trace: a process of the step opened the file in a build traced by `stalecheck trace`
	// (internal/tracejoin; the Input's Trace says which process and when).
	Trace How = "trace"
	// CommandArg: the step's command line names the file as an argument (or runs it as its program),
	// not as an output (internal/cmdargs). The command may read it or write it: the text alone does not
	// say, so the rules judge such an input by its content baseline.
	CommandArg How = "command-arg"
	// Glob: a glob of the build description matches the file (CMake's file(GLOB) without
	// CONFIGURE_DEPENDS), which the build evaluates only when it configures: a source added since is
	// not built until the configure step runs again (internal/cmaketree). Input.Via is the description.
	Glob How = "glob"
)

// StepKind names the kind of build action, in words common to build systems; each adapter maps its
// own kinds onto these (and can give its own names back for people).
type StepKind string

const (
	// ScriptRun is one execution of a program the build wrote itself (a generator, a configure step) with
	// its own output folder.
	ScriptRun StepKind = "script-run"
	// ScriptCompile is the compile of such a program.
	ScriptCompile StepKind = "script-compile"
	// Compile is any other compile or link of the project's code (libraries, binaries, tests, examples).
	Compile StepKind = "compile"
)

// FileInfo is a file as seen on disk when the graph was read.
type FileInfo struct {
	Path    string
	Size    int64 // bytes
	MTimeNS int64 // nanoseconds since the epoch; 0 when Exists is false
	Exists  bool
}

// Input is one input file of a step and the clues that tie it to the step.
type Input struct {
	File FileInfo
	// How lists every clue, strongest first is not implied; see Strong.
	How []How
	// Detail says where each clue came from (e.g. the depfile path or the `running:` line), parallel to How.
	Detail []string
	// Via is the file whose text ties the input to the step when that is not a record of the step (the
	// build description holding a glob that matches it); touching it makes the build redo the step.
	Via string
	// Meaning, when set, is a file the build system writes together with this one that states what this
	// one holds in bytes that are reproducible, while this one's are not (a serialization whose order
	// varies from run to run): two versions of this file mean the same when Meaning had the same
	// content beside each (internal/content), provided it is not older than this file (written with it).
	Meaning string
	// Watched is true when the build system will rebuild the step if this file changes.
	Watched bool
	// SystemWatched is true for an input of a driven step (Step.Driver) that the step's own system
	// watches while the driver does not (Watched is then false): the user's build will not redo the
	// step for it, but a rerun of the driver, for another reason, will.
	SystemWatched bool
	// WatchedBy names the declaration that watches it, in the build system's words (e.g. the declared
	// path, "listed in build.ninja", "depfile main.o.d").
	WatchedBy string
	// Content is what the input's content says against the content baseline of its step (filled by
	// internal/content.Annotate); nil when it was not judged.
	Content *InputContent
	// Trace is the traced read behind a Trace clue (nil when the input has none).
	Trace *TraceRead
	// CompiledAs is, when set, the path the step's records name for this file in another copy of its
	// package (one that no longer exists): the step compiled that file, and this one is its counterpart
	// here, so this file's content says nothing of what went in (no content baseline judges it).
	CompiledAs string
	// Shadows, for an archive member no step makes any more (an ArchiveMember input without a producer),
	// lists the global symbols it defines ahead of a member the step does make, in the archive's symbol
	// table: the linker takes its copy (internal/evidence).
	Shadows []string
}

// Content verdicts of an input against its step's content baseline.
const (
	// ContentSame: the input's digest equals the baseline: only its mtime changed since the step ran.
	ContentSame = "same"
	// ContentDiffers: the digest differs from the baseline: the content the step used is gone.
	ContentDiffers = "differs"
	// ContentUnknown: no baseline was recorded for this run of the step (or the input could not be hashed).
	ContentUnknown = "unknown"
)

// InputContent is an input's content judged against the baseline: the digest stalecheck recorded for the
// file while it was provably what the step used (mtime and ctime not newer than the step's reference).
type InputContent struct {
	Verdict  string // ContentSame, ContentDiffers or ContentUnknown
	Digest   string // "blake3:<hex>" of the file now ("" when not hashed)
	Baseline string // the recorded digest ("" when none)
	// BaselineText is the recorded text, for a command baseline (graph.Step.CommandContent), when kept.
	BaselineText string
	// BaselineNS is when the baseline was recorded (ns since the epoch; 0 when none).
	BaselineNS int64
	// CTimeNS is the file's status-change time (ns): newer than the reference while the mtime is not means
	// the file was rewritten and its mtime set back (cp -p, rsync -t, tar).
	CTimeNS int64
	// Why says, for ContentUnknown, what is missing.
	Why string
	// Build is the build identity the baseline was recorded under when the adapter keys baselines by one
	// (a Go build ID, which changes exactly when the binary is linked again) rather than by the
	// reference's mtime: then a digest that differs is an edit the step's outputs lack whatever the
	// mtimes say (a build that only touched the reference moved it past the edit). "" otherwise.
	Build string
	// Moved: the path names another file than when the baseline was recorded (another device or
	// inode: a symbolic link on the way now points elsewhere, or the file was replaced keeping its
	// times); Was is the identity recorded then, "<device>:<inode>".
	Moved bool
	Was   string
	// Through, for an input judged by other files (a linked library that is gone, by the sources its
	// last build read), lists the files compared; Changed those whose content differs now.
	Through, Changed []string
}

// Has reports whether the input carries the clue h.
func (in *Input) Has(h How) bool {
	for _, x := range in.How {
		if x == h {
			return true
		}
	}
	return false
}

// Strong reports whether the step really read the file by some record (depfile, DWARF, command line,
// declaration) or a package-folder candidate has a second clue (archive member, the script's source).
func (in *Input) Strong() bool {
	for _, x := range in.How {
		if x != PackageFolder {
			return true
		}
	}
	return false
}

// KV is one setting of a step's configuration.
type KV struct {
	Key   string // e.g. "profile", "features", "rustflags"
	Value string // as people read it, e.g. `["cuda", "simd"]`
}

// Config is the configuration a step was built in, as the adapter read it from the build system's
// records: a small ordered list of settings that tell two builds of the same step apart (a profile,
// features, flags, a target). Messages print it with String.
type Config []KV

// String joins the settings as "key value, key value".
func (c Config) String() string {
	parts := make([]string, len(c))
	for i, kv := range c {
		parts[i] = kv.Key + " " + kv.Value
	}
	return strings.Join(parts, ", ")
}

// Get returns the value of the first setting named key ("" when none).
func (c Config) Get(key string) string {
	for _, kv := range c {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// Link is a native library a step tells a later link step to link.
type Link struct {
	Kind      string // "static", "dylib", "framework", "" (default)
	Modifiers string // e.g. "+whole-archive,-bundle"
	Name      string // as printed, e.g. "groth16_cuda"
	// Path is the library file found in the step's link-search folders ("" when none was found).
	Path string
}

// Step is one build action that turned inputs into outputs. What only its build system knows is in Origin.
type Step struct {
	// System names the build system that ran the step, as its adapter spells it (later "make", "ninja", "go").
	System  string
	ID      string // stable within one graph, chosen by the adapter
	Kind    StepKind
	Package string // package name
	// Name is the step's name for people, unique within its ProfileDir (e.g. "<package>-<hash>").
	Name string
	// Label says what the step builds, for people (e.g. "bin-gpu-prover", an edge's first output).
	Label string
	// RecordDir is the folder holding the build system's own records of the step ("" when none).
	RecordDir string
	// ProfileDir is the folder, relative to Graph.BuildDir, that holds the outputs of the step's
	// configuration (a profile folder such as "release" or "x86_64-unknown-linux-gnu/release");
	// BuildDirs, Unjudged and the orphan rules group steps by it.
	ProfileDir string
	Config     Config
	// Key is the adapter's identity key of what the step built ("" when unknown): steps with the same
	// key are interchangeable to the build system, so one that shares a live step's key is kept (Kept).
	Key         string
	PackageRoot string // "" when unknown
	// PathPackage is true when the package is a path (workspace or [patch] path) package, whose files
	// the build system tracks; false for copies it treats as immutable (downloaded, vendored).
	PathPackage bool

	// Reference is the file whose mtime the build system compares inputs against (the run's output log,
	// the dependency-info file of a compile).
	Reference FileInfo
	// WrittenNS, when not 0, is when the step's outputs were last written, where the adapter knows it
	// better than the Reference's mtime (a Go binary's birth time: go build with nothing to relink only
	// moves the mtime); inputs changed after it are judged newer (Written). Reference keeps the file as
	// it is, whose mtime keys content baselines.
	WrittenNS int64
	// Outputs are the step's outputs: the files in a run's output folder, a compile's artifacts.
	Outputs []FileInfo
	Inputs  []*Input

	// ScriptData holds what the records of a run of the user's own build-time program (a Cargo build
	// script) show of that run, and the size of a script's folder; nil for every other step (most steps
	// of a large tree: it is kept apart to keep them small). Read it through Script, fill it through
	// OwnScript.
	ScriptData *ScriptDetails

	// Command is the command the build system would run for the step now, as its records give it (a
	// Make recipe expanded); "" when unknown. Where it comes from and what it runs are in Cmd().
	Command string
	// Program is the program the step's command runs first, when the command names it without a folder
	// (CommandProgram): PATH finds it each time the build runs the step, and no build system watches that
	// search (internal/content judges it again). "" when the command names a path or is unknown.
	Program string
	// CommandData holds the rest of what the step's records show of its command (CommandRecords); nil
	// for a step whose system records none (most steps of a large Cargo tree). Read it through Cmd,
	// fill it through OwnCmd.
	CommandData *CommandRecords

	// Origin is the adapter's own record of the step: what only
	// that build system knows. Rules that only make sense for one system read it through the adapter's
	// accessor (unit.Of); nil when the adapter keeps nothing.
	Origin any

	// Failed is non-empty when the last attempt did not finish: the reason, with the files that show it.
	Failed string

	// Driver is the step whose run runs this step's build (a Cargo build script that runs make in a
	// folder of its package, linking the archive make writes): the user's build reaches this step only
	// through the driver, so the step is redone only when the driver runs again, and an input counts as
	// watched only when both this step's system and the driver watch it (AttachDriven). nil for a
	// build the user runs directly.
	Driver *Step

	Deps       []*Step
	Dependents []*Step
	// KeepsLive are steps on disk that are live whenever this one is, besides its Deps: the build system
	// will write this step's configuration into their outputs again. MarkLive walks them as it walks Deps.
	KeepsLive []*Step
	// Roots are the roots that reach this step through Deps and KeepsLive (filled by MarkLive).
	Roots []*Root
}

// CommandRecords are what a step's records show of its command besides the command itself.
type CommandRecords struct {
	// CommandFrom is the file that defines the step's command (the makefile), and CommandWatched tells
	// whether the build system redoes the step when it changes (Ninja compares its log's command hash;
	// Make does not). CommandContent is the command judged against the one recorded while CommandFrom
	// was not newer than the step's reference (internal/content), nil when not judged.
	CommandFrom string
	// CommandDir is the folder the command runs in (Make's folder, Ninja's build folder): relative paths
	// on the command line name files there (internal/cmdargs). "" when unknown.
	CommandDir string
	// CommandReads are the other files the command's definition draws on (the makefiles make read
	// besides CommandFrom: an included config.mk that sets its variables): when the command differs
	// from the one the run ran, the one of them that changed since is what changed it.
	CommandReads   []string
	CommandWatched bool
	CommandContent *InputContent
	// Compiles are the compiler runs the step's records show (a Ninja edge's command, a Make recipe, a
	// build script's logged compiles, a cgo package's flags), each with its include search folders:
	// internal/includes resolves their #include lines again, the same way whatever system ran them.
	Compiles []CompilerRun
	// Lookups are the searches for a program on PATH (or a header in include folders) the step's
	// processes made in a traced build, with the answer the same search gives now (internal/tracejoin).
	Lookups []Lookup
	// Ran, when it exists, is a file the step's command writes on every run and then copies over an
	// output only when the two differ (a temporary file and CMake's copy_if_different, cp or install):
	// its mtime says when the command last ran, which the output's does not. Inputs changed before it
	// were read by that run, so the output is what they make, though a build system that compares
	// mtimes runs the command again on every build (internal/cmdargs fills it when newer than Reference).
	Ran FileInfo
	// Producer is the DW_AT_producer of the step's reference (its object), when the adapter read its
	// DWARF anyway ("" when it did not, or there is none): internal/compileflags reads the object itself
	// only without it.
	Producer string
	// Built, when not nil, is what the object the step writes records of the options it was compiled
	// with, where they differ from what the command gives now (internal/compileflags).
	Built *BuiltOptions
}

// BuiltOptions: Object records (in its DWARF producer, Producer) that it was compiled with option Was;
// the step's command gives Now instead.
type BuiltOptions struct {
	Object, Producer string
	Was, Now         string
}

// Cmd returns what the step's records show of its command (zero when nothing).
func (s *Step) Cmd() CommandRecords {
	if s.CommandData == nil {
		return CommandRecords{}
	}
	return *s.CommandData
}

// OwnCmd returns the step's command records to fill, made on first use.
func (s *Step) OwnCmd() *CommandRecords {
	if s.CommandData == nil {
		s.CommandData = new(CommandRecords)
	}
	return s.CommandData
}

// Script returns what the records of the step's build-script run show (zero for a step without).
func (s *Step) Script() ScriptDetails {
	if s.ScriptData == nil {
		return ScriptDetails{}
	}
	return *s.ScriptData
}

// OwnScript returns the step's build-script details to fill, made on first use.
func (s *Step) OwnScript() *ScriptDetails {
	if s.ScriptData == nil {
		s.ScriptData = new(ScriptDetails)
	}
	return s.ScriptData
}

// ScriptDetails are what the records of a build-script run (a program of the user's that the build runs
// to build native code, as Cargo runs build.rs) show of it: where it ran and wrote, what it tells the
// linker and its consumers, what it read from the environment. Only such runs fill them; rules read them
// as neutral facts, whatever system ran the script.
type ScriptDetails struct {
	RunDir       string // build/<pkg>-<hash>
	OutDir       string // build/<pkg>-<hash>/out
	ScriptSource string // the script's source file ("" when unknown)
	Links        []Link
	LinkSearch   []string // native link-search folders, absolute, in printed order
	// PointsAt are the folders (or files) outside OUT_DIR, inside the workspace or the target folder,
	// that the run's records point consumers at or show it compiling into: metadata paths
	// (`cargo:include=`), link-search folders, `-I` and `-o` of its logged compiler commands.
	PointsAt []string
	// WroteOutside are the files there whose mtime lies within the run's last run (from the start,
	// `output`'s mtime, to the end, `root-output`'s): what that run wrote outside its OUT_DIR.
	WroteOutside []FileInfo
	DirBytes     int64 // bytes under RunDir (or the compile folder)

	// EnvReads are the environment variables the step's tools looked up, with the values they saw
	// (as the step's output log shows each lookup).
	EnvReads []EnvRead
	// FlagsSeen are compiler flags a tool handed on that carry an environment variable's value without
	// logging the lookup (a CMake -DCMAKE_C_FLAGS= on a logged configure line), for untracked-env-changed.
	FlagsSeen []FlagsSeen

	// Written lists output-folder files that the last run's records show it wrote or confirmed in place even
	// though their mtime may predate the run: path → the record that says so. CMake's install step
	// keeps the source's mtime (whole seconds) and skips identical files ("-- Installing:" and
	// "-- Up-to-date:" lines in `output`, an install_manifest.txt the run wrote); files of a CMake build
	// tree the run rebuilt (`cmake --build`) are current by make's own rules. Filled for live runs.
	Written map[string]string
}

// Words are a build system's own words for what rules say about its steps. Rules are written once and
// take these from the step (Step.Words), so a message names each system as its users know it.
type Words struct {
	// Tool names the build system for people, at the start of a sentence (e.g. "Ninja").
	Tool string
	// Watched says that the build system watches an input of the step (e.g. "Ninja watches it").
	Watched string
	// NotWatched says that it does not (e.g. "the Ninja edge has no depfile naming it").
	NotWatched string
	// Reference describes the step's Reference (e.g. "the file whose mtime Ninja compares inputs against").
	Reference string
	// Rebuild is the command that rebuilds the step whatever the build system's records say (e.g.
	// "go build -a -o app ./cmd/app"), for fixes; "" when the rule's own fix applies.
	Rebuild string
	// Made says how the step made its reference, as a past participle ("installed" for a copy); ""
	// means "linked".
	Made string
	// Remakes says that the system makes the reference again the next time it runs the step (an
	// install copying it again); "" means "<Tool> relinks it the next time it builds it".
	Remakes string
	// Untagged: findings about the system's steps name no system (Cargo's, the home system of
	// stalecheck's reports); others are tagged with Step.System.
	Untagged bool
}

// SystemTag is how findings about s name its build system: "" for a system whose Words are Untagged
// (or no step), else s.System.
func (s *Step) SystemTag() string {
	if s == nil || s.OwnWords().Untagged {
		return ""
	}
	return s.System
}

// SameBuildSystem reports whether o was made by the build system that made s: an edge between two
// systems (a Make program linking a Cargo staticlib) is one that neither system's own rebuild follows.
func (s *Step) SameBuildSystem(o *Step) bool { return s.System == o.System }

// ComparesContent reports whether the step's build system compares the content of watched inputs.
func (s *Step) ComparesContent() bool {
	c, ok := s.Origin.(ContentComparer)
	return ok && c.ComparesContent()
}

// neutralWords are the words for a step whose Origin supplies none.
var neutralWords = Words{
	Tool:       "The build system",
	Watched:    "the build system watches it",
	NotWatched: "the build system does not watch it",
	Reference:  "the file whose mtime the build system compares inputs against",
}

// Words returns the step's system's words: its Origin's when it is Worded, else neutral ones. A driven
// step (Driver) speaks of its driver too: its system runs only when the driver runs, so what redoes
// the step is the driver's build ("Cargo"), and an input its own system watches is watched for the
// user only when the driver watches it as well.
func (s *Step) Words() Words {
	w := s.OwnWords()
	if s.Driver == nil || s.Driver == s {
		return w
	}
	d := s.Driver.Words()
	run := s.Driver.Label
	if s.Driver.Kind == ScriptRun {
		run = "the build script of " + s.Driver.Package
	}
	return Words{
		Tool:       d.Tool,
		Watched:    fmt.Sprintf("%s, and %s reruns %s for it", w.Watched, d.Tool, run),
		NotWatched: fmt.Sprintf("%s runs only when %s reruns %s, and %s", w.Tool, d.Tool, run, d.NotWatched),
		Reference:  w.Reference,
		Rebuild:    d.Rebuild,
	}
}

// OwnWords are the words of the step's own system (its Origin's, else neutral ones), driver or not.
func (s *Step) OwnWords() Words {
	if o, ok := s.Origin.(Worded); ok {
		return o.Words()
	}
	return neutralWords
}

// Live reports whether any root reaches the step.
func (s *Step) Live() bool { return len(s.Roots) > 0 }

// Written is when the step's outputs were last written: WrittenNS when the adapter knows it, else the
// Reference's mtime.
func (s *Step) Written() int64 {
	if s.WrittenNS != 0 {
		return s.WrittenNS
	}
	return s.Reference.MTimeNS
}

// EnvRead is one environment variable as a step saw it (Set false: unset), or as it is now.
type EnvRead struct {
	Name  string
	Value string // with Digest set: the value's first EnvValueKept bytes only
	Set   bool
	// Digest ("blake3:<hex>") and Len (bytes) stand for a value longer than EnvValueKept that was
	// kept cut (Kept): the content-baseline store keeps several runs of every step, and a variable of
	// megabytes would grow it by its size for each.
	Digest string `json:",omitempty"`
	Len    int    `json:",omitempty"`
	// From is the configuration file that gives the value to the build's processes, when this
	// environment does not (Cargo's [env] table); "" otherwise.
	From string `json:",omitempty"`
}

// EnvValueKept is the longest environment value Kept keeps whole.
const EnvValueKept = 4096

// Kept returns e as a store keeps it: a value longer than EnvValueKept is cut to its first
// EnvValueKept bytes, with the whole value's digest and length.
func (e EnvRead) Kept() EnvRead {
	if e.Digest != "" || len(e.Value) <= EnvValueKept {
		return e
	}
	e.Digest, e.Len = digest.Bytes([]byte(e.Value)).String(), len(e.Value)
	e.Value = strings.ToValidUTF8(e.Value[:EnvValueKept], "")
	return e
}

// Same reports whether e and o are the same value (or both unset), by digest when either was kept cut.
func (e EnvRead) Same(o EnvRead) bool {
	if e.Set != o.Set {
		return false
	}
	if e.Digest == "" && o.Digest == "" {
		return e.Value == o.Value
	}
	return e.Kept().Digest == o.Kept().Digest
}

// envShown is the most of a value Text quotes.
const envShown = 200

// Text is the value as a message says it: "unset", or quoted, cut past envShown bytes with its length
// and digest (a flags variable of a few hundred bytes stays whole in the report's evidence, a value
// of megabytes does not fill it).
func (e EnvRead) Text() string {
	if !e.Set {
		return "unset"
	}
	n, d := len(e.Value), e.Digest
	if d != "" {
		n = e.Len
	}
	if n <= envShown && d == "" {
		return fmt.Sprintf("%q", e.Value)
	}
	if d == "" {
		d = digest.Bytes([]byte(e.Value)).String()
	}
	cut := strings.ToValidUTF8(e.Value[:min(envShown, len(e.Value))], "")
	return fmt.Sprintf("%q… (%d bytes, %s)", cut, n, d[:len(digest.Prefix)+16])
}

// FlagsSeen is one flags string a step's tool built from an environment variable and handed on without
// logging the lookup: the variable's tokens end the string (the adapter documents the tool and version
// it observed).
type FlagsSeen struct {
	Var   string   // the variable as users know it: "CFLAGS", "CXXFLAGS"
	Names []string // the names the tool looks up, first set wins (e.g. CFLAGS_<target>, HOST_CFLAGS, CFLAGS)
	Value string   // the flags string as handed on
	// Define is where it was handed on, e.g. "-DCMAKE_C_FLAGS" of a logged CMake configure line.
	Define string
	// Len (bytes) and Digest ("blake3:<hex>") stand for a Value longer than FlagsKept that was kept
	// cut (Kept): Value then holds its last bytes only, from a token's start.
	Len    int    `json:",omitempty"`
	Digest string `json:",omitempty"`
}

// FlagsKept is the most of a flags string Kept keeps: the end of the string, where the variable's own
// tokens are (flagsChanged in internal/check compares them).
const FlagsKept = 64 << 10

// Kept returns f as a store keeps it: a Value longer than FlagsKept is cut to its last FlagsKept bytes
// or fewer, from a token's start, with the whole string's digest and length.
func (f FlagsSeen) Kept() FlagsSeen {
	if f.Digest != "" || len(f.Value) <= FlagsKept {
		return f
	}
	f.Digest, f.Len = digest.Bytes([]byte(f.Value)).String(), len(f.Value)
	tail := f.Value[len(f.Value)-FlagsKept:]
	if i := strings.IndexAny(tail, " \t"); i >= 0 {
		tail = tail[i+1:]
	} else {
		tail = ""
	}
	f.Value = strings.ToValidUTF8(tail, "")
	f.Names = slices.Clone(f.Names)
	return f
}

// Quoted is a value as a message quotes it: whole up to envShown bytes, else its first bytes with its
// length and digest.
func Quoted(v string) string { return EnvRead{Value: v, Set: true}.Text() }

// Root is an artifact users run or link: an uplifted binary or library, an example, a test binary.
type Root struct {
	File FileInfo
	Kind string // "bin", "lib", "example", "test"
	Step *Step  // the step that produced it (nil when it could not be tied)
	// TiedBy says how the root was tied to its unit: "inode", "content", "name".
	TiedBy string
	// Needed are the ELF DT_NEEDED entries of the root (the shared libraries it loads), nil when not
	// read (--no-native, not ELF); filled by internal/evidence.Annotate.
	Needed []string
}

// BuildDir is one folder of a profile's intermediate outputs (a script run's or a compile's folder).
type BuildDir struct {
	Path       string
	ProfileDir string
	Package    string
	Hash       string
	Bytes      int64
	Steps      []*Step
}

// Problem is a record that could not be read or parsed. The check goes on without it.
type Problem struct {
	Path string
	Err  string
	// Step is the step whose record Path is, when the reader knows it (nil otherwise): a finding about
	// the problem then goes with the binaries that reach the step.
	Step *Step
	// Fix, when set, is how to repair the record, said by the reader that knows what writes it (a
	// damaged trace store: trace the build again); else the rule says it from where the record lies.
	Fix string
}

// ContentMatch is what a binary's own bytes say about the copies of one library (filled by
// internal/evidence.Annotate where copies are duplicated or shadow each other).
type ContentMatch struct {
	Root    *Root
	Library string   // link name, e.g. "groth16_cuda"
	Copies  []string // the candidate copies compared (archives in script-run output folders)
	Matched []string // the copies whose distinguishing content is inside
	// Outcome is "matched", "identical", "none-inside", "unprovable" or "unknown" (cannot tell); Confidence "certain", "likely", "weak".
	Outcome, Confidence string
	// Evidence names the distinguishing features found inside (for messages).
	Evidence []string
	// Members are the archive members of the matched copy whose distinguishing features are inside: the
	// members in which it differs from the other copies (sorted; none for a copy of one object).
	Members []string
}

// Holding is what content says about a root that is older than a library it links (filled by
// internal/content.Annotate for binary-older-than-input): whether the root's bytes hold the library's
// current content, so that a newer mtime with the same content is not staleness.
type Holding struct {
	Root  *Root
	Input string // the linked library (an archive a script run made, a dependency's library)
	// Verdict is HoldsContent, DiffersContent or UnknownContent.
	Verdict string
	// Detail is the evidence (what was compared and found) or, for UnknownContent, why it could not be told.
	Detail string
}

// Holding verdicts.
const (
	HoldsContent   = "holds"   // the root provably holds the library's current content
	DiffersContent = "differs" // the root holds other content than the library now has
	UnknownContent = "unknown" // content could not decide (stripped binary, LTO, --no-native, a Rust library)
)

// Graph is everything one adapter read about one build tree.
type Graph struct {
	System      string // the adapter's system, as Step.System
	Workspace   string
	TargetDir   string
	BuildDir    string
	ProfileDirs []string // relative to BuildDir
	Steps       []*Step
	Roots       []*Root
	BuildDirs   []*BuildDir
	Problems    []Problem
	// Notes are facts about how the graph was read that a user should know (e.g. a tie left unresolved).
	Notes []string
	// GeneratedDirs are folders the build writes wholesale, apart from the user's sources (an
	// out-of-source CMake or Meson build folder): a file there that no step declares is one of the
	// build's own intermediates or records, not an input the user edits (internal/cmdargs).
	GeneratedDirs []string
	// Content holds content evidence about linked copies (see ContentMatch).
	Content []ContentMatch
	// DuplicateMembers are the archives a build made that hold several members of one name (archive.go;
	// filled by internal/evidence.Annotate).
	DuplicateMembers []DuplicateMember
	// Holdings are content answers for roots older than a library they link (see Holding).
	Holdings []Holding

	// Env is the environment stalecheck runs in, for the variables some step read (Script.EnvReads): the
	// environment the user's next build will see when stalecheck runs in the same shell.
	Env map[string]EnvRead

	// LibFiles are the library files a linker can take for the link names of live steps (lib<name>.so
	// and lib<name>.a in every link-search folder those steps print), by path, stat'ed through symlinks
	// (filled by the adapter; what ld resolves is LinkerPick).
	LibFiles map[string]FileInfo

	// Origins hold what an adapter knows of the whole tree it read, keyed by Step.System.
	Origins map[string]any

	// Unjudged maps each profile folder (relative to BuildDir) whose orphans cannot be told to the
	// reason, for people (filled by the adapter after MarkLive; see Judged).
	Unjudged map[string]string
	// liveHash holds the Keys of live steps (filled by MarkLive; see Kept).
	liveHash map[string]bool
}

// InGeneratedDir reports whether path lies in one of the folders the build writes wholesale
// (GeneratedDirs): a file the build itself writes, not one the user edits.
func (g *Graph) InGeneratedDir(path string) bool {
	for _, d := range g.GeneratedDirs {
		if strings.HasPrefix(path, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// UserCommandReads are the files besides CommandFrom that s's command draws on (CommandReads) and the
// user edits: those in folders the build writes wholesale are left out (CMake rewrites its own
// makefiles as it likes, and a build redoes what they change).
func (g *Graph) UserCommandReads(s *Step) []string {
	var out []string
	for _, r := range s.Cmd().CommandReads {
		if !g.InGeneratedDir(r) {
			out = append(out, r)
		}
	}
	return out
}

// AddProblem records an unreadable record.
func (g *Graph) AddProblem(path string, err error) {
	g.Problems = append(g.Problems, Problem{Path: path, Err: err.Error()})
}

// AddStepProblem is AddProblem for a record of step s.
func (g *Graph) AddStepProblem(s *Step, path string, err error) {
	g.Problems = append(g.Problems, Problem{Path: path, Err: err.Error(), Step: s})
}

// MarkLive is stalecheck's one notion of live, which check's orphaned-build-dir rule and clean's plan
// both use (through Judged, Kept and OrphanedBuildDirs). It walks Deps and KeepsLive from every root and
// records, on each step, the roots that reach it, and remembers the Keys of live steps for Kept. The
// adapter calls it once it has read the records liveness depends on, before any other reader, and then
// fills Unjudged with the profile folders whose orphans its records cannot tell (no tied root, an untied
// root, an unreadable record).
func (g *Graph) MarkLive() {
	for _, r := range g.Roots {
		if r.Step == nil {
			continue
		}
		seen := map[*Step]bool{}
		var walk func(s *Step)
		walk = func(s *Step) {
			if seen[s] {
				return
			}
			seen[s] = true
			s.Roots = append(s.Roots, r)
			for _, d := range s.Deps {
				walk(d)
			}
			for _, d := range s.KeepsLive {
				walk(d)
			}
		}
		walk(r.Step)
	}
	g.liveHash = map[string]bool{}
	for _, s := range g.Steps {
		if s.Live() && s.Key != "" {
			g.liveHash[s.Key] = true
		}
	}
}

// AddDep records, after MarkLive, that consumer reads a file producer makes (an input found by a later
// reader, such as an include scan reaching a generated header): producer becomes one of consumer's
// Deps, and every root that reaches consumer now reaches producer and what it depends on.
func (g *Graph) AddDep(consumer, producer *Step) {
	if consumer == producer || slices.Contains(consumer.Deps, producer) {
		return
	}
	consumer.Deps = append(consumer.Deps, producer)
	producer.Dependents = append(producer.Dependents, consumer)
	for _, r := range consumer.Roots {
		seen := map[*Step]bool{}
		var walk func(s *Step)
		walk = func(s *Step) {
			if seen[s] || slices.Contains(s.Roots, r) {
				return
			}
			seen[s] = true
			s.Roots = append(s.Roots, r)
			if s.Key != "" && g.liveHash != nil {
				g.liveHash[s.Key] = true
			}
			for _, d := range s.Deps {
				walk(d)
			}
			for _, d := range s.KeepsLive {
				walk(d)
			}
		}
		walk(producer)
	}
}

// Judged reports whether orphans can be told in a profile folder (see MarkLive), and if not, why.
func (g *Graph) Judged(prof string) (bool, string) {
	if why, ok := g.Unjudged[prof]; ok {
		return false, why
	}
	return true, ""
}

// Kept reports whether the step must be kept: it is live, or its Key equals a live step's (the build
// system resolves a dependency by that key, and keys need not be unique: a tie the records cannot break
// could hide a live step).
func (g *Graph) Kept(s *Step) bool {
	return s.Live() || s.Key != "" && g.liveHash[s.Key]
}

// OrphanedBuildDirs returns the build folders of judged profile folders none of whose units is kept,
// in BuildDirs order: what check reports as orphaned-build-dir and clean removes.
func (g *Graph) OrphanedBuildDirs() []*BuildDir {
	var out []*BuildDir
	for _, d := range g.BuildDirs {
		if ok, _ := g.Judged(d.ProfileDir); !ok {
			continue
		}
		kept := false
		for _, s := range d.Steps {
			if g.Kept(s) {
				kept = true
			}
		}
		if !kept {
			out = append(out, d)
		}
	}
	return out
}

// Reach returns the steps a root reaches, in a stable order (the root's unit first, then depth first).
func (r *Root) Reach() []*Step {
	var out []*Step
	seen := map[*Step]bool{}
	var walk func(s *Step)
	walk = func(s *Step) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
		for _, d := range s.Deps {
			walk(d)
		}
	}
	walk(r.Step)
	return out
}

// Display shortens a path for people: relative to the workspace, or to the build folder's parent (the
// workspace of a Cargo target folder elsewhere), when inside; otherwise whole. Where the build folder
// is the workspace itself (Make, a Ninja build in its source tree) its parent is not a base, nor is "/":
// a system file is never shown as if it were the user's. Text, JSON's messages and explain all use it.
func (g *Graph) Display(p string) string {
	if g == nil {
		return p
	}
	for i, base := range []string{g.Workspace, filepath.Dir(g.BuildDir)} {
		if base == "" || base == "/" || base == "." || i == 1 && g.BuildDir == g.Workspace {
			continue
		}
		if rel, err := filepath.Rel(base, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rel
		}
	}
	return p
}
