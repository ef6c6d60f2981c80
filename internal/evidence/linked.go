package evidence

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// LinkedArchives lists, for a root of a Make, Ninja or Go step (or one a merge of graphs joined), the
// static libraries (.a) its own step links and every copy of each that the graph knows: the linked
// file itself, every step output and root file of the same library name in any system's graph (a
// Cargo staticlib's uplifted copies in every profile and its deps/lib<name>-<hash>.a files; a second
// lib<name>.a another Make or Ninja step writes). only (a link name or file name) limits it to one
// library. Each Copy carries the step that wrote it (nil when no step did: a library found only on the
// link line) and Found, which says where it was found for people. Libraries are sorted by name, copies
// by path; missing files are left out.
func LinkedArchives(g *graph.Graph, root *graph.Root, only string) []Library {
	if root == nil || root.Step == nil {
		return nil
	}
	linked := map[string][]string{} // library name → linked paths
	for _, in := range root.Step.Inputs {
		if filepath.Ext(in.File.Path) != ".a" || !in.File.Exists {
			continue
		}
		n := archiveName(in.File.Path)
		if only != "" && n != LibName(only) {
			continue
		}
		linked[n] = append(linked[n], in.File.Path)
	}
	producer := map[string]*graph.Step{}
	for _, s := range g.Steps {
		for _, o := range s.Outputs {
			if producer[o.Path] == nil {
				producer[o.Path] = s
			}
		}
	}
	for _, r := range g.Roots {
		if r.Step != nil && producer[r.File.Path] == nil {
			producer[r.File.Path] = r.Step
		}
	}
	var out []Library
	for n, paths := range linked {
		lib := Library{Name: n}
		seen := map[string]bool{}
		linkedPath := map[string]bool{}
		for _, p := range paths {
			linkedPath[p] = true
		}
		var infos []os.FileInfo // of lib.Copies, index for index
		add := func(p, why string) {
			if seen[p] {
				return
			}
			st, err := fsrec.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				return
			}
			seen[p] = true
			// Cargo hard-links the uplifted staticlib to its deps/ file: one file under two names is
			// one copy, named as the link line names it.
			for i, o := range infos {
				if !fsrec.SameFile(o, st) {
					continue
				}
				if c := &lib.Copies[i]; !linkedPath[c.Path] && len(p) < len(c.Path) {
					// The uplifted name (target/release/librs.a), not deps/librs-<hash>.a.
					other := c.Path
					*c = Copy{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Step: producer[p], Found: why}
					if c.Step == nil {
						c.Step = producer[other]
					}
					if c.Found == "" {
						c.Found = describeStep(c.Step)
					}
					c.Found += "; the same file as " + other + " (a hard link)"
					return
				}
				lib.Copies[i].Found += "; the same file as " + p + " (a hard link)"
				return
			}
			infos = append(infos, st)
			s := producer[p]
			c := Copy{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Step: s, Found: why}
			if c.Found == "" {
				c.Found = describeStep(s)
			}
			lib.Copies = append(lib.Copies, c)
		}
		for _, p := range paths {
			why := "linked by " + describeStep(root.Step)
			if s := producer[p]; s != nil {
				why = describeStep(s) + "; linked by " + describeStep(root.Step)
			}
			add(p, why)
		}
		var others []string
		for p := range producer {
			if filepath.Ext(p) == ".a" && archiveName(p) == n {
				others = append(others, p)
			}
		}
		sort.Strings(others)
		for _, p := range others {
			add(p, "")
		}
		sort.Slice(lib.Copies, func(i, j int) bool { return lib.Copies[i].Path < lib.Copies[j].Path })
		out = append(out, lib)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// archiveName is a static library's link name, a Cargo unit's "-<16 hex digits>" hash suffix dropped:
// "deps/librcalc-0123456789abcdef.a" → "rcalc" (legacy layout), and in the new layout a staticlib-only
// unit's "build/rcalc/0123456789abcdef/out/librcalc-0123456789abcdef.a" → "rcalc" (measured with cargo
// 1.95 -Zbuild-dir-new-layout: the suffix is the unit folder's hash; a unit that also has a cdylib
// writes "librcalc.a").
func archiveName(p string) string {
	n := LibName(p)
	i := strings.LastIndexByte(n, '-')
	if i <= 0 || len(n)-i-1 != 16 {
		return n
	}
	if pl, ok := unit.ParsePath(p); ok && !strings.ContainsRune(pl.Rest, filepath.Separator) &&
		(pl.Area == unit.AreaDeps || pl.Area == unit.AreaOut && pl.Layout == unit.NewLayout && pl.Hash == n[i+1:]) {
		n = n[:i]
	}
	return n
}

// describeStep says for people which step wrote or links a file: "Cargo unit rcalc-<hash> (profile
// debug, features [])", "ninja step libk.a (rule ...)", "go step app".
func describeStep(s *graph.Step) string {
	if s == nil {
		return "no step of the build writes it (found on the link line)"
	}
	if s.System == unit.System || s.System == "" {
		u := unit.Of(s)
		return fmt.Sprintf("Cargo unit %s-%s (%s, profile %s, features %v)", s.Package, u.Hash, s.Label, s.ProfileDir, u.Features)
	}
	d := s.System + " step " + s.Name
	if s.Label != "" && s.Label != s.Name {
		d += " (" + s.Label + ")"
	}
	if c := s.Config.String(); c != "" {
		d += ", " + c
	}
	return d
}
