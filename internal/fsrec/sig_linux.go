//go:build linux

package fsrec

import (
	"io/fs"
	"syscall"
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
