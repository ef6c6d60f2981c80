package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/stalecheck/stalecheck/internal/benchgroup"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/stats"
)

// buildJSON is one build identity's statistics as `runs --group-by build` and `diff` write them: all
// times are integer nanoseconds (rounded to the nearest ns), over the runs that exited 0.
type buildJSON struct {
	Name        string  `json:"name"`
	Build       string  `json:"build"`
	Description string  `json:"description"`
	Runs        int     `json:"runs"`   // records of this name and build, whatever their exit status
	N           int     `json:"n"`      // of them, the runs that exited 0: the sample below
	Failed      int     `json:"failed"` // runs with a non-zero exit status (left out of the sample)
	Stale       int     `json:"stale"`  // runs marked stale (--allow-stale)
	MedianNS    *int64  `json:"median_ns"`
	MeanNS      *int64  `json:"mean_ns"`
	StddevNS    *int64  `json:"stddev_ns"` // sample standard deviation; 0 for n = 1
	MinNS       *int64  `json:"min_ns"`
	MaxNS       *int64  `json:"max_ns"`
	MADNS       *int64  `json:"mad_ns"` // median absolute deviation from the median
	Outliers    int     `json:"outliers"`
	FirstNS     int64   `json:"first_start_ns"`
	LastNS      int64   `json:"last_start_ns"`
	RunIDs      []int64 `json:"run_ids"`
}

func nsPtr(v float64) *int64 { n := int64(math.Round(v)); return &n }

func newBuildJSON(g *benchgroup.Group) buildJSON {
	first, last := g.Span()
	j := buildJSON{Name: g.Name, Build: g.Key, Description: g.Description, Runs: len(g.Records), N: g.Wall.N,
		Failed: len(g.Records) - len(g.Timed), Stale: g.Stale, Outliers: g.Wall.Outliers, RunIDs: g.IDs()}
	if !first.IsZero() {
		j.FirstNS, j.LastNS = first.UnixNano(), last.UnixNano()
	}
	if g.Wall.N > 0 {
		w := g.Wall
		j.MedianNS, j.MeanNS, j.StddevNS, j.MinNS, j.MaxNS, j.MADNS = nsPtr(w.Median), nsPtr(w.Mean), nsPtr(w.StdDev), nsPtr(w.Min), nsPtr(w.Max), nsPtr(w.MAD)
	}
	return j
}

// medianChangeJSON is the change in median wall time from build A to build B with its confidence
// interval (internal/stats.MedianChangeCI: percentile bootstrap, fixed seed).
type medianChangeJSON struct {
	Method     string   `json:"method"` // "percentile-bootstrap"
	Level      float64  `json:"level"`  // 0.95
	Resamples  int      `json:"resamples"`
	NA         int      `json:"n_a"`
	NB         int      `json:"n_b"`
	MedianANS  int64    `json:"median_a_ns"`
	MedianBNS  int64    `json:"median_b_ns"`
	ChangeNS   int64    `json:"change_ns"` // median B − median A
	ChangeLoNS int64    `json:"change_low_ns"`
	ChangeHiNS int64    `json:"change_high_ns"`
	Rel        *float64 `json:"rel"` // median B / median A − 1 (0.192 for +19.2%); null when median A is 0
	RelLo      *float64 `json:"rel_low"`
	RelHi      *float64 `json:"rel_high"`
}

// ciLevel is the confidence level of diff's interval.
const ciLevel = 0.95

// medianChange computes the change in median wall time from a to b; the error says why there is none.
func medianChange(a, b *benchgroup.Group) (*medianChangeJSON, stats.Change, error) {
	c, err := stats.MedianChangeCINS(a.WallNS(), b.WallNS(), ciLevel)
	if errors.Is(err, stats.ErrTooFew) {
		return nil, c, fmt.Errorf("no confidence interval: build %s has %d and build %s has %d run(s) that exited 0; it needs at least 2 each (stalecheck run --repeat N)", a.Key, len(a.Timed), b.Key, len(b.Timed))
	}
	if err != nil {
		return nil, c, err
	}
	j := &medianChangeJSON{Method: "percentile-bootstrap", Level: c.Level, Resamples: c.Resamples, NA: len(a.Timed), NB: len(b.Timed),
		MedianANS: int64(math.Round(c.MedianA)), MedianBNS: int64(math.Round(c.MedianB)),
		ChangeLoNS: int64(math.Round(c.AbsLo)), ChangeHiNS: int64(math.Round(c.AbsHi))}
	j.ChangeNS = j.MedianBNS - j.MedianANS // the rounded medians' difference, so the JSON adds up
	if c.RelOK {
		j.Rel, j.RelLo, j.RelHi = &c.Rel, &c.RelLo, &c.RelHi
	}
	return j, c, nil
}

