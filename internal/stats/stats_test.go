package stats

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func finite(t *testing.T, what string, vs ...float64) {
	t.Helper()
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%s: %v is not finite", what, vs)
		}
	}
}

// Hand-computed values: 1..5 ns has mean 3, sample σ sqrt(2.5), median 3, MAD 1.
func TestSummarizeKnown(t *testing.T) {
	s, err := SummarizeNS([]int64{5, 1, 4, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 5 || s.Mean != 3 || !near(s.StdDev, math.Sqrt(2.5), 1e-12) || s.Median != 3 || s.Min != 1 || s.Max != 5 || s.MAD != 1 || s.Outliers != 0 {
		t.Errorf("summary of 1..5: %+v", s)
	}
	// Even n: the median is the mean of the two middle values.
	s, _ = SummarizeNS([]int64{10, 40, 20, 30})
	if s.Median != 25 || s.Mean != 25 {
		t.Errorf("summary of 10,20,30,40: %+v", s)
	}
}

func TestSummarizeEdges(t *testing.T) {
	if _, err := Summarize(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty: %v, want ErrEmpty", err)
	}
	if _, err := Summarize([]float64{1, math.NaN()}); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := Summarize([]float64{math.Inf(1)}); err == nil {
		t.Error("+Inf accepted")
	}
	one, err := SummarizeNS([]int64{1_234_567_890})
	if err != nil {
		t.Fatal(err)
	}
	finite(t, "n=1", one.Mean, one.StdDev, one.Median, one.MAD)
	if one.N != 1 || one.StdDev != 0 || one.Mean != 1_234_567_890 || one.Median != one.Mean || one.Min != one.Max || one.Outliers != 0 {
		t.Errorf("n=1: %+v", one)
	}
	two, _ := SummarizeNS([]int64{1000, 0})
	if two.Mean != 500 || !near(two.StdDev, math.Sqrt(500000), 1e-9) || two.Median != 500 || two.Outliers != 0 {
		t.Errorf("n=2: %+v (hyperfine: no outlier in two values)", two)
	}
	eq, _ := SummarizeNS([]int64{7, 7, 7, 7, 7, 7})
	if eq.StdDev != 0 || eq.MAD != 0 || eq.Outliers != 0 || eq.Median != 7 {
		t.Errorf("all equal: %+v", eq)
	}
	// Large nanosecond values (an hour) keep their precision.
	big, _ := SummarizeNS([]int64{3_600_000_000_001, 3_600_000_000_003})
	if big.Mean != 3_600_000_000_002 || !near(big.StdDev, math.Sqrt2, 1e-3) {
		t.Errorf("an hour: %+v", big)
	}
}

// The cases hyperfine's own outlier tests use (src/outlier_detection.rs), restated as expectations.
func TestOutliersHyperfineRule(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want int
	}{
		{[]float64{50}, 0},
		{[]float64{1000, 0}, 0},
		{[]float64{-0.2, 0, 0.2}, 0},
		{[]float64{-0.2, 0, 0.2, 4}, 1},
		{[]float64{0.5, 0.30, 0.29, 0.31, 0.30}, 1},
		{[]float64{10, 10, 10, 10, 10, 10, 10, 100}, 1},
		{[]float64{10, 10, 10, 10, 10, 10, 10, 100, 100}, 2},
	} {
		if got := CountOutliers(c.xs, OutlierThreshold); got != c.want {
			t.Errorf("CountOutliers(%v) = %d, want %d", c.xs, got, c.want)
		}
		if s, _ := Summarize(c.xs); s.Outliers != c.want {
			t.Errorf("Summarize(%v).Outliers = %d, want %d", c.xs, s.Outliers, c.want)
		}
	}
	if CountOutliers(nil, OutlierThreshold) != 0 {
		t.Error("outliers of nothing")
	}
	// The stricter Iglewicz–Hoaglin cut flags a point 6 MADs out that hyperfine's keeps.
	xs := []float64{-1, -0.5, 0, 0.5, 1, 6}
	if CountOutliers(xs, IglewiczHoaglinThreshold) != 1 || CountOutliers(xs, OutlierThreshold) != 0 {
		t.Errorf("thresholds on %v: IH %d, hyperfine %d", xs, CountOutliers(xs, IglewiczHoaglinThreshold), CountOutliers(xs, OutlierThreshold))
	}
}

// Normal samples: mean, σ and median approach the distribution's; a planted far value is the one
// outlier; no summary value is NaN.
func TestSummarizeNormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const mu, sigma = 50e6, 2e6 // 50 ms ± 2 ms
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = mu + sigma*rng.NormFloat64()
	}
	s, _ := Summarize(xs)
	if !near(s.Mean, mu, 0.05e6) || !near(s.StdDev, sigma, 0.05e6) || !near(s.Median, mu, 0.06e6) || !near(s.MAD*1.4826, sigma, 0.08e6) {
		t.Errorf("normal(50 ms, 2 ms): %+v", s)
	}
	if s.Outliers != 0 {
		t.Errorf("normal sample: %d outliers beyond 10 robust σ", s.Outliers)
	}
	ys := append(slices.Clone(xs[:30]), mu+50*sigma)
	if s, _ := Summarize(ys); s.Outliers != 1 {
		t.Errorf("30 normal values and one 50σ away: %d outliers", s.Outliers)
	}
}

