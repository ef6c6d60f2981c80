package cargo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cargo holds an exclusive flock on a profile folder's `.cargo-lock` (in the build folder and, when it
// differs, in the target folder) for the whole of a build, while it rewrites fingerprints, runs build
// scripts and replaces binaries. Records read in the middle of that are half one build and half the
// next (a fingerprint cut short, an output from before beside a binary from after), and would be
// judged as they were read. So Read takes the same locks shared for as long as it reads: a build
// running is waited for (ReadOptions.OnLockWait is told), and a cargo that starts meanwhile waits for
// the read, as it waits for another cargo ("Blocking waiting for file lock"). A lock file is never
// created (nothing is written into the user's folders); one that is not a regular file is left alone.

// lockWaitLimit bounds the wait for a build that holds a lock (a hung cargo): past it Read fails.
var lockWaitLimit = 10 * time.Minute

// lockPoll is how often a busy lock is tried again.
const lockPoll = 50 * time.Millisecond

// sharedLocks are the `.cargo-lock` files a read holds.
type sharedLocks []*os.File

// shareLocks takes every existing `<base>/<profile>/.cargo-lock` shared. It never waits while holding a
// lock (a cargo holding one lock and asking for another would wait for us while we wait for it): when
// any is busy, the ones taken are dropped and all are tried again together.
func shareLocks(bases, profiles []string, onWait func(lock string)) (sharedLocks, error) {
	seen := map[string]bool{}
	var paths []string
	for _, b := range bases {
		for _, p := range profiles {
			if lp := filepath.Join(b, p, ".cargo-lock"); !seen[lp] {
				seen[lp] = true
				paths = append(paths, lp)
			}
		}
	}
	sort.Strings(paths)
	var files []*os.File
	for _, lp := range paths {
		if f := openLock(lp); f != nil {
			files = append(files, f)
		}
	}
	start := time.Now()
	told := false
	for {
		busy, err := tryShared(files)
		if err == nil {
			return files, nil
		}
		if busy == "" {
			sharedLocks(files).release()
			return nil, err
		}
		if time.Since(start) > lockWaitLimit {
			sharedLocks(files).release()
			return nil, fmt.Errorf("a cargo process has held %s for %s (a build running, or a cargo that hangs): its records are being rewritten, so none was judged", busy, lockWaitLimit)
		}
		if !told && onWait != nil {
			onWait(busy)
			told = true
		}
		time.Sleep(lockPoll)
	}
}

// BuildRunning reports whether a cargo build holds the lock file lp now (exclusively): the lock is
// only probed, a shared flock taken and dropped at once, never created, so Cargo is not held up.
func BuildRunning(lp string) bool {
	f := openLock(lp)
	if f == nil {
		return false
	}
	defer f.Close()
	busy, _ := tryShared([]*os.File{f})
	if busy == "" {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}
	return busy != ""
}

// openLock opens an existing regular lock file for reading, or returns nil.
func openLock(lp string) *os.File {
	// O_NONBLOCK: a FIFO in the lock's place must not stop the open; O_NOFOLLOW: Cargo's lock is a file.
	f, err := os.OpenFile(lp, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil
	}
	return f
}

// tryShared takes every lock shared without waiting. When one is held exclusively it drops the ones
// taken and returns its path as busy; another failure (a file system without flock) leaves that lock
// out and goes on.
func tryShared(files []*os.File) (busy string, err error) {
	for i, f := range files {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			continue
		}
		if errors.Is(err, unix.EWOULDBLOCK) {
			for _, g := range files[:i] {
				_ = unix.Flock(int(g.Fd()), unix.LOCK_UN)
			}
			return f.Name(), err
		}
		// ENOLCK and the like: Cargo itself goes on without the lock there; so does the read.
	}
	return "", nil
}

// release drops the locks and closes the files.
func (l sharedLocks) release() {
	for _, f := range l {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}
}
