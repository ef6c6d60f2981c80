package check

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// producerOf returns the step of another build system that made a library a step links: a Dep of the
// consuming step (the edge a merge of graphs adds by path) whose outputs hold the path, or that is the
// step of a root at that path. nil when none.
func producerOf(g *graph.Graph, consumer *graph.Step, path string) *graph.Step {
	for _, d := range consumer.Deps {
		if d.SameBuildSystem(consumer) {
			continue
		}
		for _, o := range d.Outputs {
			if o.Path == path {
				return d
			}
		}
		for _, r := range g.Roots {
			if r.File.Path == path && r.Step == d {
				return d
			}
		}
	}
	return nil
}

// behindLibrary names the inputs behind a library another build system made that changed after the
// root was linked: the inputs of the producing step and of every step it reaches whose mtime is newer
// than the root (generated files, those in a reached step's outputs or output folder, are left out), as
// evidence, and a clause for the message ("" when none).
func behindLibrary(g *graph.Graph, r *graph.Root, consumer *graph.Step, lib string) ([]Evidence, string) {
	prod := producerOf(g, consumer, lib)
	if prod == nil {
		return nil, ""
	}
	reach := (&graph.Root{Step: prod}).Reach()
	generated := func(p string) bool {
		for _, s := range reach {
			if s.Script().OutDir != "" && strings.HasPrefix(p, s.Script().OutDir+string(filepath.Separator)) {
				return true
			}
			for _, o := range s.Outputs {
				if o.Path == p {
					return true
				}
			}
		}
		return false
	}
	type hit struct {
		s  *graph.Step
		in *graph.Input
	}
	var hits []hit
	seen := map[string]bool{}
	for _, s := range reach {
		for _, in := range s.Inputs {
			p := in.File.Path
			if !in.File.Exists || in.File.MTimeNS <= r.File.MTimeNS || seen[p] || generated(p) {
				continue
			}
			seen[p] = true
			hits = append(hits, hit{s, in})
		}
	}
	if len(hits) == 0 {
		return nil, ""
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].in.File.MTimeNS > hits[j].in.File.MTimeNS })
	var ev []Evidence
	for _, h := range hits {
		ev = append(ev, Evidence{Kind: "input", Path: h.in.File.Path, MTimeNS: h.in.File.MTimeNS, Size: h.in.File.Size, How: howString(h.in),
			Detail: fmt.Sprintf("behind %s: an input of %s (%s), modified after %s was linked", filepath.Base(lib), stepWhat(h.s), h.s.Words().Tool, filepath.Base(r.File.Path))})
	}
	first := hits[0]
	clause := fmt.Sprintf("; %s made %s (%s), and behind it %s was modified at %s, after %s was linked",
		prod.Words().Tool, display(g, lib), stepWhat(prod), display(g, first.in.File.Path), fmtTime(first.in.File.MTimeNS), display(g, r.File.Path))
	if len(hits) > 1 {
		clause += fmt.Sprintf(" (%d inputs in all)", len(hits))
	}
	return ev, clause
}
