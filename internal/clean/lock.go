package clean

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

// ErrLocked says a cargo process holds a profile folder's lock.
var ErrLocked = errors.New("a cargo process holds the lock")

// Locks are the `.cargo-lock` files held for a clean.
type Locks struct {
	files []*os.File
	Paths []string
}

// Lock takes the `.cargo-lock` of each profile folder (relative to each base folder: the build folder
// and, when it differs, the target folder, where Cargo keeps one too), exclusively and without
// waiting, in sorted order, the way Cargo takes them (flock). A missing lock file is created, so a
// cargo that starts now waits for us. When any lock is busy, the ones taken are released and the
// error wraps ErrLocked.
func Lock(bases []string, profiles []string) (*Locks, error) {
	var paths []string
	seen := map[string]bool{}
	for _, b := range bases {
		for _, p := range profiles {
			lp := filepath.Join(b, p, ".cargo-lock")
			if !seen[lp] {
				seen[lp] = true
				paths = append(paths, lp)
			}
		}
	}
	sort.Strings(paths)
	l := &Locks{}
	for _, lp := range paths {
		dir := filepath.Dir(lp)
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
			continue // the profile folder is absent from this base (e.g. the target folder of a build-dir)
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			l.Unlock()
			return nil, err
		}
		f, err := root.OpenFile(".cargo-lock", os.O_RDWR|os.O_CREATE, 0o644)
		root.Close()
		if err != nil {
			l.Unlock()
			return nil, fmt.Errorf("cannot open %s: %w", lp, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			l.Unlock()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w on %s: it is building in this folder; nothing was removed, try again when it has finished", ErrLocked, lp)
			}
			return nil, fmt.Errorf("cannot lock %s: %w", lp, err)
		}
		l.files = append(l.files, f)
		l.Paths = append(l.Paths, lp)
	}
	return l, nil
}

// Unlock releases every lock, in reverse order.
func (l *Locks) Unlock() {
	if l == nil {
		return
	}
	for i := len(l.files) - 1; i >= 0; i-- {
		_ = unix.Flock(int(l.files[i].Fd()), unix.LOCK_UN)
		l.files[i].Close()
	}
	l.files = nil
}
