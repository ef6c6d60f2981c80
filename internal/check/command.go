package check

import (
	"fmt"

	"github.com/stalecheck/stalecheck/internal/fsrec"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// commandChanged (part of untracked-input-changed): the command a step's build system would run now
// differs from the one recorded while the file that defines it was not newer than the step
// (graph.Step.CommandContent, internal/content): the file was edited since (a flag in a Makefile), and a
// build system that compares mtimes only does not redo the step for it, so its outputs were made by the
// old command. The same for every system whose adapter fills Command and leaves CommandWatched false.
func commandChanged(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		c := s.Cmd().CommandContent
		if !s.Live() || s.Failed != "" || !s.Reference.Exists || s.Cmd().CommandWatched || c == nil {
			continue
		}
		w := s.Words()
		// Who changed it: the file that defines the command, when it moved since the run; else what
		// the command reads from the user's environment (a variable make takes from the shell).
		moved := c.CTimeNS > s.Reference.MTimeNS
		if st, err := fsrec.Stat(s.Cmd().CommandFrom); err == nil && st.ModTime().UnixNano() > s.Reference.MTimeNS {
			moved = true
		}
		who := display(g, s.Cmd().CommandFrom)
		if !moved {
			who = "the environment (a variable " + display(g, s.Cmd().CommandFrom) + " reads)"
		}
		switch {
		case c.Verdict == graph.ContentSame && c.Why != "":
			out = append(out, Finding{
				Rule: "untracked-input-changed", Severity: Info, System: foreignSystem(s),
				Message:  fmt.Sprintf("%s changed the command of %s since it was built at %s, but %s", who, s.Label, fmtTime(s.Reference.MTimeNS), c.Why),
				Subjects: []string{s.Cmd().CommandFrom, s.Reference.Path},
				Roots:    rootPaths(s),
				Evidence: []Evidence{
					{Kind: "record", Path: s.Cmd().CommandFrom, How: "command-baseline",
						Detail: fmt.Sprintf("command digest %s differs from %s, recorded at %s for this run of %s", c.Digest, c.Baseline, fmtTime(c.BaselineNS), s.Label)},
					{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Size: s.Reference.Size, Detail: w.Reference},
				},
				Fix: "nothing is stale; to build " + s.Label + " with the command as it is now anyway: rm " + display(g, s.Reference.Path) + " && " + rebuildCmd(s),
			})
			continue
		case c.Verdict != graph.ContentDiffers:
			continue
		}
		f := Finding{
			Rule: "untracked-input-changed", Severity: Error, System: foreignSystem(s),
			Message: fmt.Sprintf("%s changed the command of %s since it was built at %s: the command now differs from the one it ran; %s compares mtimes only, not commands, so the next build will not redo %s",
				who, s.Label, fmtTime(s.Reference.MTimeNS), w.Tool, s.Label),
			Subjects: []string{s.Cmd().CommandFrom, s.Reference.Path},
			Roots:    rootPaths(s),
			Evidence: []Evidence{
				{Kind: "input", Path: s.Cmd().CommandFrom, How: "command-baseline",
					Detail: fmt.Sprintf("defines the command; changed at %s (ctime)", fmtTime(c.CTimeNS))},
				{Kind: "record", Path: s.Cmd().CommandFrom, How: "command-baseline",
					Detail: fmt.Sprintf("command digest %s differs from %s, recorded at %s for this run of %s", c.Digest, c.Baseline, fmtTime(c.BaselineNS), s.Label)},
				{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Size: s.Reference.Size, Detail: w.Reference},
			},
			Fix: "rm " + display(g, s.Reference.Path) + " && " + rebuildCmd(s) + " (touching " + display(g, s.Cmd().CommandFrom) + " is not enough: no rule has it as a prerequisite)",
		}
		if c.BaselineText != "" {
			f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: s.Cmd().CommandFrom, How: "command-baseline",
				Detail: "the command it ran: " + c.BaselineText + "; the command now: " + s.Command})
		}
		f.Evidence = append(f.Evidence, foreignRootEvidence(g, s)...)
		out = append(out, f)
	}
	return out
}