// medianChangeLine is the sentence diff prints: "median +19.2% (95% CI +17.8…+20.5%), 1.000 s → 1.192 s, n 5 and 5".
func medianChangeLine(c stats.Change, na, nb int) string {
	u := stats.PickUnit(math.Max(math.Abs(c.MedianA), math.Abs(c.MedianB)))
	var s string
	if c.RelOK {
		s = fmt.Sprintf("median %+.1f%% (%.0f%% CI %+.1f…%+.1f%%)", 100*c.Rel, 100*c.Level, 100*c.RelLo, 100*c.RelHi)
	} else {
		s = fmt.Sprintf("median %s (%.0f%% CI %s…%s)", signed(c.Abs, u), 100*c.Level, signed(c.AbsLo, u), signed(c.AbsHi, u))
	}
	return fmt.Sprintf("%s, %s → %s, n %d and %d runs", s, u.Format(c.MedianA), u.Format(c.MedianB), na, nb)
}

func signed(ns float64, u stats.Unit) string {
	s := u.Format(math.Abs(ns))
	if ns < 0 {
		return "-" + s
	}
	return "+" + s
}

// writeRepeatSummary prints hyperfine's summary of a run --repeat: mean ± σ with user and system
// means, the median, the range and the outliers (stats.OutlierThreshold, hyperfine's rule).
func writeRepeatSummary(w io.Writer, name, build string, wall, user, sys []int64) {
	s, err := stats.SummarizeNS(wall)
	if err != nil {
		return
	}
	us, _ := stats.SummarizeNS(user)
	ss, _ := stats.SummarizeNS(sys)
	u := stats.PickUnit(s.Mean)
	fmt.Fprintf(w, "stalecheck: %s, build %s: %d runs that exited 0\n", report.Escape(name), build, s.N)
	fmt.Fprintf(w, "  Time (mean ± σ):   %s ± %s    [User: %s, System: %s]\n", u.Format(s.Mean), u.Format(s.StdDev), stats.PickUnit(us.Mean).Format(us.Mean), stats.PickUnit(ss.Mean).Format(ss.Mean))
	fmt.Fprintf(w, "  Time (median):     %s\n", u.Format(s.Median))
	out := "no outliers"
	if s.Outliers > 0 {
		out = fmt.Sprintf("%d %s (more than 10 robust σ from the median)", s.Outliers, map[bool]string{true: "outlier", false: "outliers"}[s.Outliers == 1])
	}
	fmt.Fprintf(w, "  Range (min … max): %s … %s    %s\n", u.Format(s.Min), u.Format(s.Max), out)
}

// writeGroupsText is `runs --group-by build` for people.
func writeGroupsText(w io.Writer, groups []*benchgroup.Group) {
	var b strings.Builder
	for _, g := range groups {
		j := newBuildJSON(g)
		fmt.Fprintf(&b, "%s  build %s  %d run(s)", report.Escape(g.Name), g.Key, j.Runs)
		if j.Failed > 0 {
			fmt.Fprintf(&b, ", %d failed (left out)", j.Failed)
		}
		if j.Stale > 0 {
			fmt.Fprintf(&b, ", %d stale", j.Stale)
		}
		fmt.Fprintf(&b, "  runs %s\n", benchgroup.IDRanges(j.RunIDs))
		fmt.Fprintf(&b, "  %s\n", report.Escape(g.Description))
		if g.Wall.N == 0 {
			b.WriteString("  no run exited 0: no statistics\n")
			continue
		}
		s := g.Wall
		u := stats.PickUnit(s.Mean)
		fmt.Fprintf(&b, "  n %d  median %s  mean %s ± %s  min %s  max %s  outliers %d\n", s.N, u.Format(s.Median), u.Format(s.Mean), u.Format(s.StdDev), u.Format(s.Min), u.Format(s.Max), s.Outliers)
	}
	io.WriteString(w, b.String())
}

// RunsGroupsDoc is the JSON document of `stalecheck runs --group-by build`.
type RunsGroupsDoc struct {
	report.Envelope
	Ledger  string      `json:"ledger"`
	GroupBy string      `json:"group_by"` // "build"
	Builds  []buildJSON `json:"builds"`
}

func writeGroups(st Streams, format, dsn string, recs []ledger.Record) error {
	groups := benchgroup.ByBuild(recs)
	if format == "json" {
		doc := RunsGroupsDoc{Envelope: report.Envelope{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "runs"},
			Ledger: ledger.Location(dsn), GroupBy: "build", Builds: []buildJSON{}}
		for _, g := range groups {
			doc.Builds = append(doc.Builds, newBuildJSON(g))
		}
		if err := report.WriteJSON(st.Out, doc); err != nil {
			return &ExitError{2, err}
		}
		return nil
	}
	if len(groups) == 0 {
		fmt.Fprintf(st.Out, "No runs in %s.\n", report.Escape(ledger.Location(dsn)))
		return nil
	}
	writeGroupsText(st.Out, groups)
	return nil
}
