package graph

import (
	"path/filepath"
	"slices"
	"strings"
)

// A driven build is a build folder whose build system the user never runs directly: a step of
// another build runs it (a Cargo build script that runs `make -C csrc` in a folder of its package and
// links the archive make writes there). Its records (depfiles, prerequisites, command lines, archive
// members) are the only account of what went into the library, but its verdict words are not the
// user's: the nested system redoes a step only when the driver runs, and the driver runs only when
// its own build system sees a reason. AttachDriven joins the two graphs so that rules judge the nested
// steps with both in mind.

// WatchedBy says what makes the step's build system redo s when p changes: its Origin's answer when
// it is a Watcher, else the WatchedBy of a watched input at p; "" when nothing does.
func (s *Step) WatchedBy(p string) string {
	if w, ok := s.Origin.(Watcher); ok {
		return w.WatchedBy(s, p)
	}
	for _, in := range s.Inputs {
		if in.Watched && in.File.Path == p {
			if in.WatchedBy != "" {
				return in.WatchedBy
			}
			return "watched input"
		}
	}
	return ""
}

// AttachDriven finds the steps of g that drive the build read into nested: a step of kind ScriptRun
// whose package folder holds nested's build folder and that links (Script.Links) a file a step of nested
// writes. Every step of nested gets the newest such driver (the last to run the nested build) as its
// Driver; each linked producer becomes a dependency of every driver that links it, so the driver's
// roots reach the nested steps; an input the nested system watches stays watched only when the
// driver watches it as well; the nested roots a driver links stop being roots of their own (the
// user's roots are the driver's); and a driver's inputs that are only package-folder candidates
// (native files in its package that no record ties to it) and that a nested step records are dropped
// from the driver, as the nested step now accounts for them with its system's records, and so are
// its undeclared inputs that a nested step writes (an object a declared Makefile names). dir is the
// nested build folder. It returns the drivers, none when nothing of g links nested's outputs (nested
// is then not a driven build of g and is left untouched).
func AttachDriven(g, nested *Graph, dir string) []*Step {
	prod := map[string]*Step{}
	for _, s := range nested.Steps {
		for _, o := range s.Outputs {
			prod[o.Path] = s
		}
		if s.Reference.Path != "" {
			prod[s.Reference.Path] = s
		}
	}
	type link struct{ driver, producer *Step }
	var links []link
	var drivers []*Step
	for _, s := range g.Steps {
		if s.Kind != ScriptRun || s.PackageRoot == "" || !within(dir, s.PackageRoot) {
			continue
		}
		for _, l := range s.Script().Links {
			if p := prod[l.Path]; l.Path != "" && p != nil {
				links = append(links, link{s, p})
				if !slices.Contains(drivers, s) {
					drivers = append(drivers, s)
				}
			}
		}
	}
	if len(drivers) == 0 {
		return nil
	}
	// The driver whose last run is newest ran the nested build last; a live one before any other.
	driver := drivers[0]
	for _, d := range drivers[1:] {
		if d.Live() && !driver.Live() || d.Live() == driver.Live() && d.Reference.MTimeNS > driver.Reference.MTimeNS {
			driver = d
		}
	}
	linked := map[string]bool{}
	for _, l := range links {
		if !slices.Contains(l.driver.Deps, l.producer) {
			l.driver.Deps = append(l.driver.Deps, l.producer)
			l.producer.Dependents = append(l.producer.Dependents, l.driver)
		}
		for _, o := range l.producer.Outputs {
			linked[o.Path] = true
		}
		linked[l.producer.Reference.Path] = true
	}
	recorded := map[string]bool{}
	for _, s := range nested.Steps {
		s.Driver = driver
		for _, in := range s.Inputs {
			recorded[in.File.Path] = true
			if in.Watched && driver.WatchedBy(in.File.Path) == "" {
				in.Watched, in.SystemWatched = false, true
			}
		}
	}
	for _, d := range drivers {
		kept := d.Inputs[:0]
		for _, in := range d.Inputs {
			if recorded[in.File.Path] && len(in.How) > 0 && !slices.ContainsFunc(in.How, func(h How) bool { return h != PackageFolder }) {
				continue
			}
			if prod[in.File.Path] != nil && !in.Has(Declared) {
				continue // a file the nested build writes (a Makefile naming its objects) is no source of the run
			}
			kept = append(kept, in)
		}
		d.Inputs = kept
	}
	roots := nested.Roots[:0]
	for _, r := range nested.Roots {
		if !linked[r.File.Path] {
			roots = append(roots, r)
		}
	}
	nested.Roots = roots
	return drivers
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
