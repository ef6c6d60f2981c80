package check

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// unkeyedOutput: a build script of several configurations (feature sets, profiles, flags: each its
// own run folder) writes a file at one path outside OUT_DIR, in a folder each run points consumers
// at (a `cargo:include=` folder under target/, a folder it compiles into): the path carries no key,
// so the last configuration built wins and the other configuration's consumers read its version (a
// C consumer disagreeing with the Rust side: nano-ros #117/#514). One finding per file, naming every
// run that points there and the one whose last run wrote the file (its mtime lies within that run).
// Folders in the package or workspace that the runs link from are output-outside-out-dir's.
func unkeyedOutput(g *graph.Graph) []Finding {
	linkedFrom := map[string]bool{} // package and workspace folders output-outside-out-dir reports
	byDir := map[string][]*graph.Step{}
	for _, s := range g.Steps {
		if s.Kind != graph.ScriptRun {
			continue
		}
		for _, d := range s.Script().LinkSearch {
			if !inBuildOutput(g, filepath.Clean(d)) {
				linkedFrom[filepath.Clean(d)] = true
			}
		}
		for _, p := range s.Script().PointsAt {
			byDir[p] = append(byDir[p], s)
		}
	}
	var out []Finding
	seen := map[string]bool{}
	for _, w := range g.Steps {
		for _, f := range w.Script().WroteOutside {
			dir := filepath.Dir(f.Path)
			if seen[f.Path] || linkedFrom[dir] {
				continue
			}
			pointers := append(append([]*graph.Step{}, byDir[dir]...), byDir[f.Path]...)
			var others []*graph.Step
			live := w.Live()
			for _, o := range pointers {
				if o != w && o.Package == w.Package && !containsStep(others, o) {
					others = append(others, o)
					live = live || o.Live()
				}
			}
			if len(others) == 0 || !live {
				continue
			}
			seen[f.Path] = true
			out = append(out, unkeyedFinding(g, f, w, others))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Subjects[0] < out[j].Subjects[0] })
	return out
}

func containsStep(l []*graph.Step, s *graph.Step) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func unkeyedFinding(g *graph.Graph, f graph.FileInfo, w *graph.Step, others []*graph.Step) Finding {
	describe := func(s *graph.Step) string {
		return unitName(s) + inParens(configString(s))
	}
	var names []string
	ev := []Evidence{{Kind: "artifact", Path: f.Path, MTimeNS: f.MTimeNS, Size: f.Size,
		Detail: fmt.Sprintf("written within the last run of %s (from %s)", unitName(w), fmtTime(w.Reference.MTimeNS))}}
	roots := map[string]bool{}
	for _, s := range append([]*graph.Step{w}, others...) {
		names = append(names, describe(s))
		ev = append(ev, Evidence{Kind: "record", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS,
			Detail: fmt.Sprintf("the run of %s points at %s", describe(s), display(g, filepath.Dir(f.Path)))})
		for _, p := range rootPaths(s) {
			roots[p] = true
		}
	}
	var others2 []string
	for _, o := range others {
		others2 = append(others2, unitName(o))
	}
	return Finding{
		Rule: "unkeyed-output", Severity: Warning,
		Message: fmt.Sprintf("%s is written outside OUT_DIR by the build script of %s in %d configurations (%s), at one path for all: the last to write it was %s at %s, so what was built for %s reads that version",
			display(g, f.Path), w.Package, len(others)+1, strings.Join(names, "; "), describe(w), fmtTime(f.MTimeNS), strings.Join(others2, ", ")),
		Subjects: []string{f.Path},
		Roots:    sortedKeys(roots),
		Evidence: ev,
		Fix: fmt.Sprintf("have the build script of %s write into OUT_DIR (and print cargo:include=$OUT_DIR/...; consumers read DEP_<links>_INCLUDE), then %s",
			w.Package, exampleBuild(append([]*graph.Step{w}, others...))),
	}
}
