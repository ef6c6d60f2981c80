package systems

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// TestUnrelatedTiesByBuildFolder: a program whose input lies in another build's folder belongs to
// that build even when the file is gone (cargo clean -p removed the staticlib it links), while a
// build that names nothing of the others stays apart.
func TestUnrelatedTiesByBuildFolder(t *testing.T) {
	cargoG := &graph.Graph{System: "cargo", TargetDir: "/ws/rs/target", BuildDir: "/ws/rs/target"}
	goG := &graph.Graph{System: "go", Steps: []*graph.Step{{ID: "link", Inputs: []*graph.Input{
		{File: graph.FileInfo{Path: "/ws/rs/target/release/librs.a", Exists: false}}}}}}
	makeG := &graph.Graph{System: "make", BuildDir: "/ws/other", Steps: []*graph.Step{{ID: "cc", Inputs: []*graph.Input{
		{File: graph.FileInfo{Path: "/ws/rs/targetx/lib.a", Exists: true}}}}}}
	got := unrelated([]*graph.Graph{cargoG, goG, makeG})
	if diff := cmp.Diff([][]int{{0, 1}, {2}}, got); diff != "" {
		t.Errorf("unrelated (-want +got):\n%s", diff)
	}
}
