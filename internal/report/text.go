package report

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// TextOptions tune the text report.
type TextOptions struct {
	Color   bool // ANSI colours (only on a terminal, and never with NO_COLOR)
	Verbose bool // also list every root and the notes
}

// WriteText writes findings for people, grouped by the roots they affect: findings that reach the
// same set of binaries sit under one heading; findings with no root come last.
func WriteText(w io.Writer, g *graph.Graph, fs []check.Finding, opt TextOptions) error {
	p := &printer{w: w, g: g, color: opt.Color, verbose: opt.Verbose}
	others := otherBuilds(g)
	if g.System != "" && g.System != unit.System && len(others) == 0 {
		p.line("stalecheck: %s build in %s", g.System, orNone(g.Workspace))
	} else if g.System == "" || g.System == unit.System || len(others) == 0 {
		p.line("stalecheck: Cargo workspace %s", orNone(g.Workspace))
		if g.BuildDir != g.TargetDir {
			p.line("  target folder %s, build folder %s", g.TargetDir, g.BuildDir)
		} else {
			p.line("  target folder %s (profiles: %s)", g.TargetDir, strings.Join(g.ProfileDirs, ", "))
		}
	} else {
		p.line("stalecheck: %s", others[0])
		others = others[1:]
		if _, ok := g.Origins[unit.System]; ok {
			p.line("  also read: Cargo workspace %s", orNone(g.Workspace))
		}
	}
	for _, o := range others {
		p.line("  also read: %s", o)
	}
	if opt.Verbose {
		for _, r := range g.Roots {
			if u := unitLabel(r); u != "" || r.Step == nil {
				p.line("  root %s (%s, unit %s, tied by %s)", p.rel(r.File.Path), r.Kind, u, r.TiedBy)
			} else {
				p.line("  root %s (%s, %s step %s, tied by %s)", p.rel(r.File.Path), r.Kind, r.Step.System, r.Step.Label, r.TiedBy)
			}
		}
		for _, n := range g.Notes {
			p.line("  note: %s", n)
		}
	}
	groups := map[string][]check.Finding{}
	var keys []string
	for _, f := range fs {
		k := strings.Join(f.Roots, "\x00")
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], f)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i] == "" || keys[j] == "" {
			return keys[j] == ""
		}
		return false
	})
	for _, k := range keys {
		p.line("")
		if k == "" {
			p.raw(p.bold("Not tied to a current binary:"))
		} else {
			var names []string
			for _, r := range strings.Split(k, "\x00") {
				names = append(names, p.rootLabel(r))
			}
			p.raw(p.bold(strings.Join(names, ", ")))
		}
		for _, f := range groups[k] {
			p.finding(f)
		}
	}
	sum := map[check.Severity]int{}
	grouped := false
	for _, f := range fs {
		sum[f.Severity] += f.Count()
		grouped = grouped || len(f.More) > 0
	}
	p.line("")
	if len(fs) == 0 {
		tied := 0
		for _, r := range g.Roots {
			if r.Step != nil {
				tied++
			}
		}
		if tied == 0 && g.System != "" && g.System != unit.System {
			what := "show no built target tied to a rule or edge"
			if len(g.Steps) == 0 {
				what = "declare no build step"
			}
			if len(g.Notes) > 0 {
				what += " (see the notes with -v)"
			}
			where := g.BuildDir
			if where == "" {
				where = g.Workspace // a system with no build folder of its own (Go)
			}
			p.line("No findings, but nothing to judge either: the records in %s %s.", where, what)
		} else if tied == 0 {
			// Nothing to vouch for: say so rather than call an empty folder fresh.
			p.line("No findings, but no binary to judge either: %s holds no uplifted binary or library tied to a build record (the first build failed before linking, or only cargo check ran).", g.TargetDir)
		} else {
			p.line("No findings: %s built from the sources on disk, as far as the records show.", rootsScope(g, tied))
		}
	} else {
		p.line("%d error(s), %d warning(s), %d info", sum[check.Error], sum[check.Warning], sum[check.Info])
		if grouped {
			p.line("(findings of one rule and one fix are shown once with a count; --all lists each)")
		}
		if !opt.Verbose {
			p.line("(-v shows each finding's evidence: the files, mtimes, digests and records it rests on)")
		}
	}
	return p.err
}

type printer struct {
	w       io.Writer
	g       *graph.Graph
	color   bool
	verbose bool // each finding's evidence too
	err     error
}

func (p *printer) line(format string, args ...any) {
	if p.err != nil {
		return
	}
	p.err = Line(p.w, format, args...)
}

