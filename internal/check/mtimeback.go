package check

import (
	"fmt"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// stepWhat names a step for a sentence: "the build script of x" or "x (lib-x)".
func stepWhat(s *graph.Step) string {
	if s.Kind == graph.ScriptRun {
		return "the build script of " + s.Package
	}
	if s.Package == "" { // a Make or Ninja step: its target names it
		return s.Label
	}
	return fmt.Sprintf("%s (%s)", s.Package, s.Label)
}

// contentJudged applies an input's content verdict (internal/content baselines) to a finding about an
// input whose mtime is newer than its step's reference (pending-rebuild, untracked-input-changed): the
// same content as when the step ran makes it info (only the mtime moved: Cargo may redo work, the binary
// is not stale); otherwise the content evidence, or what is unknown, is added to the finding.
func contentJudged(g *graph.Graph, s *graph.Step, in *graph.Input, f Finding) Finding {
	c := in.Content
	if c == nil {
		return f
	}
	switch c.Verdict {
	case graph.ContentSame:
		f.Severity = Info
		// Either the bytes are the same, or only comments changed (c.Why says so).
		same, detail := "its content is the same", fmt.Sprintf("digest %s equals the content baseline recorded at %s for this run of %s", c.Digest, fmtTime(c.BaselineNS), unitName(s))
		if c.Why != "" {
			same = "its content differs from when " + unitName(s) + " ran, but " + c.Why
			detail = fmt.Sprintf("digest %s differs from the content baseline %s recorded at %s for this run of %s, and the code digests (comments and blank runs left out) are equal: %s",
				c.Digest, c.Baseline, fmtTime(c.BaselineNS), unitName(s), c.Why)
			if len(c.Through) > 0 {
				detail = fmt.Sprintf("digest %s differs from the content baseline %s recorded at %s for this run of %s, and %s",
					c.Digest, c.Baseline, fmtTime(c.BaselineNS), unitName(s), c.Why)
			}
		}
		if in.Watched {
			what := "the mtime of " + display(g, in.File.Path) + " changed"
			if c.Why != "" {
				what = display(g, in.File.Path) + " changed"
			}
			f.Message = fmt.Sprintf("%s will redo %s because %s (%s, after the run at %s); %s: the binary is not stale",
				s.Words().Tool, unitName(s), what, fmtTime(in.File.MTimeNS), fmtTime(s.Reference.MTimeNS), sameAs(same, c, s))
			f.Fix = "nothing to fix: the next " + rebuildCmd(s) + " redoes " + unitName(s) + " at the cost of its time only"
		} else {
			f.Message = fmt.Sprintf("%s was modified at %s, after %s last ran at %s, but %s: the binary is not stale (%s and will not rebuild)",
				display(g, in.File.Path), fmtTime(in.File.MTimeNS), stepWhat(s), fmtTime(s.Reference.MTimeNS), sameAs(same, c, s), s.Words().NotWatched)
		}
		f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: in.File.Path, How: "content-baseline", Detail: detail})
	case graph.ContentDiffers:
		f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: in.File.Path, How: "content-baseline",
			Detail: fmt.Sprintf("digest %s differs from the content baseline %s recorded at %s for this run of %s: the content changed", c.Digest, c.Baseline, fmtTime(c.BaselineNS), unitName(s))})
	default:
		f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: in.File.Path, How: "content-unknown",
			Detail: "whether only the mtime changed is unknown: " + c.Why})
	}
	return f
}

// sameAs completes "its content is the same" with the run it is compared with.
func sameAs(same string, c *graph.InputContent, s *graph.Step) string {
	if c.Why != "" {
		return same
	}
	return same + " as when " + unitName(s) + " ran"
}

