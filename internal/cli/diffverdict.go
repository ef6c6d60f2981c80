package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stalecheck/stalecheck/internal/benchgroup"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/machine"
	"github.com/stalecheck/stalecheck/internal/stats"
)

// verdictJSON is diff's answer in one place: for wall and CPU time (user + system) and peak RSS, how B's
// median compares with A's, with its 95% interval and whether it is significant (the interval
// excludes no change).
type verdictJSON struct {
	Metric string  `json:"metric"` // "wall", "cpu", "peak_rss"
	Rel    float64 `json:"rel"`    // median B / median A − 1
	RelLo  float64 `json:"rel_low"`
	RelHi  float64 `json:"rel_high"`
	// Significant: the interval excludes no change and the rank-sum test rejects one population at
	// 95% (stats.Change.Significant); P is that test's two-sided p-value.
	Significant bool    `json:"significant"`
	P           float64 `json:"p"`
}

// diffVerdict compares the two builds' runs that exited 0 for each metric. It returns the verdicts, the
// sentence diff opens with, and notes (too few runs, a difference in wall time only, conditions that
// differ). With fewer than 2 runs a side, only the notes say why there is no verdict.
func diffVerdict(sides [2]diffSide, conds []string) (vs []verdictJSON, sentence string, notes []string) {
	a, b := sides[0].Group, sides[1].Group
	if a == nil || b == nil {
		return nil, "", []string{"no verdict: a run's build is not in the ledger"}
	}
	if oneBuild(sides) {
		return nil, "", []string{"no verdict: both runs are of one build (the timing line compares the two runs alone)"}
	}
	if len(a.Timed) < 2 || len(b.Timed) < 2 {
		return nil, "", []string{fmt.Sprintf("no verdict: build %s has %d and build %s has %d run(s) that exited 0; a verdict needs at least 2 each, 10 or more for a small difference (stalecheck run --repeat 10)",
			a.Key, len(a.Timed), b.Key, len(b.Timed))}
	}
	metrics := []struct {
		name string
		of   func(*ledger.Record) int64
	}{
		{"wall", func(r *ledger.Record) int64 { return r.WallNS }},
		{"cpu", func(r *ledger.Record) int64 { return r.UserNS + r.SysNS }},
		{"peak_rss", func(r *ledger.Record) int64 { return r.PeakRSSBytes }},
	}
	for _, m := range metrics {
		c, err := stats.MedianChangeCINS(values(a, m.of), values(b, m.of), ciLevel)
		if err != nil || !c.RelOK {
			if err != nil && !errors.Is(err, stats.ErrTooFew) {
				notes = append(notes, fmt.Sprintf("no %s verdict: %v", m.name, err))
			}
			continue
		}
		vs = append(vs, verdictJSON{Metric: m.name, Rel: c.Rel, RelLo: c.RelLo, RelHi: c.RelHi, Significant: c.Significant(), P: c.P})
	}
	if len(vs) == 0 {
		return nil, "", notes
	}
	var parts []string
	var wall, cpu *verdictJSON
	for i := range vs {
		v := &vs[i]
		switch v.Metric {
		case "wall":
			wall = v
		case "cpu":
			cpu = v
		}
		parts = append(parts, verdictPart(*v))
	}
	sentence = "B against A: " + strings.Join(parts, "; ")
	if wall != nil {
		switch {
		case wall.Significant && wall.Rel > 0:
			sentence = fmt.Sprintf("Performance has regressed: B is %.1f%% slower than A in wall time. ", 100*wall.Rel) + sentence
		case wall.Significant:
			sentence = fmt.Sprintf("Performance has improved: B is %.1f%% faster than A in wall time. ", -100*wall.Rel) + sentence
		default:
			sentence = "No significant change in wall time. " + sentence
		}
		// hyperfine's relative summary, from the same medians and interval.
		if wall.Rel > 0 {
			sentence += fmt.Sprintf(". A ran %.2f times as fast as B (95%% CI %.2f…%.2f)", 1+wall.Rel, 1+wall.RelLo, 1+wall.RelHi)
		} else if wall.Rel < 0 && wall.RelLo > -1 {
			sentence += fmt.Sprintf(". B ran %.2f times as fast as A (95%% CI %.2f…%.2f)", 1/(1+wall.Rel), 1/(1+wall.RelHi), 1/(1+wall.RelLo))
		}
		if wall.Significant && cpu != nil && !cpu.Significant {
			notes = append(notes, "the difference is in wall time only: CPU time did not change significantly (waiting, I/O or a loaded machine, not the code's work)")
		}
	}
	switch {
	case min(len(a.Timed), len(b.Timed)) < 4:
		notes = append(notes, fmt.Sprintf("few runs (%d and %d): with 3 or fewer a side no change can be significant (the rank test's smallest p is 0.1); stalecheck run --repeat 10 or more", len(a.Timed), len(b.Timed)))
	case len(a.Timed) < 10 || len(b.Timed) < 10:
		notes = append(notes, fmt.Sprintf("few runs (%d and %d): the intervals are wide; stalecheck run --repeat 10 or more narrows them", len(a.Timed), len(b.Timed)))
	}
	if len(conds) > 0 {
		notes = append(notes, "the two sides ran under different conditions ("+strings.Join(conds, "; ")+"): a difference may be the machine's, not the build's")
	}
	if la, lb := sides[0].Rec.Machine.Loaded(), sides[1].Rec.Machine.Loaded(); la != "" && lb != "" {
		notes = append(notes, "both sides ran on a loaded machine (A: "+la+"; B: "+lb+"): both times measure the machine too")
	}
	return vs, sentence, notes
}

