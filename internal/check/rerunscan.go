package check

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// rerunScanDisabled: a path package's build script printed only rerun-if-env-changed lines, or
// rerun-if-changed lines that cover none of some native sources of its package, which switches off
// Cargo's scan of the whole package while those sources exist. One finding per build script.
//
// Warning when some of those sources are only package-folder candidates (an edit to them would
// itself be only a warning, so the stale binary could be timed); info when every one is tied to the
// step by a record (command line, depfile, DWARF, include scan, archive member, build.rs): an edit to
// them is an untracked-input-changed error, so nothing goes unnoticed and a healthy build gets no warning.
func rerunScanDisabled(g *graph.Graph) []Finding {
	type agg struct {
		s       *graph.Step
		runs    []string
		roots   map[string]bool
		missing map[string]bool
		strong  map[string]bool // tied to the step by a record in every run that lists it
	}
	byScript := map[string]*agg{}
	var order []string
	for _, s := range liveSteps(g, graph.ScriptRun) {
		if !s.Records().DeclarationsKnown || s.Records().Scan().ScanKey != "" || !s.PathPackage || s.PackageRoot == "" {
			continue
		}
		var missing []string
		strong := map[string]bool{}
		for _, in := range s.Inputs {
			if in.Has(graph.PackageFolder) && !in.Watched {
				missing = append(missing, in.File.Path)
				strong[in.File.Path] = in.Strong()
			}
		}
		if len(missing) == 0 {
			continue
		}
		key := s.Script().ScriptSource + "\x00" + s.PackageRoot
		a := byScript[key]
		if a == nil {
			a = &agg{s: s, missing: map[string]bool{}, roots: map[string]bool{}, strong: map[string]bool{}}
			byScript[key] = a
			order = append(order, key)
		}
		out := s.Reference.Path // the run's stdout record: `output` (legacy layout) or `run/stdout` (new)
		if out == "" {
			out = filepath.Join(s.Script().RunDir, "output")
		}
		a.runs = append(a.runs, out)
		for _, r := range rootPaths(s) {
			a.roots[r] = true
		}
		for _, m := range missing {
			if !a.missing[m] {
				a.strong[m] = true
			}
			a.strong[m] = a.strong[m] && strong[m]
			a.missing[m] = true
		}
	}
	var out []Finding
	for _, k := range order {
		a := byScript[k]
		s := a.s
		var missing []string
		for m := range a.missing {
			missing = append(missing, m)
		}
		sort.Strings(missing)
		how := "declares only " + strings.TrimPrefix(declaredSummary(g, s), "declared: ")
		if len(s.Records().DeclaredPaths) == 0 {
			how = "prints only rerun-if-env-changed lines (" + strings.Join(s.Records().DeclaredEnv, ", ") + ")"
		}
		rels := make([]string, len(missing))
		dirs := map[string]bool{}
		for i, m := range missing {
			rels[i], _ = filepath.Rel(s.PackageRoot, m)
			dirs[topDir(rels[i])] = true
		}
		var decl []string
		for d := range dirs {
			decl = append(decl, fmt.Sprintf("println!(\"cargo:rerun-if-changed=%s\")", d))
		}
		sort.Strings(decl)
		sev, tail := Info, "; the build's records tie each to the script's step, so check reports an edit to them as an untracked-input-changed error"
		for _, m := range missing {
			if !a.strong[m] {
				sev, tail = Warning, ""
				break
			}
		}
		f := Finding{
			Rule: "rerun-scan-disabled", Severity: sev,
			Message: fmt.Sprintf("the build script %s %s, which switches off Cargo's scan of package %s, while %d native source(s) there are not declared (%s): editing them will not rebuild%s",
				display(g, s.Script().ScriptSource), how, s.Package, len(missing), strings.Join(limit(rels, 5), ", "), tail),
			Subjects: []string{s.Script().ScriptSource},
			Roots:    sortedKeys(a.roots),
			Fix:      "add " + strings.Join(decl, " and ") + " to " + display(g, s.Script().ScriptSource),
		}
		f.Evidence = append(f.Evidence, Evidence{Kind: "declared", Path: s.Script().ScriptSource, Detail: declaredSummary(g, s)})
		for _, r := range a.runs {
			f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: r, Detail: "run folder whose fingerprint holds these declarations"})
		}
		for _, m := range missing {
			detail := "native source not covered by any rerun-if-changed path"
			if a.strong[m] {
				detail += "; a record ties it to the step"
			}
			f.Evidence = append(f.Evidence, Evidence{Kind: "input", Path: m, How: string(graph.PackageFolder), Detail: detail})
		}
		out = append(out, f)
	}
	return out
}

func topDir(rel string) string {
	if i := strings.IndexByte(rel, filepath.Separator); i > 0 {
		return rel[:i]
	}
	return rel
}

func limit(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
