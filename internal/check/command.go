package check

import (
	"fmt"
	"path/filepath"
	"strings"

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
		// Who changed it: the file that defines the command, or another its definition draws on (an
		// included makefile), when it moved since the run; else what the command reads from the
		// user's environment (a variable make takes from the shell).
		changer := movedSince(append([]string{s.Cmd().CommandFrom}, s.Cmd().CommandReads...), s.Reference.MTimeNS)
		who := display(g, changer)
		if changer == "" {
			changer = s.Cmd().CommandFrom
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
		if dropped := droppedMembers(s, c.BaselineText); len(dropped) > 0 {
			// The command now only leaves out objects that the archive keeps as members all the same
			// (`ar r` and `ar q` never remove one): whether the binary gets their code is the question
			// archive-member-without-rule answers, not this.
			out = append(out, Finding{
				Rule: "untracked-input-changed", Severity: Warning, System: foreignSystem(s),
				Message: fmt.Sprintf("%s changed the command of %s since it was built at %s, but the change only leaves out %s, which %s still holds as members (an archive tool keeps what it is no longer given); what that means for the binary is said of the members themselves",
					who, s.Label, fmtTime(s.Reference.MTimeNS), strings.Join(dropped, ", "), s.Label),
				Subjects: []string{s.Cmd().CommandFrom, s.Reference.Path},
				Roots:    rootPaths(s),
				Evidence: []Evidence{
					{Kind: "record", Path: s.Cmd().CommandFrom, How: "command-baseline",
						Detail: "the command it ran: " + c.BaselineText + "; the command now: " + s.Command},
					{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Size: s.Reference.Size, Detail: w.Reference},
				},
				Fix: "rm " + display(g, s.Reference.Path) + " && " + rebuildCmd(s) + " (the archive is written afresh from the objects its rule names)",
			})
			continue
		}
		f := Finding{
			Rule: "untracked-input-changed", Severity: Error, System: foreignSystem(s),
			Message: fmt.Sprintf("%s changed the command of %s since it was built at %s: the command now differs from the one it ran; %s compares mtimes only, not commands, so the next build will not redo %s",
				who, s.Label, fmtTime(s.Reference.MTimeNS), w.Tool, s.Label),
			Subjects: []string{changer, s.Reference.Path},
			Roots:    rootPaths(s),
			Evidence: []Evidence{
				{Kind: "input", Path: changer, How: "command-baseline",
					Detail: fmt.Sprintf("defines the command; changed at %s (ctime)", fmtTime(c.CTimeNS))},
				{Kind: "record", Path: s.Cmd().CommandFrom, How: "command-baseline",
					Detail: fmt.Sprintf("command digest %s differs from %s, recorded at %s for this run of %s", c.Digest, c.Baseline, fmtTime(c.BaselineNS), s.Label)},
				{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Size: s.Reference.Size, Detail: w.Reference},
			},
			Fix: "rm " + display(g, s.Reference.Path) + " && " + rebuildCmd(s) + " (touching " + display(g, changer) + " is not enough: no rule has it as a prerequisite)",
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

// droppedMembers returns the words the command s ran (was) has and its command now lacks, when that is
// the whole change and each of them names a member of s's archive that no step makes any more (an
// ArchiveMember input without a producer); nil otherwise.
func droppedMembers(s *graph.Step, was string) []string {
	if was == "" {
		return nil
	}
	count := map[string]int{}
	for _, w := range strings.Fields(was) {
		count[w]++
	}
	for _, w := range strings.Fields(s.Command) {
		if count[w] == 0 {
			return nil // a word the old command lacks: more than a removal
		}
		count[w]--
	}
	members := map[string]bool{}
	for _, in := range s.Inputs {
		if in.Has(graph.ArchiveMember) && producer(s, in.File.Path) == nil {
			members[in.File.Path] = true
		}
	}
	var out []string
	for _, w := range strings.Fields(was) {
		if count[w] == 0 {
			continue
		}
		count[w]--
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Cmd().CommandDir, p)
		}
		if !members[filepath.Clean(p)] {
			return nil
		}
		out = append(out, w)
	}
	return out
}

// movedSince returns the first of paths whose mtime is after ns ("" when none is).
func movedSince(paths []string, ns int64) string {
	for _, p := range paths {
		if st, err := fsrec.Stat(p); err == nil && st.ModTime().UnixNano() > ns {
			return p
		}
	}
	return ""
}