// changedWithOlderMtime: an input of a live step whose mtime is not newer than the step's reference, so
// Cargo calls it fresh, but whose content differs from the content baseline recorded for that run: it
// was rewritten (its ctime is newer than the reference) and its mtime set back (cp -p of a saved copy,
// rsync -t, tar). The binary was built from other content. A warning when the only clue tying the file to
// the step is that it lies in the package folder (as untracked-input-changed). Inputs whose ctime moved but for which no
// baseline was recorded are summed up per step as info: their content is unknown.
func changedWithOlderMtime(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		if !s.Live() || !s.Reference.Exists || s.Failed != "" {
			continue
		}
		for _, in := range s.Inputs {
			c := in.Content
			if c == nil || !in.File.Exists || in.File.MTimeNS > s.Reference.MTimeNS {
				continue
			}
			if c.Verdict != graph.ContentDiffers || c.Build != "" {
				continue // a baseline keyed by a build identity: untracked-input-changed reports it
			}
			if precalculatedRerun(s) {
				continue // Cargo's package scan sees the mtime move: pending-rebuild reports it
			}
			watch := s.Words().NotWatched
			fix := rerunFix(g, s, in.File.Path)
			if in.Watched {
				watch = s.Words().Watched + " but compares mtimes only"
				if in.WatchedBy != "" {
					watch = s.Words().Watched + " (" + in.WatchedBy + ") but compares mtimes only"
				}
				fix = "touch " + display(g, in.File.Path) + " && " + rebuildCmd(s)
			}
			if s.Kind != graph.ScriptRun {
				fix = "touch " + display(g, in.File.Path) + " && " + rebuildCmd(s)
			}
			if _, ok := s.Origin.(graph.Rebuilder); ok { // the step's own system says how it rebuilds
				fix = "touch " + display(g, in.File.Path) + " && " + rebuildCmd(s)
			}
			sev := Error
			if !in.Strong() {
				sev = Warning // only a native source lying in the package folder: a candidate, as untracked-input-changed says
			}
			linked := linkedCopiesFromSourcesHere(g, s) // dupheld.go
			if linked != "" {
				sev = Warning
			}
			tail := ": the binary you have was built from other content"
			if linked != "" {
				tail = "; the binaries do not hold that run's code, though: " + linked
			}
			f := Finding{
				Rule: "changed-with-older-mtime", Severity: sev,
				Message: fmt.Sprintf("%s was rewritten at %s (its ctime), after %s last ran at %s, and its mtime was set back to %s: its content differs from what %s used; %s, so the next build will not redo it%s",
					display(g, in.File.Path), fmtTime(c.CTimeNS), stepWhat(s), fmtTime(s.Reference.MTimeNS), fmtTime(in.File.MTimeNS), unitName(s), watch, tail),
				Subjects: []string{in.File.Path, unitDir(s)},
				Roots:    rootPaths(s),
				Evidence: []Evidence{
					{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in),
						Detail: fmt.Sprintf("ctime %s; mtime not newer than the reference", fmtTime(c.CTimeNS))},
					{Kind: "record", Path: in.File.Path, How: "content-baseline",
						Detail: fmt.Sprintf("digest %s differs from the content baseline %s recorded at %s for this run of %s", c.Digest, c.Baseline, fmtTime(c.BaselineNS), unitName(s))},
					{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Detail: s.Words().Reference},
				},
				Fix: fix,
			}
			if c.Moved && c.CTimeNS <= s.Reference.MTimeNS {
				// No time of the file moved: the path names another file (a symbolic link on the way).
				f.Message = fmt.Sprintf("%s names another file than when %s last ran at %s (device:inode %s then, another now: a symbolic link on the way points elsewhere, or the file was replaced keeping its times), whose mtime %s is older; its content differs from what %s used; %s, so the next build will not redo it%s",
					display(g, in.File.Path), stepWhat(s), fmtTime(s.Reference.MTimeNS), c.Was, fmtTime(in.File.MTimeNS), unitName(s), watch, tail)
				f.Evidence[0].Detail = fmt.Sprintf("another file than the one recorded (%s); mtime and ctime not newer than the reference", c.Was)
			}
			if linked != "" {
				f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: in.File.Path, How: "content-baseline", Detail: linked})
			}
			f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
			out = append(out, f)
		}
	}
	return out
}

// precalculatedRerun reports whether an old-style build script's recorded newest package file no longer
// matches the package (pendingRebuild's Precalculated case): Cargo reruns the script.
func precalculatedRerun(s *graph.Step) bool {
	if s.Records().Scan().ScanNewestNS == 0 || !s.PathPackage || s.Kind != graph.ScriptRun {
		return false
	}
	if s.Records().Scan().PackageNewest.MTimeNS > s.Records().Scan().ScanNewestNS {
		return true
	}
	now := s.Records().Scan().ScanNewestNow
	return now.Exists && now.MTimeNS < s.Records().Scan().ScanNewestNS && s.Records().Scan().PackageNewest.MTimeNS < s.Records().Scan().ScanNewestNS
}
