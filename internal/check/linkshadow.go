package check

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// linkedLibraryShadowed: for a `rustc-link-lib` name of a build-script run that the root reaches, the
// file GNU ld takes (graph.LinkerPick over the root's search order, searchOrder) is not the library
// that run's last run built, and no reached run's last run wrote it: a shared object left in OUT_DIR by
// an earlier configuration, which ld prefers over the new .a in the same folder (cctbx_project #1148),
// or a copy in a folder outside every OUT_DIR (a system or prefix folder another crate's pkg-config
// probe printed, libz-sys #49) that comes first. An error when the binary's own bytes show it took
// that file (a shared object named by its DT_NEEDED entries); a warning when they cannot tell.
func linkedLibraryShadowed(g *graph.Graph) []Finding {
	var out []Finding
	for _, r := range g.Roots {
		if r.Step == nil || r.Kind == "lib" {
			continue
		}
		reach := r.Reach()
		seen := map[string]bool{}
		// A failed unit's deps are not walked (its chain is the one Cargo was building), so the failed
		// runs that reach the root are found by their roots.
		for _, s := range g.Steps {
			if s.Kind == graph.ScriptRun && s.Failed != "" && slices.Contains(s.Roots, r) {
				out = append(out, leftoverAfterFailedRun(g, r, s, searchOrder(r), reach, seen)...)
			}
		}
		if len(g.LibFiles) == 0 {
			continue
		}
		written := map[string]bool{} // files the last run of a reached run wrote
		for _, s := range reach {
			if s.Kind != graph.ScriptRun {
				continue
			}
			for _, o := range s.Outputs {
				if o.MTimeNS >= s.Reference.MTimeNS || s.Script().Written[o.Path] != "" {
					written[o.Path] = true
				}
			}
		}
		order := searchOrder(r)
		for _, s := range reach {
			if s.Kind != graph.ScriptRun || s.Failed != "" {
				continue
			}
			for _, l := range s.Script().Links {
				built := builtLibrary(g, s, l.Name, written)
				if built == "" || seen[l.Name] {
					continue
				}
				pick := graph.LinkerPick(order, l.Name, l.Kind, g.LibFiles)
				if pick == "" || pick == built || written[pick] {
					continue // ld takes what a last run built (several such copies: link-search-shadowing)
				}
				seen[l.Name] = true
				out = append(out, shadowFinding(g, r, s, l, pick, built, order, reach))
			}
		}
	}
	return out
}

// leftoverAfterFailedRun: the last run of s failed, so its output names no rustc-link-lib (the script
// stopped before printing it) and the search order cannot be rebuilt from it; the binary is still the
// one linked after the run before. When its DT_NEEDED entries name a lib<name>.so in s's OUT_DIR that is
// older than the lib<name>.a beside it, and the binary is newer than that .a, the binary was linked after
// the script last made the archive and still loads the older shared object: the leftover ld preferred.
func leftoverAfterFailedRun(g *graph.Graph, r *graph.Root, s *graph.Step, order []string, reach []*graph.Step, seen map[string]bool) []Finding {
	if r.Needed == nil {
		return nil
	}
	var out []Finding
	for _, o := range s.Outputs {
		b := filepath.Base(o.Path)
		if !strings.HasPrefix(b, "lib") || !strings.HasSuffix(b, ".so") || !slices.Contains(r.Needed, b) {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(b, "lib"), ".so")
		a := filepath.Join(filepath.Dir(o.Path), "lib"+name+".a")
		i := slices.IndexFunc(s.Outputs, func(f graph.FileInfo) bool { return f.Path == a })
		if i < 0 || seen[name] || s.Outputs[i].MTimeNS <= o.MTimeNS || r.File.MTimeNS < s.Outputs[i].MTimeNS {
			continue
		}
		seen[name] = true
		out = append(out, shadowFinding(g, r, s, graph.Link{Name: name}, o.Path, a, order, reach))
	}
	return out
}

// builtLibrary is the lib<name>.a or .so that s's last run wrote: in its OUT_DIR, else in a folder it
// printed for link search (a prefix outside target/ it installs into), modified since the run started
// ("" when none).
func builtLibrary(g *graph.Graph, s *graph.Step, name string, written map[string]bool) string {
	lib := func(p string) bool { b := filepath.Base(p); return b == "lib"+name+".a" || b == "lib"+name+".so" }
	for _, o := range s.Outputs {
		if lib(o.Path) && written[o.Path] {
			return o.Path
		}
	}
	for _, d := range s.Script().LinkSearch {
		for _, ext := range []string{".a", ".so"} {
			p := filepath.Join(d, "lib"+name+ext)
			if f, ok := g.LibFiles[p]; ok && f.MTimeNS >= s.Reference.MTimeNS {
				return p
			}
		}
	}
	return ""
}

