package evidence

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// objectExts are the file names an archive step takes as the objects it archives.
var objectExts = map[string]bool{".o": true, ".obj": true}

// annotateOrphanMembers ties every static archive a step writes from objects (an `ar` step of Make,
// Ninja, CMake, Meson, or any system) to its members, the same way whatever system ran it: a member whose
// name is not the name of one of the step's object inputs, nor of an object some step of the graph
// writes, is an object no rule makes any more (`ar r` and `ar q` keep the members of a removed source).
// It becomes an input of the step (graph.ArchiveMember, at <archive folder>/<member>) unless the adapter
// already listed the archive's members (internal/makefile does). For each such orphan, Shadows lists
// the global symbols it defines ahead of a member the step does make, in the symbol table's order: GNU
// ld takes the first member the table names for an undefined symbol, so a program linking the archive
// for such a symbol gets the removed source's code.
func annotateOrphanMembers(g *graph.Graph) {
	made := map[string]bool{} // base names of the objects some step writes
	for _, s := range g.Steps {
		for _, o := range s.Outputs {
			if objectExts[filepath.Ext(o.Path)] {
				made[filepath.Base(o.Path)] = true
			}
		}
	}
	for _, s := range g.Steps {
		for _, out := range s.Outputs {
			if !out.Exists || !strings.HasSuffix(out.Path, ".a") || !archivesObjects(s) {
				continue
			}
			ar, err := binfmt.OpenArchive(out.Path)
			if err != nil {
				continue // duplicateMembers reports an unreadable archive
			}
			orphans(g, s, out.Path, ar, made)
		}
	}
}

// archivesObjects reports whether the step's inputs are objects (an archive step, not a compile that
// writes an archive of its own members, such as rustc's rlib).
func archivesObjects(s *graph.Step) bool {
	for _, in := range s.Inputs {
		if objectExts[filepath.Ext(in.File.Path)] && !(len(in.How) == 1 && in.How[0] == graph.ArchiveMember) {
			return true
		}
	}
	return false
}

func orphans(g *graph.Graph, s *graph.Step, archive string, ar *binfmt.Archive, made map[string]bool) {
	own := map[string]bool{} // member names the step archives now
	listed := map[string]*graph.Input{}
	for _, in := range s.Inputs {
		if in.Has(graph.ArchiveMember) && len(in.How) == 1 {
			listed[filepath.Base(in.File.Path)] = in
			continue
		}
		if objectExts[filepath.Ext(in.File.Path)] {
			own[filepath.Base(in.File.Path)] = true
		}
	}
	orphan := map[int]bool{}
	for i, m := range ar.Members {
		if !own[m.Name] && !made[m.Name] {
			orphan[i] = true
		}
	}
	if len(orphan) == 0 {
		return
	}
	// The member GNU ld takes for each symbol: the first the table names.
	first := map[string]int{}
	definers := map[string][]int{}
	for _, sym := range ar.Symbols {
		if _, ok := first[sym.Name]; !ok {
			first[sym.Name] = sym.Member
		}
		definers[sym.Name] = append(definers[sym.Name], sym.Member)
	}
	for i := range ar.Members {
		if !orphan[i] {
			continue
		}
		m := ar.Members[i]
		var shadows []string
		for name, idx := range first {
			if idx != i {
				continue
			}
			for _, d := range definers[name] {
				if d != i && !orphan[d] {
					shadows = append(shadows, name)
					break
				}
			}
		}
		sort.Strings(shadows)
		in := listed[m.Name]
		if in == nil {
			p := filepath.Join(filepath.Dir(archive), m.Name)
			in = &graph.Input{File: statInfo(p), How: []graph.How{graph.ArchiveMember}, Detail: []string{archive + ":" + m.Name}}
			s.Inputs = append(s.Inputs, in)
		}
		in.Shadows = shadows
	}
}

func statInfo(p string) graph.FileInfo {
	fi := graph.FileInfo{Path: p}
	if st, err := fsrec.Stat(p); err == nil {
		fi.Exists, fi.Size, fi.MTimeNS = true, st.Size(), st.ModTime().UnixNano()
	}
	return fi
}
