//go:build linux

package fsrec

import (
	"bytes"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Supported reports whether signatures can be taken here (device, inode and ctime from stat(2)).
const Supported = true

// keepable returns the link count of a found look-up's answer, which a Recorder keeps beside its
// signature to give the answer again (ok false: not a stat(2) answer, not kept).
func keepable(fi fs.FileInfo) (nlink uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true //nolint:unconvert // uint32 on some architectures
}

// Sys gives a *syscall.Stat_t with the fields signatures hold (and the kept link count).
func (k *keptInfo) Sys() any {
	s := k.v.sig
	st := &syscall.Stat_t{Ino: s.Ino, Size: s.Size, Mode: s.Mode,
		Mtim: syscall.NsecToTimespec(s.MtimeNS), Ctim: syscall.NsecToTimespec(s.CtimeNS)}
	setUint(&st.Dev, s.Dev)
	setUint(&st.Nlink, k.v.nlink)
	return st
}

// setUint stores v in a field whose width differs between architectures (Nlink, Dev).
func setUint[T ~uint32 | ~uint64](p *T, v uint64) { *p = T(v) }

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
	sig, _ := StatZN(pathz, op)
	return sig
}

// StatZN is StatZ that also returns the link count of a found path (0 otherwise).
func StatZN(pathz []byte, op Op) (Sig, uint64) {
	if len(pathz) == 0 || pathz[len(pathz)-1] != 0 {
		return Sig{Err: ErrOther}, 0
	}
	if bytes.IndexByte(pathz[:len(pathz)-1], 0) >= 0 {
		return Sig{Err: errnoClass(syscall.EINVAL)}, 0
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
		return Sig{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano(), Mode: st.Mode}, uint64(st.Nlink) //nolint:unconvert // uint32 on some architectures
	}
	if e, ok := err.(unix.Errno); ok {
		return Sig{Err: errnoClass(syscall.Errno(e))}, 0
	}
	return Sig{Err: ErrOther}, 0
}

// SameFile is os.SameFile for answers fsrec gives (a kept answer is no *os.fileStat, which
// os.SameFile needs): the same device and inode.
func SameFile(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 {
		return os.SameFile(a, b)
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// ModeOf is the fs.FileMode of a raw st_mode, as os.Stat gives it.
func ModeOf(raw uint32) fs.FileMode {
	m := fs.FileMode(raw & 0o777)
	switch raw & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if raw&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if raw&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if raw&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
