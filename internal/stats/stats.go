// Package stats summarises benchmark timings: mean, sample standard deviation, median, minimum,
// maximum and outliers of one sample, and a confidence interval for the change in median between two
// samples. All values are nanoseconds (float64, exact for integers up to 2^53 ns, about 104 days).
//
// The descriptive statistics come from github.com/montanaflynn/stats v0.14.0 (Mean,
// StandardDeviationSample with its overflow-safe scaled variance, Median, Min, Max,
// MedianAbsoluteDeviationPopulation): a small, dependency-free, tested library, so stalecheck does not
// keep its own copies of them. It has no bootstrap of a difference of medians (nor has gonum v0.17.0's
// stat package), so MedianChangeCI is owned here (about 60 lines). Whether a change is significant also
// takes the Mann–Whitney U test of github.com/aclements/go-moremath/stats (benchstat's), whose exact
// distribution knows what a bootstrap of two or three values cannot: that so few values never show a
// change at 95%.
//
// Nothing here returns NaN or an infinity for finite input: an empty sample is an error (ErrEmpty), the
// standard deviation of one value is 0, and a relative change from a zero median is left out (Rel* are
// then not set, RelOK false).
package stats

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	moremath "github.com/aclements/go-moremath/stats"
	mfs "github.com/montanaflynn/stats"
)

// ErrEmpty is returned for a sample with no values.
var ErrEmpty = errors.New("stats: empty sample")

// Summary describes one sample of timings, in nanoseconds.
type Summary struct {
	N      int     // number of values
	Mean   float64 // arithmetic mean, ns
	StdDev float64 // sample standard deviation (n−1 divisor), ns; 0 when N is 1
	Median float64 // median (the mean of the two middle values for even N), ns
	Min    float64 // ns
	Max    float64 // ns
	// MAD is the median absolute deviation from the median (not scaled by 1.4826), ns.
	MAD float64
	// Outliers is the number of values whose modified z-score exceeds OutlierThreshold (see IsOutlier).
	Outliers int
}

// OutlierThreshold is hyperfine's: a value is an outlier when |x − median| / MAD > 1.4826 × 10, i.e.
// more than 10 robust standard deviations (1.4826 × MAD estimates σ for normal data) from the median;
// in the 0.6745-scaled form of Iglewicz and Hoaglin's modified z-score, 0.6745·|x − median|/MAD > 10.
// Source: hyperfine's src/outlier_detection.rs (OUTLIER_THRESHOLD = 1.4826 * 10.0, read for hyperfine
// 1.x). Iglewicz and Hoaglin's own recommendation, 0.6745·|x − median|/MAD > 3.5, flags far more of
// a benchmark's ordinary tail; IglewiczHoaglinThreshold is that cut in the same unscaled form.
const OutlierThreshold = 1.4826 * 10.0

// IglewiczHoaglinThreshold is |x − median| / MAD > 3.5 / 0.6745 (Iglewicz and Hoaglin 1993, "How to
// Detect and Handle Outliers"), for CountOutliers.
const IglewiczHoaglinThreshold = 3.5 / 0.6745

// Summarize returns the summary of xs (nanoseconds; xs is not modified). Errors: ErrEmpty, and an
// error for a NaN or infinite value.
func Summarize(xs []float64) (Summary, error) {
	if len(xs) == 0 {
		return Summary{}, ErrEmpty
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Summary{}, fmt.Errorf("stats: value %d is %v", i, x)
		}
	}
	d := mfs.Float64Data(xs)
	s := Summary{N: len(xs)}
	s.Mean, _ = mfs.Mean(d)
	if len(xs) > 1 {
		s.StdDev, _ = mfs.StandardDeviationSample(d)
	}
	s.Median, _ = mfs.Median(d)
	s.Min, _ = mfs.Min(d)
	s.Max, _ = mfs.Max(d)
	s.MAD, _ = mfs.MedianAbsoluteDeviationPopulation(d)
	s.Outliers = countOutliers(xs, s.Median, s.MAD, OutlierThreshold)
	return s, nil
}

// SummarizeNS is Summarize over integer nanoseconds.
func SummarizeNS(ns []int64) (Summary, error) {
	return Summarize(floats(ns))
}

func floats(ns []int64) []float64 {
	out := make([]float64, len(ns))
	for i, v := range ns {
		out[i] = float64(v)
	}
	return out
}

