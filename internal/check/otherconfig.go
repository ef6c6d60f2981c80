package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// otherConfigLibrary: a live build script links a library from outside its OUT_DIR that holds files
// its last run did not write (older than the run's start) and that were written during the run of
// another configuration of the same script (the file's mtime lies within that run, from `output`'s
// mtime to `root-output`'s): the library itself, or an object it archives, when the script drives a
// build there (make in a folder of the package) that found nothing to redo for them, as nothing it
// watches changed with the configuration. Every binary linked since the library was written holds what
// was built for the other configuration. Error when the script's source names a setting the two
// configurations differ in (CARGO_FEATURE_<NAME>, PROFILE, OPT_LEVEL, DEBUG, CARGO_ENCODED_RUSTFLAGS,
// TARGET) and the library itself predates the run: it passes the setting on, and the library did not get
// it; warning otherwise (a script that ignores the difference builds the same files; objects left from
// the other configuration in a library archived again may not read the setting).
func otherConfigLibrary(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range liveSteps(g, graph.ScriptRun) {
		for _, l := range s.Script().Links {
			if l.Path == "" || l.Path == s.Script().OutDir || withinDir(l.Path, s.Script().OutDir) || inBuildOutput(g, l.Path) {
				continue
			}
			lib, made := madeFrom(g, s, l.Path)
			if !lib.Exists {
				continue
			}
			type old struct {
				f graph.FileInfo
				w *graph.Step
			}
			var olds []old
			var diff []string
			for _, f := range append([]graph.FileInfo{lib}, made...) {
				if f.MTimeNS >= s.Reference.MTimeNS {
					continue // this configuration's run wrote it
				}
				w := runAt(g, s, f.MTimeNS)
				if w == nil {
					continue
				}
				if d := configDiff(w, s); len(d) > 0 {
					olds = append(olds, old{f, w})
					for _, x := range d {
						if !slices.Contains(diff, x) {
							diff = append(diff, x)
						}
					}
				}
			}
			if len(olds) == 0 {
				continue
			}
			var roots []string
			var rootEv []Evidence
			for _, r := range s.Roots {
				if r.File.MTimeNS > lib.MTimeNS && !slices.Contains(roots, r.File.Path) {
					roots = append(roots, r.File.Path)
					rootEv = append(rootEv, Evidence{Kind: "root", Path: r.File.Path, MTimeNS: r.File.MTimeNS, Size: r.File.Size,
						Detail: fmt.Sprintf("%s %s, linked after %s was written", r.Kind, display(g, r.File.Path), display(g, l.Path))})
				}
			}
			if len(roots) == 0 {
				continue // no binary linked this version of the library since
			}
			sort.Strings(roots)
			read := scriptReads(s, diff)
			libOld := olds[0].f.Path == lib.Path // the library itself, not only objects it archives
			sev, why := Warning, "its source names none of the settings that differ, so whether they should differ is not known"
			switch {
			case len(read) > 0 && libOld:
				sev, why = Error, "its source reads "+strings.Join(read, ", ")+", so it builds the library differently for this configuration"
			case len(read) > 0:
				// The library was archived again from objects some of which were not recompiled: whether
				// the setting reaches those objects' code is not known.
				why = "its source reads " + strings.Join(read, ", ") + ", but whether that setting reaches the code of the objects not recompiled is not known"
			}
			var names, older []string // older: the files besides the library itself
			ev := []Evidence{{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS,
				Detail: fmt.Sprintf("start of the last run of %s%s", unitName(s), inParens(configString(s)))}}
			for _, o := range olds {
				names = append(names, display(g, o.f.Path))
				if o.f.Path != lib.Path {
					older = append(older, display(g, o.f.Path))
				}
				ev = append(ev, Evidence{Kind: "artifact", Path: o.f.Path, MTimeNS: o.f.MTimeNS, Size: o.f.Size,
					Detail: fmt.Sprintf("written within the run of %s%s, from %s; not written since", unitName(o.w), inParens(configString(o.w)), fmtTime(o.w.Reference.MTimeNS))})
			}
			ev = append(ev, Evidence{Kind: "declared", Path: s.Script().ScriptSource, Detail: "the configurations differ in " + strings.Join(diff, ", ")})
			f := Finding{
				Rule: "other-config-library", Severity: sev,
				Message: fmt.Sprintf("%s, which the build script of %s links for %s, %s during its run for %s (%s), not by this configuration's run, which started later (%s): the build it drives found nothing to redo; %s",
					display(g, l.Path), s.Package, orThis(configString(s)), heldWords(libOld, names), configString(olds[0].w), unitName(olds[0].w), fmtTime(s.Reference.MTimeNS), why),
				Subjects: append([]string{l.Path, s.Script().RunDir}, names...),
				Roots:    roots,
				Evidence: append(ev, rootEv...),
				Fix: fmt.Sprintf("rm %s (or have %s build into OUT_DIR, whose path carries the configuration), then: %s",
					strings.Join(append([]string{display(g, l.Path)}, older...), " "), orScript(g, s), archiveRebuild(s)),
			}
			out = append(out, f)
		}
	}
	return out
}

