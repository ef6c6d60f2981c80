package cargo

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// pointsAt lists the paths outside s's OUT_DIR, inside the workspace or the target or build folder,
// that a run's records name as where it puts things: metadata path values (a consumer's
// DEP_<links>_INCLUDE), link-search folders, and the `-I` folders and `-o` outputs' folders of its logged
// compiler commands. System and toolchain folders are not among them (they are not the run's to write).
func (r *reader) pointsAt(s *graph.Step, bo *BuildOutput) []string {
	var cands []string
	cands = append(cands, bo.MetadataPaths...)
	for _, ls := range bo.LinkSearch {
		cands = append(cands, ls.Path)
	}
	for _, cmd := range bo.Commands {
		for i := 0; i < len(cmd); i++ {
			w := cmd[i]
			switch {
			case w == "-o" && i+1 < len(cmd):
				cands = append(cands, filepath.Dir(cmd[i+1]))
				i++
			case strings.HasPrefix(w, "-I") && len(w) > 2:
				cands = append(cands, w[2:])
			case w == "-I" && i+1 < len(cmd):
				cands = append(cands, cmd[i+1])
				i++
			}
		}
	}
	sep := string(filepath.Separator)
	inside := func(p, dir string) bool { return dir != "" && (p == dir || strings.HasPrefix(p, dir+sep)) }
	seen := map[string]bool{}
	var out []string
	for _, p := range cands {
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if seen[p] || inside(p, s.Script().OutDir) || inside(p, s.Script().RunDir) || inside(p, r.opt.CargoHome) {
			continue
		}
		if !(inside(p, r.l.TargetDir) || inside(p, r.l.BuildDir) || inside(p, r.l.Workspace)) {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// maxListed bounds the entries read from one folder a run points at.
const maxListed = 4096

// outsideWrites fills RunEndNS and WroteOutside of every run: the regular files directly in (or at) the paths it
// points at whose mtime lies within its last run, [stdout record's mtime, root-output's mtime] (Cargo
// sets `output`'s, or `stdout`'s in the new layout, mtime to the run's start and writes root-output at
// its end; observed with cargo 1.95). Each
// folder is listed once (lstat only, symlinks not followed), at most maxListed entries.
func (r *reader) outsideWrites(runs []*graph.Step) {
	listed := map[string][]graph.FileInfo{}
	list := func(p string) []graph.FileInfo {
		if l, ok := listed[p]; ok {
			return l
		}
		var l []graph.FileInfo
		if st, err := fsrec.Lstat(p); err == nil && st.Mode().IsRegular() {
			l = append(l, graph.FileInfo{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true})
		} else if err == nil && st.IsDir() {
			if f, err := fsrec.Open(p); err == nil {
				ents, _ := f.ReadDir(maxListed)
				ents = fsrec.ListOpened(p, ents)
				f.Close()
				for _, e := range ents {
					if !e.Type().IsRegular() {
						continue
					}
					if info, err := e.Info(); err == nil {
						l = append(l, graph.FileInfo{Path: filepath.Join(p, e.Name()), Size: info.Size(), MTimeNS: info.ModTime().UnixNano(), Exists: true})
					}
				}
			}
		}
		listed[p] = l
		return l
	}
	for _, s := range runs {
		if !s.Reference.Exists {
			continue
		}
		end, err := fsrec.Stat(filepath.Join(s.Script().RunDir, "root-output"))
		if err != nil {
			continue
		}
		from, to := s.Reference.MTimeNS, end.ModTime().UnixNano()
		unit.Of(s).RunEndNS = to
		for _, p := range s.Script().PointsAt {
			for _, f := range list(p) {
				if f.MTimeNS >= from && f.MTimeNS <= to {
					s.OwnScript().WroteOutside = append(s.Script().WroteOutside, f)
				}
			}
		}
	}
}
