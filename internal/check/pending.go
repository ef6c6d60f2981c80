package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// pendingRebuild: an input Cargo watches changed after the unit was built (rerun-if-changed paths,
// dep-info files, the package scan of an old-style script, a dependency rebuilt since), so the next
// build will redo the unit: the binary on disk is old. Cargo's own rules: docs/cargo-target-dir.md §11.4
// (mtime strictly newer than the reference; equal counts as fresh; a missing input is stale).
func pendingRebuild(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		if s.Live() && s.Failed != "" && !s.Reference.Exists && s.Decides() == graph.ByRecord {
			// No success on record (a first build, or one after cargo clean -p, that failed): Cargo
			// builds the unit on the next build whatever changed. Whether the binary you have is stale
			// is its dependents' question, so this only says what the next build redoes.
			out = append(out, failedNeverBuilt(g, s))
			continue
		}
		if !s.Live() || !s.Reference.Exists {
			continue
		}
		switch s.Decides() {
		case graph.ByContent:
			// Go's build cache compares content hashes, not mtimes: a newer watched file is no reason
			// of its own; one whose content differs from what the outputs were built from is.
			out = append(out, pendingContent(g, s)...)
			build := s.Words().Rebuild
			if build == "" {
				build = rebuildCmd(s)
			}
			out = append(out, declaredEnvPending(g, s, s.Label, build)...)
			continue
		case graph.ByMtime:
			out = append(out, pendingForeign(g, s)...)
			continue
		}
		what := "the build script of " + s.Package
		if s.Kind != graph.ScriptRun {
			what = fmt.Sprintf("%s (%s)", s.Package, s.Label)
		}
		build := rebuildCmd(s)
		if s.Failed != "" {
			// The last attempt failed, so Cargo retries the unit on the next build whatever changed; what
			// is on disk is from the last success. An input newer than that success means the binary
			// you have predates it: that is staleness, whatever made the retry fail.
			out = append(out, failedButStale(g, s, what, build)...)
			// A failed unit built against a dependency whose records are gone (cargo clean -p, then a
			// build that failed): its binary is judged by the dependency's sources all the same.
			out = append(out, cargoRemovedDepsPending(g, s, what, build)...)
			continue
		}
		for _, in := range s.Inputs {
			if !in.Watched {
				continue
			}
			var msg string
			switch {
			case !in.File.Exists:
				msg = fmt.Sprintf("%s, which %s watches for %s, is missing; %s will rebuild %s on the next build, so the binary you have is not built from what is on disk",
					display(g, in.File.Path), s.Words().Tool, what, s.Words().Tool, unitName(s))
			case in.File.MTimeNS > s.Reference.MTimeNS:
				msg = fmt.Sprintf("%s was modified at %s, after %s was last built at %s (%s); %s, so the next build redoes %s: the binary you have is old",
					display(g, in.File.Path), fmtTime(in.File.MTimeNS), what, fmtTime(s.Reference.MTimeNS), display(g, s.Reference.Path), s.Words().Watched, unitName(s))
			default:
				continue
			}
			f := pendingFinding(g, s, msg, in.File.Path, build,
				Evidence{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in), Detail: in.WatchedBy})
			if in.File.Exists {
				f = folderJudged(g, s, in, contentJudged(g, s, in, f))
			}
			out = append(out, f)
		}
		// What only Cargo's records say: the Precalculated package scan and dangling deps entries.
		out = append(out, cargoPrecalculatedPending(g, s, build)...)
		out = append(out, cargoManifestPending(g, s, build)...)
		out = append(out, cargoDanglingPending(g, s, what, build)...)
		out = append(out, declaredEnvPending(g, s, what, build)...)
		out = append(out, configPending(g, s, build)...)
		if s.Kind == graph.Compile {
			own := newestOutput(s)
			for _, d := range s.Deps {
				if d.System != s.System {
					continue // another system's output: the consuming step's input, judged by binary-older-than-input
				}
				dp, dn, which := depOutput(s, d)
				if own == 0 || dn == 0 || dn <= own {
					continue
				}
				msg := fmt.Sprintf("dependency %s of %s was rebuilt at %s, after %s was built at %s; %s will rebuild %s",
					unitName(d), what, fmtTime(dn), unitName(s), fmtTime(own), s.Words().Tool, unitName(s))
				ev := []Evidence{{Kind: "input", Path: dp, MTimeNS: dn, Detail: which}}
				subject := d.RecordDir
				if by, in := changedBelow(d, own); in != nil {
					// Name the source whose change made the dependency's rebuild, not its record: that is
					// what moved since this unit was built.
					subject = in.File.Path
					msg = fmt.Sprintf("dependency %s of %s was rebuilt at %s for %s (modified at %s%s), after %s was built at %s; %s will rebuild %s",
						unitName(d), what, fmtTime(dn), display(g, in.File.Path), fmtTime(in.File.MTimeNS), throughDep(by, d),
						unitName(s), fmtTime(own), s.Words().Tool, unitName(s))
					ev = append(ev, Evidence{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in), Detail: in.WatchedBy})
				}
				out = append(out, pendingFinding(g, s, msg, subject, build, ev...))
			}
		}
	}
	return out
}

