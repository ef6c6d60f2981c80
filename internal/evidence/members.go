package evidence

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// maxMemberBytes bounds the members hashed and compared (larger ones are listed, not read).
const maxMemberBytes = 256 << 20

// annotateDuplicateMembers fills g.DuplicateMembers: every static archive (`.a`) a step of the graph
// outputs that holds two or more members of one name (`ar q` appending an object again) defining a
// symbol of one name (members of one base name from different folders, defining different symbols,
// are not copies: the linker loads each for its own symbols). For each, the
// copies in archive order with their symbol-table entries and digests, the copy GNU ld takes (the one
// the symbol table names first for the copies' symbols: ld's archive search, binutils 2.40), the
// object file of that name as it is now and which copy equals it, and, per root that links the
// archive, which copy the root's bytes hold (Holds on each copy). An archive that cannot be read is a
// graph problem naming it (unless one is already recorded for it).
func annotateDuplicateMembers(g *graph.Graph) {
	problems := map[string]bool{}
	for _, p := range g.Problems {
		problems[p.Path] = true
	}
	seen := map[string]bool{}
	for _, s := range g.Steps {
		for _, out := range s.Outputs {
			if !out.Exists || !strings.HasSuffix(out.Path, ".a") || seen[out.Path] {
				continue
			}
			seen[out.Path] = true
			dups, err := duplicateMembers(s, out)
			if err != nil {
				if !problems[out.Path] {
					g.AddProblem(out.Path, err)
				}
				continue
			}
			g.DuplicateMembers = append(g.DuplicateMembers, dups...)
		}
	}
	sort.SliceStable(g.DuplicateMembers, func(i, j int) bool {
		a, b := g.DuplicateMembers[i], g.DuplicateMembers[j]
		return a.Archive.Path < b.Archive.Path || a.Archive.Path == b.Archive.Path && a.Name < b.Name
	})
}

// duplicateMembers reads one archive and returns its duplicated member names (nil when none).
func duplicateMembers(s *graph.Step, out graph.FileInfo) ([]graph.DuplicateMember, error) {
	ok, err := binfmt.IsArchive(out.Path)
	if err != nil || !ok {
		return nil, err
	}
	a, err := binfmt.OpenArchive(out.Path)
	if err != nil {
		return nil, err
	}
	byName := map[string][]int{}
	var names []string
	for i, m := range a.Members {
		if len(byName[m.Name]) == 0 {
			names = append(names, m.Name)
		}
		byName[m.Name] = append(byName[m.Name], i)
	}
	var res []graph.DuplicateMember
	for _, name := range names {
		idx := byName[name]
		if len(idx) < 2 {
			continue
		}
		if !sharesSymbol(a, idx) {
			// Objects of one base name from different folders (a/util.o, b/util.o): they define
			// different symbols, and the linker loads each for its own.
			continue
		}
		d := graph.DuplicateMember{Archive: out, Step: s, Name: name, Taken: -1, Current: -1}
		copyOf := map[int]int{} // member index → index in d.Copies
		for ci, mi := range idx {
			m := a.Members[mi]
			c := graph.MemberCopy{Index: mi, Offset: m.Offset, Size: m.Size, MTime: m.MTime}
			for _, sym := range a.Symbols {
				if sym.Member == mi {
					c.Symbols = append(c.Symbols, sym.Name)
				}
			}
			if m.Size <= maxMemberBytes {
				if dg, err := memberDigest(a, m); err == nil {
					c.Digest = dg
				}
			}
			copyOf[mi] = ci
			d.Copies = append(d.Copies, c)
		}
		// GNU ld looks a symbol up in the archive's symbol table and loads the member of its first
		// entry; the copies define the same symbols, so the first entry naming any copy decides.
		for _, sym := range a.Symbols {
			if ci, ok := copyOf[sym.Member]; ok {
				d.Taken = ci
				break
			}
		}
		d.Object = objectOf(s, out.Path, name)
		if d.Object.Exists {
			if dg, err := fileDigest(d.Object.Path); err == nil {
				for ci, c := range d.Copies {
					if c.Digest == dg {
						d.Current = ci
					}
				}
			}
		}
		d.Holds = rootHoldings(s, a, idx, &d)
		res = append(res, d)
	}
	return res, nil
}

// objectOf returns the object file named like the member: an input of the archive's step of that base
// name, else the file of that name beside the archive.
func objectOf(s *graph.Step, archive, name string) graph.FileInfo {
	for _, in := range s.Inputs {
		if filepath.Base(in.File.Path) == name && in.File.Exists {
			return in.File
		}
	}
	p := filepath.Join(filepath.Dir(archive), name)
	st, err := fsrec.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return graph.FileInfo{Path: p}
	}
	return graph.FileInfo{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true}
}

