package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/runner"
)

// TestSourceLines: between two runs at two clean commits, a changed source shows the lines git says
// changed; a dirty side shows none.
func TestSourceLines(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	src := filepath.Join(dir, "csrc", "msm.c")
	write := func(body string) {
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("int window = 16;\nint unchanged = 1;\n")
	git("add", ".")
	git("commit", "-qm", "a")
	headA := git("rev-parse", "HEAD")
	write("int window = 12;\nint unchanged = 1;\n")
	git("commit", "-qam", "b")
	headB := git("rev-parse", "HEAD")
	a := &ledger.Record{WorkDir: dir, Identity: ledger.Identity{Git: ledger.Git{Head: headA}}}
	b := &ledger.Record{WorkDir: dir, Identity: ledger.Identity{Git: ledger.Git{Head: headB}}}
	changes := []runner.Change{{Kind: "source", Change: "changed", Name: "csrc/msm.c", PathA: src, PathB: src}}
	got := sourceLines(context.Background(), a, b, changes)
	if d := cmp.Diff(map[string][]string{"csrc/msm.c": {"-int window = 16;", "+int window = 12;"}}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	b.Identity.Git.Dirty = true
	if got := sourceLines(context.Background(), a, b, changes); got != nil {
		t.Errorf("a dirty side: %q, want nothing", got)
	}
}
