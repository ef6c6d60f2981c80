package unit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// Config spells features as fmt's %q of each, joined by ", " in brackets, the compile kind in decimal.
func TestConfig(t *testing.T) {
	u := &Unit{Rustflags: []string{"-C", "target-cpu=native"}, CompileKind: 18446744073709551615}
	u.Features = []string{"std", `we"ird`, "ünï", "tab\there", "\x00"}
	q := make([]string, len(u.Features))
	for i, f := range u.Features {
		q[i] = fmt.Sprintf("%q", f)
	}
	want := graph.Config{{Key: "profile", Value: "release"}, {Key: "features", Value: "[" + strings.Join(q, ", ") + "]"},
		{Key: "rustflags", Value: "-C target-cpu=native"}, {Key: "compile kind", Value: "18446744073709551615"}}
	if d := cmp.Diff(want, Config(u, "release")); d != "" {
		t.Errorf("Config (-want +got):\n%s", d)
	}
	if d := cmp.Diff(graph.Config{{Key: "profile", Value: "debug"}, {Key: "features", Value: "[]"}}, Config(&Unit{}, "debug")); d != "" {
		t.Errorf("Config of a unit without features (-want +got):\n%s", d)
	}
}
