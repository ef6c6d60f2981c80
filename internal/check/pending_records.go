package check

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stalecheck/stalecheck/internal/content"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// The parts of pending-rebuild that only Cargo's records give (internal/cargo/unit): the Precalculated
// package scan of an old-style build script, and `deps` entries whose hash no unit has any more.

// cargoPrecalculatedPending: a path package's old-style script (no rerun-if line) is rerun when the
// package's newest file is no longer the one Cargo recorded in its Precalculated fingerprint.
func cargoPrecalculatedPending(g *graph.Graph, s *graph.Step, build string) []Finding {
	if ns, file := s.Records().Scan().ScanNewestNS, s.Records().Scan().ScanNewestFile; ns != 0 && s.PathPackage && s.Kind == graph.ScriptRun {
		// Cargo compares the recorded "<mtime> (<file>)" for equality with the package's newest
		// file now: a newer file reruns the script, and so does the recorded file's mtime going
		// back (cp -p of older content) when nothing newer took its place.
		newest, newestNS := s.Records().Scan().PackageNewest.Path, s.Records().Scan().PackageNewest.MTimeNS
		var f *Finding
		if newestNS > ns {
			msg := fmt.Sprintf("%s was modified at %s, after the build script of %s last ran (Cargo recorded the newest package file %s at %s); the script prints no rerun-if line, so Cargo reruns it on the next build: the binary you have is old",
				display(g, newest), fmtTime(newestNS), s.Package, file, fmtTime(ns))
			x := pendingFinding(g, s, msg, newest, build,
				Evidence{Kind: "input", Path: newest, MTimeNS: newestNS, How: string(graph.PackageFolder), Detail: "newest file of the package; Cargo's Precalculated fingerprint is " + fmt.Sprintf("%q", s.Records().Scan().ScanKey)})
			f = &x
		} else if now := s.Records().Scan().ScanNewestNow; now.Exists && now.MTimeNS < ns && newestNS < ns {
			newest, newestNS = now.Path, now.MTimeNS
			msg := fmt.Sprintf("%s now has the mtime %s, older than the %s Cargo recorded for it as the newest file of package %s when the build script last ran (its mtime was set back: cp -p, rsync -t, tar); Cargo compares the two for equality, so it reruns the script on the next build",
				display(g, newest), fmtTime(newestNS), fmtTime(ns), s.Package)
			x := pendingFinding(g, s, msg, newest, build,
				Evidence{Kind: "input", Path: newest, MTimeNS: newestNS, How: string(graph.PackageFolder), Detail: "the file Cargo's Precalculated fingerprint names: " + fmt.Sprintf("%q", s.Records().Scan().ScanKey)})
			f = &x
		}
		if f != nil {
			if in := inputAt(s, newest); in != nil && in.File.Exists {
				*f = contentJudged(g, s, in, *f)
			} else if in := sameContentElsewhere(g, s, newest); in != nil {
				// The newest file is a Rust source the script does not read: the package's rustc
				// unit, built in the same build, holds its baseline.
				*f = contentJudged(g, s, in, *f)
			}
			return []Finding{*f}
		}
	}
	return nil
}

// cargoDanglingPending: a `deps` entry whose hash matches no hash file (the dependency was rebuilt since,
// or `cargo clean -p` removed its records) makes Cargo rebuild the unit.
func cargoDanglingPending(g *graph.Graph, s *graph.Step, what, build string) []Finding {
	var out []Finding
	for _, d := range s.Records().Removed().GoneDeps {
		name, hash, _ := strings.Cut(d, " ")
		if content.RemovedDependency(g, s, name) || slices.Contains(s.Records().Removed().RemovedOtherRuns, d) {
			out = append(out, removedDep(g, s, what, build, name, hash))
			continue
		}
		msg := fmt.Sprintf("%s was built against dependency %s with fingerprint %s, which no unit on disk has any more: the dependency was rebuilt since, so Cargo will rebuild %s",
			what, name, hash, unitName(s))
		out = append(out, pendingFinding(g, s, msg, s.RecordDir, build,
			Evidence{Kind: "record", Path: s.RecordDir + "/" + s.Label + ".json", Detail: "deps entry " + name + " → hash " + hash + " matches no hash file"}))
	}
	return out
}

