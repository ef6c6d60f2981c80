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
// linked before they were written), in Reach order. Steps whose last attempt failed, and roots that are
// not tied to a unit or whose unit failed, give none.
func (r *Root) NewerLinked() []LinkedInput {
	if r.Step == nil || r.Step.Failed != "" {
		return nil
	}
	var out []LinkedInput
	for _, s := range r.Reach() {
		if s.Failed != "" {
			continue
		}
		var cands []FileInfo
		switch s.Kind {
		case ScriptRun:
			for _, l := range s.Links {
				if l.Path == "" || !strings.HasPrefix(l.Path, s.OutDir+string(filepath.Separator)) {
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
				continue
			}
			for _, o := range s.Outputs {
				if ext := filepath.Ext(o.Path); ext == ".rlib" || ext == ".a" || ext == ".so" || strings.Contains(filepath.Base(o.Path), ".so.") {
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

// HoldingOf returns the content answer for a root and a library it links, or nil when none was gathered.
func (g *Graph) HoldingOf(r *Root, input string) *Holding {
	for i := range g.Holdings {
		if g.Holdings[i].Root == r && g.Holdings[i].Input == input {
			return &g.Holdings[i]
		}
	}
	return nil
}
