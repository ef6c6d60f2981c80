package vcache

import (
	"os"
	"testing"
)

// BenchmarkLookupStored re-validates a verdict file taken from a real state folder
// (STALECHECK_BENCH_VERDICT=<state>/stalecheck/verdicts/<key>): the cost of a warm hit's stats.
func BenchmarkLookupStored(b *testing.B) {
	path := os.Getenv("STALECHECK_BENCH_VERDICT")
	if path == "" {
		b.Skip("STALECHECK_BENCH_VERDICT not set")
	}
	_, _, ents, err := ReadEntry(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(ents)), "paths")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if p := firstChanged(ents); p != "" {
			b.Fatalf("%s changed", p)
		}
	}
}