// changedBelow finds why dependency d was rebuilt after ns: the newest watched input modified after ns
// of d or, when d's own inputs did not move (it was rebuilt for one of its dependencies), of the
// same-system dependencies below it rebuilt after ns too, nearest first. by is the step whose input it
// is; nil when no input moved (flags or a dependency's records alone).
func changedBelow(d *graph.Step, ns int64) (by *graph.Step, in *graph.Input) {
	seen := map[*graph.Step]bool{d: true}
	level := []*graph.Step{d}
	for len(level) > 0 && len(seen) <= 64 {
		var next []*graph.Step
		for _, x := range level {
			for _, c := range x.Inputs {
				if c.Watched && c.File.Exists && c.File.MTimeNS > ns && (in == nil || c.File.MTimeNS > in.File.MTimeNS) {
					by, in = x, c
				}
			}
			for _, y := range x.Deps {
				if !seen[y] && y.System == d.System && newestOutput(y) > ns {
					seen[y] = true
					next = append(next, y)
				}
			}
		}
		if in != nil {
			return by, in
		}
		level = next
	}
	return nil, nil
}

// throughDep says which dependency below d the changed input belongs to, when it is not d's own.
func throughDep(by, d *graph.Step) string {
	if by == d {
		return ""
	}
	return ", an input of " + unitName(by) + " below it"
}

func pendingFinding(g *graph.Graph, s *graph.Step, msg, subject, build string, ev ...Evidence) Finding {
	f := Finding{
		Rule: "pending-rebuild", Severity: Error, Message: msg,
		Subjects: []string{subject, unitDir(s)},
		Roots:    rootPaths(s),
		Evidence: append(ev, Evidence{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS,
			Detail: s.Words().Reference}),
		Fix: build,
	}
	f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
	return f
}

func unitDir(s *graph.Step) string {
	if s.Script().RunDir != "" {
		return s.Script().RunDir
	}
	return s.RecordDir
}

// newestOutput is the newest mtime among a step's outputs that Cargo tracks: `output` for a run, the
// deps/ files for a rustc unit.
func newestOutput(s *graph.Step) int64 {
	if s.Kind == graph.ScriptRun {
		if s.Reference.Exists {
			return s.Reference.MTimeNS
		}
		return 0
	}
	if s.Kind != graph.Compile {
		return 0
	}
	var n int64
	for _, o := range s.Outputs {
		if o.MTimeNS > n {
			n = o.MTimeNS
		}
	}
	return n
}

// depOutput returns the output of dependency d that s's build system compares against s's newest
// output, its mtime, and why that one: the one the system chooses (graph.DepOutputChooser: Cargo's
// pipelining compares an rlib-only library's .rmeta), else d's newest output (`output` for a
// build-script run).
func depOutput(s, d *graph.Step) (path string, ns int64, which string) {
	if c, ok := s.Origin.(graph.DepOutputChooser); ok {
		if p, t, why, ok := c.ComparedOutput(s, d); ok {
			return p, t, why
		}
	}
	return outputPath(d), newestOutput(d), "newest output of the dependency"
}

func outputPath(s *graph.Step) string {
	if s.Kind == graph.ScriptRun {
		return s.Reference.Path
	}
	var best graph.FileInfo
	for _, o := range s.Outputs {
		if o.MTimeNS >= best.MTimeNS {
			best = o
		}
	}
	return best.Path
}

