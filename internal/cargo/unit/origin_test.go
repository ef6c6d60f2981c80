package unit

import (
	"testing"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// TestRebuildNamesTargets: the fix builds the roots' targets a plain cargo build leaves out.
func TestRebuildNamesTargets(t *testing.T) {
	root := func(target string) *graph.Root {
		return &graph.Root{Step: &graph.Step{Origin: &Unit{Target: target}, Package: "k4"}}
	}
	for _, tc := range []struct {
		targets []string
		want    string
	}{
		{[]string{"bin-k4"}, "cargo build"},
		{[]string{"example-ex"}, "cargo build --example ex"},
		{[]string{"test-integration-test-it"}, "cargo build --test it"},
		{[]string{"test-integration-test-it", "test-lib-k4"}, "cargo build --tests"},
		{[]string{"bin-k4", "example-ex", "bench-b"}, "cargo build --bench b --bins --example ex"},
	} {
		s := &graph.Step{ProfileDir: "debug", Origin: &Unit{Target: "lib-k4"}}
		for _, tg := range tc.targets {
			s.Roots = append(s.Roots, root(tg))
		}
		if got := Of(s).Rebuild(s); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.targets, got, tc.want)
		}
	}
}
