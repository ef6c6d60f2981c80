package benchgroup

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/ledger"
)

func TestBuildPrefix(t *testing.T) {
	for arg, want := range map[string]string{"3f2a": "3f2a", "3F2A9C1B2D3E": "3f2a9c1b2d3e", "build:1234": "1234", "build:7": "7"} {
		if got, ok := BuildPrefix(arg); !ok || got != want {
			t.Errorf("BuildPrefix(%q) = %q, %v; want %q", arg, got, ok, want)
		}
	}
	for _, arg := range []string{"12", "123456", "abc", "3f2a9c1b2d3e0", "xyz1", "build:", "build:zz", "-3f2a"} {
		if got, ok := BuildPrefix(arg); ok {
			t.Errorf("BuildPrefix(%q) = %q: a run ID or nothing, not a build", arg, got)
		}
	}
}

func TestByBuildAndFind(t *testing.T) {
	id := func(d string) ledger.Identity {
		return ledger.Identity{Binaries: []ledger.Binary{{Path: "/w/app", Digest: "blake3:" + d}}}
	}
	recs := []ledger.Record{
		{ID: 3, Name: "b", WallNS: 30, Identity: id("x")},
		{ID: 1, Name: "a", WallNS: 10, Identity: id("x")},
		{ID: 2, Name: "a", WallNS: 20, ExitStatus: 1, Identity: id("x")},
		{ID: 4, Name: "a", WallNS: 40, Identity: id("y"), Stale: true},
	}
	gs := ByBuild(recs)
	if len(gs) != 3 || gs[0].Name != "a" || len(gs[0].Records) != 2 || len(gs[0].Timed) != 1 || gs[0].Wall.N != 1 || gs[0].Wall.Median != 10 ||
		gs[1].Stale != 1 || gs[2].Name != "b" || !strings.HasPrefix(gs[0].Description, "app blake3:x") {
		t.Fatalf("groups: %+v %+v %+v", gs[0], gs[1], gs[2])
	}
	if _, err := Find(gs, gs[0].Key[:4], ""); err == nil || !strings.Contains(err.Error(), "several names") {
		t.Errorf("a build under two names without --name: %v", err)
	}
	if g, err := Find(gs, gs[0].Key[:4], "b"); err != nil || g.Name != "b" {
		t.Errorf("--name b: %v", err)
	}
	if _, err := Find(gs, "", "a"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("an empty prefix matches two keys: %v", err)
	}
	if Of(gs, 4) != gs[1] || Of(gs, 99) != nil {
		t.Error("Of")
	}
}
