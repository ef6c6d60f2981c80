// Package safeio reads the files stalecheck is given or finds (records, configs, caches, plans,
// binaries) without trusting what they are: a FIFO, a device or a folder where a regular file belongs
// gives an error naming the path instead of a hang or an endless read, and whole-file reads are bounded.
package safeio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
func Open(path string) (*os.File, error) {
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
	if fsrec.Active() {
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
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, more than the %d this kind of file may hold", ErrTooLarge, st.Size(), max)}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
	}
	return data, nil
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

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}
