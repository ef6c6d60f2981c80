// Package check runs stalecheck's rules over a provenance graph. Each rule is a function from the
// graph to findings; rule names and severities are part of the public interface (DESIGN.md table,
// README "Rules"). A finding carries the evidence that makes it a claim about the user's build:
// paths, mtimes (nanoseconds since the epoch), how each input is known, and the command that fixes it.
package check

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// Severity orders findings: Error means you are running code that is not what is on disk; Warning
// means the build is set up to bite you; Info is housekeeping.
type Severity int

const (
	Info Severity = iota + 1
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	case Info:
		return "info"
	}
	return "none"
}

// ParseSeverity reads "error", "warning", "info" or "none" (none = higher than any severity).
func ParseSeverity(s string) (Severity, error) {
	switch s {
	case "error":
		return Error, nil
	case "warning":
		return Warning, nil
	case "info":
		return Info, nil
	case "none":
		return Error + 1, nil
	}
	return 0, fmt.Errorf("unknown severity %q: want error, warning, info or none", s)
}

// Evidence is one fact behind a finding.
type Evidence struct {
	// Kind names the fact: "input", "reference", "declared", "artifact", "copy", "root", "record",
	// "consumer", "failed".
	Kind    string
	Path    string
	MTimeNS int64 // 0 when not relevant
	Size    int64 // bytes; 0 when not relevant
	// How says how the input is known (graph.How values joined by ", ").
	How    string
	Detail string
}

// Finding is one rule's claim about the build.
type Finding struct {
	Rule     string
	Severity Severity
	Message  string
	Subjects []string // the paths the finding is about, most important first
	Roots    []string // the roots (binaries) it affects; empty when none
	Evidence []Evidence
	Fix      string
	// System names the build system of the finding's step where it is not Cargo ("make", "ninja",
	// "go"); "" for Cargo's findings.
	System string
	// Change is the file the user changes to settle the finding (a source, a build script, a
	// manifest, a makefile): never a build output; "" when none is known (setChange).
	Change string
	// More holds, once Group merged further findings of the same rule and cause into this one, the
	// first subject of each of them, in report order; nil when nothing was merged.
	More []string
}

// Rule is one named check.
type Rule struct {
	Name string
	// Severity is the rule's usual severity (untracked-input-changed drops to warning on weak clues).
	Severity Severity
	Run      func(g *graph.Graph) []Finding
}

// Rules lists every rule this package runs, in report order.
var Rules = []Rule{
	{"untracked-input-changed", Error, untrackedInputChanged},
	{"pending-rebuild", Error, pendingRebuild},
	{"untracked-env-changed", Error, untrackedEnvChanged},
	{"binary-older-than-input", Error, binaryOlderThanInput},
	{"changed-with-older-mtime", Error, changedWithOlderMtime},
	{"linked-copy-not-newest", Error, linkedCopyNotNewest},
	{"edited-copy-not-built", Error, editedCopyNotBuilt},
	{"duplicate-native-artifact", Warning, duplicateNativeArtifact},
	{"rerun-scan-disabled", Warning, rerunScanDisabled},
	{"missing-depfile", Warning, missingDepfile},
	{"archive-member-without-rule", Warning, archiveMemberWithoutRule},
	{"path-lookup-changed", Warning, pathLookupChanged},
	{"duplicate-archive-member", Error, duplicateArchiveMember},
	{"output-outside-out-dir", Warning, outputOutsideOutDir},
	{"link-search-shadowing", Warning, linkSearchShadowing},
	{"linked-library-shadowed", Error, linkedLibraryShadowed},
	{"unkeyed-output", Warning, unkeyedOutput},
	{"other-config-library", Error, otherConfigLibrary},
	{"built-in-other-tree", Error, builtInOtherTree},
	{"out-dir-leftover", Warning, outDirLeftover},
	{"last-build-failed", Warning, lastBuildFailed},
	{"unreadable-record", Warning, unreadableRecord},
	{"orphaned-build-dir", Info, orphanedBuildDir},
}

// Options select rules.
type Options struct {
	// Disable names rules not to run.
	Disable map[string]bool
}

// Run runs every enabled rule and returns the findings, most severe first, then by rule order and
// first subject.
func Run(g *graph.Graph, opt Options) []Finding {
	var out []Finding
	order := map[string]int{}
	for i, r := range Rules {
		order[r.Name] = i
		if opt.Disable[r.Name] {
			continue
		}
		out = append(out, r.Run(g)...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if order[a.Rule] != order[b.Rule] {
			return order[a.Rule] < order[b.Rule]
		}
		return first(a.Subjects) < first(b.Subjects)
	})
	setChange(g, out)
	return out
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// fmtTime formats nanoseconds since the epoch for messages: RFC 3339 in UTC with all nine digits
// (Cargo compares nanoseconds, so two times a few ns apart must print apart).
func fmtTime(ns int64) string {
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
}

// display shortens a path for a sentence: relative to the workspace or the build folder when inside.
func display(g *graph.Graph, p string) string { return g.Display(p) }

func rootPaths(s *graph.Step) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range s.Roots {
		if !seen[r.File.Path] {
			seen[r.File.Path] = true
			out = append(out, r.File.Path)
		}
	}
	sort.Strings(out)
	return out
}

// chainWords names how a root reaches a step: Cargo's recorded dependency edges, or the steps that make
// each other's inputs.
func chainWords(s *graph.Step) string {
	if s.Decides() == graph.ByRecord {
		return "the fingerprint deps chain"
	}
	return "the steps that make its inputs"
}

func rootEvidence(g *graph.Graph, s *graph.Step) []Evidence {
	var out []Evidence
	for _, p := range rootPaths(s) {
		for _, r := range s.Roots {
			if r.File.Path == p {
				out = append(out, Evidence{Kind: "root", Path: p, MTimeNS: r.File.MTimeNS, Size: r.File.Size,
					Detail: fmt.Sprintf("%s %s reaches %s through %s", r.Kind, display(g, p), s.Name, chainWords(s))})
				break
			}
		}
	}
	return out
}

func howString(in *graph.Input) string {
	seen := map[graph.How]bool{}
	var parts []string
	for _, h := range in.How {
		if !seen[h] {
			seen[h] = true
			parts = append(parts, string(h))
		}
	}
	return strings.Join(parts, ", ")
}

func configString(s *graph.Step) string { return s.Config.String() }

func featureString(r *graph.Records) string {
	if r.FeaturesUnknown {
		return "features unknown: its record could not be read"
	}
	f := r.Features
	q := make([]string, len(f))
	for i, x := range f {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// unitName names a step for people: its Name (a Cargo unit's "<package>-<hash>"), else its Label.
func unitName(s *graph.Step) string {
	if s.Name != "" {
		return s.Name
	}
	return s.Label
}

// liveSteps returns the live steps of a kind that did not fail on their last attempt.
func liveSteps(g *graph.Graph, kind graph.StepKind) []*graph.Step {
	var out []*graph.Step
	for _, s := range g.Steps {
		if s.Kind == kind && s.Live() && s.Failed == "" && s.Reference.Exists {
			out = append(out, s)
		}
	}
	return out
}

// inParens is " (s)", or "" for an empty s.
func inParens(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// prefixed is p+s, or "" for an empty s.
func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// exampleBuild is the build of the first live step's configuration among steps (else the first's):
// what rebuilding "the configuration you run" looks like when several configurations are involved.
func exampleBuild(steps []*graph.Step) string {
	for _, s := range steps {
		if s.Live() {
			return rebuildCmd(s)
		}
	}
	return rebuildCmd(steps[0])
}
