package vcache

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stalecheck/stalecheck/internal/fsrec"
)

// BenchmarkLookupStored re-validates a verdict file taken from a real state folder
// (STALECHECK_BENCH_VERDICT=<state>/stalecheck/verdicts/<key>): the cost of a warm hit's read, decode
// and stats (Peek and valid).
func BenchmarkLookupStored(b *testing.B) {
	path, k, _, ents := benchVerdict(b)
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

// BenchmarkStorePrepare is Store's work on the entries of a verdict file taken from a real state
// folder (STALECHECK_BENCH_VERDICT), given in the recorder's order (shuffled): the drops, the sort by
// folder and the encoding, without the writes.
func BenchmarkStorePrepare(b *testing.B) {
	_, k, res, ents := benchVerdict(b)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ents), func(i, j int) { ents[i], ents[j] = ents[j], ents[i] })
	b.ReportMetric(float64(len(ents)), "paths")
	work := make([]fsrec.Entry, len(ents))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(work, ents)
		e, _ := dropCoveredMisses(dropFollowedTwins(work))
		sortByFolder(e)
		encode(k, res, e, nil, nil)
	}
}

// benchVerdict reads the verdict file STALECHECK_BENCH_VERDICT names (the benchmark is skipped when
// it is not set).
func benchVerdict(b *testing.B) (string, Key, *Result, []fsrec.Entry) {
	path := os.Getenv("STALECHECK_BENCH_VERDICT")
	if path == "" {
		b.Skip("STALECHECK_BENCH_VERDICT not set")
	}
	k, res, ents, err := ReadEntry(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, k, res, ents
}
