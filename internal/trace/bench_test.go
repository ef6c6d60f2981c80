//go:build tracebench

// The speed benchmark of issue 10 (minutes on 2 cores, kept out of `go test ./...`):
//
//	CARGO_NET_OFFLINE=true go test -tags tracebench -run TestTraceOverhead -v -timeout 60m ./internal/trace/
//
// It builds a workspace depending on Debian's ring, blake3, psm and zstd-sys (C and assembly through the
// cc crate) from scratch with `cargo build --release`, untraced and traced, ROUNDS times each (default
// 1, alternating, each in a fresh target folder), and reports the ratio of the medians and the trace size.
package trace_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/trace"
)

func TestTraceOverhead(t *testing.T) {
	needStrace(t)
	testutil.NeedDebianCrates(t)
	rounds := 1
	if v, err := strconv.Atoi(os.Getenv("ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	dir := t.TempDir()
	vendor := testutil.VendorCopy(t, dir, nil)
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml": `[package]
name = "nativebench"
version = "0.1.0"
edition = "2021"

[dependencies]
ring = "0.16"
blake3 = "1"
psm = "0.1"
zstd-sys = "2"
`,
		"src/main.rs":        "fn main() { println!(\"{:?}\", blake3::hash(b\"x\")); let _ = ring::digest::digest(&ring::digest::SHA256, b\"x\"); println!(\"{}\", unsafe { zstd_sys::ZSTD_versionNumber() }); let _ = psm::stack_pointer(); }\n",
		".cargo/config.toml": testutil.DirectorySourceConfig(vendor),
	})
	p.Cargo("generate-lockfile", "--offline")
	env := append(os.Environ(), "CARGO_NET_OFFLINE=true", "CARGO_TERM_COLOR=never")
	selfCPU := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var cpuPlain, cpuTraced []time.Duration
	build := func(traced bool, target string) (time.Duration, *trace.Result) {
		args := []string{"cargo", "build", "--release", "--offline", "--target-dir", target}
		begin := time.Now()
		if !traced {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir, cmd.Env = p.Dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("untraced build: %v\n%s", err, out)
			}
			cpuPlain = append(cpuPlain, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			return time.Since(begin), nil
		}
		log, _ := os.Create(filepath.Join(dir, "traced.log"))
		defer log.Close()
		self := selfCPU()
		res, err := trace.Run(context.Background(), trace.Options{Command: args, Dir: p.Dir, Env: env, StateDir: filepath.Join(dir, "state"), BuildDir: target, Stdout: log, Stderr: log})
		if err != nil || res.ExitStatus != 0 {
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("traced build: %v %+v\n%s", err, res, b)
		}
		cpuTraced = append(cpuTraced, res.CPU+selfCPU()-self) // the build tree, strace, and the parser
		return time.Since(begin), res
	}
	var plain, traced []time.Duration
	var last *trace.Result
	for i := range rounds {
		d, _ := build(false, filepath.Join(dir, "t-plain-"+strconv.Itoa(i)))
		plain = append(plain, d)
		d, res := build(true, filepath.Join(dir, "t-traced-"+strconv.Itoa(i)))
		traced = append(traced, d)
		last = res
		t.Logf("round %d: wall untraced %v, traced %v (%.2fx); CPU untraced %v, traced %v incl. strace and the parser (%.2fx)", i,
			plain[i].Round(time.Millisecond), traced[i].Round(time.Millisecond), traced[i].Seconds()/plain[i].Seconds(),
			cpuPlain[i].Round(time.Millisecond), cpuTraced[i].Round(time.Millisecond), cpuTraced[i].Seconds()/cpuPlain[i].Seconds())
	}
	med := func(ds []time.Duration) time.Duration {
		s := append([]time.Duration{}, ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[len(s)/2]
	}
	tr, err := trace.Load(filepath.Join(dir, "state"), last.File[:0]+filepath.Join(dir, "t-traced-"+strconv.Itoa(rounds-1)))
	if err != nil {
		t.Fatal(err)
	}
	units := []string{}
	for _, r := range tr.BuildScriptRuns() {
		units = append(units, r.Unit)
	}
	t.Logf("CPU: median untraced %v, traced %v: ratio %.2fx", med(cpuPlain).Round(time.Millisecond), med(cpuTraced).Round(time.Millisecond), med(cpuTraced).Seconds()/med(cpuPlain).Seconds())
	t.Logf("wall: median untraced %v, traced %v: ratio %.2fx; trace %d bytes (%d strace lines, %d processes, %d accesses stored); build-script runs %s",
		med(plain).Round(time.Millisecond), med(traced).Round(time.Millisecond), med(traced).Seconds()/med(plain).Seconds(),
		last.Bytes, last.Lines, last.Processes, last.Accesses, strings.Join(units, " "))
}
