package cli

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/subproc"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/runner"
)

// maxChangedLines bounds the changed lines diff shows per source.
const maxChangedLines = 12

// sourceLines returns, for each source that changed between two runs, the lines git says changed
// between their commits (`git diff --unified=0 A B -- FILE`, the +/- lines only): only when both runs
// recorded a clean work tree at a commit, the commits differ and the file lies in the repository of
// B's working folder. Anything else (a dirty tree, no git, a file git does not track) gives nothing:
// the digests say that it changed, not how.
func sourceLines(ctx context.Context, a, b *ledger.Record, changes []runner.Change) map[string][]string {
	ga, gb := a.Identity.Git, b.Identity.Git
	if ga.Head == "" || gb.Head == "" || ga.Dirty || gb.Dirty || ga.Head == gb.Head || b.WorkDir == "" {
		return nil
	}
	out := map[string][]string{}
	for _, c := range changes {
		if c.Kind != "source" || c.Change != "changed" || c.PathB == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cmd := subproc.Query(exec.CommandContext(ctx, "git", "-C", filepath.Dir(c.PathB), "diff", "--unified=0", "--no-color", "--no-ext-diff", ga.Head, gb.Head, "--", filepath.Base(c.PathB)))
		cmd.Env = append(cmd.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
		diff, err := cmd.Output()
		cancel()
		if err != nil {
			continue
		}
		var lines []string
		for _, l := range strings.Split(string(bytes.TrimSpace(diff)), "\n") {
			if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
				if len(lines) == maxChangedLines {
					lines = append(lines, "…")
					break
				}
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 {
			out[c.Name] = lines
		}
	}
	return out
}
