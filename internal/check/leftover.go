package check

import (
	"fmt"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// outDirLeftover: a file in OUT_DIR that the last run of the build script did not rewrite (its mtime
// is older than the run's start, the `output` mtime) and that the build still uses: a live unit's
// dep-info names it, or it is a library the run links. Cargo never empties OUT_DIR before a rerun
// (rust-lang/cargo#16332), so such a file is left from an earlier run. A file the last run's records
// show it installed or rebuilt (graph.Step.Script().Written: CMake's install step keeps old, whole-second
// mtimes) is not a leftover: leftovers are judged by what the last run wrote, not by mtime alone.
func outDirLeftover(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range liveSteps(g, graph.ScriptRun) {
		used := map[string]string{}
		for _, p := range linkedArchives(s) {
			used[p] = "linked: rustc-link-lib in " + display(g, s.Reference.Path)
		}
		for _, d := range s.Dependents {
			if !d.Live() {
				continue
			}
			for _, in := range d.Inputs {
				if in.Has(graph.Declared) {
					used[in.File.Path] = fmt.Sprintf("listed in the dep-info of %s (%s)", unitName(d), d.Label)
				}
			}
		}
		for _, o := range s.Outputs {
			why, ok := used[o.Path]
			if !ok || o.MTimeNS >= s.Reference.MTimeNS || s.Script().Written[o.Path] != "" {
				continue // rewritten by the last run, or its records show it installed or rebuilt it
			}
			f := Finding{
				Rule: "out-dir-leftover", Severity: Warning,
				Message: fmt.Sprintf("%s was last written at %s, before the last run of the build script of %s started at %s, so that run did not make it; the build still uses it (%s)",
					display(g, o.Path), fmtTime(o.MTimeNS), s.Package, fmtTime(s.Reference.MTimeNS), why),
				Subjects: []string{o.Path, s.Script().RunDir},
				Roots:    rootPaths(s),
				Evidence: []Evidence{
					{Kind: "artifact", Path: o.Path, MTimeNS: o.MTimeNS, Size: o.Size, Detail: why},
					{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Detail: "start of the build script's last successful run"},
				},
				Fix: fmt.Sprintf("rm %s && touch %s && %s (Cargo never empties OUT_DIR; have the script delete what it no longer makes)",
					display(g, o.Path), display(g, s.Script().ScriptSource), rebuildCmd(s)),
			}
			f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
			out = append(out, f)
		}
	}
	return out
}
