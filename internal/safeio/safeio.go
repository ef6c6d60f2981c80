// Package safeio reads the files stalecheck is given or finds (records, configs, caches, plans,
// binaries) without trusting what they are: a FIFO, a device or a folder where a regular file belongs
// gives an error naming the path instead of a hang or an endless read, and whole-file reads are bounded.
// What stalecheck writes (caches, state, reports) goes through WriteFileAtomic: a reader sees the old
// file or the new one, never a part.
package safeio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"github.com/stalecheck/stalecheck/internal/fsrec"
)

// ErrNotRegular is wrapped by the errors for paths that are not regular files.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by ReadFile's error for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// Record limits, in bytes: what a Cargo record, config or stalecheck cache can sensibly hold.
const (
	MaxRecord = 64 << 20  // fingerprint JSON, hash files, dep-info, build-script output, depfiles, configs
	MaxCache  = 256 << 20 // stalecheck's own caches and plans
)

// Open opens path for reading only if it is a regular file (after following symlinks). It never
// blocks on a FIFO: the open is non-blocking and the type is checked on the open descriptor.
func Open(path string) (*os.File, error) { return open(path, true) }

// open is Open; noteOK false leaves a successful open unrecorded (ReadContent records the bytes).
func open(path string, noteOK bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		fsrec.NoteOpen(path, nil, err)
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fsrec.Active() && (noteOK || !st.Mode().IsRegular()) {
		fsrec.NoteOpen(path, f, nil)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode()))}
	}
	// Regular files ignore O_NONBLOCK for reads; clear it anyway so later readers see a plain file.
	_ = syscall.SetNonblock(int(f.Fd()), false)
	return f, nil
}

// ReadFile reads a whole regular file of at most max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	data, _, err := readFileInto(path, max, true, false, nil)
	return data, err
}

// ReadFileKept is ReadFile for a small record file whose bytes the next recording may take from its
// memo (internal/fsrec's memo.go) while the file has not changed: Cargo's fingerprint JSON and hash
// file of each unit, which a rebuild of a few units leaves alone.
func ReadFileKept(path string, max int64) ([]byte, error) {
	if !fsrec.Memoizing() {
		return ReadFile(path, max)
	}
	name := "safeio.read\x00" + path + "\x00" + strconv.FormatInt(max, 10)
	if b, ok := fsrec.Reuse(name); ok {
		return bytes.Clone(b), nil
	}
	data, err := ReadFile(path, max)
	if err == nil {
		fsrec.Keep(name, path, data)
	}
	return data, err
}

// ReadFileKeptInto is ReadFileKept for a caller that only reads the bytes, and is done with them before
// it reads the next file: they are read into *buf (grown as needed and kept there), or are a memo's own,
// so a reader of tens of thousands of small records (a large tree's fingerprints) makes a buffer per
// worker instead of one per file. The bytes must not be changed.
func ReadFileKeptInto(path string, max int64, buf *[]byte) ([]byte, error) {
	var name string
	if fsrec.Memoizing() {
		name = "safeio.read\x00" + path + "\x00" + strconv.FormatInt(max, 10)
		if b, ok := fsrec.Reuse(name); ok {
			return b, nil
		}
	}
	data, _, err := readFileInto(path, max, true, false, *buf)
	if err != nil {
		return nil, err
	}
	if cap(data) > cap(*buf) {
		*buf = data[:0]
	}
	if name != "" {
		fsrec.Keep(name, path, bytes.Clone(data))
	}
	return data, nil
}

// ReadListedInto is ReadFileKeptInto for a record file that the caller found by listing its folder,
// which said whether it is a regular file (listedRegular): with no recording going on (a check without
// the verdict cache), such a file is read without its fstat (readListedRegular). Everything else takes
// ReadFileKeptInto.
func ReadListedInto(path string, max int64, buf *[]byte, listedRegular bool) ([]byte, error) {
	if listedRegular && !fsrec.Active() {
		if data, ok := readListedRegular(path, max, *buf); ok {
			if cap(data) > cap(*buf) {
				*buf = data[:0]
			}
			return data, nil
		}
	}
	return ReadFileKeptInto(path, max, buf)
}

// ReadContent is ReadFile for a caller that uses only the bytes, not the file's mtime, size or inode:
// the verdict cache records the bytes' checksum (fsrec.OpContent), so a rewrite with the same bytes
// (Cargo's uplifted `<bin>.d` on every no-op build) keeps a cached verdict valid. A failed read is
// recorded by the file's signature.
func ReadContent(path string, max int64) ([]byte, error) {
	data, st, err := readFile(path, max, false)
	if err == nil {
		fsrec.NoteContent(path, st, data)
	} else if st != nil {
		fsrec.NoteInfo(path, st) // too large or unreadable: the answer depends on all of it
	}
	return data, err
}

func readFile(path string, max int64, noteOpen bool) ([]byte, os.FileInfo, error) {
	return readFileInto(path, max, noteOpen, true, nil)
}

// readFileInto reads path into into (when large enough); its FileInfo is returned when wantInfo (it
// may be nil otherwise).
func readFileInto(path string, max int64, noteOpen, wantInfo bool, into []byte) ([]byte, os.FileInfo, error) {
	if data, fi, handled, err := readFileDirect(path, max, noteOpen, wantInfo, into); handled {
		return data, fi, err
	}
	f, err := open(path, noteOpen)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() > max {
		return nil, st, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, more than the %d this kind of file may hold", ErrTooLarge, st.Size(), max)}
	}
	// One buffer of the size stat gave (plus a byte to see growth): io.ReadAll's doubling held up to
	// twice a large file (a 72 MB verdict) in copies.
	lr := io.LimitReader(f, max+1)
	data := make([]byte, st.Size()+1)
	n, err := io.ReadFull(lr, data)
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF: // the size stat gave, or less
		data = data[:n]
	case err != nil:
		return nil, st, err
	default: // the file grew since the stat: read the rest
		more, err := io.ReadAll(lr)
		if err != nil {
			return nil, st, err
		}
		data = append(data, more...)
	}
	if int64(len(data)) > max {
		return nil, st, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
	}
	return data, st, nil
}

// Regular reports an error unless path (after symlinks) is a regular file, without opening it.
func Regular(path string) error {
	st, err := fsrec.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return &fs.PathError{Op: "stat", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode()))}
	}
	return nil
}

func kind(m fs.FileMode) string { return Kind(m) }

// Kind names the type of a file of mode m for messages, with its article: "a folder", "a FIFO", "a
// symbolic link", "a regular file".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsRegular():
		return "a regular file"
	}
	return m.Type().String()
}
