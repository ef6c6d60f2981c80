package clean

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// ExecOptions tune Execute.
type ExecOptions struct {
	// BeforeRemove, when set, runs after an item passed its checks and just before it is removed (the
	// adversarial tests swap a symlink in there).
	BeforeRemove func(it *Item)
	// DryRun checks every item as for a removal but removes nothing (planned items stay planned).
	DryRun bool
}

// Execute removes the planned items of plan, each only if it is still planned in fresh (a plan made
// from a graph read afresh under the same locks) and still the file or folder the plan recorded. plan
// may be fresh itself, or a plan read from a file. Each item's Status and Reason say what happened;
// FreedBytes sums the removed items.
func Execute(plan, fresh *Plan, g *graph.Graph, opt ExecOptions) error {
	if filepath.Clean(plan.BuildDir) != filepath.Clean(fresh.BuildDir) {
		return fmt.Errorf("the plan is for build folder %s, not %s", plan.BuildDir, fresh.BuildDir)
	}
	root, err := os.OpenRoot(fresh.BuildDir)
	if err != nil {
		return err
	}
	defer root.Close()
	still := map[string]*Item{}
	for i := range fresh.Items {
		it := &fresh.Items[i]
		if it.Status == Planned {
			if rel, err := it.RelPath(); err == nil {
				still[rel] = it
			}
		}
	}
	plan.Executed = !opt.DryRun
	plan.FreedBytes = 0
	for i := range plan.Items {
		it := &plan.Items[i]
		if it.Status != Planned {
			continue
		}
		rel, err := it.RelPath()
		if err != nil {
			it.Status, it.Reason = Skipped, err.Error()
			continue
		}
		if !filepath.IsLocal(rel) || filepath.Clean(rel) != rel {
			it.Status, it.Reason = Skipped, "not inside the build folder"
			continue
		}
		f := still[rel]
		switch {
		case f == nil:
			it.Status, it.Reason = Skipped, "no longer planned: "+whyKept(g, fresh, rel)
			continue
		case f.Kind != it.Kind:
			it.Status, it.Reason = Skipped, "no longer planned as a "+it.Kind
			continue
		}
		if why := remove(root, rel, it, opt); why != "" {
			it.Status, it.Reason = Skipped, why
			continue
		}
		if opt.DryRun {
			continue
		}
		it.Status, it.Reason = Removed, ""
		plan.FreedBytes += it.Bytes
	}
	return nil
}

