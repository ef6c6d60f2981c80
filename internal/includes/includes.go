// Package includes answers again, for every live step, the header searches of each compile its records
// show (graph.Step.Compiles): each #include line of the source and of the headers the step read is
// resolved now with the compile's own search folders in GCC's order (internal/cinclude). When the step's
// records (a depfile, DWARF, a trace) say it read dir2/x.h, and a folder searched before dir2 now holds an
// x.h, the next compile reads that file instead, and no build system notices: none of them watches a
// file that did not exist when the step last ran (a Make or Ninja depfile lists the header found, not
// the folders tried before it). Each such search becomes a graph.Lookup marked Recorded, which the
// path-lookup-changed rule judges the same way for every build system; a header found now with the same
// bytes as the one read changes nothing the compiler makes and is not recorded.
//
// A step whose records name no header it read (a Make rule with no depfile), or name them only through
// DWARF line tables (which leave out a header of macros only), and whose adapter made no include scan
// of its own gets one here: the headers its compiles' #include lines resolve to now, as
// inputs its build system does not watch (graph.IncludeScan), so that an edit of one, or a new header
// that a folder searched earlier now holds, is judged as for every other system.
//
// Computed includes (#include MACRO) are followed through the definitions the compile's headers hold
// (cinclude.Walk). A header the scan reaches that another step of the build makes (config.h from a
// template) makes that step a dependency of the compile (graph.AddDep), so its pending rebuild reaches
// the compile's programs.
//
// What it does not do: #include_next is not followed, nor are the compiler's built-in folders searched
// (cinclude's limits).
package includes

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cinclude"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// readClues are the clues that say the compiler really read an input when the step last ran.
var readClues = []graph.How{graph.Depfile, graph.DWARF, graph.Trace}

// Annotate adds to each live step the header searches that find another file now than the one its
// records say it read (graph.Lookup, Kind LookupInclude, Recorded).
func Annotate(g *graph.Graph) {
	cache := cinclude.NewCache()
	// A header the scan reaches may be one a step of the build makes (config.h from config.h.in): that
	// step is then a dependency of the compile, so a pending rebuild of it reaches the compile's roots.
	producer := map[string]*graph.Step{}
	for _, s := range g.Steps {
		for _, o := range s.Outputs {
			producer[filepath.Clean(o.Path)] = s
		}
		if s.Reference.Path != "" {
			producer[filepath.Clean(s.Reference.Path)] = s
		}
	}
	for _, s := range g.Steps {
		if !s.Live() || len(s.Cmd().Compiles) == 0 || s.Failed != "" {
			continue
		}
		read := map[string]bool{}
		complete := false // a depfile or a trace lists every header read; DWARF only those with code
		for _, in := range s.Inputs {
			for _, h := range readClues {
				if in.Has(h) {
					read[filepath.Clean(in.File.Path)] = true
				}
			}
			complete = complete || in.Has(graph.Depfile) || in.Has(graph.Trace)
		}
		if !complete {
			// No list of what was read, or DWARF's, which leaves out a header of macros only (-g
			// without -g3): the headers the #include lines reach now are inputs too.
			for _, p := range scanInputs(cache, s) {
				if d := producer[p]; d != nil {
					g.AddDep(s, d)
				}
			}
			if len(read) == 0 {
				continue
			}
		}
		// A depfile the compiler wrote lists every header it read outside the system folders: one that
		// omits a header an unconditional #include of a file it lists resolves to is not what the
		// compiler wrote (damaged, or another compile's), and the header is scanned as an input its
		// build system does not watch.
		omittedByDepfile(cache, s, producer, func(d *graph.Step) { g.AddDep(s, d) })
		seen := map[string]bool{}
		traced := map[string]int{}
		for i, l := range s.Cmd().Lookups {
			if l.Kind == graph.LookupInclude && !l.Recorded {
				traced[l.Name+"\x00"+l.Then+"\x00"+l.Now] = i
			}
		}
		for _, c := range s.Cmd().Compiles {
			for _, l := range shadowed(cache, c, read) {
				k := l.Name + "\x00" + l.Then + "\x00" + l.Now
				if i, ok := traced[k]; ok {
					s.Cmd().Lookups[i].Differs = true // the trace saw the same search: it says more (which process, when)
					continue
				}
				if !seen[k] {
					seen[k] = true
					s.OwnCmd().Lookups = append(s.OwnCmd().Lookups, l)
				}
			}
		}
	}
}

