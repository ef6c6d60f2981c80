//go:build linux && !amd64 && !arm64

package fsrec

import "golang.org/x/sys/unix"

// fstatatZ is fstatat(AT_FDCWD, pathz, st, flags); here through x/sys (which copies the path).
func fstatatZ(pathz []byte, st *unix.Stat_t, flags int) error {
	return unix.Fstatat(unix.AT_FDCWD, string(pathz[:len(pathz)-1]), st, flags)
}
