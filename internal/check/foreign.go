package check

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// This file holds the neutral paths of untracked-input-changed, pending-rebuild and
// binary-older-than-input for the steps of systems other than Cargo (Make, Ninja, Go): they read only
// neutral fields (Inputs with Watched and How, Reference, Deps, Roots) and take the system's words
// from the step (Step.Words) and its fix commands from its Origin (graph.Rebuilder).

func rebuildCmd(s *graph.Step) string {
	if d := s.Driver; d != nil && d != s {
		return driverRerun(d) // the user's build runs the step's system only through its driver
	}
	if r, ok := s.Origin.(graph.Rebuilder); ok {
		return r.Rebuild(s)
	}
	return "rebuild " + s.Label + " with " + s.Words().Tool
}

func forceCmd(g *graph.Graph, s *graph.Step, input string) string {
	if d := s.Driver; d != nil && d != s {
		if d.Kind == graph.ScriptRun {
			return rerunFix(g, d, input) // the driver must watch it: its rerun redoes the driven step
		}
		return forceCmd(g, d, input)
	}
	if r, ok := s.Origin.(graph.Rebuilder); ok {
		return r.ForceRebuild(s, input)
	}
	return "make " + s.Words().Tool + " watch " + input + ", then rebuild " + s.Label
}

// driverRerun is what runs a driver again: a build script is rerun by touching it and building.
func driverRerun(d *graph.Step) string {
	if d.Kind == graph.ScriptRun {
		return "touch " + displayScript(d) + " && " + rebuildCmd(d)
	}
	return rebuildCmd(d)
}

// verdictEvidence is the build system's own dry-run answer for s as evidence (none when not asked).
func verdictEvidence(s *graph.Step) []Evidence {
	if v, ok := s.Origin.(graph.Verdicter); ok {
		if text, ok := v.Verdict(); ok {
			return []Evidence{{Kind: "record", Path: s.Reference.Path, How: "dry-run", Detail: text}}
		}
	}
	return nil
}

// producer returns the dependency of s that writes path (an output or the root file of the step), nil
// when none does.
func producer(s *graph.Step, path string) *graph.Step {
	for _, d := range s.Deps {
		for _, o := range d.Outputs {
			if o.Path == path {
				return d
			}
		}
		for _, r := range d.Roots {
			if r.Step == d && r.File.Path == path {
				return d
			}
		}
	}
	return nil
}

// rootOf reports whether s produces a root (a program or library users run or link).
func rootOf(g *graph.Graph, s *graph.Step) bool {
	for _, r := range g.Roots {
		if r.Step == s {
			return true
		}
	}
	return false
}

// linkedByRoot reports whether binary-older-than-input speaks of in: an input of a root's step that
// a dependency step writes (an object or library the root links).
func linkedByRoot(g *graph.Graph, s *graph.Step, in *graph.Input) bool {
	return rootOf(g, s) && producer(s, in.File.Path) != nil
}

// foreignRootEvidence names the roots that reach s.
func foreignRootEvidence(g *graph.Graph, s *graph.Step) []Evidence {
	var out []Evidence
	for _, p := range rootPaths(s) {
		for _, r := range s.Roots {
			if r.File.Path == p {
				out = append(out, Evidence{Kind: "root", Path: p, MTimeNS: r.File.MTimeNS, Size: r.File.Size,
					Detail: fmt.Sprintf("%s %s (%s) reaches %s through the steps that make its inputs", r.Kind, display(g, p), systemOf(r.Step), s.Label)})
				break
			}
		}
	}
	return out
}

func systemOf(s *graph.Step) string {
	if s != nil && s.System != "" {
		return s.System
	}
	return "unknown"
}

// watchedSummary lists what the build system watches for s: "watches: main.c, build.ninja:4".
func watchedSummary(g *graph.Graph, s *graph.Step) string {
	var names []string
	for _, in := range s.Inputs {
		if in.Watched {
			names = append(names, display(g, in.File.Path))
		}
	}
	if len(names) == 0 {
		return "it watches no input of " + s.Label
	}
	if len(names) > 8 {
		names = append(names[:8], fmt.Sprintf("and %d more", len(names)-8))
	}
	return "it watches: " + strings.Join(names, ", ")
}

// pendingWatched reports whether s will be redone anyway: a watched input is newer than its reference,
// or, for a driven step whose driver reruns, an input its own system watches is.
func pendingWatched(s *graph.Step) bool {
	rerun := driverReruns(s)
	for _, in := range s.Inputs {
		if (in.Watched || rerun && in.SystemWatched) && in.File.Exists && in.File.MTimeNS > s.Reference.MTimeNS {
			return true
		}
	}
	return false
}

// pendingStale reports whether pending-rebuild calls s stale: a watched input newer than its
// reference whose content is not the content the step used (a touch or a comment edit is redone at the
// cost of time only: an unwatched input's edit is then what makes the step stale, and is reported).
func pendingStale(s *graph.Step) bool {
	rerun := driverReruns(s)
	for _, in := range s.Inputs {
		if (in.Watched || rerun && in.SystemWatched) && in.File.Exists && in.File.MTimeNS > s.Reference.MTimeNS && !ranSince(s, in) &&
			(in.Content == nil || in.Content.Verdict != graph.ContentSame) {
			return true
		}
	}
	return false
}

// driverReruns reports whether the driver of a driven step runs again on the next build (a watched
// input of its own is newer than its reference), and with it the step's own system.
func driverReruns(s *graph.Step) bool {
	d := s.Driver
	return d != nil && d != s && d.Reference.Exists && pendingWatched(d)
}

// driverName names a driver for people: "the build script of app", or what it builds.
func driverName(d *graph.Step) string {
	if d.Kind == graph.ScriptRun {
		return "the build script of " + d.Package
	}
	return d.Label
}

// untrackedForeign: an input of a live step of another system changed after the step's reference and
// the system does not watch it (a header only the depfile make never includes, DWARF or the include
// scan names): the build system will not redo the step. Steps that a watched input redoes anyway are
// left to pending-rebuild (the next build compiles the new header too), and so are the objects and
// libraries a root links (binary-older-than-input). Error when a record ties the file to the step,
// warning on a package-folder candidate alone.
func untrackedForeign(g *graph.Graph) []Finding {
	var out []Finding
	var later map[*graph.Step]int64
	for _, s := range g.Steps {
		if s.Decides() != graph.ByMtime || !s.Live() || !s.Reference.Exists || s.Failed != "" || pendingStale(s) {
			continue
		}
		for _, in := range s.Inputs {
			if in.Watched || !in.File.Exists || in.File.MTimeNS <= s.Reference.MTimeNS || linkedByRoot(g, s, in) || ranSince(s, in) {
				continue
			}
			w := s.Words()
			sev := Error
			if !in.Strong() {
				sev = Warning
			}
			msg := fmt.Sprintf("%s was modified at %s, after %s was built at %s (%s); %s, so %s will not rebuild %s",
				display(g, in.File.Path), fmtTime(in.File.MTimeNS), s.Label, fmtTime(s.Reference.MTimeNS),
				display(g, s.Reference.Path), w.NotWatched, w.Tool, s.Label)
			if onlyClue(in, graph.CommandArg) && (in.Content == nil || in.Content.Verdict == graph.ContentUnknown) {
				// Named on the command line, read or written: with no content baseline, a file that
				// changed before a step using s's outputs was built is taken as one s's run wrote.
				if later == nil {
					later = newestDependents(g)
				}
				if t, ok := later[s]; ok && in.File.MTimeNS <= t {
					continue
				}
				sev = Warning
				msg = fmt.Sprintf("%s, which the command of %s names, was modified at %s, after %s was built at %s (%s), and no step built since; %s: if the command reads it, %s will not rebuild %s (stalecheck has no content baseline of it from an earlier check to tell an edit from a file the command writes)",
					display(g, in.File.Path), s.Label, fmtTime(in.File.MTimeNS), s.Label, fmtTime(s.Reference.MTimeNS),
					display(g, s.Reference.Path), w.NotWatched, w.Tool, s.Label)
			}
			fix := forceCmd(g, s, in.File.Path)
			if in.Has(graph.Glob) && in.Via != "" {
				// A source the build description's glob matches, added after the step that evaluates the
				// glob ran: nothing compiles it until that step runs again.
				msg = fmt.Sprintf("%s was added or modified at %s, after %s last ran at %s (%s); a glob of %s matches it, but the build evaluates that glob only when it runs %s, which it does not redo for a new file, so no step compiles it: a fresh build would",
					display(g, in.File.Path), fmtTime(in.File.MTimeNS), s.Label, fmtTime(s.Reference.MTimeNS), display(g, s.Reference.Path), display(g, in.Via), s.Label)
				fix = "touch " + display(g, in.Via) + " && " + rebuildCmd(s) + " (or make the glob one the build checks on every run: CMake's CONFIGURE_DEPENDS)"
			}
			f := Finding{
				Rule: "untracked-input-changed", Severity: sev, System: s.System,
				Message:  msg,
				Subjects: []string{in.File.Path, s.Reference.Path},
				Roots:    rootPaths(s),
				Evidence: []Evidence{
					{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in), Detail: clueDetail(in)},
					{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Size: s.Reference.Size, Detail: w.Reference},
					{Kind: "declared", Path: s.Reference.Path, Detail: watchedSummary(g, s)},
				},
				Fix: fix,
			}
			f.Evidence = append(f.Evidence, verdictEvidence(s)...)
			f.Evidence = append(f.Evidence, traceEvidence(in)...)
			f.Evidence = append(f.Evidence, foreignRootEvidence(g, s)...)
			// A file whose content equals the baseline of the step's run only had its mtime moved.
			out = append(out, contentJudged(g, s, in, f))
		}
	}
	return out
}

// pendingForeign: watched inputs of a live step of another system that are newer than its reference
// (or missing): the build system will redo the step, so what is on disk is old. The objects and
// libraries a root links are binary-older-than-input's.
func pendingForeign(g *graph.Graph, s *graph.Step) []Finding {
	var out []Finding
	if s.Failed != "" {
		return nil
	}
	w := s.Words()
	rerun := driverReruns(s)
	for _, in := range s.Inputs {
		if !(in.Watched || rerun && in.SystemWatched) || linkedByRoot(g, s, in) {
			continue
		}
		watched := w.Watched
		if !in.Watched {
			// The driver reruns for another input, and with it the step's own system, which watches this one.
			watched = fmt.Sprintf("%s reruns %s for another change, and %s", w.Tool, driverName(s.Driver), s.OwnWords().Watched)
		}
		var msg string
		switch {
		case !in.File.Exists:
			msg = fmt.Sprintf("%s is missing (%s): %s remakes %s on the next build, or stops when nothing makes it, so %s is not built from what is on disk",
				display(g, in.File.Path), watched, w.Tool, s.Label, s.Label)
		case in.File.MTimeNS > s.Reference.MTimeNS:
			msg = fmt.Sprintf("%s was modified at %s, after %s was built at %s (%s); %s, so the next build redoes %s: what is on disk is old",
				display(g, in.File.Path), fmtTime(in.File.MTimeNS), s.Label, fmtTime(s.Reference.MTimeNS), display(g, s.Reference.Path), watched, s.Label)
		default:
			continue
		}
		f := Finding{
			Rule: "pending-rebuild", Severity: Error, System: s.System, Message: msg,
			Subjects: []string{in.File.Path, s.Reference.Path},
			Roots:    rootPaths(s),
			Evidence: []Evidence{
				{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in), Detail: in.WatchedBy},
				{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Size: s.Reference.Size, Detail: w.Reference},
			},
			Fix: rebuildCmd(s),
		}
		f.Evidence = append(f.Evidence, verdictEvidence(s)...)
		f.Evidence = append(f.Evidence, foreignRootEvidence(g, s)...)
		if in.File.Exists && ranSince(s, in) {
			f = ranAfter(g, s, in, f)
		} else if in.File.Exists {
			// Content the step's run used (a touch, a comment edit): redone at the cost of time only.
			f = contentJudged(g, s, in, f)
		}
		out = append(out, f)
	}
	if r, ok := s.Origin.(graph.OwnReasoner); ok && len(out) == 0 {
		if why, record, ok := r.OwnReason(); ok {
			f := Finding{
				Rule: "pending-rebuild", Severity: Error, System: s.System,
				Message:  fmt.Sprintf("%s will redo %s on the next build (%s, as %s shows): what is on disk was made by another command", w.Tool, s.Label, why, display(g, record)),
				Subjects: []string{record, s.Reference.Path},
				Roots:    rootPaths(s),
				Evidence: []Evidence{
					{Kind: "record", Path: record, Detail: why},
					{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Size: s.Reference.Size, Detail: w.Reference},
				},
				Fix: rebuildCmd(s),
			}
			f.Evidence = append(f.Evidence, verdictEvidence(s)...)
			f.Evidence = append(f.Evidence, foreignRootEvidence(g, s)...)
			out = append(out, f)
		}
	}
	return out
}

// ranSince reports whether the step's command ran after the input last changed, as a file it writes on
// every run and copies over its output only when they differ shows (graph.Step.Ran).
func ranSince(s *graph.Step, in *graph.Input) bool {
	return s.Cmd().Ran.Exists && in.File.MTimeNS <= s.Cmd().Ran.MTimeNS
}

