package gocgo

import "golang.org/x/sys/unix"

// birthNS is the file's birth time (statx's btime, ns since the epoch); false where the file system
// does not keep one.
func birthNS(path string) (int64, bool) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_BTIME, &st); err != nil || st.Mask&unix.STATX_BTIME == 0 {
		return 0, false
	}
	return st.Btime.Sec*1e9 + int64(st.Btime.Nsec), true
}