// failedButStale reports the inputs of a unit whose last build failed that are newer than its last
// successful build (the reference file is only rewritten on success).
func failedButStale(g *graph.Graph, s *graph.Step, what, build string) []Finding {
	var out []Finding
	for _, in := range s.Inputs {
		if !in.File.Exists || in.File.MTimeNS <= s.Reference.MTimeNS {
			continue
		}
		msg := fmt.Sprintf("%s was modified at %s, after %s was last built successfully at %s (%s); the build after it failed, so the binary you have is still the old one",
			display(g, in.File.Path), fmtTime(in.File.MTimeNS), what, fmtTime(s.Reference.MTimeNS), display(g, s.Reference.Path))
		// After the error is fixed the content may be what the last success built from again: then
		// only the mtime moved, and the binary is not stale.
		out = append(out, folderJudged(g, s, in, contentJudged(g, s, in, pendingFinding(g, s, msg, in.File.Path, build+" (and fix the error it reports)",
			Evidence{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in), Detail: in.WatchedBy},
			Evidence{Kind: "failed", Path: unitDir(s), Detail: s.Failed}))))
	}
	return out
}

// inputAt returns s's input at path, nil when s has none there.
func inputAt(s *graph.Step, path string) *graph.Input {
	for _, in := range s.Inputs {
		if in.File.Path == path {
			return in
		}
	}
	return nil
}

// folderJudged applies the content of the files under a declared folder (rerun-if-changed=native) to a
// finding about the folder: Cargo reruns the step when the newest file under it is newer, and when every
// such file the step read has the content it had when the step ran, only mtimes moved.
func folderJudged(g *graph.Graph, s *graph.Step, dir *graph.Input, f Finding) Finding {
	if f.Severity == Info {
		return f
	}
	var newer []*graph.Input
	for _, in := range s.Inputs {
		if in != dir && strings.HasPrefix(in.File.Path, dir.File.Path+"/") && in.File.MTimeNS > s.Reference.MTimeNS {
			newer = append(newer, in)
		}
	}
	if len(newer) == 0 {
		return f
	}
	for _, in := range newer {
		if in.Content == nil || in.Content.Verdict != graph.ContentSame {
			return f
		}
	}
	f.Severity = Info
	f.Message = fmt.Sprintf("%s will redo %s because files under %s have newer mtimes (%s); their content is the same as when %s ran: the binary is not stale",
		s.Words().Tool, unitName(s), display(g, dir.File.Path), display(g, newer[0].File.Path), unitName(s))
	for _, in := range newer {
		f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: in.File.Path, How: "content-baseline",
			Detail: "digest " + in.Content.Digest + " equals the content baseline recorded for this run"})
	}
	return f
}

// sameContentElsewhere returns another live unit of s's package (its rustc unit in the same profile)
// whose input at path carries a content verdict, so a build-script finding about a file the script does
// not list can be judged by content too; nil when none does.
func sameContentElsewhere(g *graph.Graph, s *graph.Step, path string) *graph.Input {
	for _, x := range g.Steps {
		if x == s || x.Package != s.Package || x.ProfileDir != s.ProfileDir || !x.Live() {
			continue
		}
		if in := inputAt(x, path); in != nil && in.File.Exists && in.Content != nil && in.File.MTimeNS > x.Reference.MTimeNS {
			return in
		}
	}
	return nil
}

// failedNeverBuilt: a live unit whose last build failed and which has no successful build on record
// (its reference file is missing). Info: Cargo redoes it on the next build; the binaries that depend
// on it are judged by the other checks (its removed records' content baselines, a dangling deps entry).
func failedNeverBuilt(g *graph.Graph, s *graph.Step) Finding {
	what := "the build script of " + s.Package
	if s.Kind != graph.ScriptRun {
		what = fmt.Sprintf("%s (%s)", s.Package, s.Label)
	}
	msg := fmt.Sprintf("the last build of %s failed (%s) and no successful build of it is on record (%s is missing): %s builds %s on the next build",
		what, s.Failed, display(g, s.Reference.Path), s.Words().Tool, unitName(s))
	f := pendingFinding(g, s, msg, unitDir(s), rebuildCmd(s)+" (and fix the error it reports)",
		Evidence{Kind: "failed", Path: unitDir(s), Detail: s.Failed})
	f.Severity = Info
	return f
}

