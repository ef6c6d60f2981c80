package evidence

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// annotateNeeded fills graph.Root.Needed, the DT_NEEDED entries of the dynamic section (ELF gABI,
// "Dynamic Section"), for the roots that reach a build-script run whose link name has a shared object
// in a link-search folder (Graph.LibFiles), or a failed build-script run whose OUT_DIR holds a shared
// object (its output no longer says what it links): the proof of which file ld took for `-l<name>`.
// Other roots are not opened. An unreadable binary is a problem naming it; a static binary has no entries.
func annotateNeeded(g *graph.Graph) {
	for _, r := range g.Roots {
		if r.Step == nil || r.Kind == "lib" || !reachesSharedCandidate(g, r) {
			continue
		}
		fsrec.Stat(r.File.Path) // recorded for the verdict cache: elf.Open opens it itself
		f, err := elf.Open(r.File.Path)
		if err != nil {
			g.AddProblem(r.File.Path, fmt.Errorf("reading its dynamic section: %w", err))
			continue
		}
		libs, err := f.ImportedLibraries()
		f.Close()
		if err != nil {
			g.AddProblem(r.File.Path, fmt.Errorf("reading its DT_NEEDED entries: %w", err))
			continue
		}
		r.Needed = append([]string{}, libs...)
	}
}

func reachesSharedCandidate(g *graph.Graph, r *graph.Root) bool {
	for _, s := range g.Steps {
		if s.Kind != graph.ScriptRun || s.Failed == "" || !slices.Contains(s.Roots, r) {
			continue
		}
		for _, o := range s.Outputs {
			if b := filepath.Base(o.Path); strings.HasPrefix(b, "lib") && strings.HasSuffix(b, ".so") {
				return true
			}
		}
	}
	if len(g.LibFiles) == 0 {
		return false
	}
	names := map[string]bool{}
	for _, s := range r.Reach() {
		for _, l := range s.Script().Links {
			names["lib"+l.Name+".so"] = true
		}
	}
	for p := range g.LibFiles {
		if i := strings.LastIndexByte(p, '/'); i >= 0 && names[p[i+1:]] {
			return true
		}
	}
	return false
}
