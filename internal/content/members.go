package content

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Bounds on what a baseline records of one run's archives: members per archive and bytes hashed per
// archive (larger archives are not recorded, and their duplicated members are not tied to runs).
const (
	maxMembersRecorded = 512
	maxMemberBytesRead = 256 << 20
)

// memberKey names one member of one archive in a baseline: "<archive file name>(<member name>)".
func memberKey(archive, member string) string {
	return filepath.Base(archive) + "(" + member + ")"
}

// archiveMembers returns, for every static archive (`lib*.a`, read with internal/binfmt) among the
// outputs of a build-script run, the digest of the last member of each name: the copy that run wrote
// (`ar q` appends it, `ar r` replaces it in place). nil when the step has no readable archive within
// the bounds above; an unreadable archive is left out (evidence reports it as a graph problem).
func archiveMembers(s *graph.Step) map[string]string {
	var out map[string]string
	for _, o := range s.Outputs {
		n := filepath.Base(o.Path)
		if !o.Exists || !strings.HasPrefix(n, "lib") || !strings.HasSuffix(n, ".a") {
			continue
		}
		m, err := lastMemberDigests(o.Path)
		if err != nil || len(m) == 0 {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		for name, d := range m {
			out[memberKey(o.Path, name)] = d
		}
	}
	return out
}

// linkedCopies returns, for the duplicated members of s's archives (g.DuplicateMembers) whose copy the
// linker takes differs from the last one (members, archiveMembers's map), memberKey → the taken copy's
// digest; nil when none.
func linkedCopies(g *graph.Graph, s *graph.Step, members map[string]string) map[string]string {
	var out map[string]string
	for _, d := range g.DuplicateMembers {
		if d.Step != s || d.Taken < 0 || d.Taken >= len(d.Copies) || d.Copies[d.Taken].Digest == "" {
			continue
		}
		k := memberKey(d.Archive.Path, d.Name)
		if last, ok := members[k]; ok && last != d.Copies[d.Taken].Digest {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = d.Copies[d.Taken].Digest
		}
	}
	return out
}

// lastMemberDigests reads the archive at path and hashes the last member of each name; nil (no error)
// for a thin archive or one past the bounds.
func lastMemberDigests(path string) (map[string]string, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a, err := binfmt.ReadArchive(f, st.Size(), path)
	if err != nil {
		return nil, err
	}
	if a.Thin || len(a.Members) > maxMembersRecorded {
		return nil, nil
	}
	last := map[string]binfmt.Member{}
	var total int64
	for _, m := range a.Members {
		last[m.Name] = m
	}
	for _, m := range last {
		total += m.Size
	}
	if total > maxMemberBytesRead {
		return nil, nil
	}
	out := make(map[string]string, len(last))
	for name, m := range last {
		r, err := a.MemberReader(f, m)
		if err != nil {
			return nil, err
		}
		d, err := digest.Reader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: member %s: %w", path, name, err)
		}
		out[name] = d.String()
	}
	return out, nil
}

// copyRunKeys returns the store keys of the kept runs of s whose baseline recorded digest as the last
// member of that name in archive, newest first.
func copyRunKeys(st *Store, keys []string, archive, member, dg string) []string {
	if dg == "" {
		return nil
	}
	mk := memberKey(archive, member)
	var out []string
	for _, k := range keys {
		if b, ok := st.c.Peek(k); ok && b.Members[mk] == dg {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return keyNS(out[i]) > keyNS(out[j]) })
	return out
}

// keyNS is the reference mtime a store key ends in ("<step ID>@<ns>").
func keyNS(k string) int64 {
	var n int64
	fmt.Sscan(k[strings.LastIndexByte(k, '@')+1:], &n)
	return n
}

// pinnedRuns returns the store keys of the runs that wrote the copy of a duplicated member the linker
// takes (graph.DuplicateMember.Taken) or a root holds: they stay in the store past keepRuns, since a
// binary's code comes from them however many runs appended copies since.
func pinnedRuns(g *graph.Graph, st *Store, runs map[string][]string) map[string]bool {
	out := map[string]bool{}
	for _, d := range g.DuplicateMembers {
		if d.Step == nil {
			continue
		}
		idx := []int{d.Taken}
		for _, h := range d.Holds {
			idx = append(idx, h.Copy)
		}
		for _, i := range idx {
			if i < 0 || i >= len(d.Copies) {
				continue
			}
			for _, k := range copyRunKeys(st, runs[d.Step.ID], d.Archive.Path, d.Name, d.Copies[i].Digest) {
				out[k] = true
			}
		}
	}
	return out
}

// annotateMemberRuns ties each copy of a duplicated archive member (g.DuplicateMembers, filled by
// internal/evidence) to the run of its step that wrote it, through the Members its kept baselines
// recorded, and says whether the step's inputs now have the content that run used (MemberCopy.Run):
// then the copy a binary holds is what a build from the files here compiles, whatever the last run
// appended after it. Among several runs that wrote one digest, the first whose inputs match wins, else
// the newest.
func annotateMemberRuns(g *graph.Graph, st *Store, dig *digest.Cache) {
	if len(g.DuplicateMembers) == 0 {
		return
	}
	runs := st.runsByStep()
	for di := range g.DuplicateMembers {
		d := &g.DuplicateMembers[di]
		if d.Step == nil {
			continue
		}
		for ci := range d.Copies {
			c := &d.Copies[ci]
			for _, k := range copyRunKeys(st, runs[d.Step.ID], d.Archive.Path, d.Name, c.Digest) {
				b, _ := st.c.Peek(k)
				r := &graph.CopyRun{RunNS: keyNS(k)}
				r.SourcesNow, r.Why = sourcesMatch(g, d.Step, b, dig)
				if c.Run == nil || r.SourcesNow {
					c.Run = r
				}
				if r.SourcesNow {
					break
				}
			}
		}
	}
}

// sourcesMatch reports whether every input of s that baselines cover (existing, not generated) now has
// the digest b recorded; else why not, naming the first input that differs or that b lacks.
func sourcesMatch(g *graph.Graph, s *graph.Step, b stepBaseline, dig *digest.Cache) (bool, string) {
	n := 0
	for _, in := range s.Inputs {
		p := in.File.Path
		if !in.File.Exists || generated(g, p) {
			continue
		}
		rel := relTo(g.Workspace, p)
		base, ok := b.Inputs[rel]
		if !ok {
			return false, rel + " was not recorded in that run's baseline"
		}
		d, err := dig.File(p)
		if err != nil {
			return false, rel + " could not be hashed: " + err.Error()
		}
		if d.String() != base {
			return false, fmt.Sprintf("%s is %s now, %s in that run", rel, d, base)
		}
		n++
	}
	if n == 0 {
		return false, "that run's baseline records none of the step's inputs"
	}
	return true, ""
}
