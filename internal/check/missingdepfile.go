package check

import (
	"fmt"
	"sort"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// missingDepfile: a compile step whose build system has no dependency file to learn the headers from
// (the rule names none, or names one the compiler never writes): header edits go unseen. Warning;
// the evidence names the rule and command, the depfile and that it is absent, and the headers other
// clues (DWARF, the include scan, a depfile make never reads) show the compile read.
func missingDepfile(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		dg, ok := s.Origin.(graph.DepfileGapper)
		if !ok || !s.Reference.Exists {
			continue
		}
		rule, command, dep, onDisk, why := dg.DepfileGap()
		if why == "" {
			continue
		}
		f := Finding{
			Rule: "missing-depfile", Severity: Warning, System: s.System,
			Message: fmt.Sprintf("%s is compiled by rule %s with no dependency file %s reads (%s): an edit of a header it includes goes unseen",
				s.Label, rule, s.Words().Tool, why),
			Subjects: []string{s.Reference.Path},
			Roots:    rootPaths(s),
			Evidence: []Evidence{{Kind: "rule", Path: s.Reference.Path, Detail: "rule " + rule + ": " + command}},
			Fix:      dg.DepfileFix(),
		}
		if dep != "" {
			state := "not on disk"
			if onDisk {
				state = "on disk, but not read by " + s.Words().Tool
			}
			f.Subjects = append(f.Subjects, dep)
			f.Evidence = append(f.Evidence, Evidence{Kind: "depfile", Path: dep, Detail: "the depfile path the rule names or the build looks for: " + state})
		}
		var headers []*graph.Input
		for _, in := range s.Inputs {
			if !in.Watched && (in.Has(graph.DWARF) || in.Has(graph.IncludeScan) || in.Has(graph.Depfile)) {
				headers = append(headers, in)
			}
		}
		sort.Slice(headers, func(i, j int) bool { return headers[i].File.Path < headers[j].File.Path })
		for _, in := range headers {
			f.Evidence = append(f.Evidence, Evidence{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size,
				How: howString(in), Detail: "read by the compile, unseen by " + s.Words().Tool + ": " + clueDetail(in)})
		}
		out = append(out, f)
	}
	return out
}