func TestMedianChangeCIErrors(t *testing.T) {
	if _, err := MedianChangeCI([]float64{1}, []float64{1, 2}, 0.95); !errors.Is(err, ErrTooFew) {
		t.Errorf("n=1: %v", err)
	}
	if _, err := MedianChangeCI([]float64{1, 2}, nil, 0.95); !errors.Is(err, ErrTooFew) {
		t.Errorf("empty b: %v", err)
	}
	if _, err := MedianChangeCI([]float64{1, 2}, []float64{1, 2}, 1); err == nil {
		t.Error("level 1 accepted")
	}
	if _, err := MedianChangeCI([]float64{1, math.NaN()}, []float64{1, 2}, 0.95); err == nil {
		t.Error("NaN accepted")
	}
}

func TestMedianChangeCIEdges(t *testing.T) {
	// n=2 each, all equal within each: the interval is the point.
	c, err := MedianChangeCINS([]int64{100, 100}, []int64{120, 120}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if c.Abs != 20 || c.AbsLo != 20 || c.AbsHi != 20 || !c.RelOK || !near(c.Rel, 0.2, 1e-12) || !near(c.RelLo, 0.2, 1e-12) || !near(c.RelHi, 0.2, 1e-12) {
		t.Errorf("constant samples: %+v", c)
	}
	// A zero median: no relative change, no NaN.
	c, err = MedianChangeCINS([]int64{0, 0, 0}, []int64{5, 6, 7}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	finite(t, "zero median", c.Abs, c.AbsLo, c.AbsHi, c.Rel, c.RelLo, c.RelHi)
	if c.RelOK || c.Abs != 6 || c.AbsLo < 5 || c.AbsHi > 7 {
		t.Errorf("zero median: %+v", c)
	}
	// n=2 with spread: bounds lie within what the resampled medians can take, around the estimate.
	c, _ = MedianChangeCINS([]int64{100, 110}, []int64{130, 150}, 0.95)
	finite(t, "n=2", c.AbsLo, c.AbsHi, c.RelLo, c.RelHi)
	if !(c.AbsLo <= c.Abs && c.Abs <= c.AbsHi) || c.AbsLo < 130-110 || c.AbsHi > 150-100 {
		t.Errorf("n=2: %+v", c)
	}
}

// Reproducible: the same samples give the same interval, every time.
func TestMedianChangeCIReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float64, 25), make([]float64, 25)
	for i := range a {
		a[i] = 1e9 + 3e7*rng.NormFloat64()
		b[i] = 1.19e9 + 3e7*rng.NormFloat64()
	}
	c1, _ := MedianChangeCI(a, b, 0.95)
	c2, _ := MedianChangeCI(slices.Clone(a), slices.Clone(b), 0.95)
	if c1 != c2 {
		t.Errorf("two calls differ: %+v vs %+v", c1, c2)
	}
	if !(c1.RelLo < c1.Rel && c1.Rel < c1.RelHi) || c1.RelLo < 0.12 || c1.RelHi > 0.26 || c1.Resamples < 2000 {
		t.Errorf("+19%% shift, n=25: %+v", c1)
	}
}

// Coverage on known distributions: over many independent pairs of samples with a known difference in
// the true median, the 95% interval holds it about 95% of the time (the percentile bootstrap of a
// median is somewhat liberal at n=30; the binomial spread of 150 trials is ±3.5 points).
func TestMedianChangeCICoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("coverage simulation: skipped with -short")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	type dist struct {
		name   string
		draw   func() float64
		median float64
	}
	// Exponential(rate 1/λ) has median λ·ln 2; a log-normal exp(μ+σZ) has median exp(μ).
	dists := []struct {
		name string
		a, b dist
	}{
		{"normal", dist{"", func() float64 { return 100e6 + 5e6*rng.NormFloat64() }, 100e6},
			dist{"", func() float64 { return 119e6 + 5e6*rng.NormFloat64() }, 119e6}},
		{"exponential", dist{"", func() float64 { return 1e6 * rng.ExpFloat64() }, 1e6 * math.Ln2},
			dist{"", func() float64 { return 1.2e6 * rng.ExpFloat64() }, 1.2e6 * math.Ln2}},
		{"log-normal", dist{"", func() float64 { return math.Exp(18 + 0.3*rng.NormFloat64()) }, math.Exp(18)},
			dist{"", func() float64 { return math.Exp(18.1 + 0.5*rng.NormFloat64()) }, math.Exp(18.1)}},
	}
	const trials, n = 150, 25
	for _, d := range dists {
		covered, coveredRel := 0, 0
		trueAbs := d.b.median - d.a.median
		trueRel := d.b.median/d.a.median - 1
		for range trials {
			a, b := make([]float64, n), make([]float64, n)
			for i := range a {
				a[i], b[i] = d.a.draw(), d.b.draw()
			}
			c, err := MedianChangeCI(a, b, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if c.AbsLo <= trueAbs && trueAbs <= c.AbsHi {
				covered++
			}
			if c.RelOK && c.RelLo <= trueRel && trueRel <= c.RelHi {
				coveredRel++
			}
		}
		for what, k := range map[string]int{"absolute": covered, "relative": coveredRel} {
			if f := float64(k) / trials; f < 0.87 {
				t.Errorf("%s, %s change: the 95%% interval covered the true change in %.1f%% of %d trials", d.name, what, 100*f, trials)
			} else {
				t.Logf("%s, %s change: coverage %.1f%% of %d trials (n=%d)", d.name, what, 100*f, trials, n)
			}
		}
	}
}

