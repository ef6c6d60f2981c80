package content

import (
	"path/filepath"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// A command that names its program without a folder (`cc -c a.c`, as a Makefile's $(CC) or a Ninja
// rule writes it) runs whatever a search of PATH finds when the build runs it. Make and Ninja watch the
// command's text, not the program: a PATH that now finds another compiler (a new toolchain folder put
// first, a wrapper) leaves every object the old one made in place. The run's baseline keeps the file the
// search found and its digest; a later check searches the same PATH the next build will, and a file found
// now with other bytes is a changed search (graph.Lookup, Kind LookupPATH, Recorded), which the
// path-lookup-changed rule judges as it judges a header that a folder searched earlier now holds.

// judgeTool records or judges s.Program (see above); it reports whether b changed.
func judgeTool(s *graph.Step, b *stepBaseline, path string, dig *digest.Cache) bool {
	prog := s.Program
	if prog == "" || path == "" {
		return false
	}
	found := lookPath(prog, path)
	if b.Tool != prog { // first seen (or the command now runs another program: judged as a command change)
		if found == "" {
			return false
		}
		d, err := dig.File(found)
		if err != nil {
			return false
		}
		b.Tool, b.ToolPath, b.ToolDigest = prog, found, d.String()
		return true
	}
	if found == b.ToolPath {
		return false
	}
	if found != "" {
		if d, err := dig.File(found); err == nil && d.String() == b.ToolDigest {
			return false // another path to the same program (a link, a copy): it makes the same objects
		}
	}
	s.OwnCmd().Lookups = append(s.OwnCmd().Lookups, graph.Lookup{Kind: graph.LookupPATH, Name: prog, Search: path, Then: b.ToolPath,
		Now: found, Recorded: true, From: s.Cmd().CommandFrom})
	return false
}

// lookPath searches PATH as a shell does: the first executable regular file of that name.
func lookPath(prog, path string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue // the working folder: what it holds depends on where the build runs
		}
		p := filepath.Join(d, prog)
		if st, err := fsrec.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}
