package check

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// isLibrary reports whether a file name is a native library a linker searches for: lib*.a, lib*.so[.N].
func isLibrary(name string) bool {
	return strings.HasPrefix(name, "lib") && (strings.HasSuffix(name, ".a") || strings.HasSuffix(name, ".so") || strings.Contains(name, ".so."))
}

// duplicateNativeArtifact: the same library file name exists in the OUT_DIRs of several build-script
// runs of one profile folder. Says which configuration made each copy and which roots link which.
// Copies in different profile folders (debug vs release) are normal and not reported.
func duplicateNativeArtifact(g *graph.Graph) []Finding {
	type copy struct {
		file graph.FileInfo
		run  *graph.Step
	}
	groups := map[string][]copy{}
	for _, s := range g.Steps {
		if s.Kind != graph.ScriptRun {
			continue
		}
		for _, o := range s.Outputs {
			if isLibrary(filepath.Base(o.Path)) {
				k := s.ProfileDir + "\x00" + filepath.Base(o.Path)
				groups[k] = append(groups[k], copy{o, s})
			}
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Finding
	for _, k := range keys {
		copies := groups[k]
		runs := map[*graph.Step]bool{}
		for _, c := range copies {
			runs[c.run] = true
		}
		if len(runs) < 2 {
			continue
		}
		prof, name, _ := strings.Cut(k, "\x00")
		sort.Slice(copies, func(i, j int) bool { return copies[i].file.Path < copies[j].file.Path })
		f := Finding{Rule: "duplicate-native-artifact", Severity: Warning}
		var descr, linked []string
		roots := map[string]bool{}
		for _, c := range copies {
			f.Subjects = append(f.Subjects, c.file.Path)
			users := rootPaths(c.run)
			use := "used by no current binary"
			if len(users) > 0 {
				names := make([]string, len(users))
				for i, u := range users {
					names[i] = display(g, u)
					roots[u] = true
				}
				use = "used by " + strings.Join(names, ", ")
				linked = append(linked, fmt.Sprintf("%s built from the copy in %s", strings.Join(names, ", "), unitName(c.run)))
			}
			descr = append(descr, fmt.Sprintf("%s (%s)", display(g, c.file.Path), featureString(c.run.Records())))
			f.Evidence = append(f.Evidence, Evidence{Kind: "copy", Path: c.file.Path, MTimeNS: c.file.MTimeNS, Size: c.file.Size,
				Detail: fmt.Sprintf("made by build-script run %s%s; %s", unitName(c.run), prefixed(", ", configString(c.run)), use)})
		}
		for r := range roots {
			f.Roots = append(f.Roots, r)
		}
		sort.Strings(f.Roots)
		which := "no current binary uses any of them"
		if len(linked) > 0 {
			which = strings.Join(linked, "; ")
		} else if p := liveProblem(g, prof); p != nil {
			// A record of a unit a binary reaches could not be read: the edges it holds (to the run
			// that made one of these copies) are unknown.
			which = fmt.Sprintf("no binary is known to use any of them, but the record %s of a unit a current binary reaches could not be read, so which one does cannot be told", display(g, p.Path))
		}
		f.Message = fmt.Sprintf("%s exists in %d build-script OUT_DIRs of profile %s: %s; %s",
			name, len(copies), prof, strings.Join(descr, " and "), which)
		steps := make([]*graph.Step, len(copies))
		for i, c := range copies {
			steps[i] = c.run
		}
		f.Fix = fmt.Sprintf("build the configuration you mean to run (e.g. %s); `stalecheck which <binary>` proves from its bytes which copy is inside; `stalecheck clean` removes the copies no binary uses",
			exampleBuild(steps))
		out = append(out, f)
	}
	return out
}
