package safeio

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/stalecheck/stalecheck/internal/fsrec"
)

// readFileDirect is readFile through the system calls themselves: open (non-blocking, so a FIFO never
// blocks), fstat, read until end of file, close. An os.File costs three to four calls more per file
// (the poller's registration, the flag calls of SetNonblock, a second fstat), and a check reads
// tens of thousands of small records (a fingerprint's hash file and JSON per unit). The bytes are read
// into into when it is large enough. handled is false when the caller should take the portable path
// instead (never on Linux). The file's FileInfo is made only where it is used (wantInfo, or the
// recording notes the file): a reader of tens of thousands of records discards it.
func readFileDirect(path string, max int64, noteOpen, wantInfo bool, into []byte) (data []byte, fi os.FileInfo, handled bool, err error) {
	fd, err := fsrec.OpenFD(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC)
	if err != nil {
		if err == syscall.ENXIO {
			// A socket cannot be opened at all: say what it is, as for a FIFO or a folder.
			if st, serr := os.Stat(path); serr == nil && st.Mode()&fs.ModeSocket != 0 {
				err = fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode()))
			}
		}
		err = &fs.PathError{Op: "open", Path: path, Err: err}
		fsrec.NoteOpen(path, nil, err)
		return nil, nil, true, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	for {
		err = syscall.Fstat(fd, &st)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, nil, true, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	regular := st.Mode&syscall.S_IFMT == syscall.S_IFREG
	if wantInfo || fsrec.Active() && (noteOpen || !regular) {
		info := fsrec.StatInfo(baseName(path), &st)
		fi = info
		if fsrec.Active() && (noteOpen || !regular) {
			fsrec.NoteInfo(path, info)
		}
	}
	if !regular {
		return nil, fi, true, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(fsrec.ModeOf(st.Mode)))}
	}
	if st.Size > max {
		return nil, fi, true, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, more than the %d this kind of file may hold", ErrTooLarge, st.Size, max)}
	}
	// One buffer of the size fstat gave plus a byte, to see a file that grew since: the caller's when
	// it is large enough.
	var buf []byte
	if int64(cap(into)) > st.Size {
		buf = into[:st.Size+1]
	} else {
		buf = make([]byte, st.Size+1)
	}
	n := 0
	for {
		if n == len(buf) {
			if int64(n) > max {
				return nil, fi, true, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
			}
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, rerr := syscall.Read(fd, buf[n:])
		if rerr == syscall.EINTR || rerr == syscall.EAGAIN {
			continue
		}
		if rerr != nil {
			return nil, fi, true, &fs.PathError{Op: "read", Path: path, Err: rerr}
		}
		if m == 0 {
			break
		}
		n += m
		if n == int(st.Size) && m < len(buf)-(n-m) {
			// A read of a regular file that returns less than asked has met its end: the file held
			// no more than fstat said, so a second read to see 0 bytes would only cost a system call.
			break
		}
	}
	if int64(n) > max {
		return nil, fi, true, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
	}
	return buf[:n], fi, true, nil
}

func baseName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}
