package systems

import (
	"github.com/stalecheck/stalecheck/internal/graph"
)

// Merge joins graphs of different systems into one: their steps, roots, build folders, problems, notes,
// content answers and Origins concatenated (Workspace, TargetDir, BuildDir, System and ProfileDirs from
// the first graph, Unjudged and Env united). It then ties steps across systems by file path: a step
// input whose path is another graph's step output or root file makes the producing step a Dep of the
// consuming one (Dependents mirrored), and walks liveness again (graph.MarkLive, each step's Roots
// recomputed) so a root of one system reaches the steps of another behind a file it links. One graph
// is returned as it is; none gives an empty graph.
func Merge(gs ...*graph.Graph) *graph.Graph {
	switch len(gs) {
	case 0:
		return &graph.Graph{Origins: map[string]any{}}
	case 1:
		return gs[0]
	}
	first := gs[0]
	m := &graph.Graph{System: first.System, Workspace: first.Workspace, TargetDir: first.TargetDir, BuildDir: first.BuildDir,
		ProfileDirs: first.ProfileDirs, Origins: map[string]any{}}
	// producers: path → (graph index, step) of each output and root file.
	type producer struct {
		gi int
		s  *graph.Step
	}
	prod := map[string][]producer{}
	for gi, g := range gs {
		for _, s := range g.Steps {
			for _, o := range s.Outputs {
				prod[o.Path] = append(prod[o.Path], producer{gi, s})
			}
		}
		for _, r := range g.Roots {
			if r.Step != nil {
				prod[r.File.Path] = append(prod[r.File.Path], producer{gi, r.Step})
			}
		}
	}
	for gi, g := range gs {
		m.Steps = append(m.Steps, g.Steps...)
		m.Roots = append(m.Roots, g.Roots...)
		m.BuildDirs = append(m.BuildDirs, g.BuildDirs...)
		m.Problems = append(m.Problems, g.Problems...)
		m.Notes = append(m.Notes, g.Notes...)
		m.GeneratedDirs = append(m.GeneratedDirs, g.GeneratedDirs...)
		m.Content = append(m.Content, g.Content...)
		m.Holdings = append(m.Holdings, g.Holdings...)
		for k, v := range g.Origins {
			if _, ok := m.Origins[k]; !ok { // the first build of a system names it (a recursive make's top)
				m.Origins[k] = v
			}
		}
		for k, v := range g.Env {
			if m.Env == nil {
				m.Env = map[string]graph.EnvRead{}
			}
			m.Env[k] = v
		}
		for k, v := range g.Unjudged {
			if m.Unjudged == nil {
				m.Unjudged = map[string]string{}
			}
			m.Unjudged[k] = v
		}
		for _, s := range g.Steps {
			for _, in := range s.Inputs {
				for _, p := range prod[in.File.Path] {
					if p.gi == gi || p.s == s || hasStep(s.Deps, p.s) {
						continue
					}
					s.Deps = append(s.Deps, p.s)
					p.s.Dependents = append(p.s.Dependents, s)
				}
			}
		}
	}
	for _, s := range m.Steps {
		s.Roots = nil
	}
	m.MarkLive()
	return m
}

func hasStep(ss []*graph.Step, s *graph.Step) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
