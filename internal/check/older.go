package check

import (
	"fmt"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// binaryOlderThanInput: a root is older than an archive, object or library it links: the static
// libraries its build-script runs tell rustc to link, and the rlibs and libraries of its dependency
// units (graph.Root.NewerLinked). The mtime alone does not make it stale: where internal/content proved
// that the root holds the library's current content (a touched or identically rebuilt archive), it is
// info; where content shows other content, or could not decide, it is an error that says which.
func binaryOlderThanInput(g *graph.Graph) []Finding {
	var out []Finding
	for _, r := range g.Roots {
		// Roots of systems that compare mtimes (Make, Ninja); one whose system compares content (Go's
		// build IDs) takes the path below (graph.Root.NewerLinked follows the libraries its link step
		// names, and behindLibrary the Cargo units behind them).
		if r.Step != nil && r.Step.Decides() == graph.ByMtime {
			out = append(out, olderForeign(g, r)...)
			continue
		}
		for _, li := range r.NewerLinked() {
			s, in := li.Step, li.File
			h := g.HoldingOf(r, in.Path)
			f := Finding{
				Rule: "binary-older-than-input", Severity: Error,
				Subjects: []string{r.File.Path, in.Path},
				Roots:    []string{r.File.Path},
				Evidence: []Evidence{
					{Kind: "root", Path: r.File.Path, MTimeNS: r.File.MTimeNS, Size: r.File.Size, Detail: r.Kind + " tied to unit " + unitName(r.Step) + " by " + r.TiedBy},
					{Kind: "input", Path: in.Path, MTimeNS: in.MTimeNS, Size: in.Size, Detail: "linked through " + unitName(s) + " (" + s.Label + ")"},
				},
				Fix: olderFix(g, r, s),
			}
			when := fmt.Sprintf("%s was linked at %s, before %s was written at %s",
				display(g, r.File.Path), fmtTime(r.File.MTimeNS), display(g, in.Path), fmtTime(in.MTimeNS))
			switch {
			case h != nil && h.Verdict == graph.HoldsContent:
				f.Severity = Info
				f.Message = when + ", but by content it holds what that library now contains (" + h.Detail + "): only the mtime is newer, it is not stale"
				f.Fix = ""
			case h != nil && h.Verdict == graph.DiffersContent:
				f.Message = when + ", and by content it holds other code: " + h.Detail
			default:
				why := "content evidence was not gathered"
				if h != nil {
					why = h.Detail
				}
				f.Message = when + ": the binary cannot hold what that library now contains unless its content is unchanged, and content could not clear it (" + why + ")"
			}
			if ev, clause := behindLibrary(g, r, s, in.Path); clause != "" {
				f.Message += clause
				f.Evidence = append(f.Evidence, ev...)
			}
			if h != nil {
				ev := Evidence{Kind: "record", Path: in.Path, How: "content-" + h.Verdict, Detail: h.Detail}
				f.Evidence = append(f.Evidence, ev)
			}
			out = append(out, f)
		}
	}
	return out
}

func olderFix(g *graph.Graph, r *graph.Root, s *graph.Step) string {
	if w := r.Step.Words(); w.Rebuild != "" {
		return w.Rebuild
	}
	build := rebuildCmd(r.Step)
	if s.Kind == graph.ScriptRun && s.Script().ScriptSource != "" {
		// Cargo does not track OUT_DIR contents: only a rerun of the script relinks.
		return "touch " + display(g, s.Script().ScriptSource) + " && " + build
	}
	return build
}
