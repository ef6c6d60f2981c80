// Package ledger records benchmark runs: what was run (command, folder), how long it took and how it ended,
// and the exact build identity it ran (binary digests and build-ids, the native libraries linked, source
// digests, git state, toolchain versions, environment), so that two timings can be compared knowing
// whether they timed the same code.
//
// # Backends
//
// A ledger is a SQLite file by default (modernc.org/sqlite, pure Go; WAL mode, a 10 s busy timeout,
// synchronous=FULL, write transactions that take the write lock when they begin) or a PostgreSQL database
// given by a postgres:// or postgresql:// URL (pgx; a 5 s connect timeout unless the URL sets
// connect_timeout). Both hold the same schema, each with its own DDL:
//
//	schema_version(version, applied_ns)   one row per applied migration; the ledger's version is the highest
//	records(id, name, start_ns, wall_ns, user_ns, sys_ns, peak_rss_bytes, exit_status, work_dir, stale,
//	        findings, git_head, git_dirty, rss_floor_bytes,      rss_floor_bytes since schema version 2
//	        identity_id, command)                                since version 3: identities.id, and
//	                                                             Record.Command (uvarint n, n × str)
//	identities(id, key, identity)   since version 3: one row per build identity, shared by every run of
//	                                that build: identity is Identity without Git (binaries, natives,
//	                                sources, toolchain, env) in the binary encoding of identities.go
//	                                (strings byte for byte, maps sorted), key "sha256:<hex>" of it (UNIQUE)
//	records.machine                 since version 4: Record.Machine as JSON (NULL when unknown)
//
// Records written before version 3 keep their rows in the child tables, read as before:
//
//	args(record_id, ord, arg)                                   Record.Command, in order
//	binaries(record_id, ord, path, size, digest, build_id)      Identity.Binaries, in order
//	natives(record_id, ord, library, path, fingerprint, config) Identity.Natives, in order (config is JSON)
//	sources(record_id, ord, path, digest)                       Identity.Sources, in order
//	toolchain(record_id, tool, version)                         Identity.Toolchain
//	env(record_id, name, value)                                 Identity.Env
//
// Indexes: records (name, id), (start_ns), (stale, id), (identity_id).
//
// Times are integer nanoseconds (start_ns since the Unix epoch), sizes are bytes. Findings are stored as
// the exact JSON text given. Opening a ledger applies the migrations it lacks, in one transaction, and
// refuses a ledger written by a newer stalecheck (SchemaTooNewError); a damaged SQLite file is named as
// such (CorruptError), also when the damage makes the schema version read as a number out of range.
// OpenReadOnly, for commands that only read (runs, diff), never creates, migrates or writes: a missing
// SQLite file is an error (MissingError), and a read-only file or folder can be read. Insert writes a record and all its
// rows in one transaction: a reader sees all of a record or none of it, also when the writer is killed.
// Delete (stalecheck runs --prune) removes records with their rows, and Import (runs --import) inserts
// records exported as JSON keeping their times, skipping those already present (SameRun); each in one
// transaction.
//
// PostgreSQL TEXT holds only valid UTF-8 without NUL bytes; Insert into a PostgreSQL ledger refuses a
// record with another string (naming the field) rather than store something else. SQLite stores strings
// byte for byte. Tables go into the first schema of the search_path (a search_path parameter in the URL
// selects another).
package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/stalecheck/stalecheck/internal/machine"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Record is one benchmark run.
type Record struct {
	// ID is assigned by Insert; it increases with each insert into a ledger.
	ID int64 `json:"id"`
	// Name labels the benchmark (e.g. "msm-2^20"); runs with the same name are comparable.
	Name string `json:"name"`
	// Start is when the command was started. It is stored with nanosecond precision and read back in the
	// local time zone, without a monotonic clock reading. The zero Time is stored as 0 and read back as the
	// zero Time.
	Start time.Time `json:"start"`
	// WallNS, UserNS and SysNS are the elapsed, user CPU and system CPU times in nanoseconds.
	WallNS int64 `json:"wall_ns"`
	UserNS int64 `json:"user_ns"`
	SysNS  int64 `json:"sys_ns"`
	// PeakRSSBytes is the peak resident set size in bytes (getrusage ru_maxrss × 1024 on Linux).
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// RSSFloorBytes is the floor of PeakRSSBytes in bytes: the resident set of the process that started the
	// command, which Linux counts into the command's peak at exec. A PeakRSSBytes at or barely above it
	// says only that the command's own peak was at most that much. 0 when unknown (records of schema
	// version 1).
	RSSFloorBytes int64 `json:"rss_floor_bytes"`
	// ExitStatus is the command's exit status; a command killed by signal N is 128+N.
	ExitStatus int `json:"exit_status"`
	// Command is the argument vector that was run, program first.
	Command []string `json:"command"`
	// WorkDir is the absolute folder the command ran in.
	WorkDir string `json:"work_dir"`
	// Stale says the check found the build stale and the run went ahead anyway (--allow-stale).
	Stale bool `json:"stale"`
	// Findings are the check findings when Stale (a JSON list, stored and returned byte for byte); nil
	// otherwise. A JSON null is stored as nil.
	Findings json.RawMessage `json:"findings"`
	// Identity is what was run.
	Identity Identity `json:"identity"`
	// Machine is the state of the machine during the run (internal/machine); nil when unknown (records
	// of schema version 3 or older).
	Machine *machine.Conditions `json:"machine,omitempty"`
}

