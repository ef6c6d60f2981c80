package cli

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/benchgroup"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/machine"
)

// side is a build of n runs whose wall and CPU times are base plus a small spread.
func side(key string, n int, wallMS, cpuMS int64, m *machine.Conditions) diffSide {
	g := &benchgroup.Group{Key: key}
	for i := 0; i < n; i++ {
		spread := int64(i%5) * 1e6 // 0–4 ms
		r := &ledger.Record{ID: int64(i + 1), WallNS: wallMS*1e6 + spread, UserNS: cpuMS*1e6 + spread, PeakRSSBytes: 100 << 20, Machine: m}
		g.Records, g.Timed = append(g.Records, r), append(g.Timed, r)
	}
	return diffSide{Rec: g.Timed[n-1], Group: g, ByBuild: true}
}

// TestDiffVerdict: a 20 ms slower wall time with the same CPU time is a regression in wall time only; on
// a machine another process loaded, diff says that first; equal timings are no significant change;
// too few runs give no verdict and say why.
func TestDiffVerdict(t *testing.T) {
	quiet := &machine.Conditions{CPUModel: "X", CPUs: 2, Affinity: 2, Kernel: "6.1", OtherCPUs: 0.01}
	loaded := &machine.Conditions{CPUModel: "X", CPUs: 2, Affinity: 2, Kernel: "6.1", OtherCPUs: 0.9,
		Busiest: []machine.Proc{{PID: 7, Name: "cc1", Percent: 90}}}
	sides := [2]diffSide{side("aaaa", 10, 100, 60, quiet), side("bbbb", 10, 120, 60, loaded)}
	conds := sideConditions(sides)
	if len(conds) != 1 || !strings.Contains(conds[0], "load: quiet vs other processes used 0.90 CPUs (cc1 90%)") {
		t.Errorf("conditions = %q", conds)
	}
	vs, sentence, notes := diffVerdict(sides, conds)
	// Medians 102 and 122 ms.
	if !strings.HasPrefix(sentence, "Performance has regressed: B is 19.6% slower than A in wall time.") ||
		!strings.Contains(sentence, "wall +19.6% (95% CI +17.5…+21.8%, significant)") || !strings.Contains(sentence, "CPU +0.0% (95% CI -3.2…+3.3%, not significant)") ||
		!strings.HasSuffix(sentence, ". A ran 1.20 times as fast as B (95% CI 1.17…1.22)") {
		t.Errorf("sentence = %q", sentence)
	}
	if len(vs) != 3 || !vs[0].Significant || vs[1].Significant {
		t.Errorf("verdicts = %+v", vs)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"the difference is in wall time only", "ran under different conditions (load: quiet vs other processes used 0.90 CPUs"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q:\n%s", want, joined)
		}
	}

	same := [2]diffSide{side("aaaa", 10, 100, 60, quiet), side("bbbb", 10, 100, 60, quiet)}
	if _, sentence, _ := diffVerdict(same, sideConditions(same)); !strings.HasPrefix(sentence, "No significant change in wall time.") {
		t.Errorf("same timings: %q", sentence)
	}
	few := [2]diffSide{side("aaaa", 1, 100, 60, nil), side("bbbb", 3, 120, 60, nil)}
	if vs, sentence, notes := diffVerdict(few, nil); vs != nil || sentence != "" || len(notes) != 1 || !strings.Contains(notes[0], "needs at least 2 each") {
		t.Errorf("too few runs: %v %q %q", vs, sentence, notes)
	}
	// Two runs a side a little apart: every bootstrap interval excludes 0, but two runs cannot show a
	// change (it said "Performance has regressed" for 0.2% of pure noise).
	two := [2]diffSide{side("aaaa", 2, 100, 60, nil), side("bbbb", 2, 102, 60, nil)}
	vs, sentence, notes = diffVerdict(two, nil)
	if len(vs) == 0 || vs[0].Significant || vs[0].RelLo <= 0 || !strings.HasPrefix(sentence, "No significant change in wall time.") ||
		!strings.Contains(sentence, "not significant: Mann-Whitney p 0.33") {
		t.Errorf("two runs a side: %+v %q", vs, sentence)
	}
	if joined := strings.Join(notes, "\n"); !strings.Contains(joined, "with 3 or fewer a side no change can be significant") {
		t.Errorf("two runs a side: notes %q", notes)
	}
}

// TestDiffOneBuildAndCommands: two runs of one build are not two sides (no interval of the build against
// itself, no "1 of A's runs ran loaded" when A's runs are B's), and runs of different command lines are
// said to be so (the arguments are not in the build identity).
func TestDiffOneBuildAndCommands(t *testing.T) {
	loaded := &machine.Conditions{CPUModel: "X", CPUs: 2, Affinity: 2, Kernel: "6.1", OtherCPUs: 0.9}
	s := side("aaaa", 3, 100, 60, nil)
	s.Group.Timed[0].Machine = loaded
	b := s
	b.Rec = s.Group.Timed[1]
	sides := [2]diffSide{s, b}
	if conds := sideConditions(sides); len(conds) != 0 {
		t.Errorf("one build against itself: conditions %q", conds)
	}
	if mc, _, err := diffMedian(sides); mc != nil || err == nil || !strings.Contains(err.Error(), "one build") {
		t.Errorf("one build against itself: median change %+v, %v", mc, err)
	}
	if n := commandNote(sides); n != "" {
		t.Errorf("one command: note %q", n)
	}
	other := side("bbbb", 3, 100, 60, nil)
	for _, r := range other.Group.Timed {
		r.Command = []string{"./app", "200"}
	}
	for _, r := range s.Group.Timed {
		r.Command = []string{"./app", "100"}
	}
	if n := commandNote([2]diffSide{s, other}); !strings.Contains(n, "A: ./app 100; B: ./app 200") {
		t.Errorf("different commands: note %q", n)
	}
}
