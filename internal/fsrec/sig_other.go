//go:build !linux

package fsrec

import "io/fs"

// Supported reports whether signatures can be taken here: not outside Linux (no ctime through
// os.FileInfo), so the verdict cache stores nothing.
const Supported = false

func sigOfInfo(fi fs.FileInfo) Sig { return Sig{Err: ErrOther} }

// StatZ is Now for a path given as its bytes followed by a NUL.
func StatZ(pathz []byte, op Op) Sig {
	if len(pathz) == 0 {
		return Sig{Err: ErrOther}
	}
	return Now(string(pathz[:len(pathz)-1]), op)
}
