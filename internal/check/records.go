package check

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/humanize"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// lastBuildFailed: the last attempt of a unit failed or was interrupted: its hash file is empty, or
// its run folder's invoked.timestamp is newer than output (or there is no output). Reported as such,
// and the unit's other checks are skipped: what is on disk is from the last success, if any.
func lastBuildFailed(g *graph.Graph) []Finding {
	var out []Finding
	for _, s := range g.Steps {
		if s.Failed == "" {
			continue
		}
		subject := s.RecordDir
		if s.Script().RunDir != "" {
			subject = s.Script().RunDir
		}
		what := fmt.Sprintf("%s (%s, profile %s)", unitName(s), s.Label, s.ProfileDir)
		f := Finding{
			Rule: "last-build-failed", Severity: Warning,
			Message:  fmt.Sprintf("the last build of %s did not finish: %s", what, s.Failed),
			Subjects: []string{subject},
			Roots:    rootPaths(s),
			Evidence: []Evidence{{Kind: "failed", Path: subject, Detail: s.Failed}},
			Fix:      rebuildCmd(s) + " (and read its error)",
		}
		out = append(out, f)
	}
	return out
}

// unreadableRecord: a record that could not be read or parsed; the rest of the check went on.
func unreadableRecord(g *graph.Graph) []Finding {
	var out []Finding
	var owners *ownerIndex
	said := map[string]int{} // path and what is wrong -> index in out: a record two readers tried is one finding
	for _, p := range g.Problems {
		// The binaries the record is evidence for: those that reach the step it is a record of (as the
		// reader knew it, else the step whose output or record folder holds it).
		owner := problemOwner(g, &p, &owners)
		var roots []string
		if owner != nil {
			roots = rootPaths(owner)
		}
		key := p.Path + "\x00" + withoutPath(p.Err, p.Path) // what the finding says of it
		if i, ok := said[key]; ok {
			for _, r := range roots {
				if !slices.Contains(out[i].Roots, r) {
					out[i].Roots = append(out[i].Roots, r)
				}
			}
			sort.Strings(out[i].Roots)
			continue
		}
		said[key] = len(out)
		// Cargo rewrites a record only when it rebuilds the unit, and a damaged record with an old
		// mtime does not make it do so: removing the unit's folder (or touching its sources) does.
		fix := "remove the folder that holds it (or touch the package's sources), then cargo build: Cargo rewrites a record only when it rebuilds the unit"
		if g.BuildDir != "" && !strings.HasPrefix(p.Path, g.BuildDir+string(filepath.Separator)) {
			// A manifest, Cargo.lock or config: Cargo reads it too, and nothing rewrites it.
			fix = "make " + display(g, p.Path) + " a readable regular file again (Cargo cannot build with it either)"
		}
		sys := foreignSystemOf(g, p.Path)
		if sys != "" {
			fix = "repair or remove " + display(g, p.Path) + ": the next " + sys + " run writes its records afresh (and may redo the steps they recorded)"
		}
		if p.Fix != "" {
			fix = p.Fix
		}
		why := withoutPath(p.Err, p.Path)
		out = append(out, Finding{
			Rule: "unreadable-record", Severity: Warning,
			Message:  fmt.Sprintf("could not read %s: %s; the check went on without it", display(g, p.Path), why),
			Subjects: []string{p.Path},
			Evidence: []Evidence{{Kind: "record", Path: p.Path, Detail: p.Err}},
			Fix:      fix,
			System:   sys,
			Roots:    roots,
		})
	}
	return out
}

// problemOwner is the step a problem is a record of: the one the reader named, else the step whose
// output or record folder holds the path (the index built once, in *owners, when first needed).
func problemOwner(g *graph.Graph, p *graph.Problem, owners **ownerIndex) *graph.Step {
	if p.Step != nil {
		return p.Step
	}
	if *owners == nil {
		*owners = newOwnerIndex(g)
	}
	return (*owners).owner(p.Path)
}

// liveProblem returns a problem (an unreadable record) of a step in profile folder prof that a root
// reaches, or nil: what that record holds (a unit's dependency edges, a run's libraries) is unknown.
func liveProblem(g *graph.Graph, prof string) *graph.Problem {
	var owners *ownerIndex
	for i := range g.Problems {
		p := &g.Problems[i]
		owner := problemOwner(g, p, &owners)
		if owner != nil && owner.Live() && owner.ProfileDir == prof {
			return p
		}
	}
	return nil
}

// withoutPath is a reader's error without the path the message already names: a parser's error begins
// with it ("<path>: …"), an *fs.PathError with its operation ("open <path>: …").
func withoutPath(err, path string) string {
	i := strings.Index(err, path+": ")
	if i < 0 || i > 0 && (err[i-1] != ' ' || strings.ContainsAny(err[:i-1], " :")) {
		return err
	}
	return err[i+len(path)+2:]
}

// orphanedBuildDir: a build/<pkg>-<hash> folder that no root reaches. It may still serve a
// configuration not currently uplifted (another feature set); it is reported with the bytes it holds.
// What is orphaned is the graph's one notion (graph.OrphanedBuildDirs), which clean removes: profile
// folders with no root at all (e.g. only `cargo check` ran), a root not tied to its unit or an
// unreadable fingerprint record are not judged; a failed unit of a live configuration is live.
func orphanedBuildDir(g *graph.Graph) []Finding {
	var out []Finding
	for _, d := range g.OrphanedBuildDirs() {
		var cfg string
		for _, s := range d.Steps {
			cfg = configString(s)
		}
		detail := "no fingerprint record names this folder"
		if cfg != "" {
			detail = "configuration " + cfg
		}
		out = append(out, Finding{
			Rule: "orphaned-build-dir", Severity: Info,
			Message:  fmt.Sprintf("%s is reached by no current root (%s); it holds %s", display(g, d.Path), detail, humanize.Bytes(d.Bytes)),
			Subjects: []string{d.Path},
			Evidence: []Evidence{{Kind: "artifact", Path: d.Path, Size: d.Bytes, Detail: detail}},
			Fix:      "if no configuration you build needs it any more: stalecheck clean (a dry run lists it; --yes removes it)",
		})
	}
	return out
}