// remove deletes one item through the root, or says why it did not.
func remove(root *os.Root, rel string, it *Item, opt ExecOptions) string {
	parts := strings.Split(rel, string(filepath.Separator))
	cur := root
	var opened []*os.Root
	defer func() {
		for _, r := range opened {
			r.Close()
		}
	}()
	// Open each folder on the way, checking that what was opened is what Lstat saw: a real folder.
	for _, c := range parts[:len(parts)-1] {
		fi, err := cur.Lstat(c)
		switch {
		case err != nil:
			return fmt.Sprintf("folder %q on its path is gone: %s", c, errString(err))
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Sprintf("folder %q on its path is a symlink now (never followed)", c)
		case !fi.IsDir():
			return fmt.Sprintf("%q on its path is not a folder any more", c)
		}
		next, err := cur.OpenRoot(c)
		if err != nil {
			return fmt.Sprintf("cannot open folder %q on its path: %s", c, errString(err))
		}
		opened = append(opened, next)
		st, err := next.Stat(".")
		if err != nil || !sameFile(fi, st) {
			return fmt.Sprintf("folder %q on its path was replaced while it was opened", c)
		}
		cur = next
	}
	base := parts[len(parts)-1]
	check := func() string {
		fi, err := cur.Lstat(base)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "gone since it was planned"
		case err != nil:
			return "cannot stat it: " + errString(err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return "a symlink now (never followed or removed)"
		case fi.IsDir() != it.Dir:
			return "its type changed since it was planned"
		}
		if dev, ino := ident(fi); dev != it.Dev || ino != it.Ino {
			return "replaced since it was planned (device and inode differ)"
		}
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok && !it.Dir && it.CtimeNS != 0 && sys.Ctim.Nano() != it.CtimeNS {
			return "written or made anew since it was planned (its status-change time differs)"
		}
		return ""
	}
	if why := check(); why != "" {
		return why
	}
	if it.Dir {
		// A file system mounted at or below the folder (a bind mount of another folder, a tmpfs):
		// emptying the folder would empty what is mounted there, which is not the build's.
		if m := mountsUnder(filepath.Join(rootPath(root), rel)); len(m) > 0 {
			return fmt.Sprintf("holds a mount point (%s): a file system mounted inside a build folder is not the build's, so it is never emptied", strings.Join(m, ", "))
		}
	}
	if opt.DryRun {
		return ""
	}
	if !it.Dir {
		if opt.BeforeRemove != nil {
			opt.BeforeRemove(it)
		}
		if err := cur.Remove(base); err != nil {
			return "cannot remove it: " + errString(err)
		}
		return ""
	}
	// A folder: open it, check it is the planned one, empty it through that handle (each entry removed
	// relative to the opened folder, symlinks unlinked, never followed), then remove the empty folder if
	// its name still holds it.
	dir, err := cur.OpenRoot(base)
	if err != nil {
		return "cannot open it: " + errString(err)
	}
	defer dir.Close()
	st, err := dir.Stat(".")
	if err != nil {
		return "cannot stat it: " + errString(err)
	}
	if dev, ino := ident(st); dev != it.Dev || ino != it.Ino {
		return "replaced while it was opened (device and inode differ)"
	}
	if opt.BeforeRemove != nil {
		opt.BeforeRemove(it)
	}
	f, err := dir.Open(".")
	if err != nil {
		return "cannot list it: " + errString(err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return "cannot list it: " + errString(err)
	}
	for i, n := range names {
		if err := dir.RemoveAll(n); err != nil {
			if i == 0 {
				return "cannot empty it: " + errString(err)
			}
			return fmt.Sprintf("partly emptied (%d of its %d entries removed), then: %s", i, len(names), errString(err))
		}
	}
	if why := check(); why != "" {
		return "its contents were removed through the opened folder, but its name now holds something else, left alone: " + why
	}
	if err := cur.Remove(base); err != nil {
		return "emptied, but cannot remove the folder: " + errString(err)
	}
	return ""
}

// rootPath is the folder root was opened on, symbolic links resolved as the mount table has them.
func rootPath(root *os.Root) string {
	if p, err := filepath.EvalSymlinks(root.Name()); err == nil {
		return p
	}
	return root.Name()
}

// mountsUnder lists the mount points at or below dir (absolute), from /proc/self/mountinfo: a bind
// mount of another folder of the same file system shows there, not in a device number. nil when none,
// or when the table cannot be read (not Linux).
func mountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	return mountsUnderIn(string(data), filepath.Clean(dir))
}

// mountsUnderIn is mountsUnder over a mountinfo table: each line's fifth field is the mount point,
// with space, tab, newline and backslash written as octal escapes (\040).
func mountsUnderIn(table, dir string) []string {
	var out []string
	for line := range strings.Lines(table) {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	return out
}

func unescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func ident(fi fs.FileInfo) (uint64, uint64) {
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Dev), sys.Ino
	}
	return 0, 0
}

func sameFile(a, b fs.FileInfo) bool {
	da, ia := ident(a)
	db, ib := ident(b)
	return da == db && ia == ib && ia != 0
}

// whyKept says why a fresh plan no longer lists a path.
func whyKept(g *graph.Graph, fresh *Plan, rel string) string {
	parts := strings.Split(rel, string(filepath.Separator))
	for i := len(parts) - 2; i >= 1; i-- {
		sub := parts[i]
		if sub != "build" && sub != ".fingerprint" && sub != "deps" && sub != "examples" && sub != "incremental" {
			continue
		}
		prof := strings.Join(parts[:i], "/")
		judged := false
		for _, p := range fresh.Profiles {
			if p == prof {
				judged = true
			}
		}
		if !judged {
			return "profile folder " + prof + " is not cleaned now"
		}
		name := parts[i+1]
		if j := strings.IndexByte(name, '.'); j > 0 && sub != ".fingerprint" && sub != "build" {
			name = name[:j]
		}
		hash := ""
		if k := strings.LastIndexByte(name, '-'); k >= 0 {
			hash = name[k+1:]
		}
		if sub == "build" && i+2 < len(parts) && unit.IsHash(parts[i+2]) {
			hash = parts[i+2] // new layout: build/<pkg>/<hash>
		}
		for _, s := range g.Steps {
			if s.ProfileDir == prof && unit.Of(s).Hash == hash && s.Live() {
				r := s.Roots[0]
				return fmt.Sprintf("it is live now: %s is reached by %s", s.Package+"-"+unit.Of(s).Hash, r.File.Path)
			}
		}
		if sub == "incremental" && !fresh.Incremental {
			return "the fresh plan does not clean incremental caches"
		}
		break
	}
	return "a freshly read graph keeps it (or it is gone)"
}
