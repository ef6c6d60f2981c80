package tracejoin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/trace"
	"github.com/stalecheck/stalecheck/internal/tracejoin"
)

// No trace is nothing; a damaged store (truncated after the header, random bytes) is a graph problem
// naming the store file, never a panic; explain on it is an error naming the file.
func TestJoinNoTraceAndDamagedStore(t *testing.T) {
	state, build := t.TempDir(), t.TempDir()
	g := &graph.Graph{BuildDir: build}
	if res := tracejoin.Join(g, tracejoin.Options{StateDir: state}); len(res.Traces) != 0 || len(g.Problems) != 0 || len(g.Notes) != 0 {
		t.Fatalf("no trace: %+v, problems %v, notes %v", res, g.Problems, g.Notes)
	}
	file := trace.Path(state, build)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{"stalecheck-trace v1\nH\x00", "\x00\x01\x02garbage", "stalecheck-trace v1\n"} {
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		g := &graph.Graph{BuildDir: build}
		tracejoin.Join(g, tracejoin.Options{StateDir: state})
		if len(g.Problems) != 1 || g.Problems[0].Path != file || g.Problems[0].Err == "" || !strings.Contains(g.Problems[0].Fix, "run stalecheck trace -- BUILD again") {
			t.Errorf("damaged store %q: problems %+v", data, g.Problems)
		}
		if _, err := tracejoin.Explain(state, []string{build}, filepath.Join(build, "x")); err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("explain on a damaged store %q: %v", data, err)
		}
	}
}
