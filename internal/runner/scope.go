package runner

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// How matterProfiles chose the profile folders to read.
const (
	scopedByNames   = "names"   // the profile folders of the binaries the command line or --binary names
	scopedByRelease = "release" // no name is a binary in the target folder: the release profile folders
)

// matterProfiles returns the profile folders (cargo.ReadOptions.Profiles) that hold every binary that
// can matter to the run, so that the pre-run check reads only those and stats only their records on a
// warm run (a debug finding cannot make a release binary stale): on the 615-unit real workspace the
// verdict of `run -- true` drops from 10,652 to 8,353 paths. nil reads the whole build folder.
//
// A binary matters by file identity with a graph root (chooseMatter), and every root is a file in
// `<target>/<profile>/` (uplifted, or a test binary in its deps/). So each name chooseMatter will try
// (--binary, else cands: commandCandidates) that resolves, after symbolic links, into a profile folder of
// the target or build folder brings that profile; a name outside both that has other hard links may
// be a root's inode under another name, and reads everything; other names are no root. When no name
// brings a profile (and there is no --binary), chooseMatter takes the release binaries: the release
// profile folders are read. scopeHeld then checks that the choice made on the scoped graph is the one
// the scope was made for; when it is not, the caller reads everything.
func matterProfiles(l *cargo.Layout, cfg Config, cands []candidate) ([]string, string) {
	if l == nil {
		return nil, ""
	}
	profiles, err := cargo.FindProfiles(l.BuildDir)
	if err != nil || len(profiles) == 0 {
		return nil, ""
	}
	var names []string
	if len(cfg.Binaries) > 0 {
		for _, b := range cfg.Binaries {
			names = append(names, absIn(cfg.Dir, b))
		}
	} else {
		for _, c := range cands {
			names = append(names, c.path)
		}
	}
	bases := []string{l.TargetDir}
	if l.BuildDir != l.TargetDir {
		bases = append(bases, l.BuildDir)
	}
	seen := map[string]bool{}
	var scope []string
	for _, n := range names {
		fi, err := fsrec.Stat(n)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		// Not recorded for the verdict cache: fsrec.EvalSymlinks would record the lstat of every folder
		// above the name (/tmp, $HOME: their mtimes move all day, and every later run would miss). The
		// recorded stat above pins the answer: the file the name reaches has this device and inode, and
		// a file cannot change its profile folder without a name here reaching another inode or none.
		real, err := filepath.EvalSymlinks(n)
		if err != nil {
			return nil, ""
		}
		prof, inside := profileOf(real, bases, profiles)
		switch {
		case prof != "":
			if !seen[prof] {
				seen[prof] = true
				scope = append(scope, prof)
			}
		case !inside && hardLinked(fi):
			return nil, ""
		}
	}
	if len(scope) > 0 {
		return scope, scopedByNames
	}
	if len(cfg.Binaries) > 0 {
		return nil, ""
	}
	for _, p := range profiles {
		if p == "release" || strings.HasSuffix(p, "/release") {
			scope = append(scope, p)
		}
	}
	if len(scope) == 0 {
		return nil, ""
	}
	return scope, scopedByRelease
}

// profileOf returns the profile folder (of profiles, the longest that fits) that path lies in under one
// of bases, and whether path lies under a base at all.
func profileOf(path string, bases, profiles []string) (prof string, inside bool) {
	for _, b := range bases {
		rel, err := filepath.Rel(b, path)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		inside = true
		rel = filepath.ToSlash(rel)
		for _, p := range profiles {
			if strings.HasPrefix(rel, p+"/") && len(p) > len(prof) {
				prof = p
			}
		}
	}
	return prof, inside
}

func hardLinked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Nlink > 1
}

// scopeHeld reports whether the scoped graph g can decide the run as the whole build would:
//   - chooseMatter, run on it, chose as it would have on the whole build: by the names when the scope
//     came from them, the release binaries when it came from the release profiles (a name that is no
//     root there, or no release binary at all, is not);
//   - no live unit has a `deps` entry that matches no unit (a dependency rebuilt since, or removed by
//     `cargo clean -p`): pending-rebuild judges a removed dependency by what the other profiles' units
//     of it record (content.NewerSources), which the scope leaves out.
//
// Otherwise the whole build folder must be read.
func scopeHeld(g *graph.Graph, scopedBy, how string) bool {
	for _, s := range g.Steps {
		if u := unit.Of(s); u != nil && s.Live() && len(u.Removed().GoneDeps) > 0 {
			return false
		}
	}
	switch scopedBy {
	case scopedByNames:
		return how != "release binaries" && how != "binaries" && how != "none"
	case scopedByRelease:
		return how == "release binaries"
	}
	return false
}
