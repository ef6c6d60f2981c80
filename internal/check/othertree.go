package check

import (
	"fmt"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// builtInOtherTree: a live build-script run was made in another copy of this workspace that shares the
// target folder (graph.Records.BuiltInTree, from the absolute paths its output names): Cargo reuses it here
// because paths relative to the package match and the files here are not newer, so what it made, and
// the units built on it, carry the other tree's absolute paths (CARGO_MANIFEST_DIR, what the script
// baked in) and that tree's inputs. An error when an input here differs from that tree's copy (the
// binary is not built from what is here); else a warning.
func builtInOtherTree(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		u := s.Records()
		if u.OtherTree().BuiltInTree == "" || !s.Live() {
			continue
		}
		what, verb, names := "the build script of "+s.Package, "last ran", "its output names"
		ev := []Evidence{{Kind: "record", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS,
			Detail: "the run's output names " + u.OtherTree().BuiltInTreeEvidence + ", in " + u.OtherTree().BuiltInTree}}
		if u.OtherTree().BuiltInTreeDWARF && u.OtherTree().BuiltInTreeRecord == "" {
			names = "the DWARF of the objects it left in OUT_DIR names"
			ev[0].Detail = "the DWARF of the run's objects in OUT_DIR names " + u.OtherTree().BuiltInTreeEvidence + ", in " + u.OtherTree().BuiltInTree + " (the compiler ran in that tree's package folder)"
		}
		reuse := "Cargo reuses the run here because the paths relative to the workspace match and the files here are not newer"
		if u.OtherTree().BuiltInTreeRecord != "" {
			// An uplifted binary a build of the other copy replaced (internal/cargo rootsOtherTree).
			what, verb, names = strings.Join(rootPaths(s), ", "), "was last built", "its dep-info "+display(g, u.OtherTree().BuiltInTreeRecord)+" names"
			ev = []Evidence{{Kind: "record", Path: u.OtherTree().BuiltInTreeRecord, Detail: "Cargo's dep-info of the uplifted binary names " + u.OtherTree().BuiltInTreeEvidence + ", in " + u.OtherTree().BuiltInTree}}
			reuse = "a build there with this target folder replaced the binary, and a no-op build here leaves it in place"
			if u.OtherTree().BuiltInTreeDWARF {
				names = "its DWARF debug info (DW_AT_comp_dir and DW_AT_name of its compile units) names"
				ev = []Evidence{{Kind: "record", Path: u.OtherTree().BuiltInTreeRecord, Detail: "the binary's DWARF compile units were compiled in " + u.OtherTree().BuiltInTree + " (" + u.OtherTree().BuiltInTreeEvidence + "); Cargo's " + display(g, u.OtherTree().BuiltInTreeRecord+".d") + " names this workspace only because a no-op build here rewrote it"}}
				reuse = "a build there with this target folder replaced the binary, and a no-op build here left it in place (rewriting only its dep-info " + display(g, u.OtherTree().BuiltInTreeRecord+".d") + ")"
			}
		}
		sev, tail := Warning, "the sources here have the same bytes, but the binary carries "+u.OtherTree().BuiltInTree+"'s paths (CARGO_MANIFEST_DIR, file!(), paths its build script printed)"
		differs, linked := otherTreeDiffersLinked(g, s.ProfileDir, u.OtherTree().OtherTreeDiffers)
		if len(linked) > 0 {
			tail = "the sources that differ from that tree's reach the binary only through archive copies compiled from the content here (" + strings.Join(linked, "; ") + "), but the binary carries " + u.OtherTree().BuiltInTree + "'s paths (CARGO_MANIFEST_DIR, file!(), paths its build script printed)"
		}
		if len(differs) > 0 {
			sev = Error
			shown := make([]string, 0, 3)
			for i, p := range differs {
				if i < 3 {
					shown = append(shown, display(g, p))
				}
				ev = append(ev, Evidence{Kind: "input", Path: p, Detail: "differs from its copy in " + u.OtherTree().BuiltInTree})
			}
			tail = fmt.Sprintf("%d source(s) here differ from that tree's (%s), so the binary is not built from what is here", len(differs), strings.Join(shown, ", "))
		}
		f := Finding{
			Rule: "built-in-other-tree", Severity: sev,
			Message: fmt.Sprintf("%s %s in %s, another copy of this workspace (%s) sharing the target folder %s: %s %s; %s; %s",
				what, verb, u.OtherTree().BuiltInTree, g.Workspace, g.TargetDir, names, u.OtherTree().BuiltInTreeEvidence, reuse, tail),
			Subjects: []string{s.RecordDir},
			Roots:    rootPaths(s),
			Evidence: ev,
			Fix:      fmt.Sprintf("give each worktree its own target folder (unset CARGO_TARGET_DIR or set it per tree), or touch the package's sources here and %s", rebuildCmd(s)),
		}
		f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
		out = append(out, f)
	}
	return out
}

// otherTreeDiffersLinked splits the sources here that differ from the other tree's copy: those that
// are inputs only of build-script runs whose binaries link archive copies (duplicated members, `ar q`)
// compiled from the content here (linkedCopiesFromSourcesHere: the other tree's run appended a copy
// that the linker never takes), among the steps of profile folder profile, are left out of differs,
// and said in linked.
func otherTreeDiffersLinked(g *graph.Graph, profile string, paths []string) (differs, linked []string) {
	said := map[string]bool{}
	for _, p := range paths {
		var why string
		only := true
		for _, s := range g.Steps {
			if !s.Live() || s.ProfileDir != profile || !hasInput(s, p) {
				continue
			}
			w := linkedCopiesFromSourcesHere(g, s)
			if w == "" {
				only = false
				break
			}
			why = w
		}
		if !only || why == "" {
			differs = append(differs, p)
			continue
		}
		if !said[why] {
			said[why] = true
			linked = append(linked, why)
		}
	}
	return differs, linked
}

// hasInput reports whether p is one of s's inputs.
func hasInput(s *graph.Step, p string) bool {
	for _, in := range s.Inputs {
		if in.File.Path == p {
			return true
		}
	}
	return false
}
