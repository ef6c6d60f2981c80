package explain

import (
	"fmt"
	"io"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/report"
)

type printer struct {
	w   io.Writer
	g   *graph.Graph
	err error
}

// line prints one line; every string argument goes through report.Escape (paths may hold control
// characters).
func (p *printer) line(format string, args ...any) {
	if p.err != nil {
		return
	}
	p.err = report.Line(p.w, format, args...)
}

func (p *printer) rel(path string) string { return p.g.Display(path) }

func (p *printer) uses(us []RootUse) string {
	if len(us) == 0 {
		return "no current binary"
	}
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = fmt.Sprintf("%s (%s, %s)", p.rel(u.Path), u.Kind, u.Profile)
		if u.Profile == "" { // a root of Make, Ninja or Go: no profile folder
			parts[i] = fmt.Sprintf("%s (%s)", p.rel(u.Path), u.Kind)
		}
	}
	return strings.Join(parts, ", ")
}

// WritePackageText writes a package explanation for people.
func WritePackageText(w io.Writer, g *graph.Graph, r *PackageReport) error {
	p := &printer{w: w, g: g}
	title := r.Name
	if r.Version != "" {
		title += "@" + r.Version
	}
	p.line("stalecheck explain %s: build folder %s", title, g.BuildDir)
	if len(r.Versions) > 1 && r.Version == "" {
		p.line("  %d versions on disk (%s); name one as %s@VERSION to see only it", len(r.Versions), strings.Join(r.Versions, ", "), r.Name)
	}
	p.line("")
	p.line("Where Cargo takes it from (records on disk):")
	if len(r.Sources) == 0 {
		p.line("  unknown: no unit records its package folder")
	}
	for _, s := range r.Sources {
		extra := ""
		if s.SourceID != "" {
			extra = ", Cargo.lock source " + s.SourceID
		}
		if s.Patch != "" {
			extra += ", named by " + s.Patch
		}
		p.line("  %s %s: %s%s", r.Name, orQ(s.Version), sourceDescr(s.Kind, s.Root), extra)
	}
	if r.MetadataErr != "" {
		p.line("  cargo metadata failed: %s", r.MetadataErr)
	}
	for _, m := range r.Metadata {
		p.line("  cargo metadata: %s %s: %s", m.Name, m.Version, m.Where())
	}
	for _, role := range r.Roles {
		p.line("")
		n := len(role.Variants)
		p.line("%s (%s): %d unit(s)", RoleWords(role.Target), role.Target, n)
		for i, v := range role.Variants {
			size := ""
			if v.Bytes > 0 {
				size = fmt.Sprintf(", %d bytes", v.Bytes)
			}
			p.line("  %s %s  %s, version %s, %s%s", letter(i), v.Unit, v.Profile, orQ(v.Version), p.rel(v.Dir), size)
			p.line("      used by %s", p.uses(v.UsedBy))
			if v.Failed != "" {
				p.line("      last build failed: %s", v.Failed)
			}
		}
		if n > 1 {
			if len(role.Differ) == 0 {
				p.line("  differ: nothing the fingerprints record (same configuration; different hashes come from inputs Cargo does not serialize)")
			} else {
				p.line("  differ:")
				for _, f := range role.Differ {
					vals := make([]string, len(f.Values))
					for i, x := range f.Values {
						vals[i] = letter(i) + " " + x
					}
					p.line("    %-18s %s", f.Name, strings.Join(vals, " | "))
					if f.Meaning != "" {
						p.line("    %-18s (%s)", "", f.Meaning)
					}
				}
			}
			same := make([]string, len(role.Same))
			for i, f := range role.Same {
				same[i] = f.Name + " " + f.Value
			}
			p.line("  same: %s", strings.Join(same, "; "))
		} else {
			for _, f := range role.Variants[0].Fields {
				p.line("    %-18s %s", f.Name, f.Value)
			}
		}
	}
	return p.err
}

