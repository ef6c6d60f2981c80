//go:build !linux

package fsrec

import "io/fs"

// Supported reports whether signatures can be taken here: not outside Linux (no ctime through
// os.FileInfo), so the verdict cache stores nothing.
const Supported = false

func sigOfInfo(fi fs.FileInfo) Sig { return Sig{Err: ErrOther} }

// StatGroup is not available here: ok is false.
func StatGroup(dir string, names []string, ops []Op, got func(i int, s Sig) bool) (ok bool) {
	return false
}
