//go:build linux && (amd64 || arm64)

package fsrec

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatatZ is fstatat(AT_FDCWD, pathz, st, flags) on a NUL-terminated path, without the copy x/sys
// makes to add the NUL (sysFstatat: newfstatat on amd64, fstatat on arm64).
func fstatatZ(pathz []byte, st *unix.Stat_t, flags int) error {
	cwd := unix.AT_FDCWD
	_, _, e := syscall.RawSyscall6(sysFstatat, uintptr(cwd), uintptr(unsafe.Pointer(&pathz[0])), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
