// Package digest computes content digests of files (BLAKE3-256, written "blake3:<64 hex digits>") and keeps
// them in a persistent cache so that a file whose metadata has not changed is not read again.
//
// # The cache and its contract
//
// A cache entry is keyed by the file's identity and metadata: (device, inode, size in bytes, modification
// time and status-change time in nanoseconds). A lookup that finds the key returns the stored digest
// without opening the file. A program that rewrites a file in place while keeping its size and restoring
// its mtime (os.Chtimes, touch -r, cp -p, rsync -t, tar) still moves its ctime, which no program can set
// back, so it gets a new key and is hashed again (git's index keeps ctime for the same reason). Two more
// protections cover writes the ctime cannot tell apart:
//
//   - Racy entries are not stored: a file whose mtime or ctime is within RacyWindow of the clock when it is hashed
//     (or in the future) is hashed but not cached, because a second write in the same timestamp tick would
//     leave size and mtime unchanged (git's "racy clean" problem; coarse-timestamp file systems such as
//     FAT have 2 s ticks).
//   - A file that changes while it is being hashed (its size, mtime or ctime differ before and after) is hashed
//     again, and its digest is not cached if it keeps changing.
//
// # Storage
//
// The cache lives in one file, digests.v2, in a state folder (DefaultDir: $XDG_STATE_HOME/stalecheck, else
// ~/.local/state/stalecheck). The format is binary: an 8-byte magic, an entry count, 72-byte entries and a
// BLAKE3 checksum of everything before it. A missing, truncated or corrupt file is treated as empty; it is
// never an error that stops the caller. Save writes a temporary file in the same folder and renames it over
// the old one, so readers see either the old or the new file, never a mix; an advisory lock (flock on
// digests.lock) serializes concurrent savers, and each saver merges the entries already on disk so that
// concurrent processes do not drop each other's work.
package digest

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/zeebo/blake3"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Size is the length of a digest in bytes.
const Size = 32

// Prefix is the algorithm prefix of a digest's text form.
const Prefix = "blake3:"

// Digest is a BLAKE3-256 digest of a file's or a byte string's content. The zero value means "no digest".
// Its text form (String, MarshalText) is "blake3:" followed by 64 lower-case hex digits.
type Digest [Size]byte

// String returns "blake3:<64 hex digits>", or "" for the zero Digest.
func (d Digest) String() string {
	if d.IsZero() {
		return ""
	}
	return Prefix + hex.EncodeToString(d[:])
}

// IsZero reports whether d is the zero value (no digest).
func (d Digest) IsZero() bool { return d == Digest{} }

// MarshalText returns the text form of d (see String); the zero Digest marshals to an empty string.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses the text form written by MarshalText; an empty text gives the zero Digest.
func (d *Digest) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*d = Digest{}
		return nil
	}
	p, err := Parse(string(text))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// Parse parses "blake3:<64 hex digits>" (hex in either case). It returns an error naming the problem for
// any other algorithm prefix, a wrong length or a non-hex digit.
func Parse(s string) (Digest, error) {
	var d Digest
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok {
		return d, fmt.Errorf("digest %q: want the prefix %q", s, Prefix)
	}
	if len(rest) != 2*Size {
		return d, fmt.Errorf("digest %q: want %d hex digits after %q, have %d", s, 2*Size, Prefix, len(rest))
	}
	if _, err := hex.Decode(d[:], []byte(rest)); err != nil {
		return Digest{}, fmt.Errorf("digest %q: %w", s, err)
	}
	return d, nil
}

// Bytes returns the digest of b.
func Bytes(b []byte) Digest { return Digest(blake3.Sum256(b)) }

// bufSize is the read buffer of the streaming hash: large enough for the SIMD paths of blake3 (which
// hash several 1 KiB chunks at once), small enough that hashing many files in parallel stays cheap.
const bufSize = 128 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// Reader returns the digest of everything r yields until EOF, reading in fixed-size chunks (memory use does
// not depend on the length of the stream). It returns the first read error other than io.EOF.
func Reader(r io.Reader) (Digest, error) {
	h := blake3.New()
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	// io.CopyBuffer would hand the copy to an io.WriterTo/ReaderFrom; Hasher implements neither, but *os.File
	// implements WriterTo (which would ignore our buffer), so hide r behind a plain Reader.
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{r}, *bp); err != nil {
		return Digest{}, err
	}
	var d Digest
	h.Sum(d[:0])
	return d, nil
}

// HashFile returns the digest of the content of the regular file at path, without any cache. Errors are
// those of opening (safeio.Open: a FIFO, a device or a folder is an error, never a hang) and of reading,
// and name the path.
func HashFile(path string) (Digest, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return Digest{}, err
	}
	defer f.Close()
	d, err := Reader(f)
	if err != nil {
		return Digest{}, &os.PathError{Op: "read", Path: path, Err: unwrapPathError(err)}
	}
	return d, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
