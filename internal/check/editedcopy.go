package check

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// editedCopyNotBuilt: a copy of a package was edited after the package's live units were last built,
// and the build will never use the edit:
//   - the copy is a registry, directory (vendored) or git source: Cargo treats those as immutable and
//     never looks at their files (a build script without rerun-if lines is keyed on the version, the
//     compile units' dep-info drops package files, rerun-if paths under $CARGO_HOME are skipped) (S08);
//   - the copy is a [patch] path that the build does not use (its version does not satisfy the
//     dependency: Cargo.lock lists it under [[patch.unused]]), so the original is built (S09).
//
// "Edited" means modified after the earliest last build (reference mtime) of the package's live units.
func editedCopyNotBuilt(g *graph.Graph) []Finding {
	var out []Finding
	for _, c := range g.PackageCopies() {
		if c.EditedCount == 0 || len(c.Edited) == 0 {
			continue
		}
		live := livePackageUnits(g, c.Name)
		if len(live) == 0 {
			continue
		}
		roots := map[string]bool{}
		for _, s := range live {
			for _, r := range rootPaths(s) {
				roots[r] = true
			}
		}
		newest := c.Edited[0]
		var f Finding
		switch {
		case c.Source == "patch" && c.Used:
			continue // a path package: Cargo watches its files (pending-rebuild reports edits)
		case c.Source == "patch":
			used := usedCopies(live)
			where := make([]string, len(used))
			for i, u := range used {
				where[i] = fmt.Sprintf("%s %s from %s (%s)", c.Name, u.Records().Version, u.PackageRoot, sourceWords(u))
			}
			why := "the patch is not applied"
			if c.UnusedPatch {
				why = fmt.Sprintf("Cargo.lock lists %s %s under [[patch.unused]]: the patch does not satisfy the dependency (a version or feature the dependents need), so Cargo builds the original", c.Name, c.Version)
			}
			f = Finding{
				Rule: "edited-copy-not-built", Severity: Error,
				Message: fmt.Sprintf("%s, the [patch] copy of %s %s (%s), has %d file(s) modified after %s was last built at %s (%s at %s), but Cargo takes %s: %s; the edits are in no binary",
					c.Root, c.Name, c.Version, c.Patch, c.EditedCount, c.Name, fmtTime(c.Since), display(g, newest.Path), fmtTime(newest.MTimeNS),
					strings.Join(where, " and "), why),
				Subjects: []string{c.Root},
				Fix: fmt.Sprintf("make the patch apply: give %s a version that satisfies the dependency (Cargo builds %s), then run cargo update -p %s and %s; `cargo build -v` warns \"Patch `%s` was not used in the crate graph\" while it does not apply",
					filepath.Join(c.Root, "Cargo.toml"), versionsOf(used), c.Name, rebuildCmd(live[0]), c.Name),
			}
			for _, u := range used {
				f.Subjects = append(f.Subjects, u.PackageRoot)
			}
		default:
			kind := map[string]string{
				"registry":  "a registry source under $CARGO_HOME",
				"directory": "a directory (vendored) source that replaces a registry",
				"git":       "a git checkout",
			}[c.Source]
			table := "crates-io"
			if strings.HasPrefix(c.SourceID, "git+") {
				u, _, _ := strings.Cut(strings.TrimPrefix(c.SourceID, "git+"), "#")
				u, _, _ = strings.Cut(u, "?")
				table = fmt.Sprintf("%q", u)
			} else if strings.HasPrefix(c.SourceID, "registry+") && !strings.Contains(c.SourceID, "github.com/rust-lang/crates.io-index") {
				table = "<registry>"
			}
			ws := "Cargo.toml"
			if g.Workspace != "" {
				ws = filepath.Join(g.Workspace, "Cargo.toml")
			}
			f = Finding{
				Rule: "edited-copy-not-built", Severity: Error,
				Message: fmt.Sprintf("%s was modified at %s, after %s %s was last built at %s; Cargo takes %s from %s (%s) and treats it as immutable: it never looks at those files, so %d edited file(s) there are in no binary",
					display(g, newest.Path), fmtTime(newest.MTimeNS), c.Name, c.Version, fmtTime(c.Since), c.Name, c.Root, kind, c.EditedCount),
				Subjects: []string{newest.Path, c.Root},
				Fix: fmt.Sprintf("to build an edited copy, make it a path package (Cargo watches those): add [patch.%s] %s = { path = %q } to %s, then %s",
					table, c.Name, c.Root, ws, rebuildCmd(live[0])),
			}
			if c.Patch != "" {
				f.Fix = "the copy is named by " + c.Patch + " but is built as a " + c.Source + " source; check the [patch] table, then " + rebuildCmd(live[0])
			}
		}
		f.Roots = sortedKeys(roots)
		for _, e := range c.Edited {
			f.Evidence = append(f.Evidence, Evidence{Kind: "input", Path: e.Path, MTimeNS: e.MTimeNS, Size: e.Size,
				Detail: "modified after the package's last build"})
		}
		if c.EditedCount > len(c.Edited) {
			f.Evidence = append(f.Evidence, Evidence{Kind: "input", Path: c.Root, Detail: fmt.Sprintf("and %d more modified file(s)", c.EditedCount-len(c.Edited))})
		}
		for _, s := range live {
			f.Evidence = append(f.Evidence, Evidence{Kind: "reference", Path: s.Reference.Path, MTimeNS: s.Reference.MTimeNS,
				Detail: fmt.Sprintf("last build of %s (%s) from %s (%s)", unitName(s), s.Label, orUnknown(s.PackageRoot), sourceWords(s))})
		}
		for _, s := range live {
			f.Evidence = append(f.Evidence, rootEvidence(g, s)...)
		}
		out = append(out, f)
	}
	return out
}

// livePackageUnits returns the live units of a package that finished their last build, sorted by ID.
func livePackageUnits(g *graph.Graph, name string) []*graph.Step {
	var out []*graph.Step
	for _, s := range g.Steps {
		if s.Package == name && s.Live() && s.Failed == "" && s.Reference.Exists {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// usedCopies returns one unit per package root among units (the folders Cargo builds from).
func usedCopies(units []*graph.Step) []*graph.Step {
	seen := map[string]bool{}
	var out []*graph.Step
	for _, s := range units {
		if s.PackageRoot == "" || seen[s.PackageRoot] {
			continue
		}
		seen[s.PackageRoot] = true
		out = append(out, s)
	}
	return out
}

func versionsOf(units []*graph.Step) string {
	var vs []string
	seen := map[string]bool{}
	for _, u := range units {
		if u.Records().Version != "" && !seen[u.Records().Version] {
			seen[u.Records().Version] = true
			vs = append(vs, u.Records().Version)
		}
	}
	if len(vs) == 0 {
		return "another version"
	}
	return strings.Join(vs, ", ")
}

// sourceWords says where a unit's package comes from, for sentences.
func sourceWords(s *graph.Step) string {
	switch s.Records().Source {
	case "path":
		return "path package"
	case "registry":
		return "registry source, " + orUnknown(s.Records().SourceID)
	case "directory":
		return "directory source replacing " + orUnknown(s.Records().SourceID)
	case "git":
		return "git checkout of " + orUnknown(s.Records().SourceID)
	}
	return "source unknown"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
