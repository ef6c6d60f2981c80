// Package bench holds stalecheck's speed benchmarks. The generator is bench/gentarget; run.sh drives
// the end-to-end comparison with the stat floor (`find -printf`) and a no-op `cargo build`.
//
//	go test ./bench -run '^$' -bench Check -benchmem
//	go test ./bench -run '^$' -bench CheckTree -cpuprofile cpu.out   # with STALECHECK_BENCH_TREE set
package bench

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stalecheck/stalecheck/bench/gentarget"
	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/report"
)

// Size of the tree BenchmarkCheck generates (small enough for b.TempDir; run.sh measures the full
// 2,000-unit, 200,000-file tree). STALECHECK_BENCH_UNITS / STALECHECK_BENCH_FILES override it.
const (
	benchUnits = 500
	benchFiles = 25000
)

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
		return v
	}
	return def
}

var (
	treeOnce sync.Once
	treeDir  string
	treeRes  *gentarget.Result
	treeErr  error
)

// smallTree generates the benchmark tree once per process (b.TempDir is per benchmark and would be
// rewritten for every sub-benchmark).
func smallTree(b *testing.B) *gentarget.Result {
	treeOnce.Do(func() {
		treeDir, treeErr = os.MkdirTemp("", "stalecheck-bench-")
		if treeErr != nil {
			return
		}
		treeRes, treeErr = gentarget.Run(filepath.Join(treeDir, "tree"), gentarget.Options{
			Units: envInt("STALECHECK_BENCH_UNITS", benchUnits),
			Files: envInt("STALECHECK_BENCH_FILES", benchFiles),
			Seed:  1,
		})
	})
	if treeErr != nil {
		b.Fatal(treeErr)
	}
	return treeRes
}

func TestMain(m *testing.M) {
	code := m.Run()
	if treeDir != "" {
		os.RemoveAll(treeDir)
	}
	os.Exit(code)
}

// runCheck is what `stalecheck check` does (internal/cli/check.go), minus flag parsing: locate, read,
// gather content evidence where copies compete (unless SkipNative; cacheDir "" = no cache, as on a
// first run), run the rules and (json) write the report.
func runCheck(b *testing.B, ws, cargoHome string, opt cargo.ReadOptions, cacheDir string, json bool) int {
	env := map[string]string{"CARGO_HOME": cargoHome, "HOME": os.Getenv("HOME")}
	l, err := cargo.Locate(ws, cargo.LocateOptions{Getenv: func(k string) string { return env[k] }, Cwd: ws})
	if err != nil {
		b.Fatal(err)
	}
	opt.CargoHome = cargoHome
	g, err := cargo.Read(l, opt)
	if err != nil {
		b.Fatal(err)
	}
	if !opt.SkipNative {
		evidence.Annotate(g, cacheDir)
	}
	findings := check.Run(g, check.Options{})
	if json {
		if err := report.WriteJSON(io.Discard, report.NewCheckDoc(report.Tool{Name: "stalecheck", Version: "bench"}, g, findings)); err != nil {
			b.Fatal(err)
		}
	}
	errors := 0
	for _, f := range findings {
		if f.Severity == check.Error {
			errors++
		}
	}
	return errors
}

func benchTree(b *testing.B, ws, cargoHome string, units, files int) {
	cache := b.TempDir()
	for _, bc := range []struct {
		name  string
		opt   cargo.ReadOptions
		cache string
		json  bool
	}{
		{"check", cargo.ReadOptions{}, "", false},               // no content cache: a first run
		{"check-cached", cargo.ReadOptions{}, cache, false},     // content answers cached: later runs
		{"check-cached+json", cargo.ReadOptions{}, cache, true}, // what `stalecheck check --format json` does
		{"no-native", cargo.ReadOptions{SkipNative: true}, "", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if n := runCheck(b, ws, cargoHome, bc.opt, bc.cache, bc.json); n != 0 {
				b.Fatalf("%d error findings on the clean tree", n)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				runCheck(b, ws, cargoHome, bc.opt, bc.cache, bc.json)
			}
			if units > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(files), "ns/file")
				b.ReportMetric(float64(units), "units")
			}
		})
	}
}

// BenchmarkCheck generates a smaller tree (500 units, 25,000 files) and times
// cargo.Locate + cargo.Read + check.Run on it.
func BenchmarkCheck(b *testing.B) {
	res := smallTree(b)
	benchTree(b, res.Workspace, res.CargoHome, res.Units, res.Files)
}

// BenchmarkCheckTree times a tree generated beforehand (run.sh's bench/out/tree):
// STALECHECK_BENCH_TREE=bench/out/tree go test ./bench -run '^$' -bench CheckTree -cpuprofile cpu.out
func BenchmarkCheckTree(b *testing.B) {
	dir := os.Getenv("STALECHECK_BENCH_TREE")
	if dir == "" {
		b.Skip("STALECHECK_BENCH_TREE is not set (a folder written by gentarget)")
	}
	if !filepath.IsAbs(dir) {
		if _, err := os.Stat(dir); err != nil {
			dir = filepath.Join("..", dir) // relative to the module root, as run.sh names it
		}
	}
	ws, _, home := gentarget.Paths(dir)
	benchTree(b, ws, home, 0, 0)
}
