package clean_test

import (
	"os"
	"os/exec"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/bench/gentarget"
	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/clean"
)

// The generated tree is made once per test binary (it takes a while) and removed by TestMain.
var (
	benchOnce sync.Once
	benchDir  string
	benchRes  *gentarget.Result
	benchErr  error
)

// BenchmarkPlan200k plans a clean of bench/gentarget's synthetic 200,000-file target (a feature toggle
// built after the default configuration, so orphans exist, and an older toolchain's units) and compares
// it with the stat floor: `find TARGET -printf '%s %T@\n'`, one lstat of every entry. Both are timed
// warm (best of several runs); the ratio is reported as x-stat-floor and must be at most 2.
//
//	go test ./internal/clean -run '^$' -bench Plan200k -benchtime 5x
func BenchmarkPlan200k(b *testing.B) {
	if _, err := exec.LookPath("find"); err != nil {
		b.Fatal(err)
	}
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "stalecheck-bench-clean-")
		if benchErr != nil {
			return
		}
		start := time.Now()
		benchRes, benchErr = gentarget.Run(benchDir, gentarget.Options{Files: 200000, ToggleAfter: true, CC: "-"})
		if benchErr == nil {
			b.Logf("generated %d files under the target folder (%d units, %d live) in %s", benchRes.Files, benchRes.Units, benchRes.LiveUnits, time.Since(start).Round(time.Millisecond))
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	res := benchRes
	l := &cargo.Layout{Workspace: res.Workspace, TargetDir: res.TargetDir, BuildDir: res.TargetDir}

	floor := func() time.Duration {
		t0 := time.Now()
		cmd := exec.Command("find", res.TargetDir, "-printf", "%s %T@\n")
		devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		defer devnull.Close()
		cmd.Stdout = devnull
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var items int
	var bytes int64
	plan := func() time.Duration {
		t0 := time.Now()
		p, err := clean.Run(clean.Request{Layout: l, CargoHome: res.CargoHome})
		if err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		items, bytes = len(p.Items), p.TotalBytes
		return d
	}
	// Warm the caches, then interleave the two measurements.
	floor()
	plan()
	var fs, ps []time.Duration
	b.ResetTimer()
	// At least three samples of each, whatever b.N is: the ratio compares the best of each.
	for i := 0; i < max(b.N, 3); i++ {
		b.StopTimer()
		fs = append(fs, floor())
		b.StartTimer()
		ps = append(ps, plan())
	}
	b.StopTimer()
	best := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[0]
	}
	f, p := best(fs), best(ps)
	ratio := float64(p) / float64(f)
	b.ReportMetric(float64(f.Microseconds())/1000, "floor-ms")
	b.ReportMetric(float64(p.Microseconds())/1000, "plan-ms")
	b.ReportMetric(ratio, "x-stat-floor")
	b.Logf("plan %s (%d items, %d bytes) vs stat floor %s: %.2fx", p.Round(time.Millisecond), items, bytes, f.Round(time.Millisecond), ratio)
	if items == 0 {
		b.Error("the plan is empty: the generated tree should have orphans")
	}
	if ratio > 2 {
		b.Errorf("planning costs %.2fx the stat floor, want at most 2x", ratio)
	}
}
