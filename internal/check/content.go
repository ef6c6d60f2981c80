package check

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// outDirIndex maps each build-script run's OUT_DIR to its first run's index in the graph's steps, so
// that runOf does not scan every step for every copy (that scan was a fifth of a 28,000-unit tree's
// check).
type outDirIndex map[string]int

func outDirsOf(g *graph.Graph) outDirIndex {
	m := outDirIndex{}
	for i, s := range g.Steps {
		if s.Kind == graph.ScriptRun && s.Script.OutDir != "" {
			if _, ok := m[filepath.Clean(s.Script.OutDir)]; !ok {
				m[filepath.Clean(s.Script.OutDir)] = i
			}
		}
	}
	return m
}

// runOf returns the build-script run whose OUT_DIR holds path (the first such run in the graph's
// order): path's folders are looked up in idx from the deepest.
func runOf(g *graph.Graph, idx outDirIndex, path string) *graph.Step {
	best := -1
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		if i, ok := idx[d]; ok && (best < 0 || i < best) {
			best = i
		}
		if next := filepath.Dir(d); next == d {
			break
		}
	}
	if best < 0 {
		return nil
	}
	return g.Steps[best]
}

// linkedCopyNotNewest: content evidence shows the binary holds an older copy of a library than the
// newest on disk (newest = the copy whose build-script run's `output` is latest), among the copies one
// package's runs made in the root's profile folder. Checked only where duplicates exist. An error when the
// bytes contradict the binary's own build records; a warning when the copy inside is the one its own
// configuration makes and the newer copy belongs to another configuration.
func linkedCopyNotNewest(g *graph.Graph) []Finding {
	var out []Finding
	idx := outDirsOf(g)
	for _, cm := range g.Content {
		if cm.Outcome != "matched" || len(cm.Matched) == 0 {
			continue
		}
		matchedRun := runOf(g, idx, cm.Matched[0])
		if matchedRun == nil {
			continue
		}
		var newest *graph.Step
		newestPath := ""
		for _, p := range cm.Copies {
			s := runOf(g, idx, p)
			if s == nil || s.Package != matchedRun.Package || s.Failed != "" || !s.Reference.Exists {
				continue
			}
			if newest == nil || s.Reference.MTimeNS > newest.Reference.MTimeNS {
				newest, newestPath = s, p
			}
		}
		if newest == nil || newest == matchedRun || newest.Reference.MTimeNS <= matchedRun.Reference.MTimeNS {
			continue
		}
		// Matched is a group of copies with the same content: when the newest copy is one of them, the
		// binary holds the newest content, whichever path of the group its records name.
		if containsStr(cm.Matched, newestPath) {
			continue
		}
		root := cm.Root
		// When the fingerprint chain reaches the run that made the copy inside, records and bytes agree:
		// the binary holds its own configuration's copy and the newer one was made for another
		// configuration (a feature toggle). That is a warning; bytes that contradict the records are an error.
		sev, why := Error, "its records name another copy: the binary is not what its own build records say"
		for _, s := range root.Reach() {
			if s == matchedRun {
				sev, why = Info, fmt.Sprintf("it is the copy of the binary's own configuration%s; the newer copy was made for %s", inParens(configString(matchedRun)), configString(newest))
			}
		}
		f := Finding{
			Rule: "linked-copy-not-newest", Severity: sev,
			Message: fmt.Sprintf("%s holds the copy of lib%s.a made by the run at %s (%s, features %s), not the newest copy, made at %s (%s, features %s); proven by content (%s): %s; %s",
				display(g, root.File.Path), cm.Library, fmtTime(matchedRun.Reference.MTimeNS), display(g, cm.Matched[0]), featureString(matchedRun.Records()),
				fmtTime(newest.Reference.MTimeNS), display(g, newestPath), featureString(newest.Records()), cm.Confidence, strings.Join(cm.Evidence, "; "), why),
			Subjects: []string{root.File.Path, cm.Matched[0], newestPath},
			Roots:    []string{root.File.Path},
			Evidence: []Evidence{
				{Kind: "root", Path: root.File.Path, MTimeNS: root.File.MTimeNS, Size: root.File.Size},
				{Kind: "copy", Path: cm.Matched[0], Detail: fmt.Sprintf("inside the binary by content (%s, %s); made by run %s%s", cm.Outcome, cm.Confidence, unitName(matchedRun), prefixed(", ", configString(matchedRun)))},
				{Kind: "reference", Path: matchedRun.Reference.Path, MTimeNS: matchedRun.Reference.MTimeNS, Detail: "start of the run that made the copy inside"},
				{Kind: "copy", Path: newestPath, Detail: fmt.Sprintf("newest copy; made by run %s%s", unitName(newest), prefixed(", ", configString(newest)))},
				{Kind: "reference", Path: newest.Reference.Path, MTimeNS: newest.Reference.MTimeNS, Detail: "start of the run that made the newest copy"},
			},
			Fix: fmt.Sprintf("if the newest copy is the code you mean to time, build its configuration: %s", rebuildCmd(newest)),
		}
		for _, e := range cm.Evidence {
			f.Evidence = append(f.Evidence, Evidence{Kind: "input", Path: cm.Matched[0], How: "content-match", Detail: e})
		}
		out = append(out, f)
	}
	return out
}

