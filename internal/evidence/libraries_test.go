package evidence

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// TestLibrariesFindsTheLinkedArchiveOutsideOutDir: a build script that runs make in its source tree
// links csrc/libtruth.a through a link-search folder outside OUT_DIR; that archive is a copy of the
// library beside the OUT_DIR ones, so which can judge it.
func TestLibrariesFindsTheLinkedArchiveOutsideOutDir(t *testing.T) {
	dir := t.TempDir()
	inTree := filepath.Join(dir, "pkg", "csrc", "libtruth.a")
	inOut := filepath.Join(dir, "target", "debug", "build", "pkg-1", "out", "libtruth.a")
	for _, p := range []string{inTree, inOut} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("!<arch>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := &graph.Graph{Steps: []*graph.Step{
		{ID: "a", Kind: graph.ScriptRun, ScriptData: &graph.ScriptDetails{LinkSearch: []string{filepath.Dir(inTree)},
			Links: []graph.Link{{Kind: "static", Name: "truth", Path: inTree, Modifiers: "-bundle"}}}},
		{ID: "b", Kind: graph.ScriptRun, Outputs: []graph.FileInfo{{Path: inOut, Exists: true}}},
	}}
	libs := Libraries(g, nil, "truth")
	if len(libs) != 1 {
		t.Fatalf("libraries: %+v", libs)
	}
	var got []string
	for _, c := range libs[0].Copies {
		got = append(got, c.Path)
	}
	if len(got) != 2 || got[0] != inTree || got[1] != inOut {
		t.Errorf("copies = %v, want %s and %s", got, inTree, inOut)
	}
}
