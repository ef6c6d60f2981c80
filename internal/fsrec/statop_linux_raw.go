//go:build linux && (amd64 || arm64)

package fsrec

import (
	"io/fs"
	"strings"
	"syscall"
	"unsafe"
)

// statOp is os.Lstat for OpLstat, else os.Stat, with their answers (a FileInfo whose Sys is the
// *syscall.Stat_t, whose Name is the path's last element; errors as *fs.PathError with Op "lstat" or
// "stat"), made without the copy of the path that package syscall allocates for every call: a check
// looks up tens of thousands of paths.
func statOp(path string, op Op) (fs.FileInfo, error) {
	name, flags := "stat", 0
	if op == OpLstat {
		name, flags = "lstat", _AT_SYMLINK_NOFOLLOW
	}
	fi := &rawInfo{name: lastElem(path)}
	if err := fstatatPath(path, &fi.st, flags); err != nil {
		return nil, &fs.PathError{Op: name, Path: path, Err: err}
	}
	return fi, nil
}

const _AT_SYMLINK_NOFOLLOW = 0x100

// fstatatPath is fstatat(AT_FDCWD, path, st, flags), EINTR retried; a path holding a NUL byte is
// EINVAL, as package syscall makes it.
func fstatatPath(path string, st *syscall.Stat_t, flags int) error {
	return fstatatParts(path, "", "", st, flags)
}

// fstatatParts is fstatatPath of the path a+b+c, joined in the pooled buffer only.
func fstatatParts(a, b, c string, st *syscall.Stat_t, flags int) error {
	if strings.IndexByte(a, 0) >= 0 || strings.IndexByte(b, 0) >= 0 || strings.IndexByte(c, 0) >= 0 {
		return syscall.EINVAL
	}
	bp := pathBufs.Get().(*[]byte)
	defer pathBufs.Put(bp)
	buf := append(append(append(append((*bp)[:0], a...), b...), c...), 0)
	*bp = buf
	cwd := atFDCWD
	for {
		_, _, e := syscall.RawSyscall6(sysFstatat, uintptr(cwd), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return e
	}
}

// lastElem is the name os.Stat gives a FileInfo: path's last element, trailing slashes left out.
func lastElem(path string) string {
	end := len(path)
	for end > 1 && path[end-1] == '/' {
		end--
	}
	p := path[:end]
	if i := strings.LastIndexByte(p[:max(len(p)-1, 0)], '/'); i >= 0 && len(p) > 1 {
		return p[i+1:]
	}
	return p
}
