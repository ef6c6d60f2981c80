// Command profcheck runs one stalecheck command line in process, N times, under Go's CPU and
// allocation profilers, so the cost of a real `check` can be read with `go tool pprof`:
//
//	go run ./bench/profcheck -n 20 -cpu cpu.out -mem mem.out -- check --format json /path/ws
//	go run ./bench/profcheck -n 1 -trace trace.out -- check --format json /path/ws
//
// The command's output is discarded; its exit status is printed to stderr.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/cli"
)

func main() {
	n := flag.Int("n", 10, "how many times to run the command")
	cpu := flag.String("cpu", "", "write a CPU profile here")
	mem := flag.String("mem", "", "write an allocation profile (alloc_space) here")
	mem2 := flag.Bool("memclasses", false, "print the runtime's memory classes (runtime/metrics) after the runs: what the memory limit counts beside the heap")
	tr := flag.String("trace", "", "write an execution trace here (go tool trace; -pprof=sync or =sched for where goroutines waited)")
	stateFrom := flag.String("state-from", "", "before each run, make $XDG_STATE_HOME a copy of this folder (so every run is, say, the first check after a rebuild); the copy is outside the timing")
	flag.Parse()
	args := append([]string{"stalecheck"}, flag.Args()...)
	if *mem != "" {
		runtime.MemProfileRate = 4096
	}
	if *cpu != "" {
		start(*cpu, pprof.StartCPUProfile)
		defer pprof.StopCPUProfile()
	}
	if *tr != "" {
		start(*tr, trace.Start)
		defer trace.Stop()
	}
	var rc int
	var spent time.Duration
	for i := 0; i < *n; i++ {
		if *stateFrom != "" {
			if *cpu != "" {
				pprof.StopCPUProfile()
			}
			resetState(*stateFrom, os.Getenv("XDG_STATE_HOME"))
			if *cpu != "" {
				start(fmt.Sprintf("%s.%d", *cpu, i), pprof.StartCPUProfile)
			}
		}
		t0 := time.Now()
		rc = cli.Main(args, cli.Streams{Out: io.Discard, Err: os.Stderr})
		spent += time.Since(t0)
	}
	fmt.Fprintf(os.Stderr, "profcheck: %d runs, %.1f ms each, exit status %d\n", *n,
		float64(spent.Microseconds())/1000/float64(*n), rc)
	if *mem2 {
		descs := metrics.All()
		var ss []metrics.Sample
		for _, d := range descs {
			if strings.HasPrefix(d.Name, "/memory/classes/") || d.Name == "/gc/heap/live:bytes" || d.Name == "/gc/cycles/total:gc-cycles" || d.Name == "/gc/heap/allocs:bytes" {
				ss = append(ss, metrics.Sample{Name: d.Name})
			}
		}
		metrics.Read(ss)
		for _, s := range ss {
			if s.Value.Kind() == metrics.KindUint64 {
				fmt.Fprintf(os.Stderr, "%-55s %10.1f MB\n", s.Name, float64(s.Value.Uint64())/1e6)
			}
		}
	}
	if *mem != "" {
		f, err := os.Create(*mem)
		if err == nil {
			// The profile holds what was allocated up to the last collection: the check runs with the
			// collector off (internal/cli's gctune.go), so one more makes its allocations count.
			runtime.GC()
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
}

// resetState makes dst a copy of src (files only, one level of folders deep is enough for a
// state folder: stalecheck/ and stalecheck/verdicts/).
func resetState(src, dst string) {
	if dst == "" || src == "" {
		fmt.Fprintln(os.Stderr, "profcheck: -state-from needs XDG_STATE_HOME")
		os.Exit(2)
	}
	if err := os.RemoveAll(dst); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// start creates path and starts a profiler or tracer writing to it; it exits on failure.
func start(path string, begin func(io.Writer) error) {
	f, err := os.Create(path)
	if err == nil {
		err = begin(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
