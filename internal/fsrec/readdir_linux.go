//go:build linux && (amd64 || arm64)

package fsrec

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// listDir is os.ReadDir through the system calls themselves: open, getdents64 into a pooled buffer,
// close. The readers list tens of thousands of small folders (a fingerprint folder per unit, a build
// folder per script run); an os.File costs calls more per folder (the poller's registration and an
// fstat), and os.ReadDir an allocation per entry. Here a listing is three allocations whatever its
// size: the entries, their interfaces, and one string holding every name. Entries come sorted by
// name, as os.ReadDir gives them, and errors read as its do (the folder opened with O_DIRECTORY, as
// there: "open P: not a directory" for a file or a FIFO in its place).
func listDir(path string) ([]fs.DirEntry, error) {
	fd, err := OpenFD(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_DIRECTORY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer RawClose(fd)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	// The dirent records of the whole listing: in the buffer while they fit (most folders), then in a
	// copy of each read's.
	var chunks [][]byte
	used := 0 // bytes of records in buf, while chunks is empty
	for {
		dst := buf[used:]
		if len(dst) < 1024 { // room for a few records at least: move what is there out
			chunks, used, dst = append(chunks, bytes.Clone(buf[:used])), 0, buf
		}
		n, err := rawGetdents(fd, dst)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: path, Err: err}
		}
		if n <= 0 {
			break
		}
		if len(chunks) == 0 {
			used += n
		} else {
			chunks = append(chunks, bytes.Clone(dst[:n]))
		}
	}
	if len(chunks) == 0 {
		chunks = [][]byte{buf[:used]}
	}
	// Two passes: count the entries and their names' bytes, then make the names one string and the
	// entries one slice.
	count, size := 0, 0
	for _, c := range chunks {
		eachDirent(c, func(name []byte, typ byte) { count++; size += len(name) })
	}
	names := make([]byte, 0, size)
	for _, c := range chunks {
		eachDirent(c, func(name []byte, typ byte) { names = append(names, name...) })
	}
	// names is not written again: the string shares its bytes (a copy was a third of a listing's
	// allocations).
	all := unsafe.String(unsafe.SliceData(names), len(names))
	ents := make([]listedEntry, 0, count)
	off := 0
	var lerr error
	each := func(f func(name []byte, typ byte)) {
		for _, c := range chunks {
			eachDirent(c, f)
		}
	}
	each(func(name []byte, typ byte) {
		e := listedEntry{name: all[off : off+len(name)], dir: path}
		off += len(name)
		var known bool
		if e.typ, known = direntType(typ); !known && lerr == nil {
			// The file system gives no type in its listing: lstat as os.ReadDir does; an entry removed
			// meanwhile is left out, as there.
			fi, err := os.Lstat(e.path())
			if err != nil {
				if !os.IsNotExist(err) {
					lerr = err
				}
				return
			}
			e.typ = fi.Mode().Type()
		}
		ents = append(ents, e)
	})
	if lerr != nil {
		return nil, lerr
	}
	slices.SortFunc(ents, func(a, b listedEntry) int { return strings.Compare(a.name, b.name) })
	out := make([]fs.DirEntry, len(ents))
	for i := range ents {
		out[i] = &ents[i]
	}
	return out, nil
}

// eachDirent calls f with the name and d_type of each struct linux_dirent64 in recs (ino 8 bytes, off 8,
// reclen 2, type 1, the name NUL-terminated), "." and ".." left out.
func eachDirent(recs []byte, f func(name []byte, typ byte)) {
	for b := recs; len(b) >= 19; {
		reclen := int(binary.LittleEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			return
		}
		name := b[19:reclen]
		if i := slices.Index(name, 0); i >= 0 {
			name = name[:i]
		}
		typ := b[18]
		b = b[reclen:]
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		f(name, typ)
	}
}

// direntBufs are getdents64 buffers, one per listing at a time.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// direntType maps a dirent's d_type to the file type os gives; known is false for DT_UNKNOWN.
func direntType(t byte) (fs.FileMode, bool) {
	switch t {
	case syscall.DT_REG:
		return 0, true
	case syscall.DT_DIR:
		return fs.ModeDir, true
	case syscall.DT_LNK:
		return fs.ModeSymlink, true
	case syscall.DT_FIFO:
		return fs.ModeNamedPipe, true
	case syscall.DT_SOCK:
		return fs.ModeSocket, true
	case syscall.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case syscall.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// listedEntry is one entry of listDir; its Info is an lstat of its path.
type listedEntry struct {
	name, dir string
	typ       fs.FileMode
}

func (e *listedEntry) path() string {
	if strings.HasSuffix(e.dir, "/") {
		return e.dir + e.name
	}
	return e.dir + "/" + e.name
}

func (e *listedEntry) Name() string      { return e.name }
func (e *listedEntry) IsDir() bool       { return e.typ.IsDir() }
func (e *listedEntry) Type() fs.FileMode { return e.typ }
func (e *listedEntry) Info() (fs.FileInfo, error) {
	// os.Lstat(e.path()), without making the joined path but for an error's message.
	fi := &rawInfo{name: e.name}
	sep := "/"
	if strings.HasSuffix(e.dir, "/") {
		sep = ""
	}
	if err := fstatatParts(e.dir, sep, e.name, &fi.st, _AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: e.path(), Err: err}
	}
	return fi, nil
}
func (e *listedEntry) String() string { return fs.FormatDirEntry(e) }
