package ninja

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// MaxLog is the largest .ninja_log or .ninja_deps file read, in bytes. A large Chromium build's log is
// tens of megabytes; ninja recompacts both logs when they grow past three times their live entries.
const MaxLog = 512 << 20

// CorruptError is returned for a .ninja_log or .ninja_deps that is damaged: a bad signature, an
// unknown version, a malformed line, a truncated or inconsistent record. Path names the file; Offset is
// the byte offset of the damage; Line is the 1-based line number for .ninja_log (0 for .ninja_deps).
type CorruptError struct {
	Path   string
	Offset int64
	Line   int
	Reason string
}

func (e *CorruptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: line %d: %s", e.Path, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: at byte %d: %s", e.Path, e.Offset, e.Reason)
}

// LogEntry is one line of .ninja_log: the last run of the edge that wrote Output.
type LogEntry struct {
	// StartMS and EndMS are milliseconds since the start of the ninja invocation that ran the edge.
	StartMS, EndMS int64
	// MTime is the recorded mtime in nanoseconds since the Unix epoch (0: none). What it is depends on
	// the writer (see Log.MTimeMeaning): ninja 1.9–1.11 (log v5) record the newest output mtime after
	// the command ran (or, for a restat edge that left its outputs alone, the newest input's);
	// ninja ≥ 1.12 (v6, v7) record the filesystem time when the command started (the mtime of
	// .ninja_lock), except for restat and generator edges, which keep the output's mtime. Seconds
	// written by ninja < 1.9 (v5 with a value under 1e11) are converted to nanoseconds.
	MTime int64
	// RawMTime is the field as written.
	RawMTime int64
	Output   string
	// CommandHash is the hash of the evaluated command: MurmurHash64A for v5 and v6, rapidhash for v7.
	CommandHash uint64
	// Line is the 1-based line number of the entry in the file.
	Line int
}

// Log is a parsed .ninja_log (format of ninja's src/build_log.cc: a "# ninja log vN" line, then one
// tab-separated line per output: start ms, end ms, mtime, output path, command hash in hex).
type Log struct {
	Path    string
	Version int
	// Entries maps each output path (as written in the manifest) to its latest entry: later lines
	// override earlier ones, as ninja reads them.
	Entries map[string]*LogEntry
	// Lines is the number of entry lines read (more than len(Entries) when runs appended).
	Lines int
	// Truncated is set when the last line has no newline (an interrupted write); ninja skips that
	// line, and so does Log.
	Truncated bool
}

// MTimeMeaning says in words what LogEntry.MTime holds for this log's version.
func (l *Log) MTimeMeaning() string {
	switch l.Version {
	case 5:
		return "newest output mtime after the command (ninja 1.9–1.11)"
	default:
		return "filesystem time when the command started (ninja ≥ 1.12; restat/generator edges: output mtime)"
	}
}

// HashName names the command hash function of this log's version.
func (l *Log) HashName() string {
	if l.Version >= 7 {
		return "rapidhash"
	}
	return "MurmurHash64A"
}

// ReadLog reads and parses the .ninja_log at path (bounded by MaxLog). A missing file returns an error
// satisfying errors.Is(err, fs.ErrNotExist). Damage returns the entries read before it and a
// *CorruptError.
func ReadLog(path string) (*Log, error) {
	data, err := safeio.ReadFile(path, MaxLog)
	if err != nil {
		return nil, err
	}
	return ParseLog(path, data)
}

// ParseLog parses the bytes of a .ninja_log; path is used in errors only. It accepts versions 5, 6
// and 7 (ninja 1.9 to 1.13). Errors are *CorruptError; the returned Log holds what was read before the
// damage (nil when the signature itself is bad).
func ParseLog(path string, data []byte) (*Log, error) {
	const sig = "# ninja log v"
	nl := bytes.IndexByte(data, '\n')
	if !bytes.HasPrefix(data, []byte(sig)) || nl < 0 {
		if len(data) == 0 {
			return nil, &CorruptError{Path: path, Line: 1, Reason: "empty file, no \"# ninja log vN\" signature"}
		}
		return nil, &CorruptError{Path: path, Line: 1, Reason: fmt.Sprintf("no \"# ninja log vN\" signature (starts %q)", clip(data, 24))}
	}
	v, err := strconv.Atoi(string(data[len(sig):nl]))
	if err != nil {
		return nil, &CorruptError{Path: path, Line: 1, Reason: fmt.Sprintf("bad version %q", clip(data[len(sig):nl], 16))}
	}
	if v < 5 || v > 7 {
		return nil, &CorruptError{Path: path, Line: 1, Reason: fmt.Sprintf("log version %d is not one of 5, 6, 7 (ninja 1.9–1.13)", v)}
	}
	l := &Log{Path: path, Version: v, Entries: map[string]*LogEntry{}}
	off := nl + 1
	line := 1
	for off < len(data) {
		line++
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			l.Truncated = true
			break
		}
		rec := data[off : off+end]
		e, reason := parseLogLine(rec)
		if reason != "" {
			return l, &CorruptError{Path: path, Offset: int64(off), Line: line, Reason: reason}
		}
		e.Line = line
		if v == 5 && e.RawMTime > 0 && e.RawMTime < 1e11 {
			e.MTime = e.RawMTime * 1e9
		}
		l.Entries[e.Output] = e
		l.Lines++
		off += end + 1
	}
	return l, nil
}

func parseLogLine(rec []byte) (*LogEntry, string) {
	f := bytes.SplitN(rec, []byte{'\t'}, 5)
	if len(f) != 5 {
		if len(rec) > 0 && rec[0] == '#' {
			return nil, fmt.Sprintf("a second header line %q", clip(rec, 24))
		}
		return nil, fmt.Sprintf("%d tab-separated fields, want 5 (start, end, mtime, output, hash)", len(f))
	}
	num := func(b []byte, what string) (int64, string) {
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return 0, fmt.Sprintf("%s %q is not a decimal integer", what, clip(b, 24))
		}
		return n, ""
	}
	e := &LogEntry{}
	var r string
	if e.StartMS, r = num(f[0], "start time"); r != "" {
		return nil, r
	}
	if e.EndMS, r = num(f[1], "end time"); r != "" {
		return nil, r
	}
	if e.RawMTime, r = num(f[2], "mtime"); r != "" {
		return nil, r
	}
	e.MTime = e.RawMTime
	if len(f[3]) == 0 {
		return nil, "empty output path"
	}
	e.Output = string(f[3])
	h, err := strconv.ParseUint(string(f[4]), 16, 64)
	if err != nil {
		return nil, fmt.Sprintf("command hash %q is not 64-bit hex", clip(f[4], 24))
	}
	e.CommandHash = h
	return e, ""
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// isNotExist reports a missing file.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