// linkSearchShadowing: a library file name exists in several link-search folders of one root's
// build-script runs, so the linker takes the first. Cargo's -L order is not on disk; it is
// reconstructed from docs/cargo-target-dir.md §10 (cargo ≥ 1.88): the root's own package's scripts
// first, then dependencies' sorted by package name; paths inside a script's OUT_DIR before others.
func linkSearchShadowing(g *graph.Graph) []Finding {
	var out []Finding
	var idx outDirIndex // built at the first finding
	for _, r := range g.Roots {
		if r.Step == nil || r.Kind == "lib" {
			continue
		}
		order := searchOrder(r)
		byName := map[string][]string{}
		var names []string
		// Static libraries of the reached runs, by folder, in reach order (one pass over the outputs).
		libsIn := map[string][]string{}
		for _, s := range r.Reach() {
			if s.Kind != graph.ScriptRun {
				continue
			}
			for _, o := range s.Outputs {
				if isStaticLib(filepath.Base(o.Path)) {
					d := filepath.Dir(o.Path)
					libsIn[d] = append(libsIn[d], o.Path)
				}
			}
		}
		for _, dir := range order {
			for _, p := range libsIn[dir] {
				n := filepath.Base(p)
				if len(byName[n]) == 0 {
					names = append(names, n)
				}
				if !containsStr(byName[n], p) {
					byName[n] = append(byName[n], p)
				}
			}
		}
		for _, n := range names {
			paths := byName[n]
			if len(paths) < 2 {
				continue
			}
			lib := strings.TrimSuffix(strings.TrimPrefix(n, "lib"), ".a")
			var cm *graph.ContentMatch
			for i := range g.Content {
				if g.Content[i].Root == r && g.Content[i].Library == lib {
					cm = &g.Content[i]
				}
			}
			if cm != nil && cm.Outcome == "none-inside" {
				continue // the binary links none of them: nothing is shadowed in it
			}
			content := "content evidence was not gathered (--no-native)"
			if cm != nil {
				switch cm.Outcome {
				case "matched":
					content = fmt.Sprintf("by content the binary holds %s (%s: %s)", display(g, cm.Matched[0]), cm.Confidence, strings.Join(cm.Evidence, "; "))
				default:
					content = "content cannot tell the copies apart (" + cm.Outcome + ")"
				}
			}
			disp := make([]string, len(paths))
			for i, p := range paths {
				disp[i] = display(g, p)
			}
			f := Finding{
				Rule: "link-search-shadowing", Severity: Warning,
				Message: fmt.Sprintf("%s is in %d link-search folders of %s: in Cargo's -L order (reconstructed) %s comes first, so a -l%s link takes it and the others are shadowed; %s",
					n, len(paths), display(g, r.File.Path), disp[0], lib, content),
				Subjects: append([]string{r.File.Path}, paths...),
				Roots:    []string{r.File.Path},
				Fix:      fmt.Sprintf("give the libraries distinct names (e.g. lib<crate>_%s.a) in the build scripts, or stop printing rustc-link-search for the copy that should not be linked", lib),
			}
			for i, p := range paths {
				d := "shadowed"
				if i == 0 {
					d = "first in the reconstructed -L order: the linker takes this one"
				}
				if cm != nil && containsStr(cm.Matched, p) {
					d += "; inside the binary by content"
				}
				if idx == nil {
					idx = outDirsOf(g)
				}
				if s := runOf(g, idx, p); s != nil {
					d += "; made by run " + unitName(s)
				}
				f.Evidence = append(f.Evidence, Evidence{Kind: "copy", Path: p, Detail: d})
			}
			f.Evidence = append(f.Evidence, Evidence{Kind: "record", Detail: "Cargo's -L order is not on disk: reconstructed (own package's build scripts first, then dependencies sorted by package name, OUT_DIR paths before others; cargo ≥ 1.88)"})
			out = append(out, f)
		}
	}
	return out
}

// searchOrder reconstructs the -L native folders rustc gets for a root's link.
func searchOrder(r *graph.Root) []string {
	var runs []*graph.Step
	for _, s := range r.Reach() {
		if s.Kind == graph.ScriptRun {
			runs = append(runs, s)
		}
	}
	own := r.Step.Package
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if (a.Package == own) != (b.Package == own) {
			return a.Package == own
		}
		return a.Package < b.Package
	})
	var inside, outside []string
	seen := map[string]bool{}
	for _, s := range runs {
		for _, d := range s.Script.LinkSearch {
			if seen[d] {
				continue
			}
			seen[d] = true
			if d == s.Script.OutDir || strings.HasPrefix(d, s.Script.OutDir+string(filepath.Separator)) {
				inside = append(inside, d)
			} else {
				outside = append(outside, d)
			}
		}
	}
	return append(inside, outside...)
}

func isStaticLib(n string) bool { return strings.HasPrefix(n, "lib") && strings.HasSuffix(n, ".a") }

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