func shadowFinding(g *graph.Graph, r *graph.Root, s *graph.Step, l graph.Link, pick, built string, order []string, reach []*graph.Step) Finding {
	pf, bf := g.LibFiles[pick], g.LibFiles[built]
	for _, o := range s.Outputs {
		if o.Path == built {
			bf = o
		}
		if o.Path == pick {
			pf = o
		}
	}
	dir := filepath.Dir(pick)
	var why string
	switch {
	case dir == filepath.Dir(built):
		why = fmt.Sprintf("in one folder ld takes lib%s.so before lib%s.a for -l%s (not a static= link)", l.Name, l.Name, l.Name)
	default:
		by := "a build script"
		for _, x := range reach {
			if x.Kind == graph.ScriptRun && slices.Contains(x.Script().LinkSearch, dir) {
				by = "the build script of " + x.Package
				break
			}
		}
		why = fmt.Sprintf("%s, printed as a link-search folder by %s, comes before %s in the search order", display(g, dir), by, display(g, filepath.Dir(built)))
	}
	kind := "a leftover from an earlier run (not rewritten by the last run of the build script, which started at " + fmtTime(s.Reference.MTimeNS) + ")"
	if !strings.HasPrefix(pick, g.TargetDir+string(filepath.Separator)) && !strings.HasPrefix(pick, g.BuildDir+string(filepath.Separator)) {
		kind = "outside the target folder"
	}
	sev, proof := Warning, "the binary's bytes were not read (--no-native), so which file it holds is not proven"
	if strings.HasSuffix(pick, ".so") && r.Needed != nil {
		if slices.Contains(r.Needed, filepath.Base(pick)) {
			sev, proof = Error, fmt.Sprintf("the binary's DT_NEEDED entries name %s, so it loads that shared object, not the code the last run built", filepath.Base(pick))
		} else {
			proof = fmt.Sprintf("the binary's DT_NEEDED entries (%s) do not name %s: it may hold the new library after all", strings.Join(r.Needed, ", "), filepath.Base(pick))
		}
	} else if strings.HasSuffix(pick, ".a") {
		proof = "a static copy's content is not compared by this rule (stalecheck which BINARY tells the copies apart)"
	}
	msg := fmt.Sprintf("for -l%s, ld takes %s (modified %s), %s, not %s, which the last run of the build script of %s built at %s: %s; %s",
		l.Name, display(g, pick), fmtTime(pf.MTimeNS), kind, display(g, built), s.Package, fmtTime(bf.MTimeNS), why, proof)
	disp := make([]string, len(order))
	for i, d := range order {
		disp[i] = display(g, d)
	}
	f := Finding{
		Rule: "linked-library-shadowed", Severity: sev, Message: msg,
		Subjects: []string{pick, built},
		Roots:    []string{r.File.Path},
		Evidence: []Evidence{
			{Kind: "copy", Path: pick, MTimeNS: pf.MTimeNS, Size: pf.Size, Detail: "the file ld takes; search order: " + strings.Join(disp, ", ")},
			{Kind: "artifact", Path: built, MTimeNS: bf.MTimeNS, Size: bf.Size, Detail: "built by the last run of the build script of " + s.Package},
			{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS, Detail: "start of the build script's last successful run"},
			{Kind: "root", Path: r.File.Path, MTimeNS: r.File.MTimeNS, Size: r.File.Size, Detail: neededDetail(r)},
		},
		// Removing the file alone leaves the binary as it is (Cargo does not know it): the script reruns.
		Fix: fmt.Sprintf("rm %s && touch %s && %s (or print cargo:rustc-link-lib=static=%s so ld takes the archive)",
			display(g, pick), display(g, s.Script().ScriptSource), rebuildCmd(r.Step), l.Name),
	}
	if kind == "outside the target folder" {
		f.Fix = fmt.Sprintf("make the build script of %s print its own folder first (or link static=%s), or remove %s from the search path, then %s",
			s.Package, l.Name, display(g, dir), rebuildCmd(r.Step))
	}
	return f
}

// neededDetail is a root's DT_NEEDED entries for evidence: nil means its bytes were not read.
func neededDetail(r *graph.Root) string {
	switch {
	case r.Needed == nil:
		return "DT_NEEDED not read (--no-native)"
	case len(r.Needed) == 0:
		return "DT_NEEDED: none (no shared library loaded)"
	}
	return "DT_NEEDED: " + strings.Join(r.Needed, ", ")
}
