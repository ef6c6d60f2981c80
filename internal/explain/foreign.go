package explain

import (
	"fmt"
	"path/filepath"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// foreignSystem reports whether a step is of a build system other than Cargo (make, ninja, go).
func foreignSystem(s *graph.Step) bool { return s.System != "" && s.System != unit.System }

// foreign explains a step of another build system (Make target, Ninja edge, Go cgo package or link)
// from the graph's neutral fields: the file is one of its inputs (each clue the adapter recorded,
// watched or not in the system's words) or one of its outputs. The rerun verdict is the system's
// mtime test: a watched input strictly newer than the step's Reference (or missing, or the reference
// missing) makes the next build redo it; an unwatched one never does. The system's own dry-run verdict
// is added where the adapter made one. nil when the step neither reads nor writes the file.
func (e *pathExplainer) foreign(s *graph.Step) *StepVerdict {
	w := s.Words()
	var in *graph.Input
	for _, x := range s.Inputs {
		if x.File.Path == e.p {
			in = x
			break
		}
	}
	output := false
	for _, o := range s.Outputs {
		output = output || o.Path == e.p
	}
	if in == nil && !output {
		return nil
	}
	v := e.newVerdict(s)
	v.System, v.Tool = s.System, w.Tool
	v.Unit, v.Kind, v.Target, v.Config = s.Name, s.System+" step", s.Label, s.Config.String()
	if v.Unit == "" {
		v.Unit = s.ID
	}
	v.Profile = s.ProfileDir
	ref := s.Reference
	v.setRef(ref)
	name := e.rel(e.p)
	if output && in == nil {
		v.Reads = []Clue{{How: "output", Detail: "the step writes it"}}
		v.ComparedPath, v.ComparedNS = e.p, e.fi.MTimeNS
		if !e.fi.Exists {
			v.WillRerun = true
			v.Reasons = append(v.Reasons, reason(Missing, "%s is missing: %s redoes the step on the next build", name, w.Tool))
		} else {
			v.Reasons = append(v.Reasons, reason(Unchanged, "%s is an output of the step (%s)", name, w.Reference))
		}
		e.systemVerdict(v, s)
		return v
	}
	for i, h := range in.How {
		c := Clue{How: string(h)}
		if i < len(in.Detail) {
			c.Detail = in.Detail[i]
		}
		v.Reads = append(v.Reads, c)
	}
	v.ComparedPath, v.ComparedNS = e.p, e.fi.MTimeNS
	if in.Watched {
		v.Declared, v.DeclaredBy = true, w.Watched
		if in.WatchedBy != "" {
			v.DeclaredBy += " (" + in.WatchedBy + ")"
		}
		switch {
		case !e.fi.Exists:
			v.WillRerun = true
			v.Reasons = append(v.Reasons, reason(Missing, "%s is missing: %s redoes the step on the next build", name, w.Tool))
		case !ref.Exists:
			v.WillRerun = true
			v.Reasons = append(v.Reasons, reason(Missing, "the step's output %s is missing: %s redoes the step on the next build", e.rel(ref.Path), w.Tool))
		case e.fi.MTimeNS > ref.MTimeNS:
			v.WillRerun = true
			v.Reasons = append(v.Reasons, reason(Changed, "%s (modified %s) is newer than %s (%s, %s): %s redoes the step on the next build",
				name, FmtTime(e.fi.MTimeNS), e.rel(ref.Path), FmtTime(ref.MTimeNS), w.Reference, w.Tool))
		case e.fi.MTimeNS == ref.MTimeNS:
			v.Reasons = append(v.Reasons, reason(EqualMTime, "%s has exactly the mtime of %s (%s); %s counts equal as up to date", name, e.rel(ref.Path), FmtTime(ref.MTimeNS), w.Tool))
		default:
			v.Reasons = append(v.Reasons, reason(Unchanged, "%s (modified %s) is older than %s (%s): up to date, %s has nothing to redo for it",
				name, FmtTime(e.fi.MTimeNS), e.rel(ref.Path), FmtTime(ref.MTimeNS), w.Tool))
		}
	} else {
		v.DeclaredBy = w.NotWatched
		r := reason(Undeclared, "%s: %s never compares %s", w.NotWatched, w.Tool, name)
		switch {
		case e.fi.Exists && ref.Exists && e.fi.MTimeNS > ref.MTimeNS:
			r.Message += fmt.Sprintf(". It was modified at %s, after %s was written at %s: the step's output was made from an older %s", FmtTime(e.fi.MTimeNS), e.rel(ref.Path), FmtTime(ref.MTimeNS), filepath.Base(e.p))
		case e.fi.Exists && ref.Exists:
			r.Message += fmt.Sprintf(". It was last modified at %s, before %s was written at %s", FmtTime(e.fi.MTimeNS), e.rel(ref.Path), FmtTime(ref.MTimeNS))
		}
		if in.Content != nil && in.Content.Verdict != "" {
			r.Message += fmt.Sprintf(" (content against the baseline: %s)", in.Content.Verdict)
		}
		v.Reasons = append(v.Reasons, r)
	}
	e.systemVerdict(v, s)
	return v
}

// systemVerdict adds the build system's own dry-run answer and the command that redoes the step.
func (e *pathExplainer) systemVerdict(v *StepVerdict, s *graph.Step) {
	if vo, ok := s.Origin.(graph.Verdicter); ok {
		if text, ok := vo.Verdict(); ok {
			v.Reasons = append(v.Reasons, Reason{Code: "system-dry-run", Message: text})
		}
	}
	cmd := s.Words().Rebuild
	if rb, ok := s.Origin.(graph.Rebuilder); ok && cmd == "" {
		cmd = rb.Rebuild(s)
	}
	if cmd != "" {
		v.Rebuild = cmd
	}
}
