package ninja_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/cli"
	"github.com/stalecheck/stalecheck/internal/ninja"
)

// BenchmarkCheckVsNinjaDryRun times the whole `stalecheck check --format json DIR` (in process: detection,
// ninja.ReadGraph, content and evidence annotations, the rules, the JSON report) on the generated
// 5,051-edge CMake-shaped tree with nothing to do, against `ninja -n` on the same tree, as interleaved
// pairs (ninja -n, then check; PAIRS, default 15), and reports the medians and the median of the
// per-pair ratios (check/ninja-n) with the spread. The state folder is private and warm (one check
// before the pairs), as a user's second check is.
func BenchmarkCheckVsNinjaDryRun(b *testing.B) {
	dir, n := ninja.GenTree(b, 50, 100)
	b.Setenv("XDG_STATE_HOME", b.TempDir())
	pairs := 15
	if v, err := strconv.Atoi(os.Getenv("PAIRS")); err == nil && v > 0 {
		pairs = v
	}
	var lastCPU int64 // CPU (user+system) of the last timed call, ns: this process for check, the child for ninja -n
	check := func() time.Duration {
		var out bytes.Buffer
		c0 := rusage(syscall.RUSAGE_SELF) + rusage(syscall.RUSAGE_CHILDREN)
		t0 := time.Now()
		code := cli.Main([]string{"stalecheck", "check", "--format", "json", dir}, cli.Streams{Out: &out, Err: io.Discard})
		d := time.Since(t0)
		lastCPU = rusage(syscall.RUSAGE_SELF) + rusage(syscall.RUSAGE_CHILDREN) - c0
		if code != 0 {
			b.Fatalf("check: exit %d\n%s", code, out.String()[:min(out.Len(), 2000)])
		}
		return d
	}
	dry := func() time.Duration {
		c0 := rusage(syscall.RUSAGE_CHILDREN)
		t0 := time.Now()
		out, err := exec.Command("ninja", "-C", dir, "-n").CombinedOutput()
		d := time.Since(t0)
		lastCPU = rusage(syscall.RUSAGE_CHILDREN) - c0
		if err != nil || !strings.Contains(string(out), "no work to do") {
			b.Fatalf("ninja -n: %v %s", err, out)
		}
		return d
	}
	check() // warm: baselines and caches in the state folder
	dry()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var ds, cs, rs, dcpu, ccpu, rcpu []float64
		for p := 0; p < pairs; p++ {
			d := dry()
			dc := float64(lastCPU)
			c := check()
			cc := float64(lastCPU)
			ds, cs, rs = append(ds, float64(d)), append(cs, float64(c)), append(rs, float64(c)/float64(d))
			dcpu, ccpu, rcpu = append(dcpu, dc), append(ccpu, cc), append(rcpu, cc/dc)
		}
		b.Logf("%d edges, %d interleaved pairs: wall ninja -n median %.1f ms, check median %.1f ms; ratio check/ninja-n median %.2f (min %.2f, max %.2f)",
			n, pairs, median(ds)/1e6, median(cs)/1e6, median(rs), minOf(rs), maxOf(rs))
		b.Logf("CPU (user+system; ninja -n: the child; check: this process and the children it ran): ninja -n median %.1f ms, check median %.1f ms; ratio median %.2f (min %.2f, max %.2f)",
			median(dcpu)/1e6, median(ccpu)/1e6, median(rcpu), minOf(rcpu), maxOf(rcpu))
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// rusage is the user+system CPU time of who (RUSAGE_SELF or RUSAGE_CHILDREN, the reaped ones), ns.
func rusage(who int) int64 {
	var r syscall.Rusage
	syscall.Getrusage(who, &r)
	tv := func(t syscall.Timeval) int64 { return t.Sec*1e9 + t.Usec*1e3 }
	return tv(r.Utime) + tv(r.Stime)
}
