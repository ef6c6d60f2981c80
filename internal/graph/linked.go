package graph

import (
	"path/filepath"
	"strings"
)

// LinkedInput is a library a root links through one step it reaches: a static archive in the output
// folder of a script run that names it as a Link, or the library or shared library of a dependency step.
type LinkedInput struct {
	Step *Step
	File FileInfo
}

// NewerLinked returns the libraries the root links whose mtime is newer than the root's own (the root was
// linked before they were written), in Reach order: a static archive a script run names as a Link, the
// libraries and rlibs of dependency steps, and the root's own step's linked libraries (LinkedLibrary
// inputs: a library its link line names that the build system does not watch, as a Go link step's -l
// libraries). Only steps of the root's own system are walked: a library another system made enters
// through the consuming step's LinkedLibrary input (the edge a merge of graphs adds). Steps whose last
// attempt failed, and roots that are not tied to a unit or whose unit failed, give none.
func (r *Root) NewerLinked() []LinkedInput {
	if r.Step == nil || r.Step.Failed != "" {
		return nil
	}
	var out []LinkedInput
	for _, s := range r.Reach() {
		if s.Failed != "" || s.System != r.Step.System {
			continue
		}
		var cands []FileInfo
		if s == r.Step {
			for _, in := range s.Inputs {
				if LinkedLibrary(in) && in.File.Exists {
					cands = append(cands, in.File)
				}
			}
		}
		switch s.Kind {
		case ScriptRun:
			for _, l := range s.Script().Links {
				if l.Path == "" || !strings.HasPrefix(l.Path, s.Script().OutDir+string(filepath.Separator)) {
					continue
				}
				for _, o := range s.Outputs {
					if o.Path == l.Path {
						cands = append(cands, o)
					}
				}
			}
		case Compile:
			if s == r.Step {
				break // its own outputs are the root
			}
			for _, o := range s.Outputs {
				if isLibrary(o.Path) || filepath.Ext(o.Path) == ".rlib" {
					cands = append(cands, o)
				}
			}
		}
		for _, f := range cands {
			if f.MTimeNS > r.File.MTimeNS {
				out = append(out, LinkedInput{Step: s, File: f})
			}
		}
	}
	return out
}

// LinkedLibrary reports whether an input is a library a link step's command line names (How CommandLine)
// that its build system does not watch (a static archive .a or a shared library .so, .so.N): a Go link
// step's -L/-l libraries, which Go's build cache does not hash.
// UnwatchedLinked lists the static libraries the root's own step links (LinkedLibrary inputs) whose
// mtime is not newer than the root: their build system does not watch them (Go's build cache keys a
// link by its flags, not by the libraries' bytes), so a link that only refreshed the root's mtime can
// hold an older content than they have (internal/content judges each pair by content).
func (r *Root) UnwatchedLinked() []FileInfo {
	if r.Step == nil || r.Step.Failed != "" {
		return nil
	}
	var out []FileInfo
	for _, in := range r.Step.Inputs {
		if LinkedLibrary(in) && in.File.Exists && in.File.MTimeNS <= r.File.MTimeNS && filepath.Ext(in.File.Path) == ".a" {
			out = append(out, in.File)
		}
	}
	return out
}

func LinkedLibrary(in *Input) bool {
	return !in.Watched && in.Has(CommandLine) && isLibrary(in.File.Path)
}

// SharedLibrary reports whether p names a shared library (lib.so, lib.so.1): a program loads it when it
// starts, so it runs the library's current code whenever it was linked.
func SharedLibrary(p string) bool {
	return filepath.Ext(p) == ".so" || strings.Contains(filepath.Base(p), ".so.")
}

func isLibrary(p string) bool {
	ext := filepath.Ext(p)
	return ext == ".a" || ext == ".so" || strings.Contains(filepath.Base(p), ".so.")
}

// HoldingOf returns the content answer for a root and a library it links, or nil when none was gathered.
func (g *Graph) HoldingOf(r *Root, input string) *Holding {
	for i := range g.Holdings {
		if g.Holdings[i].Root == r && g.Holdings[i].Input == input {
			return &g.Holdings[i]
		}
	}
	return nil
}