// IsOutlier says whether x is an outlier of a sample with this median and MAD under threshold
// (OutlierThreshold for hyperfine's rule): |x − median| / MAD > threshold. As in hyperfine, a MAD of 0
// (more than half the values equal) is replaced by the smallest float64 step above 1 (2.2e-16 ns), so
// every value other than the median is then an outlier, and none when all are equal.
func IsOutlier(x, median, mad, threshold float64) bool {
	if !(mad > 0) {
		mad = math.Nextafter(1, 2) - 1
	}
	return math.Abs(x-median)/mad > threshold
}

// CountOutliers counts the outliers of xs under threshold (see IsOutlier); 0 for an empty sample.
func CountOutliers(xs []float64, threshold float64) int {
	if len(xs) == 0 {
		return 0
	}
	med, _ := mfs.Median(xs)
	mad, _ := mfs.MedianAbsoluteDeviationPopulation(xs)
	return countOutliers(xs, med, mad, threshold)
}

func countOutliers(xs []float64, med, mad, threshold float64) int {
	n := 0
	for _, x := range xs {
		if IsOutlier(x, med, mad, threshold) {
			n++
		}
	}
	return n
}

// Resamples is the number of bootstrap resamples MedianChangeCI draws.
const Resamples = 5000

// Seed is the fixed seed of MedianChangeCI's generator (PCG), so that the same two samples always
// give the same interval.
const Seed = 0x57a1ec4ec4

// Change is the change in median from sample A to sample B with a confidence interval.
type Change struct {
	MedianA, MedianB float64 // ns
	// Abs is MedianB − MedianA, ns; AbsLo and AbsHi its confidence bounds, ns.
	Abs, AbsLo, AbsHi float64
	// Rel is MedianB/MedianA − 1 (0.192 for +19.2 %); RelLo and RelHi its bounds. Set only when RelOK
	// (MedianA is not 0 and no resample of A had a zero median).
	Rel, RelLo, RelHi float64
	RelOK             bool
	// Level is the confidence level (0.95), Resamples the number of bootstrap resamples.
	Level     float64
	Resamples int
	// P is the two-sided p-value of the Mann–Whitney U test that A and B come from one population
	// (RankSumP).
	P float64
}

// Significant reports whether the change is more than noise at the interval's level: the interval of
// the relative change (of the absolute one when there is none) excludes 0, and the rank-sum test
// rejects "one population" at the same level. The percentile bootstrap alone is too narrow for few
// values (with two a side it called a third of pure-noise pairs a change); the U test's exact
// distribution cannot reject with 3 or fewer values a side (its smallest p-values are 1/3 and 1/10).
func (c Change) Significant() bool {
	excludes := c.AbsLo > 0 || c.AbsHi < 0
	if c.RelOK {
		excludes = c.RelLo > 0 || c.RelHi < 0
	}
	return excludes && c.P < 1-c.Level
}

// RankSumP returns the two-sided p-value of the Mann–Whitney U test (the Wilcoxon rank-sum test) of the
// null hypothesis that a and b come from one population, through go-moremath's MannWhitneyUTest: the
// exact U distribution up to 50 values a side (25 when values tie), else the normal approximation with
// the tie and continuity corrections. When every value of both is equal it is 1. Errors: ErrEmpty.
func RankSumP(a, b []float64) (float64, error) {
	if len(a) == 0 || len(b) == 0 {
		return 0, ErrEmpty
	}
	r, err := moremath.MannWhitneyUTest(a, b, moremath.LocationDiffers)
	if errors.Is(err, moremath.ErrSamplesEqual) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("stats: Mann-Whitney U test: %w", err)
	}
	return r.P, nil
}

// ErrTooFew is returned by MedianChangeCI when a sample has fewer than 2 values: the bootstrap of one
// value is that value, which says nothing about its spread.
var ErrTooFew = errors.New("stats: a confidence interval needs at least 2 values in each sample")

