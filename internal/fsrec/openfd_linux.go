package fsrec

import (
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// pathBufs hold the NUL-terminated copy of a path that open(2) takes: syscall.Open allocates one per
// call, and a check opens tens of thousands of records and folders.
var pathBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// OpenFD opens path with flags (mode 0) as syscall.Open does (EINTR retried; a path holding a NUL byte
// is EINVAL), as a raw system call (rawsys_linux.go), through a pooled buffer for the NUL-terminated
// path; the caller closes the descriptor.
func OpenFD(path string, flags int) (int, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return -1, syscall.EINVAL
	}
	bp := pathBufs.Get().(*[]byte)
	defer pathBufs.Put(bp)
	b := append(append((*bp)[:0], path...), 0)
	*bp = b
	cwd := atFDCWD
	for {
		fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&b[0])), uintptr(flags), 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(fd), nil
	}
}

// atFDCWD is AT_FDCWD: a relative path is taken from the working folder, as open(2) takes it.
const atFDCWD = -100
