package fsrec

import (
	"syscall"
	"unsafe"
)

// The file-system calls of the hot paths (open, fstatat, getdents64, read and close of records and
// folders) are raw system calls: they do not tell the scheduler they enter the kernel, so the
// goroutine keeps its P and no other thread is woken to take it over. A check of a large tree makes
// half a million of them, each a few microseconds on a local file system in the page cache; through
// syscall.Syscall each one past 20 us could hand the P to another thread, and the wake-ups and
// spinning that followed cost the synthetic 28,905-unit tree 9% of its time (0.96 against 1.05 s,
// medians of 9 interleaved runs). The price: while one of them waits (a cold disk, a slow network
// mount), that P runs nothing else and a stop-the-world collection waits for it. Opens are
// non-blocking (a FIFO never waits for a writer), and a check cannot finish without the answer of a
// look-up that hangs in any case.

// rawGetdents is syscall.Getdents as a raw system call.
func rawGetdents(fd int, buf []byte) (int, error) {
	r, _, e := syscall.RawSyscall(syscall.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// RawClose closes fd (a record or folder opened read-only: nothing to flush, the error says nothing).
func RawClose(fd int) {
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
}

// RawRead is syscall.Read as a raw system call.
func RawRead(fd int, buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}
