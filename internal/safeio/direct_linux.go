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
	defer fsrec.RawClose(fd)
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
		m, rerr := fsrec.RawRead(fd, buf[n:])
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

// readListedRegular is readFileDirect for a file whose folder listing said it is a regular file, when
// nothing records the look-up (no verdict is being recorded, so no signature is wanted): it reads
// without the fstat, since a read that returns less than asked of a regular file has met its end. The
// listing's word is checked where it could be wrong without an error: an empty read (a FIFO or
// /dev/null put in the file's place since the listing reads as empty too) and a buffer filled to the
// end take the fstat path; a FIFO without a writer answers EAGAIN, a folder EISDIR, a symbolic link
// ELOOP (O_NOFOLLOW): each goes back to readFileDirect, whose errors say what the path is. ok is false
// when the caller should take readFileDirect.
func readListedRegular(path string, max int64, into []byte) (data []byte, ok bool) {
	if len(into) < cap(into) {
		into = into[:cap(into)]
	}
	if len(into) < 4096 {
		into = make([]byte, 4096)
	}
	if int64(len(into)) > max+1 {
		into = into[:max+1]
	}
	fd, err := fsrec.OpenFD(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOFOLLOW)
	if err != nil {
		return nil, false
	}
	defer fsrec.RawClose(fd)
	for {
		n, rerr := fsrec.RawRead(fd, into)
		if rerr == syscall.EINTR {
			continue
		}
		if rerr != nil || n <= 0 || n >= len(into) {
			return nil, false
		}
		return into[:n], true
	}
}