// rootHoldings judges, for every linked root (not a library) that reaches the archive's step, which copy
// of d its bytes hold: Holds on each copy alone; the copy it holds is the one judged "holds" while every
// other copy is "differs" (or the first of several byte-identical copies judged "holds").
func rootHoldings(s *graph.Step, a *binfmt.Archive, idx []int, d *graph.DuplicateMember) []graph.MemberHolding {
	var cands []*Candidate
	for _, mi := range idx {
		c, err := memberCandidate(a, a.Members[mi], mi)
		if err != nil {
			c = nil
		}
		cands = append(cands, c)
	}
	var out []graph.MemberHolding
	for _, r := range s.Roots {
		if r.Kind == "lib" || !r.File.Exists || !isELF(r.File.Path) {
			continue
		}
		h := graph.MemberHolding{Root: r, Copy: -1}
		b, err := OpenBinary(r.File.Path)
		if err != nil {
			h.Detail = err.Error()
			out = append(out, h)
			continue
		}
		var parts []string
		var held []int
		differs := 0
		for ci, c := range cands {
			if c == nil || !c.Native {
				parts = append(parts, fmt.Sprintf("copy %d: nothing to compare", ci+1))
				continue
			}
			v, err := Holds(b, c)
			if err != nil {
				parts = append(parts, fmt.Sprintf("copy %d: %v", ci+1, err))
				continue
			}
			parts = append(parts, fmt.Sprintf("copy %d: %s (%s)", ci+1, v.Verdict, v.Why))
			switch v.Verdict {
			case HoldsAll:
				held = append(held, ci)
			case HoldsOther:
				differs++
			}
		}
		b.Close()
		if len(held) > 0 && differs == len(cands)-len(held) && sameDigest(d, held) {
			// One copy held, or several byte-identical ones (a rerun compiled the same source again):
			// the root holds that content; the first of them stands for it.
			h.Copy = held[0]
		}
		h.Detail = strings.Join(parts, "; ")
		out = append(out, h)
	}
	return out
}

// sameDigest reports whether the copies idx of d (indexes into d.Copies) have one known digest.
func sameDigest(d *graph.DuplicateMember, idx []int) bool {
	for _, i := range idx {
		if d.Copies[i].Digest == "" || d.Copies[i].Digest != d.Copies[idx[0]].Digest {
			return false
		}
	}
	return true
}

// memberCandidate reads one archive member as a candidate of its own (its path is
// "<archive>(<member>)#<index>").
func memberCandidate(a *binfmt.Archive, m binfmt.Member, index int) (*Candidate, error) {
	c := &Candidate{Path: fmt.Sprintf("%s(%s)#%d", a.Path, m.Name, index), file: a.Path, member: index + 1}
	if m.Size > maxMemberBytes {
		return c, nil
	}
	sr, closer, err := a.Open(m)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	if err := c.addObject(sr, m.Name, c.Path); err != nil {
		return nil, err
	}
	c.Native = len(c.Members) > 0
	return c, nil
}

func memberDigest(a *binfmt.Archive, m binfmt.Member) (string, error) {
	sr, closer, err := a.Open(m)
	if err != nil {
		return "", err
	}
	defer closer.Close()
	d, err := digest.Reader(sr)
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

func fileDigest(path string) (string, error) {
	d, err := digest.HashFile(path)
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// placedSections reads the allocated sections of the candidate's objects (placedSectionsOf): one
// archive member for a member candidate, else every object of the file at Path.
func (c *Candidate) placedSections() ([]placedSection, error) {
	if c.member > 0 {
		return placedSectionsOf(c.file, c.member-1)
	}
	return placedSectionsOf(c.Path, -1)
}

// sharesSymbol reports whether the members idx of an archive are copies of one object for the linker:
// two of them define a global symbol of the same name in the symbol table, or the archive has no
// symbol table (then nothing tells them apart).
func sharesSymbol(a *binfmt.Archive, idx []int) bool {
	if len(a.Symbols) == 0 {
		return true
	}
	in := map[int]bool{}
	for _, i := range idx {
		in[i] = true
	}
	owner := map[string]int{}
	for _, sym := range a.Symbols {
		if !in[sym.Member] {
			continue
		}
		if o, ok := owner[sym.Name]; ok && o != sym.Member {
			return true
		}
		owner[sym.Name] = sym.Member
	}
	return false
}
