package check

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/sysdirs"
)

// outDirIndex maps each build-script run's OUT_DIR to its first run's index in the graph's steps, so
// that runOf does not scan every step for every copy (that scan was a fifth of a 28,000-unit tree's
// check).
type outDirIndex map[string]int

func outDirsOf(g *graph.Graph) outDirIndex {
	m := outDirIndex{}
	for i, s := range g.Steps {
		if s.Kind == graph.ScriptRun && s.Script().OutDir != "" {
			if _, ok := m[filepath.Clean(s.Script().OutDir)]; !ok {
				m[filepath.Clean(s.Script().OutDir)] = i
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
		if newest == matchedRun {
			if f, ok := copyNotRewritten(g, cm, matchedRun); ok {
				out = append(out, f)
			}
			continue
		}
		if newest == nil || newest.Reference.MTimeNS <= matchedRun.Reference.MTimeNS {
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

// copyNotRewritten is linked-copy-not-newest within one run: the copy inside the binary predates the
// last run of the step whose output it is (that run did not write it), while another copy of the same
// library among the run's outputs was written by that run and differs (a copy step that keeps a
// destination it takes for up to date, as CMake's install does for files whose mtimes are within a
// second of each other, or cp -u and rsync by size and mtime; the linker is pointed at the old one).
// The sources of the differing members are named through their depfiles.
func copyNotRewritten(g *graph.Graph, cm graph.ContentMatch, run *graph.Step) (Finding, bool) {
	mtime := map[string]int64{}
	for _, o := range run.Outputs {
		if o.Exists {
			mtime[o.Path] = o.MTimeNS
		}
	}
	ref := run.Reference.MTimeNS
	var inside int64
	for _, p := range cm.Matched {
		t, ok := mtime[p]
		if !ok {
			return Finding{}, false
		}
		inside = max(inside, t)
	}
	if inside >= ref {
		return Finding{}, false // the run wrote the copy inside
	}
	fresh, freshAt := "", int64(0)
	for _, p := range cm.Copies {
		if t, ok := mtime[p]; ok && t >= ref && !containsStr(cm.Matched, p) && t > freshAt {
			fresh, freshAt = p, t
		}
	}
	if fresh == "" {
		return Finding{}, false
	}
	root, held := cm.Root, cm.Matched[0]
	sources := memberSources(g, run, cm.Members)
	differs := "its distinguishing content: " + strings.Join(cm.Evidence, "; ")
	if len(cm.Members) > 0 {
		differs = "member(s) " + strings.Join(cm.Members, ", ") + " differ"
		if len(sources) > 0 {
			var shown []string
			for _, p := range sources {
				shown = append(shown, display(g, p))
			}
			differs += " (compiled from " + strings.Join(shown, ", ") + ")"
		}
		differs += "; " + strings.Join(cm.Evidence, "; ")
	}
	notWritten := fmt.Sprintf("did not write (its mtime %s is older)", fmtTime(inside))
	if rec, ok := run.Script().Written[held]; ok {
		notWritten = fmt.Sprintf("left in place (its mtime %s is older; the run's records took it for up to date: %s)", fmtTime(inside), rec)
	}
	f := Finding{
		Rule: "linked-copy-not-newest", Severity: Error, System: run.System,
		Message: fmt.Sprintf("%s holds %s, which the last run of %s (at %s) %s, while that run wrote %s at %s with other content (proven by content, %s: %s): a step that copies a library and keeps a destination it takes for up to date (CMake's install within a second, cp -u, rsync) left the old copy, and the link takes it",
			display(g, root.File.Path), display(g, held), stepWhat(run), fmtTime(ref), notWritten, display(g, fresh), fmtTime(freshAt), cm.Confidence, differs),
		Subjects: []string{root.File.Path, held, fresh},
		Roots:    []string{root.File.Path},
		Evidence: []Evidence{
			{Kind: "root", Path: root.File.Path, MTimeNS: root.File.MTimeNS, Size: root.File.Size},
			{Kind: "copy", Path: held, MTimeNS: inside, Detail: fmt.Sprintf("inside the binary by content (%s, %s); older than the run that should have made it", cm.Outcome, cm.Confidence)},
			{Kind: "reference", Path: run.Reference.Path, MTimeNS: ref, Detail: "start of the last run of " + stepWhat(run)},
			{Kind: "copy", Path: fresh, MTimeNS: freshAt, Detail: "written by that run; not inside the binary"},
		},
		Fix: fmt.Sprintf("remove %s, then run the step again: %s", display(g, held), driverRerun(run)),
	}
	for _, src := range sources {
		f.Evidence = append(f.Evidence, Evidence{Kind: "input", Path: src, How: "depfile", Detail: "a source of a member in which the copies differ"})
	}
	return f, true
}

// memberSources are the inputs of s whose depfile is named after one of the archive members (a.c.o:
// a.c.o.d or a.c.d; a.o: a.d) and outside the system folders, sorted.
func memberSources(g *graph.Graph, s *graph.Step, members []string) []string {
	want := map[string]bool{}
	for _, m := range members {
		want[m+".d"] = true
		want[strings.TrimSuffix(m, filepath.Ext(m))+".d"] = true
	}
	var out []string
	for _, in := range s.Inputs {
		for i, h := range in.How {
			if h == graph.Depfile && i < len(in.Detail) && want[filepath.Base(in.Detail[i])] && !containsStr(out, in.File.Path) && !sysdirs.System(in.File.Path, g.Workspace) {
				out = append(out, in.File.Path)
			}
		}
	}
	sort.Strings(out)
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
		for _, d := range s.Script().LinkSearch {
			if seen[d] {
				continue
			}
			seen[d] = true
			if d == s.Script().OutDir || strings.HasPrefix(d, s.Script().OutDir+string(filepath.Separator)) {
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