// pendingContent: a watched input of a step whose build system compares content (graph.ContentComparer)
// differs from the content baseline of the step's outputs: the next build redoes the step, so what is on
// disk is old. An input whose mtime alone moved is nothing.
func pendingContent(g *graph.Graph, s *graph.Step) []Finding {
	var out []Finding
	w := s.Words()
	for _, in := range s.Inputs {
		c := in.Content
		if !in.Watched || !in.File.Exists || c == nil || c.Verdict != graph.ContentDiffers {
			continue
		}
		f := Finding{
			Rule: "pending-rebuild", Severity: Error, System: foreignSystem(s),
			Message: fmt.Sprintf("%s changed since %s was built at %s: its content differs from what that build used; %s, so the next build redoes %s: what is on disk is old",
				display(g, in.File.Path), display(g, s.Reference.Path), fmtTime(s.Reference.MTimeNS), w.Watched, s.Label),
			Subjects: []string{in.File.Path, s.Reference.Path},
			Roots:    rootPaths(s),
			Evidence: []Evidence{
				{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in), Detail: in.WatchedBy},
				{Kind: "record", Path: in.File.Path, How: "content-baseline",
					Detail: fmt.Sprintf("digest %s differs from the content baseline %s recorded at %s", c.Digest, c.Baseline, fmtTime(c.BaselineNS))},
				{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Size: s.Reference.Size, Detail: w.Reference},
			},
			Fix: w.Rebuild,
		}
		if f.Fix == "" {
			f.Fix = rebuildCmd(s)
		}
		f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
		out = append(out, f)
	}
	return out
}

// declaredEnvPending: a variable the build system watches for the step (Cargo: one a build script
// declares with rerun-if-env-changed; Go: the CGO_* flags and target variables its build info records) has
// another value in this environment than the one the build system recorded for the last run, so the
// next build here runs the step again: what is on disk was built with the old value. A variable that
// was set then and is unset now is a warning: a value the build system takes from its own configuration
// (Cargo's [env] table) is not in stalecheck's environment.
func declaredEnvPending(g *graph.Graph, s *graph.Step, what, build string) []Finding {
	var out []Finding
	for _, e := range s.Records().DeclaredEnvValues {
		now, ok := g.Env[e.Name]
		if !ok || now.Same(e) || setByCargo(e.Name) {
			continue
		}
		w := s.Words()
		watches := strings.Replace(w.Watched, " it", " "+e.Name, 1) // "Cargo watches LEVEL"
		built, how := "was built", "the build's record keeps its value"
		if s.Kind == graph.ScriptRun {
			built, how = "last ran", "it declares rerun-if-env-changed="+e.Name
		}
		here := "in this environment"
		if now.From != "" {
			here = "in the build's environment (the [env] table of " + display(g, now.From) + ")"
		}
		msg := fmt.Sprintf("%s %s with %s %s and it is %s %s; %s (%s), so the next build here redoes %s: the binary you have was built with the old value",
			what, built, e.Name, envText(e), envText(now), here, watches, how, unitName(s))
		rec := s.RecordDir
		if rec == "" {
			rec = s.Reference.Path
		}
		f := pendingFinding(g, s, msg, s.Reference.Path, fmt.Sprintf("%s (or set %s back to %s to keep what is on disk)", build, e.Name, envText(e)),
			Evidence{Kind: "record", Path: rec, Detail: fmt.Sprintf("recorded %s=%s", e.Name, envText(e))})
		f.Subjects = slices.DeleteFunc(f.Subjects, func(p string) bool { return p == "" }) // a step with no folder of its own
		if e.Set && !now.Set {
			f.Severity = Warning
			f.Message = fmt.Sprintf("%s %s with %s %s and it is not set in this environment; %s (%s): unless the build sets it from its own configuration (such as Cargo's [env] table), the next build here redoes %s, and the binary you have was built with that value",
				what, built, e.Name, envText(e), watches, how, unitName(s))
		}
		out = append(out, f)
	}
	return out
}
