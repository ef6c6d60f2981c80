package check

import (
	"fmt"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// duplicateArchiveMember: an archive the build made holds two or more members of one name (`ar q`
// appending an object again), so a binary linking it gets the copy the archive's symbol table names
// first, the oldest one (graph.DuplicateMember, filled by internal/evidence). Error when a binary's
// bytes hold a copy other than the one equal to the object file now (it runs old code); warning when
// the copies differ but that cannot be told, or the linker's copy is not the current object; info when
// the copies are identical.
func duplicateArchiveMember(g *graph.Graph) []Finding {
	var out []Finding
	for _, d := range g.DuplicateMembers {
		ordinal := func(i int) string {
			if i < 0 || i >= len(d.Copies) {
				return "an unknown copy"
			}
			return fmt.Sprintf("copy %d of %d", i+1, len(d.Copies))
		}
		same := true
		for _, c := range d.Copies {
			if c.Digest == "" || c.Digest != d.Copies[0].Digest {
				same = false
			}
		}
		var stale, held, here []string
		for _, h := range d.Holds {
			if h.Copy < 0 {
				continue
			}
			held = append(held, fmt.Sprintf("%s holds %s", display(g, h.Root.File.Path), ordinal(h.Copy)))
			if d.Current >= 0 && h.Copy != d.Current && d.Copies[h.Copy].Digest != d.Copies[d.Current].Digest {
				if copyFromSourcesHere(&d, h.Copy) {
					// A cp -p restore to the content that copy was compiled from (dupheld.go): the binary
					// holds what the files here compile to; the last run's copy is the other content.
					here = append(here, fmt.Sprintf("%s was written by the run at %s, whose inputs had the content they have now", ordinal(h.Copy), fmtTime(d.Copies[h.Copy].Run.RunNS)))
					continue
				}
				stale = append(stale, display(g, h.Root.File.Path))
			}
		}
		sev := Warning
		switch {
		case same:
			sev = Info
		case len(stale) > 0:
			sev = Error
		}
		msg := fmt.Sprintf("%s holds %d members named %s (`ar q` appends without replacing): the linker takes %s, the first its symbol table names",
			display(g, d.Archive.Path), len(d.Copies), d.Name, ordinal(d.Taken))
		if d.Taken >= 0 && d.Taken < len(d.Copies)-1 {
			msg += ", appended before the others"
		}
		switch {
		case same:
			msg += "; the copies are identical, so nothing is stale yet"
		case d.Current >= 0:
			msg += fmt.Sprintf("; %s equals %s as it is now", ordinal(d.Current), display(g, d.Object.Path))
		case d.Object.Exists:
			msg += fmt.Sprintf("; no copy equals %s as it is now", display(g, d.Object.Path))
		}
		if len(held) > 0 {
			msg += "; " + strings.Join(held, ", ")
		}
		if len(stale) > 0 {
			msg += ": " + strings.Join(stale, ", ") + " runs the old code of " + d.Name
		}
		if len(here) > 0 {
			msg += "; " + strings.Join(here, ", ") + ": the binary holds the code of the sources here, not that of " + display(g, d.Object.Path) + " (later runs' copies are never linked)"
		}
		f := Finding{
			Rule: "duplicate-archive-member", Severity: sev, System: systemName(d.Step),
			Message:  msg,
			Subjects: []string{d.Archive.Path, d.Archive.Path + ":" + d.Name}, // archive:member, as archive-member-without-rule names one
			Roots:    rootPaths(d.Step),
			Evidence: []Evidence{{Kind: "artifact", Path: d.Archive.Path, MTimeNS: d.Archive.MTimeNS, Size: d.Archive.Size, Detail: fmt.Sprintf("archive with %d members named %s", len(d.Copies), d.Name)}},
		}
		for i, c := range d.Copies {
			detail := fmt.Sprintf("%s: member #%d at byte %d, %d bytes, header mtime %d s, %s; symbols: %s", ordinal(i), c.Index, c.Offset, c.Size, c.MTime, c.Digest, strings.Join(limit(c.Symbols, 6), ", "))
			if i == d.Taken {
				detail += "; the linker takes it"
			}
			if i == d.Current {
				detail += "; equals the object now"
			}
			if r := c.Run; r != nil {
				detail += fmt.Sprintf("; written by the run at %s (content baseline)", fmtTime(r.RunNS))
				if r.SourcesNow {
					detail += ", whose inputs all have that content now"
				} else {
					detail += ": " + r.Why
				}
			}
			f.Evidence = append(f.Evidence, Evidence{Kind: "copy", Path: d.Archive.Path, Size: c.Size, Detail: detail})
		}
		if d.Object.Exists {
			f.Evidence = append(f.Evidence, Evidence{Kind: "input", Path: d.Object.Path, MTimeNS: d.Object.MTimeNS, Size: d.Object.Size, Detail: "the object of the member's name as it is now"})
		}
		for _, h := range d.Holds {
			f.Evidence = append(f.Evidence, Evidence{Kind: "root", Path: h.Root.File.Path, MTimeNS: h.Root.File.MTimeNS, Size: h.Root.File.Size,
				Detail: fmt.Sprintf("%s (by its bytes: %s)", ordinal(h.Copy), h.Detail)})
		}
		f.Fix = "write the archive with `ar rcs` (r replaces a member of the same name) instead of `ar q`, then: rm " + d.Archive.Path + " && " + archiveRebuild(d.Step)
		out = append(out, f)
	}
	return out
}

// systemName is a finding's System for a step ("" for Cargo's).
func systemName(s *graph.Step) string {
	return s.SystemTag()
}

// archiveRebuild is the command that makes the archive's step again.
func archiveRebuild(s *graph.Step) string {
	if s == nil {
		return "rebuild"
	}
	return driverRerun(s)
}
