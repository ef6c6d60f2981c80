package ninja

import (
	"encoding/binary"
	"fmt"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// DepsRecord is the latest deps record of one output in .ninja_deps: the inputs ninja learnt from the
// compiler (deps = gcc: the depfile, which ninja then deletes; deps = msvc: /showIncludes).
type DepsRecord struct {
	Output string
	// MTime is the output's mtime when the record was written, in nanoseconds since the Unix epoch
	// (version 3 stores seconds, converted here). Ninja treats the record as out of date, and the edge
	// as dirty, when the output on disk is newer.
	MTime  int64
	Inputs []string
	// Offset is the byte offset of the record in the file.
	Offset int64
}

// DepsLog is a parsed .ninja_deps (format of ninja's src/deps_log.cc: the 12-byte signature
// "# ninjadeps\n", a little-endian int32 version (3: ninja ≤ 1.8, 32-bit mtime in seconds; 4: ninja ≥ 1.9,
// 64-bit mtime in nanoseconds), then records, each a uint32 size whose top bit marks a deps record:
// a path record is the path, NUL padding to 4 bytes and the one's complement of its id; a deps record
// is the output's id, the mtime and one id per input).
type DepsLog struct {
	Path    string
	Version int
	// Paths are the path records in id order.
	Paths []string
	// Records maps an output path to its latest deps record.
	Records map[string]*DepsRecord
	// DepsRecords counts deps records read (more than len(Records) when outputs were rebuilt).
	DepsRecords int
}

// maxDepsRecord is ninja's kMaxRecordSize: (1<<19)-1 bytes.
const maxDepsRecord = 1<<19 - 1

// ReadDeps reads and parses the .ninja_deps at path (bounded by MaxLog). Damage returns the records
// read before it and a *CorruptError.
func ReadDeps(path string) (*DepsLog, error) {
	data, err := safeio.ReadFile(path, MaxLog)
	if err != nil {
		return nil, err
	}
	return ParseDeps(path, data)
}

// ParseDeps parses the bytes of a .ninja_deps; path is used in errors only. Errors are *CorruptError:
// a bad signature or version (the returned log is nil), a truncated record, a record over ninja's size
// limit, a path record whose id check fails, a deps record naming an id not yet defined. On damage the
// returned log holds the records before it, which is what ninja keeps when it truncates the file.
func ParseDeps(path string, data []byte) (*DepsLog, error) {
	const sig = "# ninjadeps\n"
	if len(data) < len(sig)+4 || string(data[:len(sig)]) != sig {
		return nil, &CorruptError{Path: path, Reason: fmt.Sprintf("no \"# ninjadeps\\n\" signature and version (starts %q, %d bytes)", clip(data, 16), len(data))}
	}
	v := int32(binary.LittleEndian.Uint32(data[len(sig):]))
	if v != 3 && v != 4 {
		return nil, &CorruptError{Path: path, Offset: int64(len(sig)), Reason: fmt.Sprintf("deps log version %d is not 3 or 4", v)}
	}
	d := &DepsLog{Path: path, Version: int(v), Records: map[string]*DepsRecord{}}
	off := len(sig) + 4
	bad := func(at int, f string, a ...any) (*DepsLog, error) {
		return d, &CorruptError{Path: path, Offset: int64(at), Reason: fmt.Sprintf(f, a...)}
	}
	for off < len(data) {
		if len(data)-off < 4 {
			return bad(off, "truncated record header (%d of 4 bytes)", len(data)-off)
		}
		head := binary.LittleEndian.Uint32(data[off:])
		isDeps := head>>31 != 0
		size := int(head & 0x7fffffff)
		if size > maxDepsRecord {
			return bad(off, "record of %d bytes, over ninja's limit of %d", size, maxDepsRecord)
		}
		body := off + 4
		if len(data)-body < size {
			return bad(off, "truncated record: %d bytes announced, %d left", size, len(data)-body)
		}
		rec := data[body : body+size]
		if isDeps {
			head := 12
			if v == 3 {
				head = 8
			}
			if size%4 != 0 || size < head {
				return bad(off, "deps record of %d bytes (must be a multiple of 4, at least %d)", size, head)
			}
			outID := int(int32(binary.LittleEndian.Uint32(rec)))
			if outID < 0 || outID >= len(d.Paths) {
				return bad(off, "deps record for output id %d, but only %d paths are defined", outID, len(d.Paths))
			}
			var mtime int64
			if v == 3 {
				mtime = int64(binary.LittleEndian.Uint32(rec[4:])) * 1e9
			} else {
				mtime = int64(binary.LittleEndian.Uint64(rec[4:]))
			}
			r := &DepsRecord{Output: d.Paths[outID], MTime: mtime, Offset: int64(off)}
			for i := head; i < size; i += 4 {
				id := int(int32(binary.LittleEndian.Uint32(rec[i:])))
				if id < 0 || id >= len(d.Paths) {
					return bad(off, "deps record for %q names input id %d, but only %d paths are defined", r.Output, id, len(d.Paths))
				}
				r.Inputs = append(r.Inputs, d.Paths[id])
			}
			d.Records[r.Output] = r
			d.DepsRecords++
		} else {
			if size < 8 || size%4 != 0 {
				return bad(off, "path record of %d bytes (must be a multiple of 4, at least 8)", size)
			}
			n := size - 4
			for k := 0; k < 3 && n > 0 && rec[n-1] == 0; k++ {
				n--
			}
			if n == 0 {
				return bad(off, "empty path record")
			}
			check := binary.LittleEndian.Uint32(rec[size-4:])
			if want := ^uint32(len(d.Paths)); check != want {
				return bad(off, "path record %q: id check %#x, want %#x for id %d (two ninja processes wrote the log?)", rec[:n], check, want, len(d.Paths))
			}
			d.Paths = append(d.Paths, string(rec[:n]))
		}
		off = body + size
	}
	return d, nil
}
