//go:build linux

package fsrec

import (
	"bytes"
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

// StatZ is Now for a path given as its bytes followed by a NUL, without allocating: the verdict
// cache looks up tens of thousands of recorded paths per hit. A path with a NUL inside it gets
// EINVAL's class, as os.Stat's EINVAL does.
func StatZ(pathz []byte, op Op) Sig {
	if len(pathz) == 0 || pathz[len(pathz)-1] != 0 {
		return Sig{Err: ErrOther}
	}
	if bytes.IndexByte(pathz[:len(pathz)-1], 0) >= 0 {
		return Sig{Err: errnoClass(syscall.EINVAL)}
	}
	flags := 0
	if op == OpLstat {
		flags = unix.AT_SYMLINK_NOFOLLOW
	}
	var st unix.Stat_t
	var err error
	for {
		err = fstatatZ(pathz, &st, flags)
		if err != unix.EINTR {
			break
		}
	}
	if err == nil {
		return Sig{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano(), Mode: st.Mode}
	}
	if e, ok := err.(unix.Errno); ok {
		return Sig{Err: errnoClass(syscall.Errno(e))}
	}
	return Sig{Err: ErrOther}
}