// shadowed walks the compile's includes from its source through the headers it read, and returns the
// searches whose answer now differs from the file read.
func shadowed(cache *cinclude.Cache, c graph.CompilerRun, read map[string]bool) []graph.Lookup {
	sp := cinclude.SearchPath{Quote: c.Quote, Dirs: c.Dirs, System: c.System, After: c.After}
	search := strings.Join(sp.All(), ":")
	var out []graph.Lookup
	queue := []string{filepath.Clean(c.Source)}
	visited := map[string]bool{queue[0]: true}
	walk := cache.NewWalk(sp, nil, c.Source)
	for len(queue) > 0 && len(visited) < 5000 {
		f := queue[0]
		queue = queue[1:]
		own := filepath.Dir(f)
		for _, inc := range walk.Includes(f) {
			then := readThen(sp, inc, own, read)
			if then == "" {
				continue // a header the records do not say was read (a system header, an #if branch)
			}
			if !visited[then] {
				visited[then] = true
				queue = append(queue, then)
			}
			now, _, _ := sp.ResolveIn(cache, inc, own, true)
			if now != "" && filepath.Clean(now) != then && !sameContent(then, now) {
				out = append(out, graph.Lookup{Kind: graph.LookupInclude, Name: inc.Name, Search: search, Then: then,
					Now: filepath.Clean(now), Recorded: true, From: f})
			}
		}
	}
	return out
}

// sameContent reports whether two files hold the same bytes (a copy of the header changes nothing the
// compiler makes); an unreadable one differs.
func sameContent(a, b string) bool {
	x, err := safeio.ReadFile(a, 64<<20)
	if err != nil {
		return false
	}
	y, err := safeio.ReadFile(b, 64<<20)
	return err == nil && bytes.Equal(x, y)
}

// readThen is the file the directive found when the step ran: the first candidate, in search order,
// that the records say was read.
func readThen(sp cinclude.SearchPath, inc cinclude.Include, own string, read map[string]bool) string {
	if filepath.IsAbs(inc.Name) {
		if p := filepath.Clean(inc.Name); read[p] {
			return p
		}
		return ""
	}
	var dirs []string
	if !inc.Angle {
		dirs = append(append(dirs, own), sp.Quote...)
	}
	dirs = append(append(append(dirs, sp.Dirs...), sp.System...), sp.After...)
	for _, d := range dirs {
		if p := filepath.Join(d, inc.Name); read[p] {
			return p
		}
	}
	return ""
}

// scanInputs adds the headers the step's compiles include, resolved now and followed transitively
// (system folders passed over), as include-scan inputs, unless the adapter scanned them itself; it
// returns the paths it added.
func scanInputs(cache *cinclude.Cache, s *graph.Step) (added []string) {
	have := map[string]bool{}
	for _, in := range s.Inputs {
		if in.Has(graph.IncludeScan) {
			return nil
		}
		have[filepath.Clean(in.File.Path)] = true
	}
	for _, c := range s.Cmd().Compiles {
		sp := cinclude.SearchPath{Quote: c.Quote, Dirs: c.Dirs, System: c.System, After: c.After}
		queue := []string{filepath.Clean(c.Source)}
		seen := map[string]bool{queue[0]: true}
		walk := cache.NewWalk(sp, nil, c.Source)
		for len(queue) > 0 && len(seen) < 5000 {
			f := queue[0]
			queue = queue[1:]
			for _, inc := range walk.Includes(f) {
				p, flag, dir := sp.ResolveIn(cache, inc, filepath.Dir(f), true)
				if p == "" || cinclude.IsSystemHeader(p) {
					continue
				}
				p = filepath.Clean(p)
				if seen[p] {
					continue
				}
				seen[p] = true
				queue = append(queue, p)
				if have[p] {
					continue
				}
				have[p] = true
				added = append(added, p)
				addScanned(s, p, inc, f, flag, dir, "")
			}
		}
	}
	return added
}

