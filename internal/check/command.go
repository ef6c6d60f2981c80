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
func commandChanged(g *graph.Graph) (out []Finding) {
	unknown := map[string][]*graph.Step{} // a changed makefile -> the steps it may have changed, with nothing recorded
	var order []string
	defer func() {
		for _, m := range order {
			out = append(out, commandUnknown(g, m, unknown[m]))
		}
	}()
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
		case c.Verdict == graph.ContentUnknown && c.Baseline == "":
			// Nothing recorded to compare with: said once per changed file the user edits, below.
			if moved := movedSince(append([]string{s.Cmd().CommandFrom}, g.UserCommandReads(s)...), s.Reference.MTimeNS); moved != "" && !redoneAnyway(s) {
				if unknown[moved] == nil {
					order = append(order, moved)
				}
				unknown[moved] = append(unknown[moved], s)
			}
			continue
		case c.Verdict != graph.ContentDiffers:
			continue
		case redoneAnyway(s) && !newerSameContent(s):
			// A prerequisite newer than the step, with other content (CMake's flags.make after a
			// reconfigure), makes the next build redo it with the command as it is now: pending-rebuild
			// says so; the change of command is no untracked one.
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
		if redoneAnyway(s) {
			// Only touched prerequisites are newer (their content is what the run used): the next build
			// redoes the step for them, and so runs the command as it is now; until then what is on disk
			// was made by the old command.
			f.Rule = "pending-rebuild"
			f.Message = fmt.Sprintf("%s changed the command of %s since it was built at %s: the command now differs from the one it ran; a prerequisite touched since makes %s redo %s on the next build, with the command as it is now: what is on disk was made by the old one",
				who, s.Label, fmtTime(s.Reference.MTimeNS), w.Tool, s.Label)
			f.Fix = rebuildCmd(s)
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

// commandUnknown (part of untracked-input-changed) is the warning for the steps whose command draws on
// the makefile m, edited after they were built, when no check recorded the command they ran: whether
// the edit changed it cannot be told, and the build system, comparing mtimes only, will not redo them
// for it. One warning per file: every step of a build reads its makefiles.
func commandUnknown(g *graph.Graph, m string, steps []*graph.Step) Finding {
	s := steps[0]
	w := s.Words()
	var names, refs []string
	roots := map[string]bool{}
	var rootList []string
	for _, x := range steps {
		names = append(names, x.Label)
		refs = append(refs, display(g, x.Reference.Path))
		for _, r := range rootPaths(x) {
			if !roots[r] {
				roots[r] = true
				rootList = append(rootList, r)
			}
		}
	}
	st, _ := fsrec.Stat(m)
	var mt int64
	if st != nil {
		mt = st.ModTime().UnixNano()
	}
	f := Finding{
		Rule: "untracked-input-changed", Severity: Warning, System: foreignSystem(s),
		Message: fmt.Sprintf("%s changed at %s, after %s %s built; %s takes part of the %s from it, compares mtimes only, not commands, and will not redo %s for it; whether the edit changed the %s cannot be told: no check recorded the %s %s ran (stalecheck records them at each check after a build)",
			display(g, m), fmtTime(mt), listSome(names), wasWere(len(names)), w.Tool, itsTheir(len(names), "command"), itOrThem(len(names)),
			itsTheir(len(names), "command"), itsTheir(len(names), "command"), itOrThey(len(names))),
		Subjects: append([]string{m}, steps[0].Reference.Path),
		Roots:    rootList,
		Evidence: []Evidence{{Kind: "input", Path: m, MTimeNS: mt, How: "command-baseline",
			Detail: "defines or sets part of their commands; no command recorded for their last runs"}},
		Fix: "if the edit changes how they are built: rm " + strings.Join(refs, " ") + " && " + rebuildCmd(s),
	}
	for _, x := range steps {
		f.Evidence = append(f.Evidence, Evidence{Kind: "reference", Path: x.Reference.Path, MTimeNS: x.Reference.MTimeNS, Size: x.Reference.Size, Detail: w.Reference})
	}
	return f
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func itsTheir(n int, what string) string {
	if n == 1 {
		return what
	}
	return what + "s"
}

func itOrThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func itOrThey(n int) string {
	if n == 1 {
		return "it"
	}
	return "they"
}

// builtWithOtherOptions (part of untracked-input-changed): the object a step writes records, in its
// own DWARF, that it was compiled at another optimization level than the step's command gives now
// (graph.CommandRecords.Built, internal/compileflags): a build with flags given on make's command line
// or in the environment, or a makefile edited since. A build system that does not compare commands
// leaves the object as it is. Not said when the command-baseline judgement already says the command
// changed, nor when an input the build system watches is newer (it redoes the step anyway).
func builtWithOtherOptions(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		b := s.Cmd().Built
		if c := s.Cmd().CommandContent; c != nil && c.Verdict == graph.ContentDiffers {
			continue // commandChanged says so, with the command it ran
		}
		if b == nil || !s.Live() || !s.Reference.Exists || s.Cmd().CommandWatched || redoneAnyway(s) {
			continue
		}
		w := s.Words()
		obj := display(g, b.Object)
		changer := movedSince(append([]string{s.Cmd().CommandFrom}, s.Cmd().CommandReads...), s.Reference.MTimeNS)
		why := fmt.Sprintf("it was built with other flags than %s gives now: flags given to that build (on its command line, in MAKEFLAGS or in the environment) and not to this check, or the other way round", display(g, s.Cmd().CommandFrom))
		subjects := []string{b.Object, s.Cmd().CommandFrom} // nothing to edit: the object is what is wrong
		if changer != "" {
			why = display(g, changer) + " changed the command since"
			subjects = []string{changer, b.Object}
		}
		f := Finding{
			Rule: "untracked-input-changed", Severity: Error, System: foreignSystem(s),
			Message: fmt.Sprintf("%s was compiled with %s, but the command of %s now gives %s: %s; %s compares mtimes only, not commands, so the next build will not redo %s, and the binary holds code built otherwise than the build description says",
				obj, b.Was, s.Label, b.Now, why, w.Tool, s.Label),
			Subjects: subjects,
			Roots:    rootPaths(s),
			Evidence: []Evidence{
				{Kind: "record", Path: b.Object, How: "dwarf-producer", Detail: fmt.Sprintf("DW_AT_producer %q: compiled with %s", b.Producer, b.Was)},
				{Kind: "record", Path: s.Cmd().CommandFrom, How: "command", Detail: fmt.Sprintf("the command now, with %s: %s", b.Now, s.Command)},
				{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Size: s.Reference.Size, Detail: w.Reference},
			},
			Fix: "rm " + obj + " && " + rebuildCmd(s) + " (or, if the other flags were meant, give them to every build: the object keeps what it was compiled with)",
		}
		f.Evidence = append(f.Evidence, foreignRootEvidence(g, s)...)
		out = append(out, f)
	}
	return out
}

// redoneAnyway reports whether an input the build system watches is missing or newer than the step's
// reference: the next build redoes the step whatever its command (pending-rebuild says so).
// newerSameContent reports whether every watched input of s newer than it has the content its run
// used (a touch): the pending-rebuild it makes is then said as costing time only, and a changed command
// must be said of its own.
func newerSameContent(s *graph.Step) bool {
	for _, in := range s.Inputs {
		if in.Watched && (!in.File.Exists || in.File.MTimeNS > s.Reference.MTimeNS) &&
			(in.Content == nil || in.Content.Verdict != graph.ContentSame) {
			return false
		}
	}
	return true
}

func redoneAnyway(s *graph.Step) bool {
	for _, in := range s.Inputs {
		if in.Watched && (!in.File.Exists || in.File.MTimeNS > s.Reference.MTimeNS) {
			return true
		}
	}
	return false
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
