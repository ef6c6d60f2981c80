package cargo_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// ReadOptions.LiveRecords reads the fingerprint JSON of the units the roots reach only: liveness, the
// live units' edges, the roots and the build folders are a full read's, with dead copies of every
// unit (a RUSTFLAGS change rebuilt them all) and of one package (a feature change); a damaged JSON of
// a dead unit is not read, so it no longer keeps the profile from being judged.
func TestLiveRecordsSameLiveness(t *testing.T) {
	testutil.NeedDebianCrates(t)
	p := testutil.NewProject(t, layoutWorkspace(t))
	p.Cargo("build")
	p.Cargo("build", "--features", "app/fast")
	p.Env = append(p.Env, "RUSTFLAGS=--cfg=stalecheck_test")
	p.Cargo("build")
	p.Cargo("test", "--no-run")
	read := func(opt cargo.ReadOptions) *graph.Graph { return readGraphWith(t, p, opt) }
	full, lazy := shapeOf(read(cargo.ReadOptions{})), shapeOf(read(cargo.ReadOptions{LiveRecords: true}))
	// Only the dead units' edges may be missing from the lazy read.
	live := map[string]bool{}
	dead := 0
	for _, s := range read(cargo.ReadOptions{}).Steps {
		live[s.ID] = s.Live()
		if !s.Live() && s.Kind == graph.Compile {
			dead++
		}
	}
	if dead < 5 {
		t.Fatalf("premise: %d dead lib, bin or test units", dead)
	}
	liveEdges := func(edges []string) (out []string) {
		for _, e := range edges {
			if from, _, _ := strings.Cut(e, " -> "); live[from] {
				out = append(out, e)
			}
		}
		return out
	}
	full.Edges, lazy.Edges = liveEdges(full.Edges), liveEdges(lazy.Edges)
	if d := cmp.Diff(full, lazy); d != "" {
		t.Fatalf("LiveRecords read differs from a full read (-full +lazy):\n%s", d)
	}
	// A dead unit's damaged JSON: the full read cannot judge the profile, the lazy read never reads it.
	var victim string
	for _, s := range read(cargo.ReadOptions{}).Steps {
		if !s.Live() && s.Kind == graph.Compile && s.ProfileDir == "debug" {
			victim = filepath.Join(s.RecordDir, s.Label+".json")
			break
		}
	}
	if err := os.WriteFile(victim, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if g := read(cargo.ReadOptions{}); g.Unjudged["debug"] == "" {
		t.Errorf("full read: a damaged %s left debug judged", victim)
	}
	if g := read(cargo.ReadOptions{LiveRecords: true}); g.Unjudged["debug"] != "" || len(g.Problems) != 0 {
		t.Errorf("LiveRecords read: debug unjudged (%q) or problems %+v for a dead unit's record", g.Unjudged["debug"], g.Problems)
	}
}