// raw prints one line as it is: only for text built from our own codes and Escape'd strings (bold, sev).
func (p *printer) raw(s string) {
	if p.err != nil {
		return
	}
	_, p.err = io.WriteString(p.w, s+"\n")
}

// bold escapes s and, with colour on, wraps it in the ANSI bold codes, which stay raw: print the result
// with raw, never as an argument of line (which would escape the codes again).
func (p *printer) bold(s string) string {
	if !p.color {
		return Escape(s)
	}
	return "\x1b[1m" + Escape(s) + "\x1b[0m"
}

func (p *printer) sev(s check.Severity) string {
	label := s.String()
	if !p.color {
		return label
	}
	code := map[check.Severity]string{check.Error: "31", check.Warning: "33", check.Info: "36"}[s]
	return "\x1b[" + code + "m" + label + "\x1b[0m"
}

func (p *printer) rel(path string) string { return p.g.Display(path) }

func (p *printer) rootLabel(path string) string {
	for _, r := range p.g.Roots {
		if r.File.Path == path {
			return fmt.Sprintf("%s (%s, built %s)", p.rel(path), r.Kind, Timestamp(r.File.MTimeNS))
		}
	}
	return p.rel(path)
}

// otherBuilds describes the builds of systems other than Cargo in g, g.System's first, then by name:
// "ninja build folder /b".
func otherBuilds(g *graph.Graph) []string {
	var names []string
	for k := range g.Origins {
		if k != unit.System && k != g.System {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	if g.System != unit.System {
		names = append([]string{g.System}, names...)
	}
	var out []string
	for _, n := range names {
		if f, ok := g.Origins[n].(graph.BuildFoldered); ok {
			out = append(out, n+" build folder "+f.BuildFolder())
		} else if _, ok := g.Origins[n]; ok {
			out = append(out, n+" build")
		}
	}
	return out
}

func (p *printer) finding(f check.Finding) {
	if p.err != nil {
		return
	}
	// rustc's shape: the message on the severity's line, where, then the fix; the evidence with -v.
	// Severity and colour codes are ours; everything else goes through Escape.
	sys := ""
	if f.System != "" {
		sys = " (" + Escape(f.System) + ")"
	}
	_, p.err = fmt.Fprintf(p.w, "  %s[%s]%s: %s\n", p.sev(f.Severity), Escape(f.Rule), sys, Escape(f.Message))
	if len(f.Subjects) > 0 {
		p.line("    --> %s", p.rel(f.Subjects[0]))
	}
	if len(f.More) > 0 {
		where := ""
		if dir := f.CommonFolder(); dir != "" {
			where = " in " + p.rel(dir) + string(filepath.Separator)
		}
		p.line("        … and %s more of the same cause%s (--all lists them)", Thousands(len(f.More)), where)
	}
	for _, e := range f.Evidence {
		if !p.verbose {
			break
		}
		var parts []string
		if e.Path != "" {
			parts = append(parts, p.rel(e.Path))
		}
		if e.MTimeNS != 0 {
			parts = append(parts, "mtime "+Timestamp(e.MTimeNS))
		}
		if e.Size != 0 {
			parts = append(parts, fmt.Sprintf("%d bytes", e.Size))
		}
		if e.How != "" {
			parts = append(parts, "known by: "+e.How)
		}
		if e.Detail != "" {
			parts = append(parts, e.Detail)
		}
		p.line("    %-9s %s", e.Kind, strings.Join(parts, "; "))
	}
	if f.Fix != "" {
		p.line("    fix: %s", f.Fix)
	}
}

// TimeLayout is how every time stalecheck prints for people is written: RFC 3339 in UTC with all nine
// digits of the nanoseconds (2026-11-30T08:51:36.947357198Z), so times of one report line up and compare
// as text.
const TimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// Timestamp formats nanoseconds since the Unix epoch with TimeLayout, in UTC.
func Timestamp(ns int64) string { return FormatTime(time.Unix(0, ns)) }

// FormatTime formats t with TimeLayout, in UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Thousands writes n with a comma between each group of three digits: 19,999.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none: reading a bare target folder)"
	}
	return s
}

// rootsScope says which binaries a clean verdict covers: those in the target folder, or, when some
// lie outside it (a Go or Make program linking a Cargo library), how many were judged.
func rootsScope(g *graph.Graph, tied int) string {
	td := filepath.Clean(g.TargetDir) + string(filepath.Separator)
	for _, r := range g.Roots {
		if r.Step != nil && (g.TargetDir == "" || !strings.HasPrefix(r.File.Path, td)) {
			if tied == 1 {
				return "the one binary judged (-v names it) is"
			}
			return fmt.Sprintf("each of the %d binaries judged (-v names them) is", tied)
		}
	}
	return "every binary in " + g.TargetDir + " is"
}
