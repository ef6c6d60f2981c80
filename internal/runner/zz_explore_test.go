package runner

import (
	"fmt"
	"testing"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/check"
)

func TestZZExplore(t *testing.T) {
	l, err := cargo.Locate("/tmp/rw/ws", cargo.LocateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := cargo.Read(l, cargo.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range g.Roots {
		fmt.Println("ROOT", r.Kind, r.File.Path, r.Unit != nil, r.TiedBy)
		for _, s := range r.Reach() {
			fmt.Println("  STEP", s.Kind, s.Package, s.Hash, s.Target, s.Config.ProfileDir, s.Config.Features, len(s.Inputs), s.RerunEnv, s.Links)
			for _, in := range s.Inputs {
				fmt.Println("     IN", in.File.Path, in.How, in.Watched)
			}
		}
	}
	for _, f := range check.Run(g, check.Options{}) {
		fmt.Println(f.Severity, f.Rule, f.Roots)
	}
}