// cargoRemovedDepsPending: the deps entries of a failed unit that name a dependency whose records are
// all gone from its profile folder.
func cargoRemovedDepsPending(g *graph.Graph, s *graph.Step, what, build string) []Finding {
	var out []Finding
	for _, d := range s.Records().Removed().GoneDeps {
		if name, hash, _ := strings.Cut(d, " "); content.RemovedDependency(g, s, name) {
			out = append(out, removedDep(g, s, what, build, name, hash))
		}
	}
	return out
}

// removedDep is the finding about a deps entry of s naming a dependency whose records are all gone
// from s's profile folder: Cargo will rebuild both; the dependency's sources decide whether the binary is
// stale (removedDepJudged).
func removedDep(g *graph.Graph, s *graph.Step, what, build, name, hash string) Finding {
	msg := fmt.Sprintf("%s was built against dependency %s, whose records are gone from %s (cargo clean -p removes them): Cargo will rebuild %s and %s, but nothing on disk shows that their code changed",
		what, name, s.ProfileDir, name, unitName(s))
	f := pendingFinding(g, s, msg, s.RecordDir, build,
		Evidence{Kind: "record", Path: s.RecordDir + "/" + s.Label + ".json", Detail: "deps entry " + name + " → hash " + hash + "; no unit of " + name + " is left in " + s.ProfileDir})
	f.Severity = Info
	removedDepJudged(g, s, what, name, &f)
	return f
}

// removedDepJudged sets the severity of a finding about a dependency whose records `cargo clean -p`
// removed from s's profile: the dependency's sources that another profile's units know and that changed
// after s was built are judged by content against what the removed units used
// (graph.Step.RemovedDepContent). One that differs is an error: the binary predates it; all the same:
// info; any not judged: a warning, the binary may predate it.
func removedDepJudged(g *graph.Graph, s *graph.Step, what, name string, f *Finding) {
	head := fmt.Sprintf("%s was built against dependency %s, whose records are gone from %s (cargo clean -p removes them)", what, name, s.ProfileDir)
	if removedDepStaleBefore(g, s, name, head, f) {
		return
	}
	newer := content.NewerSources(g, name, s.Reference.MTimeNS)
	if len(newer) == 0 {
		return
	}
	var differs, unknown *graph.Input
	for _, in := range newer {
		switch ic := s.Records().Removed().RemovedDepContent[in.File.Path]; {
		case ic == nil || ic.Verdict == graph.ContentUnknown:
			if unknown == nil {
				unknown = in
			}
		case ic.Verdict == graph.ContentDiffers:
			if differs == nil && !linkedNow(s.Records(), name) {
				differs = in
			}
		}
	}
	in := unknown
	switch {
	case differs != nil:
		in = differs
		ic := s.Records().Removed().RemovedDepContent[in.File.Path]
		f.Severity = Error
		f.Message = fmt.Sprintf("%s, and %s, a source of %s, was modified at %s, after %s was built at %s; its content differs from what the removed units of %s used (content baseline recorded %s): the binary you have predates it",
			head, display(g, in.File.Path), name, fmtTime(in.File.MTimeNS), unitName(s), fmtTime(s.Reference.MTimeNS), name, fmtTime(ic.BaselineNS))
	case unknown != nil:
		f.Severity = Warning
		f.Message = fmt.Sprintf("%s, and %s, a source of %s, was modified at %s, after %s was built at %s: the binary you have may predate it",
			head, display(g, in.File.Path), name, fmtTime(in.File.MTimeNS), unitName(s), fmtTime(s.Reference.MTimeNS))
		if ic := s.Records().Removed().RemovedDepContent[in.File.Path]; ic != nil && ic.Why != "" {
			f.Message += " (its content was not compared: " + ic.Why + ")"
		}
	default:
		in = newer[0]
		f.Message = fmt.Sprintf("%s; its sources modified since %s was built (%s) have the content the removed units of %s used: Cargo will rebuild %s and %s, but the binary is not stale",
			head, unitName(s), display(g, in.File.Path), name, name, unitName(s))
	}
	f.Evidence = append(f.Evidence, Evidence{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in),
		Detail: "a source of " + name + " as another profile's unit of it records"})
}