// orThis names a configuration for people: "this configuration" when the step records none.
func orThis(config string) string {
	if config == "" {
		return "this configuration"
	}
	return config
}

// heldWords says what of the library was written by the other configuration's run: the library itself
// ("was written"), or files it holds ("holds a.o, b.o written").
func heldWords(libOld bool, names []string) string {
	if libOld && len(names) == 1 {
		return "was written"
	}
	return "holds " + strings.Join(names, ", ") + " written"
}

// madeFrom returns the library at lib as read (from the step of a build s drives that writes it, or
// from a run that wrote it) and the files of the steps it is made from that s drives too (the objects
// of an archive make wrote).
func madeFrom(g *graph.Graph, s *graph.Step, lib string) (graph.FileInfo, []graph.FileInfo) {
	var made []graph.FileInfo
	seen := map[*graph.Step]bool{}
	var walk func(d *graph.Step)
	walk = func(d *graph.Step) {
		if seen[d] || d.Driver != s {
			return
		}
		seen[d] = true
		if d.Reference.Path != lib && d.Reference.Exists {
			made = append(made, d.Reference)
		}
		for _, x := range d.Deps {
			walk(x)
		}
	}
	info := graph.FileInfo{Path: lib}
	for _, d := range s.Deps {
		if d.Reference.Path == lib {
			info = d.Reference
			walk(d)
		}
	}
	for _, w := range g.Steps {
		for _, f := range w.Script().WroteOutside {
			if !info.Exists && f.Path == lib && w.Package == s.Package {
				info = f
			}
		}
	}
	return info, made
}

// runAt returns another run of s's package whose last run was under way at mtime t (from its start,
// the Reference, to its end, Records.RunEndNS): a file with that mtime was written during it.
func runAt(g *graph.Graph, s *graph.Step, t int64) *graph.Step {
	for _, w := range g.Steps {
		if w == s || w.Kind != graph.ScriptRun || w.Package != s.Package || w.PackageRoot != s.PackageRoot || !w.Reference.Exists {
			continue
		}
		if end := w.Records().RunEndNS; end != 0 && t >= w.Reference.MTimeNS && t <= end {
			return w
		}
	}
	return nil
}

// configDiff names what a program of a's build (a build script) sees differently in b's configuration,
// as a's build system hands it the settings (graph.ConfigDiffer); nil when the system does not say.
func configDiff(a, b *graph.Step) []string {
	if d, ok := a.Origin.(graph.ConfigDiffer); ok {
		return d.ConfigDiff(a, b)
	}
	return nil
}

// scriptReads returns the names of vars that the script's source of s spells out.
func scriptReads(s *graph.Step, vars []string) []string {
	var out []string
	for _, v := range vars {
		if slices.Contains(s.Records().SourceNames, v) {
			out = append(out, v)
		}
	}
	return out
}
