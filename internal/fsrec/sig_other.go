//go:build !linux

package fsrec

import (
	"io/fs"
	"os"
)

// Supported reports whether signatures can be taken here: not outside Linux (no ctime through
// os.FileInfo), so the verdict cache stores nothing.
const Supported = false

func sigOfInfo(fi fs.FileInfo) Sig { return Sig{Err: ErrOther} }

// keepable: no answer is kept here (a signature holds too little to give one again).
func keepable(fs.FileInfo) (uint64, bool) { return 0, false }

func (k *keptInfo) Sys() any { return nil }

// StatZ is Now for a path given as its bytes followed by a NUL.
func StatZ(pathz []byte, op Op) Sig {
	if len(pathz) == 0 {
		return Sig{Err: ErrOther}
	}
	return Now(string(pathz[:len(pathz)-1]), op)
}

// StatZN is StatZ with a link count (0: not known here).
func StatZN(pathz []byte, op Op) (Sig, uint64) { return StatZ(pathz, op), 0 }

// ModeOf: no answer is given again here.
func ModeOf(uint32) fs.FileMode { return 0 }

// SameFile is os.SameFile (no answer is kept here).
func SameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }
