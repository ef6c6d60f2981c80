package check

import (
	"fmt"
	"path/filepath"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// traceEvidence is the traced read behind an input's trace clue: the store file, the process and when
// it opened the file (ns); nil when the input has none.
func traceEvidence(in *graph.Input) []Evidence {
	r := in.Trace
	if r == nil {
		return nil
	}
	return []Evidence{{Kind: "trace", Path: r.File, MTimeNS: r.TimeNS, How: string(graph.Trace),
		Detail: fmt.Sprintf("pid %d (%s) opened %s at %s (%d ns, %s) in the traced build", r.PID, r.Exe, in.File.Path, fmtTime(r.TimeNS), r.TimeNS, r.Op)}}
}

// untrackedTraced is untracked-input-changed on Cargo's rustc units (compiles of libraries, binaries and
// build scripts), whose only unwatched inputs are those a trace shows (a proc macro that opens a file
// rustc's dep-info does not list): such a file modified after the unit's dep-info was written.
func untrackedTraced(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		if s.Decides() != graph.ByRecord || s.Kind == graph.ScriptRun || !s.Live() || s.Failed != "" || !s.Reference.Exists {
			continue
		}
		for _, in := range s.Inputs {
			if in.Watched || !in.Has(graph.Trace) || !in.File.Exists || in.File.MTimeNS <= s.Reference.MTimeNS {
				continue
			}
			f := Finding{
				Rule: "untracked-input-changed", Severity: Error,
				Message: fmt.Sprintf("%s was modified at %s, after %s (%s) was last compiled at %s (%s); a traced build shows rustc read it, but its dep-info does not list it, so Cargo will not rebuild %s",
					display(g, in.File.Path), fmtTime(in.File.MTimeNS), s.Name, s.Label, fmtTime(s.Reference.MTimeNS), display(g, s.Reference.Path), s.Name),
				Subjects: []string{in.File.Path, s.Reference.Path},
				Roots:    rootPaths(s),
				Evidence: []Evidence{
					{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in), Detail: clueDetail(in)},
					{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Detail: "the unit's dep-info (Cargo compares the files it lists against this file's mtime)"},
				},
				Fix: fmt.Sprintf("touch a source of %s (or track the file: include_bytes!/include_str!, or the proc macro's tracked-path API), then: %s", s.Package, rebuildCmd(s)),
			}
			f.Evidence = append(f.Evidence, traceEvidence(in)...)
			f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
			out = append(out, contentJudged(g, s, in, f))
		}
	}
	return out
}

// pathLookupChanged: a step's process searched for a program on PATH (or a header in its include
// folders) in a traced build, and the same search finds something else now: a tool that now exists
// earlier on PATH, one that appeared where none was found (a build script that looks for nvcc and
// writes an empty kernel table without it), or none where one was. Build systems do not watch such
// searches (Cargo reruns a script for PATH only when it declares rerun-if-env-changed=PATH, and never
// for a file appearing in a PATH folder), so the step's outputs still follow the old answer.
// Warning: whether the step would write something else with the new answer is not knowable from the
// trace (the script may not use the tool for this configuration).
func pathLookupChanged(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		if !s.Live() || s.Failed != "" {
			continue
		}
		seen := map[string]bool{}
		for i := range s.Cmd().Lookups {
			l := &s.Cmd().Lookups[i]
			if !l.Changed() {
				continue
			}
			if l.Recorded {
				if f, ok := recordedLookupChanged(g, s, l); ok {
					out = append(out, f)
				}
				continue
			}
			now, where := l.Now, "searching the same PATH"
			if l.Kind == graph.LookupInclude {
				where = "searching the same include folders"
			}
			if l.Now == l.Then && l.NextSearch != "" {
				now, where = l.NowNext, "searching the PATH stalecheck runs with (the next build's)"
			}
			if seen[l.Kind+l.Name+now] {
				continue
			}
			seen[l.Kind+l.Name+now] = true
			what, space := "program", "on PATH"
			if l.Kind == graph.LookupInclude {
				what, space = "header", "in the include folders"
			}
			sev := Warning
			if l.Differs {
				sev = Error // the step's records confirm the search, and the two headers differ
			}
			f := Finding{
				Rule: "path-lookup-changed", Severity: sev, System: foreignSystem(s),
				Message: fmt.Sprintf("%s looked up the %s %s %s when it last ran (pid %d, %s, at %s) and found %s; now, %s, it finds %s; %s does not watch this lookup, so %s still follows the old answer",
					lookupStep(s), what, l.Name, space, l.PID, filepath.Base(l.Exe), fmtTime(l.TimeNS), orNone(l.Then, display(g, l.Then)),
					where, orNone(now, display(g, now)), s.Words().Tool, stepOutputs(s)),
				Subjects: lookupSubjects(l, now, s),
				Roots:    rootPaths(s),
				Evidence: []Evidence{
					{Kind: "trace", Path: l.TraceFile, MTimeNS: l.TimeNS, How: string(graph.Trace),
						Detail: fmt.Sprintf("pid %d (%s) searched for %s %s at %d ns, %d folder(s) tried: %s", l.PID, l.Exe, l.Name, space, l.TimeNS, l.Tried, l.Search)},
					{Kind: "then", Path: l.Then, Detail: "found when the step ran: " + orNone(l.Then, l.Then)},
					{Kind: "now", Path: now, Detail: fmt.Sprintf("found now %s: %s", where, orNone(now, now))},
					{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Detail: s.Words().Reference},
				},
				Fix: lookupFix(g, s, l),
			}
			if now != l.Now {
				f.Evidence[2].Detail += " (PATH " + l.NextSearch + ")"
			}
			f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
			out = append(out, f)
		}
	}
	return out
}

func lookupStep(s *graph.Step) string {
	if s.Package == "" {
		return s.Label
	}
	return stepWhat(s)
}

func foreignSystem(s *graph.Step) string {
	return s.SystemTag()
}

func stepOutputs(s *graph.Step) string {
	if s.Kind == graph.ScriptRun && s.Script().OutDir != "" {
		return "what it wrote to OUT_DIR"
	}
	return s.Label
}

func orNone(p, shown string) string {
	if p == "" {
		return "none"
	}
	return shown
}

func lookupSubjects(l *graph.Lookup, now string, s *graph.Step) []string {
	var out []string
	for _, p := range []string{now, l.Then, s.Script().RunDir, s.Reference.Path} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func lookupFix(g *graph.Graph, s *graph.Step, l *graph.Lookup) string {
	if s.Kind == graph.ScriptRun {
		script := display(g, s.Script().ScriptSource)
		if script == "" {
			script = "build.rs"
		}
		decl := "println!(\"cargo:rerun-if-env-changed=PATH\")"
		if l.Kind == graph.LookupInclude {
			decl = "println!(\"cargo:rerun-if-changed=FOLDER\") for each include folder it searches"
		}
		return fmt.Sprintf("rerun the build script: touch %s && %s (to have Cargo rerun it on its own, add %s to %s)", script, rebuildCmd(s), decl, script)
	}
	if w := s.Words(); w.Rebuild != "" {
		return w.Rebuild
	}
	return "rebuild " + s.Label + " (remove it and build again)"
}

// recordedToolChanged judges the program a step's command names without a folder (internal/content,
// tool.go): the search of PATH the next build makes finds another file than the one recorded for the
// step's last run, with other bytes (or none). An error: the objects were made by the old program, and
// the build system, which compares the command's text, will not remake them.
func recordedToolChanged(g *graph.Graph, s *graph.Step, l *graph.Lookup) Finding {
	f := Finding{
		Rule: "path-lookup-changed", Severity: Error, System: foreignSystem(s),
		Message: fmt.Sprintf("the command of %s runs %s, which PATH found as %s when its last run was recorded; the same search of PATH now finds %s; %s compares the command's text, not the program it runs, so %s still holds what the old program made",
			lookupStep(s), l.Name, display(g, l.Then), orNone(l.Now, display(g, l.Now)), s.Words().Tool, stepOutputs(s)),
		Subjects: lookupSubjects(l, l.Now, s),
		Roots:    rootPaths(s),
		Evidence: []Evidence{
			{Kind: "now", Path: l.Now, Detail: "found now, searching PATH " + l.Search},
			{Kind: "then", Path: l.Then, Detail: "found by the same search when stalecheck recorded the step's last run (its bytes differ from the file found now)"},
			{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Detail: s.Words().Reference},
		},
		Fix: fmt.Sprintf("if %s is the program you want, rebuild: %s; else restore PATH", orNone(l.Now, display(g, l.Now)), lookupFix(g, s, l)),
	}
	if l.From != "" {
		f.Evidence = append(f.Evidence, Evidence{Kind: "declared", Path: l.From, Detail: "defines the command, which names " + l.Name + " without a folder"})
	}
	f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
	return f
}

// recordedLookupChanged judges a header search answered again from the step's records
// (internal/includes): the records say the compile read l.Then, and the same search now finds l.Now in a
// folder searched before. An error when the two files differ in content: the next compile reads other
// text, and the build system, which watches only the file it found, does not redo it (internal/includes
// records only searches whose two files differ in content).
func recordedLookupChanged(g *graph.Graph, s *graph.Step, l *graph.Lookup) (Finding, bool) {
	if l.Kind == graph.LookupPATH {
		return recordedToolChanged(g, s, l), true
	}
	f := Finding{
		Rule: "path-lookup-changed", Severity: Error, System: foreignSystem(s),
		Message: fmt.Sprintf("%s includes %q, which the last compile of %s found as %s (its records say it read that file); the same search of the include folders now finds %s first, with other content; %s watches only the file it found, so %s still holds the old header's code",
			display(g, l.From), l.Name, lookupStep(s), display(g, l.Then), display(g, l.Now), s.Words().Tool, stepOutputs(s)),
		Subjects: lookupSubjects(l, l.Now, s),
		Roots:    rootPaths(s),
		Evidence: []Evidence{
			{Kind: "now", Path: l.Now, How: string(graph.IncludeScan), Detail: "found now, searching " + l.Search},
			{Kind: "then", Path: l.Then, Detail: "read by the step's last compile, as its records show"},
			{Kind: "input", Path: l.From, Detail: fmt.Sprintf("#include %q", l.Name)},
			{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Detail: s.Words().Reference},
		},
		Fix: fmt.Sprintf("remove or rename %s if it should not be found, else rebuild: %s", display(g, l.Now), lookupFix(g, s, l)),
	}
	f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
	return f, true
}