// MedianChangeCI returns the change in median from a to b (nanoseconds) with a percentile bootstrap
// confidence interval at level (e.g. 0.95): Resamples times, a and b are each resampled with
// replacement (independently, each at its own size), and the difference (and ratio) of the resamples'
// medians is recorded; the bounds are the (1−level)/2 and (1+level)/2 quantiles of those differences
// (linear interpolation between order statistics, Hyndman–Fan type 7). The generator is PCG with the
// fixed Seed and indices are drawn by Lemire's multiply-shift on its 64-bit output, so the result
// depends only on the two samples (in their order) and level, on every Go version.
//
// Why the bootstrap and not Hodges–Lehmann with the Mann–Whitney interval: the question asked is the
// change in the median of the timings, and the bootstrap estimates exactly that statistic, also when
// the two builds' distributions differ in shape (a build that adds a slow phase on some runs), where
// Hodges–Lehmann estimates the median of pairwise differences, which is the shift in median only under
// the pure location-shift model. The price: with few values per sample (under about 10) the percentile
// interval of a median is too narrow (it can only take values the samples hold); say "n" beside it.
//
// Errors: ErrTooFew when either sample has fewer than 2 values; an error for NaN or infinite values or
// a level outside (0, 1).
func MedianChangeCI(a, b []float64, level float64) (Change, error) {
	if len(a) < 2 || len(b) < 2 {
		return Change{}, ErrTooFew
	}
	if !(level > 0 && level < 1) {
		return Change{}, fmt.Errorf("stats: confidence level %v: want a number between 0 and 1", level)
	}
	for _, s := range [][]float64{a, b} {
		for i, x := range s {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return Change{}, fmt.Errorf("stats: value %d is %v", i, x)
			}
		}
	}
	p, err := RankSumP(a, b)
	if err != nil {
		return Change{}, err
	}
	c := Change{Level: level, Resamples: Resamples, P: p}
	c.MedianA, _ = mfs.Median(a)
	c.MedianB, _ = mfs.Median(b)
	c.Abs = c.MedianB - c.MedianA
	c.RelOK = c.MedianA != 0
	if c.RelOK {
		c.Rel = c.MedianB/c.MedianA - 1
	}
	rng := rand.NewPCG(Seed, uint64(len(a))<<32|uint64(len(b)))
	ra, rb := newResampler(a), newResampler(b)
	abs := make([]float64, Resamples)
	rel := make([]float64, Resamples)
	for r := range Resamples {
		ma := ra.median(rng)
		mb := rb.median(rng)
		abs[r] = mb - ma
		if ma == 0 {
			c.RelOK = false
		} else {
			rel[r] = mb/ma - 1
		}
	}
	lo, hi := (1-level)/2, (1+level)/2
	slices.Sort(abs)
	c.AbsLo, c.AbsHi = quantile(abs, lo), quantile(abs, hi)
	if c.RelOK {
		slices.Sort(rel)
		c.RelLo, c.RelHi = quantile(rel, lo), quantile(rel, hi)
	} else {
		c.Rel = 0
	}
	return c, nil
}

// MedianChangeCINS is MedianChangeCI over integer nanoseconds.
func MedianChangeCINS(a, b []int64, level float64) (Change, error) {
	return MedianChangeCI(floats(a), floats(b), level)
}

// resampler draws bootstrap resamples of one sample and returns their medians, in time linear in the
// sample's size: a resample's median is an order statistic, found by counting how often each rank was
// drawn, where sorting every resample cost n log n (a report of 5 builds of 2,000 runs took 41 s). The
// values drawn are those of the sample's positions the generator gives, as before, so the medians
// (and every interval) are the same as a sort of each resample gives.
type resampler struct {
	sorted []float64 // the values in ascending order
	rank   []int     // rank[i]: the position of the i-th value in sorted
	counts []int32   // how often each rank was drawn in the current resample
}

func newResampler(xs []float64) *resampler {
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmpFloat(xs[i], xs[j]) })
	r := &resampler{sorted: make([]float64, len(xs)), rank: make([]int, len(xs)), counts: make([]int32, len(xs))}
	for pos, i := range order {
		r.sorted[pos], r.rank[i] = xs[i], pos
	}
	return r
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// median draws len(xs) positions with replacement (Lemire's multiply-shift on the generator's 64-bit
// output) and returns the median of the values there.
func (r *resampler) median(rng *rand.PCG) float64 {
	n := uint64(len(r.rank))
	clear(r.counts)
	for range n {
		hi, _ := bits.Mul64(rng.Uint64(), n)
		r.counts[r.rank[hi]]++
	}
	// The k-th smallest value drawn (0-based) is sorted[p] for the first p whose running count passes k.
	kth := func(k int) float64 {
		seen := 0
		for p, c := range r.counts {
			if seen += int(c); seen > k {
				return r.sorted[p]
			}
		}
		return r.sorted[len(r.sorted)-1]
	}
	m := int(n) / 2
	if n%2 == 1 {
		return kth(m)
	}
	return (kth(m-1) + kth(m)) / 2
}

// QuartilesNS returns the first and third quartiles (type 7) of values in ns; 0, 0 for none.
func QuartilesNS(xs []int64) (q1, q3 float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := floats(xs)
	slices.Sort(s)
	return quantile(s, 0.25), quantile(s, 0.75)
}

// quantile is the type-7 quantile p of sorted (non-empty) values.
func quantile(sorted []float64, p float64) float64 {
	h := p * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}