// TestSignificantSmallSamples: two runs a side 0.2% apart are not a change, though every bootstrap
// resample's medians differ the same way (the interval excludes 0); clearly apart with 5 a side is.
func TestSignificantSmallSamples(t *testing.T) {
	c, err := MedianChangeCI([]float64{100.0e6, 100.1e6}, []float64{100.2e6, 100.3e6}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !(c.RelLo > 0) {
		t.Fatalf("the premise fails: the bootstrap interval %.4f…%.4f includes 0", c.RelLo, c.RelHi)
	}
	if c.Significant() || math.Abs(c.P-1.0/3) > 1e-9 {
		t.Errorf("2 runs a side: significant %v, p %v (want false, 1/3)", c.Significant(), c.P)
	}
	c, err = MedianChangeCI([]float64{100e6, 101e6, 99e6, 100.5e6, 99.5e6}, []float64{200e6, 201e6, 199e6, 200.5e6, 199.5e6}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Significant() || c.P >= 0.05 {
		t.Errorf("5 runs a side, twice as slow: significant %v, p %v", c.Significant(), c.P)
	}
	// Every value equal: no change, p 1.
	c, err = MedianChangeCI([]float64{5, 5, 5}, []float64{5, 5, 5}, 0.95)
	if err != nil || c.Significant() || c.P != 1 {
		t.Errorf("all equal: %+v, %v", c, err)
	}
}

// TestSignificantNoiseRate: on pure noise (both sides from one distribution) a change is called
// at most about as often as the level allows, at every sample size; with 2 or 3 a side never.
func TestSignificantNoiseRate(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation: skipped with -short")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const trials = 300
	for _, n := range []int{2, 3, 5, 10} {
		called := 0
		for range trials {
			a, b := make([]float64, n), make([]float64, n)
			for i := range a {
				a[i], b[i] = 100e6+1e6*rng.NormFloat64(), 100e6+1e6*rng.NormFloat64()
			}
			c, err := MedianChangeCI(a, b, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if c.Significant() {
				called++
			}
		}
		rate := float64(called) / trials
		if n <= 3 && called > 0 || rate > 0.08 {
			t.Errorf("n=%d: pure noise called a change in %d of %d trials", n, called, trials)
		} else {
			t.Logf("n=%d: pure noise called a change in %.1f%% of trials", n, 100*rate)
		}
	}
}

// TestResamplerMatchesSort: a resample's median by rank counts is the one a sort of the values drawn
// gives, draw for draw (so every interval is as before), ties and odd and even sizes included.
func TestResamplerMatchesSort(t *testing.T) {
	src := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 3, 4, 7, 10, 51, 200} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(src.IntN(5)) * 1e6 // many ties
			if n > 50 {
				xs[i] += src.NormFloat64() * 1e3
			}
		}
		r := newResampler(xs)
		g1, g2 := rand.NewPCG(9, uint64(n)), rand.NewPCG(9, uint64(n))
		buf := make([]float64, n)
		for d := range 200 {
			for i := range buf {
				hi, _ := bits.Mul64(g2.Uint64(), uint64(n))
				buf[i] = xs[hi]
			}
			slices.Sort(buf)
			want := buf[n/2]
			if n%2 == 0 {
				want = (buf[n/2-1] + buf[n/2]) / 2
			}
			if got := r.median(g1); got != want {
				t.Fatalf("n=%d draw %d: median %v, a sort gives %v", n, d, got, want)
			}
		}
	}
}

func BenchmarkMedianChangeCI2000(b *testing.B) {
	src := rand.New(rand.NewPCG(3, 4))
	x, y := make([]float64, 2000), make([]float64, 2000)
	for i := range x {
		x[i], y[i] = 100e6+1e6*src.NormFloat64(), 101e6+1e6*src.NormFloat64()
	}
	for b.Loop() {
		MedianChangeCI(x, y, 0.95)
	}
}
