package trace

import (
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
)

// Lookup is one search of a program name along PATH by one process, as the trace shows it: the
// attempts in PATH order (glibc's execvp/posix_spawnp try execve in each folder; shells and which-like
// code stat or access each candidate), ending at the first success or, when the tool was never found,
// at the last folder tried.
type Lookup struct {
	Proc  int    // Process.ID of the process that searched
	Name  string // the program looked for ("nvcc")
	PATH  string // the PATH searched (the process's environment at the time)
	Tried []Attempt
	Found string // the absolute path found; "" when no folder had it
	Time  int64  // ns since the epoch: the first attempt
}

// Attempt is one candidate of a Lookup.
type Attempt struct {
	Dir   string
	Op    string // "execve", "newfstatat", "access", …
	Errno string // "" (found) or the error ("ENOENT", "EACCES")
	Time  int64
}

var lookupOps = map[string]bool{
	"execve": true, "execveat": true, "stat": true, "stat64": true, "newfstatat": true, "fstatat64": true, "statx": true,
	"lstat": true, "access": true, "faccessat": true, "faccessat2": true,
}

// envAt returns the environment a process had at time at: its last exec at or before at, else its
// nearest ancestor's (a forked child that has not exec'd runs with its parent's environment).
func (t *Trace) envAt(id int, at int64) []string {
	for id >= 0 && id < len(t.Processes) {
		p := &t.Processes[id]
		for i := len(p.Execs) - 1; i >= 0; i-- {
			if p.Execs[i].Time <= at {
				return p.Execs[i].Env
			}
		}
		at = p.Start
		id = p.Parent
	}
	return nil
}

// PathLookups returns the PATH searches made by the process tree rooted at id (all processes when id
// is -1), in time order. A search is a run of attempts of one name in one process, each in a PATH folder
// after the one before (PATH's first folder first), ending at a success or where the run breaks.
func (t *Trace) PathLookups(id int) []Lookup {
	var ids []int
	if id < 0 {
		for i := range t.Processes {
			ids = append(ids, i)
		}
	} else {
		ids = t.Tree(id)
	}
	var out []Lookup
	for _, pid := range ids {
		out = append(out, t.lookupsOf(pid)...)
	}
	sortLookups(out)
	return out
}

func (t *Trace) lookupsOf(id int) []Lookup {
	var out []Lookup
	var cur *Lookup
	var dirs []string
	cursor := -1
	closeCur := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, a := range t.AccessesOf(id) {
		if !lookupOps[a.Op] || !filepath.IsAbs(a.Path) {
			continue
		}
		if a.Errno != "" && a.Errno != "ENOENT" && a.Errno != "EACCES" && a.Errno != "ENOTDIR" {
			continue
		}
		dir, name := filepath.Dir(a.Path), filepath.Base(a.Path)
		if cur != nil && (cur.Name != name || cur.Found != "") {
			closeCur()
		}
		if cur != nil {
			// The next folder must come later in PATH than the last one tried.
			j := indexFrom(dirs, dir, cursor+1)
			if j < 0 {
				closeCur()
			} else {
				cursor = j
				cur.Tried = append(cur.Tried, Attempt{Dir: dir, Op: a.Op, Errno: a.Errno, Time: a.Time})
				if a.Errno == "" {
					cur.Found = a.Path
				}
				continue
			}
		}
		env := t.envAt(id, a.Time)
		path, ok := getenv(env, "PATH")
		if !ok {
			continue
		}
		dirs = splitPath(path)
		if len(dirs) == 0 || dirs[0] != dir {
			continue // not the start of a PATH search (an absolute exec, a plain stat)
		}
		cursor = 0
		cur = &Lookup{Proc: id, Name: name, PATH: path, Time: a.Time, Tried: []Attempt{{Dir: dir, Op: a.Op, Errno: a.Errno, Time: a.Time}}}
		if a.Errno == "" {
			cur.Found = a.Path
		}
	}
	closeCur()
	return out
}

func indexFrom(dirs []string, d string, from int) int {
	for j := from; j < len(dirs); j++ {
		if dirs[j] == d {
			return j
		}
	}
	return -1
}

// splitPath splits PATH into cleaned absolute folders (empty and relative entries, which stand for the
// working folder, are dropped).
func splitPath(path string) []string {
	var out []string
	for _, d := range strings.Split(path, ":") {
		if filepath.IsAbs(d) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

func sortLookups(ls []Lookup) {
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ls[j].Time < ls[j-1].Time; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

// Now answers the lookup again against the file system today: the first folder of the same PATH that
// holds an executable regular file of that name (os.Stat follows symlinks), or "" when none does. An
// answer different from Found means the build would now find a different tool (or one where there was
// none, or none where there was one). Only the folders the traced PATH lists are searched.
func (l *Lookup) Now() string { return l.NowWith(l.PATH) }

// NowWith answers the lookup against the file system today with another PATH (the one the next build
// will run with, e.g. the user's PATH now that the CUDA toolkit's bin folder is on it).
func (l *Lookup) NowWith(path string) string {
	for _, d := range splitPath(path) {
		p := filepath.Join(d, l.Name)
		if st, err := fsrec.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}
