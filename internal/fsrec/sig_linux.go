//go:build linux

package fsrec

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// Supported reports whether signatures can be taken here (device, inode and ctime from stat(2)).
const Supported = true

func sigOfInfo(fi fs.FileInfo) Sig {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Sig{Err: ErrOther}
	}
	return Sig{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano(), Mode: st.Mode}
}

// StatGroup looks up the names (the last path elements, no "/", ".", "..") in the folder dir with
// fstatat(2) on one O_PATH descriptor of dir, and calls got for each with its signature: what Now
// would answer for dir+"/"+name, cheaper (one path walk for the folder, not one per file). ok is false
// when dir cannot be opened; then nothing was called and the caller uses Now.
func StatGroup(dir string, names []string, ops []Op, got func(i int, s Sig) bool) (ok bool) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	for i, n := range names {
		flags := 0
		if ops[i] == OpLstat {
			flags = unix.AT_SYMLINK_NOFOLLOW
		}
		var s Sig
		for {
			err = unix.Fstatat(fd, n, &st, flags)
			if err != unix.EINTR {
				break
			}
		}
		switch {
		case err == nil:
			s = Sig{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano(), Mode: st.Mode}
		case err == unix.ENOENT:
			s = Sig{Err: ErrNotExist}
		case err == unix.ENOTDIR:
			s = Sig{Err: ErrNotDir}
		default:
			s = Sig{Err: ErrOther}
		}
		if !got(i, s) {
			return true
		}
	}
	return true
}
