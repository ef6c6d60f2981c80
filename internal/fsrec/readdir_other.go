//go:build !linux || !(amd64 || arm64)

package fsrec

import (
	"io/fs"
	"os"
)

// listDir is os.ReadDir (readdir_linux.go lists through the system calls themselves).
func listDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }
