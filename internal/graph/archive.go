package graph

// DuplicateMember is an archive that holds two or more members of one name, as `ar q` (quick append)
// leaves it when an object is added again: q appends without replacing, and GNU ar 2.40 writes a
// symbol-table entry for each copy. GNU ld resolves an undefined symbol to the member the archive's
// symbol table names first for it, so a binary gets the first copy, the oldest one appended.
type DuplicateMember struct {
	Archive FileInfo // the archive file
	Step    *Step    // the step whose output the archive is
	Name    string   // the member name the copies share
	// Copies are the members of that name in archive order (the order `ar q` appended them).
	Copies []MemberCopy
	// Taken is the index in Copies of the member the linker takes: the one the symbol table names
	// first for the symbols the copies define; -1 when the archive has no symbol table (ld then
	// refuses it: "archive has no index").
	Taken int
	// Object is the object file of the member's name that the graph knows (an input of Step, or the
	// file beside the archive), as it is now; Exists false when there is none.
	Object FileInfo
	// Current is the index in Copies of the member whose bytes equal Object now; -1 when none does
	// (or there is no object).
	Current int
	// Holds says, per root that links the archive, which copy its bytes hold.
	Holds []MemberHolding
}

// MemberCopy is one member of a duplicated name.
type MemberCopy struct {
	Index  int   // position among all members of the archive (0-based)
	Offset int64 // byte offset of the member's data in the archive
	Size   int64 // bytes
	MTime  int64 // seconds, as the member header says (0 with deterministic ar, Debian's default)
	// Symbols are the global symbols the archive's symbol table gives this member.
	Symbols []string
	// Digest is the member's content digest (internal/digest's text form).
	Digest string
	// Run is the build-script run that appended this copy, as the content baselines tie it (filled by
	// internal/content.Annotate); nil when no kept baseline of Step records this copy's digest.
	Run *CopyRun
}

// CopyRun is the run of an archive's step that wrote one copy of a duplicated member: the run whose
// content baseline recorded, as the last member of that name, the copy's digest.
type CopyRun struct {
	// RunNS is that run's reference mtime (ns since the epoch).
	RunNS int64
	// SourcesNow: every input of the step (as its last run's records list them, generated files
	// excepted) has now the digest that run's baseline recorded, so a build from the files here compiles
	// this copy's code again.
	SourcesNow bool
	// Why says, when SourcesNow is false, the first input that differs or that run did not record.
	Why string
}

// MemberHolding is what one root's bytes say about the copies of a duplicated member.
type MemberHolding struct {
	Root *Root
	// Copy is the index in DuplicateMember.Copies of the copy the root holds, -1 when unknown.
	Copy int
	// Detail says what was compared (per copy: holds, differs or unknown, and why).
	Detail string
}