// ranAfter makes a pending-rebuild finding info when the step's command ran after the input changed
// and kept its output (graph.Step.Ran): the output is what the input makes now; the build system,
// comparing the output's older mtime, runs the command on every build until the content changes.
func ranAfter(g *graph.Graph, s *graph.Step, in *graph.Input, f Finding) Finding {
	f.Severity = Info
	f.Message = fmt.Sprintf("%s was modified at %s, after %s was last written at %s, but its command ran after that: it wrote %s at %s and copies it over %s only when they differ, so %s is what the current %s makes; %s runs the command again on every build until the output changes (its mtime stays older than %s)",
		display(g, in.File.Path), fmtTime(in.File.MTimeNS), display(g, s.Reference.Path), fmtTime(s.Reference.MTimeNS),
		display(g, s.Cmd().Ran.Path), fmtTime(s.Cmd().Ran.MTimeNS), display(g, s.Reference.Path), display(g, s.Reference.Path),
		display(g, in.File.Path), s.Words().Tool, display(g, in.File.Path))
	f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: s.Cmd().Ran.Path, MTimeNS: s.Cmd().Ran.MTimeNS, Size: s.Cmd().Ran.Size,
		Detail: "written by the step's command on every run, then copied over the output when it differs"})
	f.Fix = "nothing to rebuild; to stop the reruns, have the command touch its output (or let the build system restat it, as Ninja's restat = 1 does)"
	return f
}

// olderForeign: a root of another system is older than an object or library its step links, one a
// dependency step writes (of any system: a Go binary and the Cargo staticlib behind it). Content
// answers (graph.Holding) clear or confirm it where internal/content gathered one.
func olderForeign(g *graph.Graph, r *graph.Root) []Finding {
	s := r.Step
	if s.Failed != "" || !r.File.Exists {
		return nil
	}
	var out []Finding
	for _, in := range s.Inputs {
		d := producer(s, in.File.Path)
		if d == nil || !in.File.Exists || in.File.MTimeNS <= r.File.MTimeNS {
			continue
		}
		f := Finding{
			Rule: "binary-older-than-input", Severity: Error, System: s.System,
			Subjects: []string{r.File.Path, in.File.Path},
			Roots:    []string{r.File.Path},
			Evidence: []Evidence{
				{Kind: "root", Path: r.File.Path, MTimeNS: r.File.MTimeNS, Size: r.File.Size, Detail: fmt.Sprintf("%s made by %s step %s (tied by %s)", r.Kind, systemOf(s), s.Label, r.TiedBy)},
				{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in),
					Detail: fmt.Sprintf("written by %s step %s; %s", systemOf(d), d.Label, clueDetail(in))},
			},
			Fix: rebuildCmd(s),
		}
		made := s.Words().Made
		if made == "" {
			made = "linked"
		}
		shownIn := display(g, in.File.Path)
		if filepath.Base(shownIn) == filepath.Base(display(g, r.File.Path)) {
			shownIn = in.File.Path // two files of one name (an installed copy and its build's): said whole
		}
		when := fmt.Sprintf("%s was %s at %s, before %s was written at %s", display(g, r.File.Path), made, fmtTime(r.File.MTimeNS), shownIn, fmtTime(in.File.MTimeNS))
		h := g.HoldingOf(r, in.File.Path)
		switch {
		case graph.SharedLibrary(in.File.Path) && !s.Copies():
			// Loaded when the program starts: it runs the library's current code, relinked or not.
			f.Severity, f.Fix = Info, "nothing to rebuild for the library's code (the program loads it); to relink it anyway: "+rebuildCmd(s)
			f.Message = when + ", but it is a shared library, which the program loads when it starts: it runs the library's current code (a relink would change nothing it runs)"
		case h != nil && h.Verdict == graph.HoldsContent:
			f.Severity, f.Fix = Info, ""
			f.Message = when + ", but by content it holds what that file now contains (" + h.Detail + "): only the mtime is newer, it is not stale"
		case h != nil && h.Verdict == graph.DiffersContent:
			f.Message = when + ", and by content it holds other code: " + h.Detail
		default:
			watch := "and " + s.Words().Tool + " relinks it the next time it builds it"
			if w := s.Words(); w.Remakes != "" {
				watch = "and " + w.Remakes
			}
			if !in.Watched {
				watch = "and " + s.Words().NotWatched + ", so it will not relink it"
				f.Fix = forceCmd(g, s, in.File.Path)
			}
			f.Message = when + ": the binary on disk does not hold what that file now contains, " + watch
		}
		if h != nil && (h.Verdict == graph.HoldsContent || h.Verdict == graph.DiffersContent) {
			f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: in.File.Path, How: "content-" + h.Verdict, Detail: h.Detail})
		}
		out = append(out, f)
	}
	return out
}

