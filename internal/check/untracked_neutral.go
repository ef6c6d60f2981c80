package check

import (
	"fmt"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// untrackedInputChangedNeutral is untracked-input-changed on the steps of a system that compares
// content (graph.Step.ComparesContent: Go's build IDs, internal/gocgo), from neutral fields only: an input of a live step that its build system does not watch, whose
// mtime is newer than the step's reference, or whose content differs from a baseline the adapter keyed
// by a build identity (graph.InputContent.Build: then a build that only touched the reference hides the
// mtime, but the outputs were not rebuilt since the baseline). Libraries a link step names
// (graph.LinkedLibrary) are binary-older-than-input's. Error on a strong clue, warning otherwise.
func untrackedInputChangedNeutral(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		if !s.ComparesContent() || !s.Live() || s.Failed != "" || !s.Reference.Exists {
			continue
		}
		w := s.Words()
		for _, in := range s.Inputs {
			if !in.Watched && !in.File.Exists && graph.LinkedLibrary(in) {
				out = append(out, linkedLibraryGone(g, s, in))
				continue
			}
			if in.Watched || !in.File.Exists || graph.LinkedLibrary(in) {
				continue
			}
			newer := in.File.MTimeNS > s.Written()
			sameBuild := in.Content != nil && in.Content.Build != "" && in.Content.Verdict == graph.ContentDiffers
			if !newer && !sameBuild {
				continue
			}
			sev := Error
			if !in.Strong() {
				sev = Warning
			}
			msg := fmt.Sprintf("%s was modified at %s, after %s was last built at %s (%s: %s); %s, so %s will not rebuild it",
				display(g, in.File.Path), fmtTime(in.File.MTimeNS), stepWhat(s), fmtTime(s.Written()),
				display(g, s.Reference.Path), w.Reference, w.NotWatched, w.Tool)
			if !newer {
				msg = fmt.Sprintf("%s changed since %s was last built into %s: its content differs from the baseline recorded under build %s, which %s still has (its mtime %s was moved past the edit at %s without a rebuild); %s, so %s will not rebuild it",
					display(g, in.File.Path), stepWhat(s), display(g, s.Reference.Path), in.Content.Build, display(g, s.Reference.Path),
					fmtTime(s.Reference.MTimeNS), fmtTime(in.File.MTimeNS), w.NotWatched, w.Tool)
			}
			f := Finding{
				Rule: "untracked-input-changed", Severity: sev, System: s.System, Message: msg,
				Subjects: []string{in.File.Path, s.Reference.Path},
				Roots:    rootPaths(s),
				Evidence: []Evidence{
					{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in), Detail: clueDetail(in)},
					{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Written(), Detail: w.Reference},
				},
				Fix: w.Rebuild,
			}
			if !in.Strong() {
				f.Evidence[0].Detail = "a candidate; no record ties it to this step: " + f.Evidence[0].Detail
			}
			f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
			if newer {
				f = contentJudged(g, s, in, f)
			} else {
				c := in.Content
				f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: in.File.Path, How: "content-baseline",
					Detail: fmt.Sprintf("digest %s differs from the content baseline %s recorded at %s under build %s", c.Digest, c.Baseline, fmtTime(c.BaselineNS), c.Build)})
			}
			out = append(out, f)
		}
	}
	return out
}

// linkedLibraryGone: a library the step links, which its build system does not watch, is gone (cargo
// clean -p of a staticlib a Go program links): the program holds a copy that nothing on disk can be
// compared with, and the next build of the library will not make the step relink. Judged by the sources
// the library's last build read (internal/content, gonelib.go): one that differs from the content
// recorded then, or a header a folder searched before it holds now, is an error naming it; all the same
// (and the environment it read) is info; with no baseline or no recorded search order a warning that
// cannot tell, which says what was compared.
func linkedLibraryGone(g *graph.Graph, s *graph.Step, in *graph.Input) Finding {
	w := s.Words()
	f := Finding{
		Rule: "untracked-input-changed", Severity: Warning, System: s.System,
		Message: fmt.Sprintf("cannot tell: %s, which %s links, is gone (a clean of the build that made it, or a removed file): what %s holds of it can no longer be compared with the sources on disk, and %s, so rebuilding the library will not relink %s",
			display(g, in.File.Path), stepWhat(s), display(g, s.Reference.Path), w.NotWatched, s.Label),
		Subjects: []string{in.File.Path, s.Reference.Path},
		Roots:    rootPaths(s),
		Evidence: []Evidence{
			{Kind: "input", Path: in.File.Path, How: howString(in), Detail: "missing; " + clueDetail(in)},
			{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Detail: w.Reference},
		},
		Fix: "build the library again, then " + w.Rebuild,
	}
	if w.Rebuild == "" {
		f.Fix = "build the library again, then " + rebuildCmd(s)
	}
	if c := in.Content; c != nil {
		switch c.Verdict {
		case graph.ContentDiffers:
			// The sources the library's last build read changed since: the program holds old code.
			f.Severity = Error
			var shown []string
			for _, p := range c.Changed {
				shown = append(shown, display(g, p))
			}
			f.Message = fmt.Sprintf("%s, which %s links, is gone (a clean of the build that made it, or a removed file), and sources its last build read have other content now than was recorded then (%s); %s holds the old library's code, and %s, so rebuilding the library will not relink %s",
				display(g, in.File.Path), stepWhat(s), strings.Join(shown, ", "), display(g, s.Reference.Path), w.NotWatched, s.Label)
			for _, p := range c.Changed {
				f.Evidence = append(f.Evidence, Evidence{Kind: "input", Path: p, How: "content-baseline",
					Detail: fmt.Sprintf("a source of the library's last build (baseline recorded at %s); its content differs now", fmtTime(c.BaselineNS))})
			}
		case graph.ContentSame:
			// What the library's last build read is all as it was: rebuilding it makes what the
			// program holds (only its presence is unknown).
			f.Severity = Info
			f.Message = fmt.Sprintf("%s, which %s links, is gone (a clean of the build that made it, or a removed file), but %s: rebuilding it makes what %s holds, and %s, so that build will not relink %s either",
				display(g, in.File.Path), stepWhat(s), c.Why, display(g, s.Reference.Path), w.NotWatched, s.Label)
		default:
			if c.Why != "" {
				f.Message += "; " + c.Why
			}
		}
	}
	f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
	return f
}
