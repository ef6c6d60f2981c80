package check

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// untrackedInputChanged: a file the build script's step really compiled changed after the step last
// ran, and Cargo does not watch it, so it will not rebuild. Error when a record ties the file to the
// step (depfile, DWARF, command line, archive member of the same stem, named in build.rs); warning when
// the only clue is that a native source lies in the package folder.
func untrackedInputChanged(g *graph.Graph) []Finding {
	out := commandChanged(g)                       // command.go
	out = append(out, builtWithOtherOptions(g)...) // command.go
	out = append(out, linkedContentChanged(g)...)  // linkedcontent.go
	for _, s := range liveSteps(g, graph.ScriptRun) {
		for _, in := range s.Inputs {
			if in.Watched || !in.File.Exists || in.File.MTimeNS <= s.Reference.MTimeNS {
				continue
			}
			sev := Error
			if !in.Strong() {
				sev = Warning
			}
			products := linkedArchives(s)
			what := "its outputs"
			if len(products) > 0 {
				names := make([]string, len(products))
				for i, p := range products {
					names[i] = filepath.Base(p)
				}
				what = strings.Join(names, ", ")
			}
			f := Finding{
				Rule: "untracked-input-changed", Severity: sev,
				Message: fmt.Sprintf("%s was modified at %s, after the build script of %s last ran at %s (%s); %s (%s), so it will not rebuild %s",
					display(g, in.File.Path), fmtTime(in.File.MTimeNS), s.Package, fmtTime(s.Reference.MTimeNS),
					display(g, s.Reference.Path), s.Words().NotWatched, declaredSummary(g, s), what),
				Subjects: append([]string{in.File.Path, s.Script().RunDir}, products...),
				Roots:    rootPaths(s),
				Evidence: []Evidence{
					{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in), Detail: clueDetail(in)},
					{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Detail: "start of the build script's last successful run (Cargo compares against this file's mtime)"},
					{Kind: "declared", Path: s.Script().ScriptSource, Detail: declaredSummary(g, s)},
				},
				Fix: rerunFix(g, s, in.File.Path),
			}
			if !in.Strong() {
				f.Evidence[0].Detail = "a native source in the package folder; no record ties it to this step (candidate): " + f.Evidence[0].Detail
			}
			for _, p := range products {
				f.Evidence = append(f.Evidence, Evidence{Kind: "artifact", Path: p, Detail: "linked library made by this run"})
			}
			f.Evidence = append(f.Evidence, traceEvidence(in)...)
			f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
			out = append(out, contentJudged(g, s, in, f))
		}
	}
	// Make, Ninja and other systems' steps: from neutral fields (foreign.go); Go's, with its build-ID
	// baselines (untracked_neutral.go).
	out = append(out, untrackedForeign(g)...)
	out = append(out, untrackedTraced(g)...) // Cargo's rustc units, from a trace (trace.go)
	return append(out, untrackedInputChangedNeutral(g)...)
}

// linkedArchives returns the library files a run tells rustc to link that lie in its own OUT_DIR.
func linkedArchives(s *graph.Step) []string {
	var out []string
	for _, l := range s.Script().Links {
		if l.Path != "" && strings.HasPrefix(l.Path, s.Script().OutDir+string(filepath.Separator)) {
			out = append(out, l.Path)
		}
	}
	return out
}

// declaredSummary says what the script declared, e.g. "declared: rerun-if-changed=build.rs".
func declaredSummary(g *graph.Graph, s *graph.Step) string {
	parts := declarations(s)
	switch {
	case len(parts) > 0:
		return "declared: " + strings.Join(parts, ", ")
	case s.Records().Scan().ScanKey != "":
		return "no rerun-if line; Cargo keys the run on " + fmt.Sprintf("%q", s.Records().Scan().ScanKey)
	}
	return "nothing declared"
}

// rerunFix proposes the declaration that makes Cargo watch p, then the rebuild.
func rerunFix(g *graph.Graph, s *graph.Step, p string) string {
	rel, err := filepath.Rel(s.PackageRoot, filepath.Dir(p))
	script := display(g, s.Script().ScriptSource)
	if script == "" {
		script = "the build script"
	}
	touch := "touch " + script + " && "
	if s.Script().ScriptSource == "" {
		touch = ""
	}
	build := rebuildCmd(s)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Sprintf("print cargo:rerun-if-changed=%s from %s, then: %s%s", p, script, touch, build)
	}
	if rel == "." {
		rel, _ = filepath.Rel(s.PackageRoot, p)
	}
	return fmt.Sprintf("add println!(\"cargo:rerun-if-changed=%s\") to %s, then: %s%s", rel, script, touch, build)
}

// clueDetail lists each clue with where it came from: "archive-member: libk.a(k.o); depfile: out/k.d".
func clueDetail(in *graph.Input) string {
	parts := make([]string, len(in.How))
	for i, h := range in.How {
		parts[i] = string(h) + ": " + in.Detail[i]
	}
	return strings.Join(parts, "; ")
}
