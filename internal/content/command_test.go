package content

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// A recipe edited in the makefile after the step ran: the command recorded while the makefile was older
// than the step is the baseline the new command is judged against.
func TestCommandBaseline(t *testing.T) {
	dir := t.TempDir()
	mk := filepath.Join(dir, "Makefile")
	ref := filepath.Join(dir, "a.o")
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{mk, ref} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(mk, old, old); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(ref)
	mkStep := func(cmd string) (*graph.Graph, *graph.Step) {
		s := &graph.Step{ID: "make:" + ref, System: "make", Label: "a.o", PathPackage: true, Command: cmd, CommandData: &graph.CommandRecords{CommandFrom: mk},
			Reference: graph.FileInfo{Path: ref, MTimeNS: st.ModTime().UnixNano(), Exists: true}}
		s.Roots = []*graph.Root{{File: graph.FileInfo{Path: filepath.Join(dir, "app")}}}
		return &graph.Graph{Workspace: dir, Steps: []*graph.Step{s}}, s
	}
	store := OpenStore("")
	g, s := mkStep("cc -c a.c -o a.o")
	Annotate(g, Options{Baselines: store})
	if s.Cmd().CommandContent != nil {
		t.Fatalf("the makefile is older than the step: record, do not judge (%+v)", s.Cmd().CommandContent)
	}
	// The makefile is edited after the step (ctime and mtime move past the reference).
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(mk, []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, s = mkStep("cc -DFAST -c a.c -o a.o")
	Annotate(g, Options{Baselines: store})
	if c := s.Cmd().CommandContent; c == nil || c.Verdict != graph.ContentDiffers {
		t.Fatalf("a changed command: want differs, got %+v", c)
	}
	g, s = mkStep("cc -c a.c -o a.o")
	Annotate(g, Options{Baselines: store})
	if c := s.Cmd().CommandContent; c == nil || c.Verdict != graph.ContentSame {
		t.Fatalf("the same command: want same, got %+v", c)
	}
}