// removedDepStaleBefore: what the removed units of dependency name were built from differs from what
// Cargo's rebuild will use, whatever the mtimes say: a source of it, not modified since s was built,
// whose content differs from the removed units' baseline (they were stale already: an unwatched header
// edited before), or an environment variable every removed build-script run read with another value now
// (Cargo reruns the script in this environment). Either makes f an error: the binary you have differs
// from what the next build makes. Reports whether it did.
func removedDepStaleBefore(g *graph.Graph, s *graph.Step, name, head string, f *Finding) bool {
	u := s.Records()
	for _, in := range content.NewerSources(g, name, math.MinInt64) {
		ic := u.Removed().RemovedDepContent[in.File.Path]
		if in.File.MTimeNS > s.Reference.MTimeNS || ic == nil || ic.Verdict != graph.ContentDiffers || linkedNow(u, name) {
			continue
		}
		f.Severity = Error
		f.Message = fmt.Sprintf("%s, and %s, a source of %s modified at %s (before %s was built at %s), differs from what the removed units of %s used (content baseline recorded %s): they were stale already, and Cargo's rebuild will use what is on disk, so the binary you have is not built from it",
			head, display(g, in.File.Path), name, fmtTime(in.File.MTimeNS), unitName(s), fmtTime(s.Reference.MTimeNS), name, fmtTime(ic.BaselineNS))
		f.Evidence = append(f.Evidence, Evidence{Kind: "input", Path: in.File.Path, MTimeNS: in.File.MTimeNS, Size: in.File.Size, How: howString(in),
			Detail: fmt.Sprintf("a source of %s as another profile's unit of it records; %s now, %s in the removed units' baseline", name, ic.Digest, ic.Baseline)})
		return true
	}
	// A removed run that left an archive member duplicated (`ar q`) whose linked copy is older code
	// than the run's own: s, built after it, holds that copy, and Cargo's rebuild makes a fresh archive.
	if linksItself(s) {
		for _, r := range u.Removed().RemovedDepRuns {
			if r.Dep != name || len(r.OldMembers) == 0 || r.RunNS > s.Reference.MTimeNS {
				continue
			}
			f.Severity = Error
			f.Message = fmt.Sprintf("%s, and its removed build-script run of %s had left a static archive with duplicated members (`ar q`) whose copy the linker takes, the first, is older code than the run's own: %s; the binary you have was linked after that run and holds the older code, while Cargo's rebuild makes a fresh archive",
				head, fmtTime(r.RunNS), strings.Join(r.OldMembers, "; "))
			f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: r.Record, How: "content-baseline",
				Detail: fmt.Sprintf("the removed run's content baseline (recorded at %s) keeps the digests of its archive's members: %s", fmtTime(r.RecordedNS), strings.Join(r.OldMembers, "; "))})
			return true
		}
	}
	// Which removed run the binary was built against is not on disk (several configurations' runs may
	// have left baselines): the environment decides only when every removed run that made an archive
	// read a value that differs now.
	var first []string
	var firstEv []Evidence
	var firstRun graph.RemovedRun
	n := 0
	for _, r := range u.Removed().RemovedDepRuns {
		if r.Dep != name || !r.Archive {
			continue
		}
		n++
		changed, ev := envChanges(g, r.EnvReads, r.FlagsSeen, nil, r.Record,
			fmt.Sprintf("the removed run's output (as the content store recorded it at %s) logged", fmtTime(r.RecordedNS)), "")
		if len(changed) == 0 {
			return false
		}
		if first == nil {
			first, firstEv, firstRun = changed, ev, r
		}
	}
	if n == 0 {
		return false
	}
	f.Severity = Error
	f.Message = fmt.Sprintf("%s, and its removed build-script run of %s read %s: Cargo reruns the script in this environment, so the binary you have was built with the old value",
		head, fmtTime(firstRun.RunNS), strings.Join(first, ", "))
	f.Evidence = append(f.Evidence, firstEv...)
	return true
}

// linksItself reports whether s is a compile whose own output is a linked root (a binary, example or
// test), not a library: it is what takes archive members at link time.
func linksItself(s *graph.Step) bool {
	if s.Kind != graph.Compile {
		return false
	}
	for _, r := range s.Roots {
		if r.Step == s && r.Kind != "lib" {
			return true
		}
	}
	return false
}

// linkedNow reports whether a removed build-script run of dependency name left duplicated archive
// members whose linked copies were all written from the sources as they are now (graph.RemovedRun.LinkedNow):
// the removed run's own inputs differing from the files does not make the binary stale.
func linkedNow(u *graph.Records, name string) bool {
	for _, r := range u.Removed().RemovedDepRuns {
		if r.Dep == name && r.LinkedNow {
			return true
		}
	}
	return false
}