// Identity is the build identity of a run: enough to tell whether two runs timed the same code.
type Identity struct {
	Binaries  []Binary          `json:"binaries"`
	Natives   []Native          `json:"natives"`
	Sources   []Source          `json:"sources"`
	Git       Git               `json:"git"`
	Toolchain map[string]string `json:"toolchain"` // "rustc", "cargo", "nvcc" -> the version line it prints
	Env       map[string]string `json:"env"`       // the environment variables that affect the build or the run
	// Key is set on identities read from a ledger of schema version 3: the identities row's key,
	// "sha256:<hex>" of the encoding of every field above but Git, so equal keys mean equal identities
	// (runner.BuildKey memoizes on it). "" otherwise; not part of the JSON. A caller that changes a read
	// identity must clear it.
	Key string `json:"-"`
}

// Binary is one executable or shared library the run executed or loaded.
type Binary struct {
	Path    string `json:"path"`     // absolute path
	Size    int64  `json:"size"`     // bytes
	Digest  string `json:"digest"`   // content digest, "blake3:<hex>"
	BuildID string `json:"build_id"` // ELF build-id in hex, "" when the binary has none
}

// Native is one native library (C, C++, CUDA) linked into a binary of the run.
type Native struct {
	Library     string       `json:"library"`     // file name, e.g. "libgroth16_cuda.a"
	Path        string       `json:"path"`        // the copy the binary's bytes match
	Fingerprint string       `json:"fingerprint"` // section-content fingerprint of that copy
	Config      NativeConfig `json:"config"`      // how that copy was built
}

// NativeConfig is the build configuration of a native library copy.
type NativeConfig struct {
	Features []string          `json:"features,omitempty"` // Cargo features of the package that built it, e.g. ["timing"]
	Settings map[string]string `json:"settings,omitempty"` // other settings: "profile", "target", "rustflags", …
}

// Source is one source file of the build.
type Source struct {
	Path   string `json:"path"`   // absolute path
	Digest string `json:"digest"` // content digest, "blake3:<hex>"
}

// Git is the state of the work tree.
type Git struct {
	Head  string `json:"head"`  // commit hash of HEAD, "" outside a repository
	Dirty bool   `json:"dirty"` // tracked files differ from HEAD
}

// Filter selects records for List.
type Filter struct {
	Name  string // only records with this exact name; "" for all
	Limit int    // at most this many records, newest first; 0 or less for no limit
}

