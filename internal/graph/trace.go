package graph

// TraceRead is what a build trace (`stalecheck trace`, internal/trace) says of one input of a step: which
// process of the step opened it and when. internal/tracejoin fills it.
type TraceRead struct {
	File   string // the trace store file
	PID    int    // the process that read it, as strace printed it
	Exe    string // the program that process ran ("" when it never exec'd)
	Op     string // the system call ("openat", "execve")
	TimeNS int64  // when it read it (ns since the epoch)
}

// Lookup kinds.
const (
	// LookupPATH is a search of a program name along PATH (execvp, a shell, `which`).
	LookupPATH = "PATH"
	// LookupInclude is a compiler's search of a header along its include folders.
	LookupInclude = "include"
)

// Lookup is one search a step's process made in a traced build (a program on PATH, a header in the
// include folders), and the answer the same search gives now. The adapter that fills it
// (internal/tracejoin) answers it again against the file system; rules read only these fields.
type Lookup struct {
	Kind string // LookupPATH or LookupInclude
	Name string // the program ("nvcc") or header ("zlib.h") looked for
	// Search is the PATH searched (LookupPATH), or the include folders tried in order, ":"-joined.
	Search string
	Then   string // the file found when the step ran ("" when none was)
	Tried  int    // how many folders the process tried
	// Now is the answer of the same search today ("" none).
	Now string
	// NextSearch is the PATH the next build will search when it differs from Search (the environment
	// stalecheck runs in, with the toolchain folders rustup put first in the trace); NowNext its answer.
	NextSearch, NowNext string
	TraceFile           string // the trace store file
	PID                 int    // the process that searched
	Exe                 string // the program it ran
	TimeNS              int64  // when the search started (ns since the epoch)
	// Recorded is true for a lookup stalecheck answered again from the step's own records rather than
	// a trace (internal/includes): Then is a header the records say the compiler read (a depfile, DWARF),
	// found through Compile's search folders; TraceFile, PID and Exe are empty then.
	Recorded bool
	// From is the file whose #include directive made the search (Recorded lookups).
	From string
	// Differs is set on a traced include lookup that the step's records answer the same way, when the
	// file found now has other bytes than the one found then (internal/includes): the next compile reads
	// other text, which the trace alone could not tell.
	Differs bool
}

// CompilerRun is one compiler run of a step: its source, the folder it ran in, and its include search
// folders by GCC's kinds, each in command-line order (absolute).
type CompilerRun struct {
	Source string
	Dir    string
	// Quote are -iquote folders, Dirs -I folders, System -isystem folders, After -idirafter folders.
	Quote, Dirs, System, After []string
}

// Changed reports whether the search would find something else now: on the same PATH or on the next one.
func (l *Lookup) Changed() bool {
	return l.Now != l.Then || l.NextSearch != "" && l.NowNext != l.Then
}
