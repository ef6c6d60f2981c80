//go:build !linux || (!amd64 && !arm64)

package fsrec

import (
	"io/fs"
	"os"
)

// statOp is os.Lstat for OpLstat, else os.Stat.
func statOp(path string, op Op) (fs.FileInfo, error) {
	if op == OpLstat {
		return os.Lstat(path)
	}
	return os.Stat(path)
}
