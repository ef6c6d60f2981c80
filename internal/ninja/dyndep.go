package ninja

import (
	"strings"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// A dyndep file (an edge's `dyndep = main.dd`, written by an edge of the build before ninja runs the
// edge that names it) adds implicit inputs and outputs to edges:
//
//	ninja_dyndep_version = 1
//	build main.o | main.mod: dyndep | data.h other.mod
//	  restat = 1
//
// Ninja loads it before it decides whether the edge is dirty, so the implicit inputs it lists are
// watched as the manifest's own are.

// parseDyndep returns, for each output a `build` statement of the dyndep file at path names, the
// implicit inputs it adds (manifest paths, as written). A file that cannot be read, or a line that is
// not a build statement of the form above, gives nothing for it: ninja would refuse the file, and the
// edge is judged on what the manifest says.
func parseDyndep(path string) map[string][]string {
	data, err := safeio.ReadFile(path, MaxManifest)
	if err != nil {
		return nil
	}
	out := map[string][]string{}
	for _, l := range splitLines(data) {
		rest, ok := strings.CutPrefix(l.text, "build ")
		if l.indent || !ok {
			continue
		}
		outs, i, bad := parsePaths(rest)
		if bad != "" {
			continue
		}
		// Implicit outputs after '|', then ':'.
		if i < len(rest) && rest[i] == '|' {
			_, j, bad := parsePaths(rest[i+1:])
			if bad != "" {
				continue
			}
			i += 1 + j
		}
		if i >= len(rest) || rest[i] != ':' {
			continue
		}
		after := strings.TrimLeft(rest[i+1:], " ")
		after, ok = strings.CutPrefix(after, "dyndep")
		if !ok {
			continue
		}
		var ins []string
		if after = strings.TrimLeft(after, " "); strings.HasPrefix(after, "|") {
			ps, _, bad := parsePaths(after[1:])
			if bad != "" {
				continue
			}
			for _, p := range ps {
				ins = append(ins, canon(p.eval(func(string) string { return "" })))
			}
		}
		for _, o := range outs {
			out[canon(o.eval(func(string) string { return "" }))] = ins
		}
	}
	return out
}