func verdictPart(v verdictJSON) string {
	what := map[string]string{"wall": "wall", "cpu": "CPU", "peak_rss": "peak RSS"}[v.Metric]
	sig := "not significant"
	switch {
	case v.Significant:
		sig = "significant"
	case v.RelLo > 0 || v.RelHi < 0:
		// The interval alone would say a change: the rank test's p says why it is not one.
		sig = fmt.Sprintf("not significant: Mann-Whitney p %.2g", v.P)
	}
	return fmt.Sprintf("%s %+.1f%% (95%% CI %+.1f…%+.1f%%, %s)", what, 100*v.Rel, 100*v.RelLo, 100*v.RelHi, sig)
}

func values(g *benchgroup.Group, of func(*ledger.Record) int64) []int64 {
	out := make([]int64, 0, len(g.Timed))
	for _, r := range g.Timed {
		out = append(out, of(r))
	}
	return out
}

// sideConditions lists how the two sides' machines differed: between their runs' conditions (every
// pair of a build's runs against the other's is too many; the newest run of each side stands for it,
// and any run of a side that was loaded is named).
func sideConditions(sides [2]diffSide) []string {
	a, b := sides[0].Rec.Machine, sides[1].Rec.Machine
	out := machine.Differences(a, b)
	if oneBuild(sides) {
		return out // the two shown runs' conditions; the sides' runs are the same runs
	}
	for i, s := range sides {
		if s.Group == nil {
			continue
		}
		loaded := 0
		for _, r := range s.Group.Timed {
			if r.Machine != nil && r.Machine.Loaded() != "" {
				loaded++
			}
		}
		if loaded > 0 && (s.Rec.Machine == nil || s.Rec.Machine.Loaded() == "") {
			out = append(out, fmt.Sprintf("%d of %s's %d runs ran on a loaded machine", loaded, "AB"[i:i+1], len(s.Group.Timed)))
		}
	}
	return out
}

// oneBuild reports whether both sides are the runs of one build (one benchmark name and build key):
// comparing that build with itself says nothing.
func oneBuild(sides [2]diffSide) bool {
	a, b := sides[0].Group, sides[1].Group
	return a != nil && b != nil && (a == b || a.Key == b.Key && a.Name == b.Name)
}
