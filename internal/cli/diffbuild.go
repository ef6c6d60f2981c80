package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/stalecheck/stalecheck/internal/benchgroup"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
)

// diffSide is one argument of diff: a run (by ID) or a build identity (by BuildKey prefix, see
// benchgroup.BuildPrefix). Rec is the run, or the build's newest run, whose identity the build
// differences are computed from; Group is the build's runs of Rec's name (nil when the ledger holds
// no other record of it, which cannot happen for a run it holds).
type diffSide struct {
	Arg     string
	ByBuild bool
	Rec     *ledger.Record
	Group   *benchgroup.Group
}

// resolveDiffSides reads what diff's two arguments name. name (--name) restricts build identities to
// the runs of one benchmark name.
func resolveDiffSides(ctx context.Context, l ledger.Ledger, dsn string, args []string, name string) ([2]diffSide, error) {
	var sides [2]diffSide
	var groups []*benchgroup.Group
	listed := false
	list := func() error {
		if listed {
			return nil
		}
		listed = true
		recs, err := l.List(ctx, ledger.Filter{Name: name})
		if err != nil {
			return err
		}
		groups = benchgroup.ByBuild(recs)
		return nil
	}
	for i, a := range args {
		sides[i].Arg = a
		if prefix, ok := benchgroup.BuildPrefix(a); ok {
			if err := list(); err != nil {
				return sides, err
			}
			g, err := benchgroup.Find(groups, prefix, name)
			if err != nil {
				return sides, err
			}
			sides[i].ByBuild, sides[i].Group, sides[i].Rec = true, g, g.Newest()
			continue
		}
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return sides, fmt.Errorf("%q is neither a run ID nor a build (a run ID is a number, a build 4 to 12 hex digits of its key or build:HEX; stalecheck runs --group-by build lists them)", a)
		}
		r, err := l.Get(ctx, id)
		if errors.Is(err, ledger.ErrNotFound) {
			return sides, fmt.Errorf("no run %d in the ledger %s", id, ledger.Location(dsn))
		}
		if err != nil {
			return sides, err
		}
		sides[i].Rec = r
	}
	// A run's build: the runs of its name with its build key.
	for i := range sides {
		if sides[i].ByBuild {
			continue
		}
		recs, err := l.List(ctx, ledger.Filter{Name: sides[i].Rec.Name})
		if err != nil {
			return sides, err
		}
		sides[i].Group = benchgroup.Of(benchgroup.ByBuild(recs), sides[i].Rec.ID)
	}
	return sides, nil
}

// writeDiffBuilds prints, for each side named by its build, which runs it stands for, then the change
// in median with its confidence interval (or why there is none).
func writeDiffBuilds(w io.Writer, sides [2]diffSide, why error) {
	for _, s := range sides {
		if s.ByBuild {
			fmt.Fprintf(w, "build %s  %s  %d run(s) that exited 0 of %d (runs %s); its newest run is shown: %s\n", s.Group.Key, report.Escape(s.Group.Name),
				len(s.Group.Timed), len(s.Group.Records), benchgroup.IDRanges(s.Group.IDs()), report.Escape(s.Group.Description))
		}
	}
	if why != nil && (sides[0].ByBuild || sides[1].ByBuild) {
		fmt.Fprintf(w, "%s\n", escapeErr(why.Error()))
	}
}

// diffMedian computes the change in median between the two sides' builds (nil and the reason when
// there is none).
func diffMedian(sides [2]diffSide) (*medianChangeJSON, string, error) {
	a, b := sides[0].Group, sides[1].Group
	if a == nil || b == nil {
		return nil, "", errors.New("no confidence interval: a run's build is not in the ledger")
	}
	if oneBuild(sides) {
		return nil, "", errors.New("no confidence interval: both runs are of one build")
	}
	j, c, err := medianChange(a, b)
	if err != nil {
		return nil, "", err
	}
	return j, medianChangeLine(c, j.NA, j.NB), nil
}
