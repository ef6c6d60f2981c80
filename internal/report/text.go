package report

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

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
	p := &printer{w: w, g: g, color: opt.Color}
	p.line("stalecheck: Cargo workspace %s", orNone(g.Workspace))
	if g.BuildDir != g.TargetDir {
		p.line("  target folder %s, build folder %s", g.TargetDir, g.BuildDir)
	} else {
		p.line("  target folder %s (profiles: %s)", g.TargetDir, strings.Join(g.ProfileDirs, ", "))
	}
	if opt.Verbose {
		for _, r := range g.Roots {
			p.line("  root %s (%s, unit %s, tied by %s)", p.rel(r.File.Path), r.Kind, unitLabel(r), r.TiedBy)
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
			p.line("%s", p.bold("Not tied to a current binary:"))
		} else {
			var names []string
			for _, r := range strings.Split(k, "\x00") {
				names = append(names, p.rootLabel(r))
			}
			p.line("%s", p.bold(strings.Join(names, ", ")))
		}
		for _, f := range groups[k] {
			p.finding(f)
		}
	}
	sum := map[check.Severity]int{}
	for _, f := range fs {
		sum[f.Severity]++
	}
	p.line("")
	if len(fs) == 0 {
		p.line("No findings: every binary in %s is built from the sources on disk, as far as the records show.", g.TargetDir)
	} else {
		p.line("%d error(s), %d warning(s), %d info", sum[check.Error], sum[check.Warning], sum[check.Info])
	}
	return p.err
}

type printer struct {
	w     io.Writer
	g     *graph.Graph
	color bool
	err   error
}

func (p *printer) line(format string, args ...any) {
	if p.err != nil {
		return
	}
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = Escape(s)
		}
	}
	_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *printer) bold(s string) string {
	if !p.color {
		return s
	}
	return "\x1b[1m" + Escape(s) + "\x1b[0m"
}

func (p *printer) sev(s check.Severity) string {
	label := fmt.Sprintf("%-7s", s.String())
	if !p.color {
		return label
	}
	code := map[check.Severity]string{check.Error: "31", check.Warning: "33", check.Info: "36"}[s]
	return "\x1b[" + code + "m" + label + "\x1b[0m"
}

func (p *printer) rel(path string) string {
	for _, base := range []string{p.g.Workspace, filepath.Dir(p.g.BuildDir)} {
		if base == "" {
			continue
		}
		if r, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return path
}

func (p *printer) rootLabel(path string) string {
	for _, r := range p.g.Roots {
		if r.File.Path == path {
			return fmt.Sprintf("%s (%s, built %s)", p.rel(path), r.Kind, time.Unix(0, r.File.MTimeNS).UTC().Format(time.RFC3339))
		}
	}
	return p.rel(path)
}

func (p *printer) finding(f check.Finding) {
	if p.err != nil {
		return
	}
	// Severity and colour codes are ours; everything else goes through Escape.
	_, p.err = fmt.Fprintf(p.w, "  %s %s\n", p.sev(f.Severity), Escape(f.Rule))
	p.line("    %s", f.Message)
	for _, e := range f.Evidence {
		var parts []string
		if e.Path != "" {
			parts = append(parts, p.rel(e.Path))
		}
		if e.MTimeNS != 0 {
			parts = append(parts, "mtime "+time.Unix(0, e.MTimeNS).UTC().Format("2006-01-02T15:04:05.000000000Z"))
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

func orNone(s string) string {
	if s == "" {
		return "(none: reading a bare target folder)"
	}
	return s
}
