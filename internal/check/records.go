package check

import (
	"fmt"
	"github.com/stalecheck/stalecheck/internal/humanize"
	"path/filepath"
	"strings"

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
		subject := s.FingerprintDir
		if s.RunDir != "" {
			subject = s.RunDir
		}
		what := fmt.Sprintf("%s (%s, profile %s)", unitName(s), s.Target, s.Config.ProfileDir)
		f := Finding{
			Rule: "last-build-failed", Severity: Warning,
			Message:  fmt.Sprintf("the last build of %s did not finish: %s", what, s.Failed),
			Subjects: []string{subject},
			Roots:    rootPaths(s),
			Evidence: []Evidence{{Kind: "failed", Path: subject, Detail: s.Failed}},
			Fix:      buildCmd(s.Config.ProfileDir, rootFeatures(s)) + " (and read its error)",
		}
		out = append(out, f)
	}
	return out
}

// unreadableRecord: a record that could not be read or parsed; the rest of the check went on.
func unreadableRecord(g *graph.Graph) []Finding {
	var out []Finding
	for _, p := range g.Problems {
		out = append(out, Finding{
			Rule: "unreadable-record", Severity: Warning,
			Message:  fmt.Sprintf("could not read %s: %s; the check went on without it", display(g, p.Path), p.Err),
			Subjects: []string{p.Path},
			Evidence: []Evidence{{Kind: "record", Path: p.Path, Detail: p.Err}},
			Fix:      "rebuild the unit (cargo build) so Cargo rewrites the record, or remove the folder that holds it",
		})
	}
	return out
}

// orphanedBuildDir: a build/<pkg>-<hash> folder that no root reaches. It may still serve a
// configuration not currently uplifted (another feature set); it is reported with the bytes it holds.
// Profile folders with no root at all (e.g. only `cargo check` ran) are not judged.
func orphanedBuildDir(g *graph.Graph) []Finding {
	hasRoot := map[string]bool{}
	for _, r := range g.Roots {
		if r.Unit != nil {
			hasRoot[r.Unit.Config.ProfileDir] = true
			if hp := hostOf(r.Unit.Config.ProfileDir); hp != "" {
				hasRoot[hp] = true
			}
		}
	}
	// A profile whose fingerprint records could not all be read cannot be judged: an unreadable
	// record may be the one that ties a folder to a root (unreadable-record says which).
	blind := map[string]bool{}
	for _, p := range g.Problems {
		for _, prof := range g.ProfileDirs {
			if strings.HasPrefix(p.Path, filepath.Join(g.BuildDir, prof, ".fingerprint")+string(filepath.Separator)) ||
				p.Path == filepath.Join(g.BuildDir, prof, ".fingerprint") {
				blind[prof] = true
			}
		}
	}
	var out []Finding
	for _, d := range g.BuildDirs {
		if !hasRoot[d.ProfileDir] || blind[d.ProfileDir] || blind[hostOf(d.ProfileDir)] {
			continue
		}
		live := false
		var cfg string
		for _, s := range d.Steps {
			if s.Live() {
				live = true
			}
			cfg = configString(s.Config)
		}
		if live {
			continue
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

func hostOf(prof string) string {
	for i := 0; i < len(prof); i++ {
		if prof[i] == '/' {
			return prof[i+1:]
		}
	}
	return ""
}
