//go:build unix

package digest

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fileKey returns the cache key of fi; ok is false when fi carries no device and inode numbers.
func fileKey(fi fs.FileInfo) (k Key, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return Key{}, false
	}
	return Key{
		Dev:     uint64(st.Dev), //nolint:unconvert // int32 on some systems
		Ino:     uint64(st.Ino), //nolint:unconvert
		Size:    fi.Size(),
		MtimeNS: fi.ModTime().UnixNano(),
		CtimeNS: st.Ctim.Sec*1e9 + st.Ctim.Nsec, //nolint:unconvert
	}, true
}

// LockPath takes an exclusive advisory lock (flock) on the file at path, creating it, and returns the
// function that releases it. It waits up to 5 s for another holder; after that, or when the lock file
// cannot be created, it goes on unlocked (the rename in Save still keeps the cache file whole; only
// entries saved concurrently may be lost).
func LockPath(path string) (unlock func()) {
	f := openLockFile(path)
	if f == nil {
		return func() {}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() {
				unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
			}
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR || time.Now().After(deadline) {
			f.Close()
			return func() {}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openLockFile opens (creating) the regular lock file at path. O_NOFOLLOW and O_NONBLOCK: a symlink
// (to /dev/zero, say) or a FIFO in its place is never followed nor waited on; it is removed and the lock
// file made afresh, once. nil when that fails too.
func openLockFile(path string) *os.File {
	for attempt := 0; attempt < 2; attempt++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
		if err == nil {
			st, serr := f.Stat()
			if serr == nil && st.Mode().IsRegular() {
				return f
			}
			f.Close()
		}
		if st, lerr := os.Lstat(path); lerr != nil || st.Mode().IsRegular() || st.IsDir() || os.Remove(path) != nil {
			return nil
		}
	}
	return nil
}
