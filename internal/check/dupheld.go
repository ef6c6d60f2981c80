package check

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// heldCopyOf returns the index in d.Copies of the copy root file path holds by its bytes
// (graph.MemberHolding), else the copy the linker takes (d.Taken); -1 when neither is known.
func heldCopyOf(d *graph.DuplicateMember, root string) int {
	for _, h := range d.Holds {
		if h.Root != nil && h.Root.File.Path == root && h.Copy >= 0 {
			return h.Copy
		}
	}
	return d.Taken
}

// copyFromSourcesHere reports whether copy i of d was written by a run of d.Step whose inputs all have
// their content of then now (graph.CopyRun.SourcesNow): a build from the files here compiles that code.
func copyFromSourcesHere(d *graph.DuplicateMember, i int) bool {
	return i >= 0 && i < len(d.Copies) && d.Copies[i].Run != nil && d.Copies[i].Run.SourcesNow
}

// linkedCopiesFromSourcesHere reports, for a build-script run s, whether what its binaries link of it
// comes from sources equal to the files here although its last run used other content: s outputs static
// archives, each holds a duplicated member (`ar q`), every root of s holds (or, unknown, the linker
// takes) a copy that a run with the inputs' content of now wrote, and s's other outputs are object files
// only (nothing else the last run made is used). It returns a sentence saying so for the findings
// ("" when not).
func linkedCopiesFromSourcesHere(g *graph.Graph, s *graph.Step) string {
	if s.Kind != graph.ScriptRun {
		return ""
	}
	var archives []string
	for _, o := range s.Outputs {
		if !o.Exists {
			continue
		}
		switch n := filepath.Base(o.Path); {
		case strings.HasSuffix(n, ".a"):
			archives = append(archives, o.Path)
		case strings.HasSuffix(n, ".o"):
		default:
			return ""
		}
	}
	if len(archives) == 0 {
		return ""
	}
	var said []string
	for _, a := range archives {
		found := false
		for i := range g.DuplicateMembers {
			d := &g.DuplicateMembers[i]
			if d.Step != s || d.Archive.Path != a {
				continue
			}
			found = true
			roots := s.Roots
			if len(roots) == 0 {
				return ""
			}
			for _, r := range roots {
				if r.Kind == "lib" {
					continue
				}
				c := heldCopyOf(d, r.File.Path)
				if !copyFromSourcesHere(d, c) {
					return ""
				}
				said = append(said, fmt.Sprintf("%s links copy %d of %d of %s in %s, which the run at %s wrote from sources with the content they have now",
					display(g, r.File.Path), c+1, len(d.Copies), d.Name, display(g, a), fmtTime(d.Copies[c].Run.RunNS)))
			}
		}
		if !found {
			return ""
		}
	}
	if len(said) == 0 {
		return ""
	}
	return strings.Join(said, "; ")
}
