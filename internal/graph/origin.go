package graph

// The adapter contract. An adapter (internal/cargo, internal/makefile, internal/ninja, internal/gocgo)
// reads its build system's records into Steps with the neutral fields filled, and keeps what only it
// knows in each Step's Origin (and in Graph.Origins, keyed by Step.System). Rules read the neutral
// fields; where what a rule says depends on the system, the Origin answers through one of these
// interfaces, each optional:
//
//   - Worded: the system's words for messages ("make has it as a prerequisite of a.o").
//   - Rebuilder: the commands that redo the step, when the system knows it must and when it must be
//     made to see an input.
//   - ConfigDiffer: what a program the build runs sees differently between two configurations.
//   - DepOutputChooser: which output of a dependency the system compares a step against.
//   - Declarer: what a script run declared to its system (what makes it run again).
//   - RecordKeeper: the neutral Records a system keeps of a step besides inputs and outputs
//     (configuration features, declarations, dependency edges whose records are gone; records.go).
//   - Verdicter: what the system's own dry run says of the step (make -q -n -p, ninja -n -d explain).
//   - OwnReasoner: a reason of the system's own to redo the step besides a newer input (Ninja's
//     command hash).
//   - DepfileGapper: whether a compile's headers escape the system (no depfile), and the fix.
//   - Decider: how the system decides to redo a step (ByMtime, the default; ByRecord: Cargo's
//     fingerprints; ByContent): rules choose their path by it, never by Step.System.
//   - ContentComparer: the system compares content, not mtimes (Go's build cache; Decides ByContent).
//   - Watcher: whether the system reruns the step for a file that is not among its inputs (a Cargo
//     build script, for the inputs of a Make build it drives: AttachDriven).
//
// and a Graph.Origins value may be a BuildFoldered (the folder a system's build was read in, for
// reports and for scoping a path to one build) or a CopyLister (folders holding copies of a package
// that a build may take: records.go).

// Worded is implemented by an adapter's Origin that supplies its system's Words.
type Worded interface {
	Words() Words
}

// Rebuilder is implemented by an Origin that knows its system's fix commands.
type Rebuilder interface {
	// Rebuild is the command that redoes the step s (whose Origin this is) when the build system knows
	// it must: the build of s's configuration.
	Rebuild(s *Step) string
	// ForceRebuild is what makes the build system see input (absolute path) and redo the step s.
	ForceRebuild(s *Step, input string) string
}

// ConfigDiffer is implemented by an Origin whose build system hands a step's configuration to the
// programs it runs (Cargo gives a build script CARGO_FEATURE_<NAME>, PROFILE, TARGET, …): ConfigDiff
// names what such a program of a (whose Origin this is) sees differently in b's configuration.
type ConfigDiffer interface {
	ConfigDiff(a, b *Step) []string
}

// DepOutputChooser is implemented by an Origin whose build system compares a step against one chosen
// output of a dependency rather than the newest (Cargo's pipelining: a library built only for its
// dependents' metadata needs the dependency's .rmeta alone).
type DepOutputChooser interface {
	// ComparedOutput returns the output of dependency d the system compares s against, its mtime and why
	// that one; ok false when the system compares d's newest output.
	ComparedOutput(s, d *Step) (path string, ns int64, why string, ok bool)
}

// Declarer is implemented by an Origin of a script run whose script declares to its build system what
// makes it run again (Cargo's rerun-if-changed and rerun-if-env-changed lines).
type Declarer interface {
	// Declarations lists what the run s declared, in the system's own spelling.
	Declarations(s *Step) []string
}

// Verdicter is implemented by an Origin whose build system was asked (dry run) what it would redo.
type Verdicter interface {
	// Verdict says, in words, whether the build system's dry run would redo the step; ok false when it
	// was not asked.
	Verdict() (verdict string, ok bool)
}

// OwnReasoner is implemented by an Origin whose build system redoes a step for a reason of its own
// besides a newer watched input (Ninja: the edge's command differs from the one its log records).
type OwnReasoner interface {
	// OwnReason says why, with the record that shows it (the manifest holding the edge); ok false when
	// there is no such reason.
	OwnReason() (why, record string, ok bool)
}

// DepfileGapper is implemented by an Origin whose compile may read headers its build system never
// learns (Make and Ninja compiles).
type DepfileGapper interface {
	// DepfileGap returns the rule (with where it is defined), the compile command, the depfile the
	// rule names or the path looked for ("" when none), whether that file is on disk, and why in
	// words; why is "" when the build system learns the headers.
	DepfileGap() (rule, command, depfile string, onDisk bool, why string)
	// DepfileFix is the change that closes the gap, then the rebuild.
	DepfileFix() string
}

// Decision is how a step's build system decides to run the step again. Rules read it instead of the
// system's name: what differs between systems is what they compare.
type Decision int

const (
	// ByMtime: an input the system watches is newer than the step's Reference (Make, Ninja: CMake's and
	// Meson's builds too). The default for an Origin that does not say.
	ByMtime Decision = iota
	// ByRecord: the system's own records of each step (Cargo's fingerprints: the recorded mtimes of
	// rerun-if-changed paths and dep-info files, hashes of flags and dependency edges), which give
	// reasons of their own (a unit with no success on record is built whatever changed; a dependency
	// whose records are gone).
	ByRecord
	// ByContent: content hashes of what it watches, whatever the mtimes (Go's build IDs; ContentComparer).
	ByContent
)

// Decider is implemented by an Origin whose build system decides other than ByMtime.
type Decider interface {
	Decides() Decision
}

// Decides is how the step's build system decides to run it again (Decider, else ContentComparer, else
// ByMtime).
func (s *Step) Decides() Decision {
	if d, ok := s.Origin.(Decider); ok {
		return d.Decides()
	}
	if s.ComparesContent() {
		return ByContent
	}
	return ByMtime
}

// ContentComparer is implemented by an Origin whose build system redoes a step when a watched input's
// content changes, whatever its mtime (Go's build cache hashes the files of a package). For such a step
// the content baseline of a watched input is what the build used whenever the step's outputs exist, and a
// watched input whose content differs from it is what the next build redoes; an unwatched input has no
// such baseline (a build that did not redo the step still moved its reference).
type ContentComparer interface {
	ComparesContent() bool
}

// Watcher is implemented by an Origin whose build system can say whether it reruns the step when a
// file changes, for files that are not among the step's own inputs (the inputs of a build it drives).
type Watcher interface {
	// WatchedBy names the declaration that makes the build system rerun s when p changes ("" when
	// none does).
	WatchedBy(s *Step, p string) string
}

// BuildFoldered is implemented by a Graph.Origins value that was read from one build folder.
type BuildFoldered interface {
	BuildFolder() string
}

// Copier is implemented by an Origin whose step copies its input as it is (an install into a prefix):
// the copy holds what the input held when the step ran, whatever kind of file it is (a shared library
// copied is as old as the copy, not loaded from where it was built).
type Copier interface {
	Copies() bool
}

// Copies reports whether the step copies its input as it is (Copier).
func (s *Step) Copies() bool {
	c, ok := s.Origin.(Copier)
	return ok && c.Copies()
}