// RoleWords names a role (a fingerprint file name such as run-build-script-build-script-build or
// lib-seed_sys) for people: "build-script run", "build-script compile", "lib", "bin gpu-prover".
func RoleWords(target string) string {
	switch {
	case strings.HasPrefix(target, "run-build-script-"):
		return "build-script run"
	case strings.HasPrefix(target, "build-script-"):
		return "build-script compile"
	case strings.HasPrefix(target, "lib-"):
		return "lib"
	}
	if kind, name, ok := strings.Cut(target, "-"); ok {
		return kind + " " + name
	}
	return target
}

func letter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("#%d", i+1)
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func sourceDescr(kind, root string) string {
	switch kind {
	case "path":
		return "path package at " + root
	case "registry":
		return "registry source at " + root
	case "directory":
		return "directory (vendored) source at " + root + ", replacing a registry"
	case "git":
		return "git checkout at " + root
	}
	return "source unknown, folder " + root
}

// WritePathText writes a path explanation for people.
func WritePathText(w io.Writer, g *graph.Graph, r *PathReport) error {
	p := &printer{w: w, g: g}
	if r.Exists {
		p.line("stalecheck explain %s: modified %s, %d bytes", r.Path, FmtTime(r.MTimeNS), r.Size)
	} else {
		p.line("stalecheck explain %s: no such file, but records of the build name it", r.Path)
	}
	if len(r.Steps) == 0 {
		p.line("  %s", r.Note)
		return p.err
	}
	rerun := 0
	for _, v := range r.Steps {
		if v.WillRerun {
			rerun++
		}
	}
	tools := map[string]bool{}
	for _, v := range r.Steps {
		tools[toolOf(v)] = true
	}
	if len(tools) == 1 && tools["Cargo"] {
		p.line("  %d step(s) compile or read it; Cargo will rerun %d of them on the next build of their configuration", len(r.Steps), rerun)
	} else {
		p.line("  %d step(s) compile or read it; the next build redoes %d of them", len(r.Steps), rerun)
	}
	for _, v := range r.Steps {
		p.line("")
		live := "used by " + p.uses(v.UsedBy)
		p.line("%s %s (%s; %s)", v.Kind, v.Unit, v.Config, live)
		var how []string
		for _, c := range v.Reads {
			how = append(how, c.How+": "+c.Detail)
		}
		p.line("  reads it:  %s", strings.Join(how, "; "))
		decl := "no"
		if v.Declared {
			decl = "yes, " + v.DeclaredBy
		} else if v.DeclaredBy != "" {
			decl = "no (" + v.DeclaredBy + ")"
		}
		p.line("  declared:  %s", decl)
		if v.LastRun != "" {
			p.line("  last run:  %s (%s)", FmtTime(v.LastRunNS), p.rel(v.LastRun))
		}
		tool := toolOf(v)
		verdict := "no: " + tool + " will not rerun it for this file"
		if v.WillRerun {
			verdict = "yes: " + tool + " reruns it on the next build of its configuration"
		}
		if v.System != "" {
			verdict = "no: the next " + v.System + " build does not redo it for this file"
			if v.WillRerun {
				verdict = "yes: the next " + v.System + " build redoes it"
			}
		}
		p.line("  rerun:     %s", verdict)
		if v.Rebuild != "" {
			p.line("  rebuild:   %s", v.Rebuild)
		}
		for _, rs := range v.Reasons {
			tag := string(rs.Code)
			if rs.Case != 0 {
				tag = fmt.Sprintf("%s, docs/cargo-target-dir.md §11.5 case %d", rs.Code, rs.Case)
			}
			p.line("  why (%s): %s", tag, rs.Message)
		}
	}
	return p.err
}

// toolOf names the build system of a verdict for people: "Cargo" unless the step is another system's.
func toolOf(v StepVerdict) string {
	if v.System == "" {
		return "Cargo"
	}
	if v.Tool != "" {
		return v.Tool
	}
	return v.System
}
