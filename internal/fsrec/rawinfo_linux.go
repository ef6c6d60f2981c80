package fsrec

import (
	"io/fs"
	"syscall"
	"time"
)

// rawInfo is the fs.FileInfo of one stat, fstat or fstatat, as package os makes it: the mode bits as
// os gives them (ModeOf), Sys the *syscall.Stat_t (SigOf reads it).
type rawInfo struct {
	name string
	st   syscall.Stat_t
}

// StatInfo is the fs.FileInfo of st, the stat of a file whose last path element is name.
func StatInfo(name string, st *syscall.Stat_t) fs.FileInfo { return &rawInfo{name: name, st: *st} }

func (r *rawInfo) Name() string       { return r.name }
func (r *rawInfo) Size() int64        { return r.st.Size }
func (r *rawInfo) Mode() fs.FileMode  { return ModeOf(r.st.Mode) }
func (r *rawInfo) ModTime() time.Time { return time.Unix(r.st.Mtim.Unix()) }
func (r *rawInfo) IsDir() bool        { return r.Mode().IsDir() }
func (r *rawInfo) Sys() any           { return &r.st }