// Ledger is a store of records. Implementations are safe for concurrent use by several goroutines, and
// several processes may use one ledger at once.
type Ledger interface {
	// Insert stores r and all its identity rows in one transaction, sets r.ID and returns it. r.ID on
	// entry is ignored. Errors: invalid Findings JSON, a string PostgreSQL cannot hold (naming the field),
	// and database errors (the record is then not stored).
	Insert(ctx context.Context, r *Record) (int64, error)
	// Get returns the record with the given ID, identity included. A missing ID gives an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, id int64) (*Record, error)
	// List returns the records f selects, newest (highest ID) first, identities included.
	List(ctx context.Context, f Filter) ([]Record, error)
	// Delete removes the records with the given IDs and all their identity rows, in one transaction
	// (all of them or none), and returns how many records it removed (IDs not in the ledger are not
	// counted). A build identity (shared by the runs of one build) goes when no record names it any more. IDs are never reused: SQLite's AUTOINCREMENT and PostgreSQL's identity
	// column keep increasing. Errors: a ledger opened read-only, database errors (nothing removed).
	Delete(ctx context.Context, ids []int64) (int, error)
	// Import inserts recs in one transaction, keeping each record's own start, timings and identity (its
	// ID is ignored and assigned anew), and sets their IDs. A record SameRun finds already in the ledger
	// (or earlier in recs) is not inserted again: its result says Duplicate, with the ID of the copy.
	// Errors name the record by its 1-based index in recs ("record 3: …"), as Insert's do, and leave the
	// ledger as it was; a ledger opened read-only refuses.
	Import(ctx context.Context, recs []Record) ([]ImportResult, error)
	// Close releases the connections.
	Close() error
}

// ImportResult is what Import did with one record.
type ImportResult struct {
	ID        int64 // the record's new ID, or (Duplicate) the ID of the copy already in the ledger
	Duplicate bool  // the record was already in the ledger (SameRun) and was not inserted again
}

// ErrNotFound is wrapped by the error Get returns for an ID that is not in the ledger.
var ErrNotFound = errors.New("no such record")

// SchemaTooNewError is returned by Open for a ledger whose schema was written by a newer stalecheck.
type SchemaTooNewError struct {
	Ledger  string // the ledger's location: a file path, or a PostgreSQL URL without its password
	Version int    // the ledger's schema version
	Known   int    // the newest schema version this build knows
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("ledger %s has schema version %d; this stalecheck knows up to %d; upgrade stalecheck",
		e.Ledger, e.Version, e.Known)
}

// CorruptError is returned when a SQLite ledger's file is damaged: SQLite reports a malformed database
// image, or a schema version out of range that PRAGMA quick_check explains by damage.
type CorruptError struct {
	Ledger string // the ledger's absolute path
	Detail string // what SQLite said (the first problem quick_check names, or the error)
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("ledger %s is corrupt (damaged database file): %s; restore it from a copy, or move it away so that stalecheck run starts a new one", e.Ledger, e.Detail)
}

// MissingError is returned by OpenReadOnly for a SQLite ledger file that does not exist: a read-only
// command never creates a ledger, so a mistyped path is reported instead of read as an empty ledger.
type MissingError struct {
	Ledger string // the absolute path
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("ledger %s does not exist (stalecheck run creates it at the first run; check --ledger and $%s)", e.Ledger, "STALECHECK_LEDGER")
}

// Unwrap makes errors.Is(err, fs.ErrNotExist) hold.
func (e *MissingError) Unwrap() error { return fs.ErrNotExist }

// DefaultPath returns the default SQLite ledger: $XDG_STATE_HOME/stalecheck/ledger.db when XDG_STATE_HOME
// is an absolute path, else $HOME/.local/state/stalecheck/ledger.db; "" when neither is set.
func DefaultPath() string {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "stalecheck", "ledger.db")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "state", "stalecheck", "ledger.db")
	}
	return ""
}

