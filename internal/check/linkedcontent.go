package check

import (
	"fmt"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// linkedContentChanged (part of untracked-input-changed): a root's link step names a static library its
// build system does not watch (graph.Root.UnwatchedLinked: a Go program's #cgo LDFLAGS archive, whatever
// wrote it), the root is not older than the library, and yet by content the root holds other code than
// the library has now (internal/content): the last build refreshed the root without linking the library
// again (Go's build cache keys the link by its flags, not by the archive's bytes). Mtimes cannot show it.
func linkedContentChanged(g *graph.Graph) []Finding {
	var out []Finding
	for _, r := range g.Roots {
		for _, lib := range r.UnwatchedLinked() {
			h := g.HoldingOf(r, lib.Path)
			if h == nil || h.Verdict != graph.DiffersContent {
				continue
			}
			s := r.Step
			w := s.Words()
			f := Finding{
				Rule: "untracked-input-changed", Severity: Error, System: foreignSystem(s),
				Message: fmt.Sprintf("%s links %s, and by content it holds other code than that library has now (%s); %s was written at %s, before %s at %s, so the last build refreshed the program without linking the library again: %s",
					display(g, r.File.Path), display(g, lib.Path), h.Detail, display(g, lib.Path), fmtTime(lib.MTimeNS), display(g, r.File.Path), fmtTime(r.File.MTimeNS), w.NotWatched),
				Subjects: []string{lib.Path, r.File.Path},
				Roots:    []string{r.File.Path},
				Evidence: []Evidence{
					{Kind: "input", Path: lib.Path, MTimeNS: lib.MTimeNS, Size: lib.Size, How: string(graph.CommandLine), Detail: "a static library the link line names"},
					{Kind: "root", Path: r.File.Path, MTimeNS: r.File.MTimeNS, Size: r.File.Size, Detail: r.Kind + " made by " + s.Label},
					{Kind: "record", Path: lib.Path, How: "content-" + h.Verdict, Detail: h.Detail},
				},
				Fix: rebuildCmd(s),
			}
			if w.Rebuild != "" {
				f.Fix = w.Rebuild
			}
			out = append(out, f)
		}
	}
	return out
}
