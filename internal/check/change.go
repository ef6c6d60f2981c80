package check

import (
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// setChange names, for each finding, the file the user changes to settle it (Finding.Change): the
// first of its subjects, then of its evidence, that is a file (or folder) of the sources rather than something the
// build made; where every one is a build output (two copies of a library, an orphaned folder), the build
// description of the step that made the first subject: its package's manifest, else the file that
// defines its command (a makefile), else its build script; failing all, the workspace's manifest.
// Code scanning shows this file's lines for the alert (report.NewSarifLog).
func setChange(g *graph.Graph, fs []Finding) {
	if g == nil || len(fs) == 0 {
		return
	}
	// The outputs of every step are the owner index's (one map of them, not two: a tree of 28,000
	// units has 100,000 outputs); the roots are added.
	owners := newOwnerIndex(g)
	roots := make(map[string]bool, len(g.Roots))
	for _, r := range g.Roots {
		roots[r.File.Path] = true
	}
	generated := func(p string) bool {
		if owners.outputs[p] != nil || roots[p] {
			return true
		}
		for _, d := range []string{g.TargetDir, g.BuildDir} {
			if d != "" && (p == d || strings.HasPrefix(p, d+string(filepath.Separator))) {
				return true
			}
		}
		return false
	}
	known := map[string]bool{}
	source := func(p string) bool {
		if p == "" || !filepath.IsAbs(p) || generated(p) {
			return false
		}
		if ok, seen := known[p]; seen {
			return ok
		}
		st, err := fsrec.Stat(p)
		ok := err == nil && (st.Mode().IsRegular() || st.IsDir()) // a declared source folder too
		known[p] = ok
		return ok
	}
	for i := range fs {
		f := &fs[i]
		if f.Change != "" {
			continue
		}
		for _, s := range f.Subjects {
			if source(s) {
				f.Change = s
				break
			}
		}
		for _, e := range f.Evidence {
			if f.Change == "" && source(e.Path) {
				f.Change = e.Path
			}
		}
		if f.Change == "" && len(f.Subjects) > 0 {
			if s := owners.owner(f.Subjects[0]); s != nil {
				for _, c := range []string{manifestOf(s), s.Cmd().CommandFrom, s.Script().ScriptSource} {
					if source(c) {
						f.Change = c
						break
					}
				}
			}
		}
		if f.Change == "" && g.Workspace != "" && source(filepath.Join(g.Workspace, "Cargo.toml")) {
			f.Change = filepath.Join(g.Workspace, "Cargo.toml")
		}
	}
}

func manifestOf(s *graph.Step) string {
	if s.PackageRoot == "" {
		return ""
	}
	return filepath.Join(s.PackageRoot, "Cargo.toml")
}

// ownerIndex finds the step that made a path: one whose output it is, else one whose run, output or
// record folder holds it; the first such step in graph order. Built once per check: a tree of 28,000
// units has thousands of findings about build outputs.
type ownerIndex struct {
	outputs map[string]*graph.Step
	dirs    map[string]int // folder -> index of the first step with it as a run, output or record folder
	longest int            // the length of the longest folder in dirs
	steps   []*graph.Step
}

func newOwnerIndex(g *graph.Graph) *ownerIndex {
	x := &ownerIndex{outputs: map[string]*graph.Step{}, dirs: map[string]int{}, steps: g.Steps}
	for i, s := range g.Steps {
		for _, o := range s.Outputs {
			if _, ok := x.outputs[o.Path]; !ok {
				x.outputs[o.Path] = s
			}
		}
		for _, d := range []string{s.Script().RunDir, s.Script().OutDir, s.RecordDir} {
			if _, ok := x.dirs[d]; d != "" && !ok {
				x.dirs[d] = i
				x.longest = max(x.longest, len(d))
			}
		}
	}
	return x
}

// owner is the step that made p, or nil.
func (x *ownerIndex) owner(p string) *graph.Step {
	if s := x.outputs[p]; s != nil {
		return s
	}
	// Every folder that holds p (p itself included): the first step in graph order among their owners.
	// Only those no longer than the longest owner folder can be one: a depfile may name a path of a
	// million bytes, and looking up each of its parents would hash its length over and over.
	best := -1
	d := filepath.Clean(p)
	if len(d) > x.longest {
		i := strings.LastIndexByte(d[:x.longest+1], '/')
		if i < 0 {
			return nil
		}
		d = d[:max(i, 1)]
	}
	for {
		if i, ok := x.dirs[d]; ok && (best < 0 || i < best) {
			best = i
		}
		i := strings.LastIndexByte(d, '/')
		if i < 0 || d == "/" {
			break
		}
		d = d[:max(i, 1)] // filepath.Dir of a clean path: "/a" -> "/"
	}
	if best < 0 {
		return nil
	}
	return x.steps[best]
}