// omittedByDepfile adds to s, as include-scan inputs, the headers that unconditional #include lines of
// its compiles' sources and of the headers its depfile lists resolve to now through the source's own
// folder, -iquote and -I (-MMD leaves out the system folders), when the depfile lists none of the
// candidates the directive could have found. Only a depfile's list is complete in this way (DWARF line
// tables leave out headers with no code, a trace what it did not see). It returns the paths added.
// A header another step makes is not added: that step becomes a dependency of s (dep), as for a scan.
func omittedByDepfile(cache *cinclude.Cache, s *graph.Step, producer map[string]*graph.Step, dep func(*graph.Step)) (added []string) {
	listed := map[string]bool{}
	var depfile string
	have := map[string]bool{}
	for _, in := range s.Inputs {
		p := filepath.Clean(in.File.Path)
		have[p] = true
		if in.Has(graph.Depfile) {
			listed[p] = true
			if i := slices.Index(in.How, graph.Depfile); i >= 0 && i < len(in.Detail) && depfile == "" {
				depfile = in.Detail[i]
			}
		}
	}
	if len(listed) == 0 {
		return nil
	}
	for _, c := range s.Cmd().Compiles {
		src := filepath.Clean(c.Source)
		if !listed[src] {
			continue // the depfile is not this compile's (or names the source otherwise): not judged
		}
		sp := cinclude.SearchPath{Quote: c.Quote, Dirs: c.Dirs, System: c.System, After: c.After}
		walk := cache.NewWalk(sp, nil, c.Source)
		queue := []string{src}
		visited := map[string]bool{src: true}
		for len(queue) > 0 && len(visited) < 5000 {
			f := queue[0]
			queue = queue[1:]
			for _, inc := range walk.Includes(f) {
				if inc.Cond || inc.Macro != "" || inc.Angle {
					continue // whether the compiler read it depends on macros; <…> may be a system header
				}
				if then := readThen(sp, inc, filepath.Dir(f), listed); then != "" {
					if !visited[then] {
						visited[then] = true
						queue = append(queue, then)
					}
					continue
				}
				p, flag, dir := sp.ResolveIn(cache, inc, filepath.Dir(f), true)
				if p == "" || flag == "-isystem" || flag == "-idirafter" || cinclude.IsSystemHeader(p) {
					continue
				}
				p = filepath.Clean(p)
				if have[p] || s.Script().OutDir != "" && strings.HasPrefix(p, s.Script().OutDir+string(filepath.Separator)) {
					// Known, or made by the run itself in its output folder (a configured header the
					// adapter left out of the inputs as the run's own output).
					continue
				}
				if d := producer[p]; d != nil {
					have[p] = true
					if d != s {
						dep(d)
					}
					continue
				}
				have[p] = true
				added = append(added, p)
				addScanned(s, p, inc, f, flag, dir, "; the depfile "+depfile+" does not list it, so it is not the list the compiler wrote, and the build system does not watch the header")
			}
		}
	}
	return added
}

// addScanned adds header p, which #include inc in file f found through flag dir ("" for f's own folder),
// to s as an include-scan input; note ends its detail.
func addScanned(s *graph.Step, p string, inc cinclude.Include, f, flag, dir, note string) {
	via := "the including file's folder"
	if flag != "" {
		via = flag + " " + dir
	}
	s.Inputs = append(s.Inputs, &graph.Input{File: statInfo(p), How: []graph.How{graph.IncludeScan},
		Detail: []string{fmt.Sprintf("#include %s in %s, found through %s%s", inc.Text(), f, via, note)}})
}

func statInfo(p string) graph.FileInfo {
	fi := graph.FileInfo{Path: p}
	if st, err := fsrec.Stat(p); err == nil {
		fi.Exists, fi.Size, fi.MTimeNS = true, st.Size(), st.ModTime().UnixNano()
	}
	return fi
}