// IsPostgres reports whether dsn names a PostgreSQL ledger (it starts with postgres:// or postgresql://).
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// urlScheme matches the scheme of a URL ("mysql://…"); a SQLite path never starts like that.
var urlScheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`) })

// CheckDSN says whether dsn can name a ledger at all, without opening it: a URL of another scheme than
// postgres:// or postgresql:// is refused (it is not a file path either), a PostgreSQL URL must parse
// (no connection is made), and an existing SQLite file,
// or one of the journal files SQLite keeps beside it, must be a regular file (after symlinks): a FIFO
// would hang SQLite's first read and a device would feed it garbage.
func CheckDSN(dsn string) error {
	if IsPostgres(dsn) {
		// A URL pgx cannot parse (a bad port, sslmode or connect_timeout) is refused before any command
		// runs; pgx's message shows the URL with its password masked.
		if _, err := pgConfig(dsn); err != nil {
			return fmt.Errorf("ledger: PostgreSQL URL: %w", err)
		}
		return nil
	}
	if m := urlScheme().FindStringSubmatch(dsn); m != nil {
		return fmt.Errorf("unsupported ledger URL scheme %s: use a file path or postgres://", m[1])
	}
	if dsn == "" {
		dsn = DefaultPath()
		if dsn == "" {
			return nil
		}
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		err := safeio.Regular(dsn + suffix)
		var pe *fs.PathError
		switch {
		case err == nil || errors.Is(err, fs.ErrNotExist):
		case errors.As(err, &pe):
			return fmt.Errorf("ledger %s: %w", pe.Path, pe.Err)
		default:
			return fmt.Errorf("ledger %s: %w", dsn+suffix, err)
		}
	}
	return nil
}

// Open opens (creating and migrating when needed) the ledger dsn names:
//
//   - "": the SQLite file DefaultPath, creating its folder (mode 0700);
//   - "postgres://…" or "postgresql://…": a PostgreSQL database (pgx URL syntax); Open gives up on a server
//     that does not answer within the connect timeout (connect_timeout in the URL, else 5 s) plus 1 s;
//   - another URL ("mysql://…"): an error (CheckDSN);
//   - anything else: the path of a SQLite file (its folder must exist; the file, when it exists, must be
//     a regular file).
//
// Errors name the ledger: an unreachable PostgreSQL server (with its host and port), a file that is not a
// SQLite database (or not a regular file), a failed migration, and *SchemaTooNewError for a ledger written
// by a newer stalecheck.
func Open(ctx context.Context, dsn string) (Ledger, error) {
	if err := CheckDSN(dsn); err != nil {
		return nil, err
	}
	if IsPostgres(dsn) {
		return openPostgres(ctx, dsn)
	}
	if dsn == "" {
		dsn = DefaultPath()
		if dsn == "" {
			return nil, errors.New("ledger: no default ledger path: neither XDG_STATE_HOME (absolute) nor HOME is set")
		}
		if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
	}
	return openSQLite(ctx, dsn)
}

// OpenReadOnly opens the ledger dsn names (as Open does) for reading only: it never creates, migrates or
// writes anything, so it works on a ledger the user may only read (a read-only file or folder). A SQLite
// file that does not exist is a *MissingError; a PostgreSQL database without stalecheck's tables reads as
// an empty ledger; a ledger of an older schema version is read as it is. Insert on the result fails.
// Errors are as Open's, plus *MissingError and *CorruptError.
func OpenReadOnly(ctx context.Context, dsn string) (Ledger, error) {
	if err := CheckDSN(dsn); err != nil {
		return nil, err
	}
	if IsPostgres(dsn) {
		return openPostgresRO(ctx, dsn)
	}
	if dsn == "" {
		dsn = DefaultPath()
		if dsn == "" {
			return nil, errors.New("ledger: no default ledger path: neither XDG_STATE_HOME (absolute) nor HOME is set")
		}
	}
	return openSQLiteRO(ctx, dsn)
}
