// Package clean removes what no current binary needs from a Cargo build folder: build-script run and
// compile folders that no root reaches, their `.fingerprint` folders, the deps/ files of units no root
// reaches, and (on request) the incremental caches. "Live" is DESIGN.md's: reachable from a root
// through the fingerprint deps chain (internal/graph.MarkLive).
//
// Safety, in order:
//   - the folder must be a Cargo target folder (CACHEDIR.TAG with Cargo's signature, or
//     .rustc_info.json), else Open refuses it;
//   - every profile folder the clean reads or touches has its `.cargo-lock` taken (flock, exclusive,
//     non-blocking, in sorted order) for the whole plan-and-delete, so a concurrent cargo waits for us
//     and we refuse (ErrLocked) while a cargo holds one;
//   - every path is resolved through an os.Root anchored at the build folder (no `..` or symlink escape);
//     each folder on the way is opened and checked to be the folder Lstat saw (not a symlink, same device
//     and inode); the item itself must still be what the plan recorded (same device and inode, not a
//     symlink) and still not live in a freshly read graph;
//   - deletion never follows a symlink (os.Root.RemoveAll unlinks symlinks and opens folders with
//     O_NOFOLLOW relative to their parent).
package clean

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// ErrNotTarget says the folder is not a Cargo target (or build) folder.
var ErrNotTarget = errors.New("not a Cargo target folder")

// cacheDirSignature is the first line of a CACHEDIR.TAG (https://bford.info/cachedir/), which Cargo
// writes at the root of every target and build folder.
const cacheDirSignature = "Signature: 8a477f597d28d172789f06886806bc55"

// Validate refuses a layout whose build or target folder is not a Cargo target folder: it must hold a
// CACHEDIR.TAG with the cache-directory signature or Cargo's .rustc_info.json, and at least one
// profile folder with unit records in either layout (cargo.FindProfiles).
func Validate(l *cargo.Layout) error {
	dirs := []string{l.BuildDir}
	if l.TargetDir != l.BuildDir {
		dirs = append(dirs, l.TargetDir)
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) || filepath.Clean(d) == "/" {
			return fmt.Errorf("%w: %s", ErrNotTarget, d)
		}
		st, err := os.Lstat(d)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrNotTarget, d, errors.Unwrap(err))
		}
		if st.Mode()&os.ModeSymlink != 0 {
			real, _ := filepath.EvalSymlinks(d)
			return fmt.Errorf("%w: %s is a symlink (to %s); clean works only on the real folder: pass --target-dir (and --build-dir) with it", ErrNotTarget, d, real)
		}
		if !st.IsDir() {
			return fmt.Errorf("%w: %s is not a folder", ErrNotTarget, d)
		}
		tag, err := safeio.ReadFile(filepath.Join(d, "CACHEDIR.TAG"), safeio.MaxRecord)
		okTag := err == nil && bytes.HasPrefix(tag, []byte(cacheDirSignature))
		_, err = os.Lstat(filepath.Join(d, ".rustc_info.json"))
		if !okTag && err != nil {
			return fmt.Errorf("%w: %s holds neither a CACHEDIR.TAG with Cargo's signature nor .rustc_info.json", ErrNotTarget, d)
		}
	}
	profs, err := ProfileDirs(l.BuildDir)
	if err != nil {
		return err
	}
	if len(profs) == 0 {
		return fmt.Errorf("%w: %s holds no profile folder with unit records (a .fingerprint folder, or build/<pkg>/<hash>/ in the new layout)", ErrNotTarget, l.BuildDir)
	}
	return nil
}

// ProfileDirs lists the profile folders of a build folder (relative: `debug`, `release`,
// `<triple>/<profile>`): folders that hold unit records in either layout (a .fingerprint folder, or
// build/<pkg>/<hash>/ of the new layout; cargo.FindProfiles). Symlinked folders are not followed.
func ProfileDirs(buildDir string) ([]string, error) { return cargo.FindProfiles(buildDir) }

// SelectProfiles returns the profile folders a clean limited to profile (a profile name or a profile
// folder, "" for all) covers, and the folders whose records it must read and lock to judge them: a
// host profile's units can be reached from the `<triple>/<profile>` folders built on it.
func SelectProfiles(all []string, profile string) (touched, locked []string, err error) {
	if profile == "" {
		return all, all, nil
	}
	want := profile
	if !strings.Contains(profile, "/") {
		want = cargo.ProfileDirName(profile)
	}
	for _, p := range all {
		if p == want {
			touched = append(touched, p)
		}
	}
	if len(touched) == 0 {
		return nil, nil, fmt.Errorf("no profile folder %q in the build folder (it has: %s)", want, strings.Join(all, ", "))
	}
	locked = append(locked, touched...)
	if !strings.Contains(want, "/") {
		for _, p := range all {
			if i := strings.IndexByte(p, '/'); i >= 0 && p[i+1:] == want {
				locked = append(locked, p)
			}
		}
	}
	sort.Strings(locked)
	return touched, locked, nil
}