// archiveMemberWithoutRule: an archive of another system holds a member that no step of the graph
// makes any more (`ar r` keeps the object of a removed source), so whatever links the archive may
// still get its symbols. Warning.
func archiveMemberWithoutRule(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		if s.Decides() != graph.ByMtime || !s.Reference.Exists {
			continue
		}
		for _, in := range s.Inputs {
			if len(in.How) != 1 || in.How[0] != graph.ArchiveMember || in.Watched || producer(s, in.File.Path) != nil {
				continue
			}
			member := in.Detail[0]
			ev := []Evidence{{Kind: "artifact", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Size: s.Reference.Size, How: string(graph.ArchiveMember), Detail: "archive member " + member}}
			state := "no longer on disk"
			if in.File.Exists {
				state = "still on disk"
				ev = append(ev, Evidence{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, Detail: "an object of the member's name, which no rule makes"})
			}
			sev, tail := Warning, fmt.Sprintf("whatever links %s may still get its symbols", s.Label)
			if len(in.Shadows) > 0 {
				// The symbol table names the removed source's member first: ld takes its copy.
				sev = Error
				tail = fmt.Sprintf("its symbol table names it first for %s, which a member made now also defines, so the linker takes the removed source's code into whatever links %s", strings.Join(in.Shadows, ", "), s.Label)
				ev = append(ev, Evidence{Kind: "record", Path: s.Reference.Path, How: string(graph.ArchiveMember),
					Detail: "symbol table: " + member + " defines " + strings.Join(in.Shadows, ", ") + " ahead of the members the rule makes"})
			}
			f := Finding{
				Rule: "archive-member-without-rule", Severity: sev, System: s.System,
				Message: fmt.Sprintf("%s holds %s, which no rule of %s makes any more (its object is %s): `ar r` keeps the members of removed sources; %s",
					display(g, s.Reference.Path), filepath.Base(in.File.Path), s.Words().Tool, state, tail),
				Subjects: []string{s.Reference.Path, member},
				Roots:    rootPaths(s),
				Evidence: append(ev, foreignRootEvidence(g, s)...),
				Fix:      "rm " + s.Reference.Path + " && " + rebuildCmd(s) + " (the archive is written afresh from the objects its rule names)",
			}
			out = append(out, f)
		}
	}
	return out
}

// foreignSystemOf names the system other than Cargo whose build folder holds path (its Graph.Origins
// value names the folder through BuildFolder), "" when none does.
func foreignSystemOf(g *graph.Graph, path string) string {
	for name, o := range g.Origins {
		f, ok := o.(graph.BuildFoldered)
		if !ok {
			continue
		}
		if d := f.BuildFolder(); path == d || strings.HasPrefix(path, d+string(filepath.Separator)) {
			return name
		}
	}
	return ""
}

// onlyClue reports whether h is the input's only clue.
func onlyClue(in *graph.Input, h graph.How) bool {
	for _, x := range in.How {
		if x != h {
			return false
		}
	}
	return len(in.How) > 0
}

// newestDependents maps each step that other steps build after (through Deps or KeepsLive, directly
// or not) to the newest mtime of those steps' references that exist.
func newestDependents(g *graph.Graph) map[*graph.Step]int64 {
	users := map[*graph.Step][]*graph.Step{}
	for _, s := range g.Steps {
		for _, d := range s.Deps {
			users[d] = append(users[d], s)
		}
		for _, d := range s.KeepsLive {
			users[d] = append(users[d], s)
		}
	}
	out := map[*graph.Step]int64{}
	done := map[*graph.Step]bool{}
	var visit func(s *graph.Step) (int64, bool)
	visit = func(s *graph.Step) (int64, bool) {
		if done[s] {
			t, ok := out[s]
			return t, ok
		}
		done[s] = true // a cycle ends here
		var newest int64
		found := false
		for _, u := range users[s] {
			if u.Reference.Exists && (!found || u.Reference.MTimeNS > newest) {
				newest, found = u.Reference.MTimeNS, true
			}
			if t, ok := visit(u); ok && (!found || t > newest) {
				newest, found = t, true
			}
		}
		if found {
			out[s] = newest
		}
		return newest, found
	}
	for _, s := range g.Steps {
		visit(s)
	}
	return out
}
