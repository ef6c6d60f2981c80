package vcache

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLookupStored re-validates a verdict file taken from a real state folder
// (STALECHECK_BENCH_VERDICT=<state>/stalecheck/verdicts/<key>): the cost of a warm hit's read, decode
// and stats (Peek and valid).
func BenchmarkLookupStored(b *testing.B) {
	path := os.Getenv("STALECHECK_BENCH_VERDICT")
	if path == "" {
		b.Skip("STALECHECK_BENCH_VERDICT not set")
	}
	k, _, ents, err := ReadEntry(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(ents)), "paths")
	c := &Cache{dir: filepath.Dir(path)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, valid := c.Peek(k)
		if res == nil || !valid() {
			b.Fatal("a miss")
		}
	}
}