// cargoManifestPending: the code of a path package's unit reads package metadata (env! of
// CARGO_PKG_DESCRIPTION, …: rustc's env-deps in the unit's dep-info), and the package's Cargo.toml now
// gives another value: Cargo rebuilds the unit on the next build, and the binary you have carries the
// value it was compiled with.
func cargoManifestPending(g *graph.Graph, s *graph.Step, build string) []Finding {
	u := s.Records()
	var out []Finding
	for _, name := range sortedKeys(boolKeys(u.CompiledEnv)) {
		then := u.CompiledEnv[name]
		now, ok := u.ManifestEnv[name]
		if !ok || now == then {
			continue
		}
		mf := u.Manifest
		f := pendingFinding(g, s, fmt.Sprintf("%s now gives %s = %q, but %s (%s) was compiled with %q, which its code reads (env!): Cargo rebuilds it on the next build, so the binary you have carries the old value",
			display(g, mf.Path), name, now, s.Package, s.Label, then), mf.Path, build,
			Evidence{Kind: "input", Path: mf.Path, MTimeNS: mf.MTimeNS, Size: mf.Size, Detail: "the package manifest; Cargo hands its [package] fields to rustc as CARGO_PKG_* variables"},
			Evidence{Kind: "record", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Detail: fmt.Sprintf("rustc's dep-info records env-dep %s=%q", name, then)})
		out = append(out, f)
	}
	return out
}

func boolKeys(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// configPending (part of pending-rebuild): a configuration file the build system reads on every build
// changed after it last built the step's program (graph.Records.ConfigChanges). Settings that decide
// how the step is built differ from what that build read (a profile's opt-level or lto, a feature, a
// flag): the next build redoes the step, an error. Only settings not known to decide, or nothing kept
// to compare with: whether it does is unknown, a warning.
func configPending(g *graph.Graph, s *graph.Step, build string) []Finding {
	var out []Finding
	for _, c := range s.Records().ConfigChanges {
		when := fmt.Sprintf("%s changed at %s, after the last build of %s at %s", display(g, c.Path), fmtTime(c.MTimeNS), unitName(s), fmtTime(c.BuiltNS))
		f := Finding{
			Rule: "pending-rebuild", Severity: Error, System: foreignSystem(s),
			Subjects: []string{c.Path, unitDir(s)},
			Roots:    rootPaths(s),
			Evidence: []Evidence{{Kind: "input", Path: c.Path, MTimeNS: c.MTimeNS, How: "configuration",
				Detail: s.Words().Tool + " reads it on every build"}},
			Fix: build,
		}
		switch {
		case len(c.Deciding) > 0:
			f.Message = fmt.Sprintf("%s, in settings that decide how it is built (%s); %s reads them on every build, so the next build redoes %s: the binary you have is old",
				when, listSome(c.Deciding), s.Words().Tool, unitName(s))
			f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: c.Path, How: "configuration-baseline",
				Detail: "differs from the settings it held at that build in " + strings.Join(c.Deciding, ", ")})
		case c.Unknown:
			f.Severity = Warning
			f.Message = fmt.Sprintf("%s; %s reads it on every build, and whether what changed decides how %s is built is unknown: its settings at that build were not kept (stalecheck had not checked the build since)",
				when, s.Words().Tool, unitName(s))
		default:
			f.Severity = Warning
			f.Message = fmt.Sprintf("%s, in settings not known to decide how it is built (%s); %s reads it on every build, and whether the next build redoes %s is unknown (a build that redoes nothing leaves no trace on disk, so this is said until %s is built again)",
				when, listSome(c.Other), s.Words().Tool, unitName(s), unitName(s))
			f.Evidence = append(f.Evidence, Evidence{Kind: "record", Path: c.Path, How: "configuration-baseline",
				Detail: "differs from the settings it held at that build in " + strings.Join(c.Other, ", ")})
		}
		f.Evidence = append(f.Evidence, Evidence{Kind: "reference", Path: s.Reference.Path, MTimeNS: c.BuiltNS,
			Detail: "the last build of the program (its uplifted dep-info, which every build of it rewrites)"})
		out = append(out, f)
	}
	return out
}

// listSome names up to four items, then how many more.
func listSome(items []string) string {
	if len(items) <= 4 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:4], ", ") + fmt.Sprintf(" and %d more", len(items)-4)
}
