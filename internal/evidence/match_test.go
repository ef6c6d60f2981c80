package evidence

import (
	"github.com/stalecheck/stalecheck/internal/testutil/fixtures"
	"os"
	"path/filepath"
	"testing"
)

func matchFiles(t *testing.T, bin string, cands ...string) *Result {
	t.Helper()
	b, err := OpenBinary(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var cs []*Candidate
	for _, c := range cands {
		cd, err := ReadCandidate(c)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, cd)
	}
	r, err := Match(b, cs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// S15: the linkorder executables hold the copy the run_*.txt truth says: app_a_first v1 (linkorder/a),
// app_b_first v2 (linkorder/b).
func TestS15LinkOrderFixtures(t *testing.T) {
	fixtures := fixtures.CUDA(t)
	a := filepath.Join(fixtures, "linkorder/a/libgroth16_cuda.a")
	b := filepath.Join(fixtures, "linkorder/b/libgroth16_cuda.a")
	for bin, want := range map[string]string{"linkorder/app_a_first": a, "linkorder/app_b_first": b} {
		r := matchFiles(t, filepath.Join(fixtures, bin), a, b)
		got := r.MatchedPaths()
		if r.Outcome != Matched || len(got) != 1 || got[0] != want {
			t.Errorf("%s: outcome %s matched %v, want %s; %+v", bin, r.Outcome, got, want, r)
			continue
		}
		if r.Confidence != "certain" {
			t.Errorf("%s: confidence %s", bin, r.Confidence)
		}
	}
	if _, err := os.Stat(filepath.Join(fixtures, "linkorder/run_a_first.txt")); err != nil {
		t.Fatal(err)
	}
}
