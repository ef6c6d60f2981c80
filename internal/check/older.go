package check

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// binaryOlderThanInput: a root is older than an archive, object or library it links: the static
// libraries its build-script runs tell rustc to link, and the rlibs and libraries of its dependency
// units. What it links was rewritten after it was linked, so it cannot hold that code.
func binaryOlderThanInput(g *graph.Graph) []Finding {
	var out []Finding
	for _, r := range g.Roots {
		if r.Unit == nil || r.Unit.Failed != "" {
			continue
		}
		for _, s := range r.Reach() {
			if s.Failed != "" {
				continue
			}
			var inputs []graph.FileInfo
			switch s.Kind {
			case graph.BuildScriptRun:
				for _, p := range linkedArchives(s) {
					for _, o := range s.Outputs {
						if o.Path == p {
							inputs = append(inputs, o)
						}
					}
				}
			case graph.Rustc:
				if s == r.Unit {
					continue
				}
				for _, o := range s.Outputs {
					if ext := filepath.Ext(o.Path); ext == ".rlib" || ext == ".a" || ext == ".so" || strings.Contains(filepath.Base(o.Path), ".so.") {
						inputs = append(inputs, o)
					}
				}
			}
			for _, in := range inputs {
				if in.MTimeNS <= r.File.MTimeNS {
					continue
				}
				f := Finding{
					Rule: "binary-older-than-input", Severity: Error,
					Message: fmt.Sprintf("%s was linked at %s, before %s was written at %s: the binary cannot hold what that library now contains",
						display(g, r.File.Path), fmtTime(r.File.MTimeNS), display(g, in.Path), fmtTime(in.MTimeNS)),
					Subjects: []string{r.File.Path, in.Path},
					Roots:    []string{r.File.Path},
					Evidence: []Evidence{
						{Kind: "root", Path: r.File.Path, MTimeNS: r.File.MTimeNS, Size: r.File.Size, Detail: r.Kind + " tied to unit " + unitName(r.Unit) + " by " + r.TiedBy},
						{Kind: "input", Path: in.Path, MTimeNS: in.MTimeNS, Size: in.Size, Detail: "linked through " + unitName(s) + " (" + s.Target + ")"},
					},
					Fix: olderFix(g, r, s),
				}
				out = append(out, f)
			}
		}
	}
	return out
}

func olderFix(g *graph.Graph, r *graph.Root, s *graph.Step) string {
	build := buildCmd(r.Unit.Config.ProfileDir, r.Unit.Config.Features)
	if s.Kind == graph.BuildScriptRun && s.ScriptSource != "" {
		// Cargo does not track OUT_DIR contents: only a rerun of the script relinks.
		return "touch " + display(g, s.ScriptSource) + " && " + build
	}
	return build
}
