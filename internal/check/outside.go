package check

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// outputOutsideOutDir: a live build script tells rustc to search for native libraries in a folder of
// the package or workspace (outside its OUT_DIR and outside the build and target folders), e.g. a
// `make` run in native/ that leaves native/libfoo.a next to the sources. `cargo clean` never removes
// that folder's outputs, and every configuration and profile links the same file, so a release build
// reuses the objects a debug build made. One finding per folder, naming the libraries linked from it,
// the link-search line and every run that uses it.
func outputOutsideOutDir(g *graph.Graph) []Finding {
	type group struct {
		dir  string
		runs []*graph.Step
		libs map[string]bool
	}
	groups := map[string]*group{}
	var order []string
	for _, s := range liveSteps(g, graph.ScriptRun) {
		seen := map[string]bool{}
		for _, dir := range s.Script().LinkSearch {
			dir = filepath.Clean(dir)
			if seen[dir] || dir == s.Script().OutDir || withinDir(dir, s.Script().OutDir) || inBuildOutput(g, dir) {
				continue
			}
			if !(dir == s.PackageRoot || withinDir(dir, s.PackageRoot) || g.Workspace != "" && (dir == g.Workspace || withinDir(dir, g.Workspace))) {
				continue // a system or external folder (pkg-config's /usr/lib, a CUDA toolkit)
			}
			seen[dir] = true
			gr := groups[dir]
			if gr == nil {
				gr = &group{dir: dir, libs: map[string]bool{}}
				groups[dir] = gr
				order = append(order, dir)
			}
			gr.runs = append(gr.runs, s)
			for _, l := range s.Script().Links {
				if l.Path != "" && filepath.Dir(l.Path) == dir {
					gr.libs[l.Path] = true
				}
			}
		}
	}
	sort.Strings(order)
	var out []Finding
	for _, dir := range order {
		gr := groups[dir]
		s := gr.runs[0]
		libs := sortedKeys(gr.libs)
		roots := map[string]bool{}
		var runNames, profiles []string
		profSeen := map[string]bool{}
		for _, r := range gr.runs {
			runNames = append(runNames, unitName(r)+" ("+r.ProfileDir+")")
			if !profSeen[r.ProfileDir] {
				profSeen[r.ProfileDir] = true
				profiles = append(profiles, r.ProfileDir)
			}
			for _, p := range rootPaths(r) {
				roots[p] = true
			}
		}
		what := "searches " + display(g, dir) + " for native libraries"
		if len(libs) > 0 {
			names := make([]string, len(libs))
			for i, l := range libs {
				names[i] = display(g, l)
			}
			what = "links " + strings.Join(names, ", ")
		}
		shared := ""
		if len(gr.runs) > 1 {
			shared = fmt.Sprintf("; %d runs (%s) link the same files, so one configuration reuses what another built", len(gr.runs), strings.Join(profiles, ", "))
		}
		f := Finding{
			Rule: "output-outside-out-dir", Severity: Warning,
			Message: fmt.Sprintf("the build script of %s %s from outside its OUT_DIR (rustc-link-search=%s in %s): cargo clean will not remove it%s",
				s.Package, what, dir, display(g, s.Reference.Path), shared),
			Subjects: append(append([]string{}, libs...), dir),
			Roots:    sortedKeys(roots),
			Fix: fmt.Sprintf("have %s build into OUT_DIR (e.g. make -C %s O=\"$OUT_DIR\", or the cc crate) and print cargo:rustc-link-search=native=$OUT_DIR; then remove the files in %s and rebuild (%s)",
				orScript(g, s), display(g, dir), display(g, dir), rebuildCmd(s)),
		}
		for _, l := range libs {
			f.Evidence = append(f.Evidence, Evidence{Kind: "artifact", Path: l, Detail: "library linked from outside OUT_DIR (rustc-link-lib)"})
		}
		for _, r := range gr.runs {
			f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: r.Reference.Path, MTimeNS: r.Reference.MTimeNS,
				Detail: fmt.Sprintf("build-script run %s%s printed rustc-link-search=%s; its OUT_DIR is %s", unitName(r), inParens(configString(r)), dir, r.Script().OutDir)})
		}
		for _, r := range gr.runs {
			f.Evidence = append(f.Evidence, rootEvidence(g, r)...)
		}
		out = append(out, f)
	}
	return out
}

// inBuildOutput reports whether a path lies in the build or target folder (cargo clean removes it).
func inBuildOutput(g *graph.Graph, p string) bool {
	for _, d := range []string{g.BuildDir, g.TargetDir} {
		if d != "" && (p == d || withinDir(p, d)) {
			return true
		}
	}
	return false
}

func withinDir(p, dir string) bool {
	return dir != "" && strings.HasPrefix(p, dir+string(filepath.Separator))
}

func orScript(g *graph.Graph, s *graph.Step) string {
	if s.Script().ScriptSource == "" {
		return "the build script"
	}
	return display(g, s.Script().ScriptSource)
}
