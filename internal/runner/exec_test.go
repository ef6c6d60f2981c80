package runner

import (
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// plan returns a Plan that runs argv in dir without a workspace (Exec needs no graph).
func execPlan(t *testing.T, dir string, argv ...string) *Plan {
	t.Helper()
	prog, err := resolveProgram(argv[0], dir, os.Getenv("PATH"))
	if err != nil {
		t.Fatal(err)
	}
	return &Plan{Program: prog, Dir: dir, Command: argv, Environ: os.Environ()}
}

func TestRunExecStatusAndUsage(t *testing.T) {
	dir := t.TempDir()
	u, err := execPlan(t, dir, "sh", "-c", "exit 7").Exec(Stdio{})
	if err != nil || u.ExitStatus != 7 || u.Signal != 0 {
		t.Fatalf("exit 7: got %+v, %v", u, err)
	}
	// Killed by a signal: 128+N, as shells report it.
	u, err = execPlan(t, dir, "sh", "-c", "kill -KILL $$").Exec(Stdio{})
	if err != nil || u.ExitStatus != 128+9 || u.Signal != syscall.SIGKILL {
		t.Fatalf("killed: got %+v, %v", u, err)
	}
	// Peak RSS: dd holds a 96 MiB buffer it fills; user+sys CPU and wall are measured.
	before := time.Now()
	u, err = execPlan(t, dir, "dd", "if=/dev/zero", "of=/dev/null", "bs=96M", "count=2").Exec(Stdio{})
	if err != nil || u.ExitStatus != 0 {
		t.Fatalf("dd: %+v, %v", u, err)
	}
	if u.PeakRSSBytes < 96<<20 || u.PeakRSSBytes > 200<<20 {
		t.Errorf("peak RSS %d bytes, want about 96 MiB (ru_maxrss of dd)", u.PeakRSSBytes)
	}
	if u.WallNS <= 0 || u.WallNS > time.Since(before).Nanoseconds() || u.UserNS+u.SysNS <= 0 {
		t.Errorf("times: wall %d user %d sys %d", u.WallNS, u.UserNS, u.SysNS)
	}
	if u.Start.Before(before) || u.Start.After(time.Now()) {
		t.Errorf("start %v not within the call", u.Start)
	}
	// The command runs in the plan's folder with the plan's arguments.
	out := filepath.Join(dir, "out")
	p := execPlan(t, dir, "sh", "-c", `pwd > out; printf '%s|' "$@" >> out`, "sh", "a b", "")
	if u, err := p.Exec(Stdio{}); err != nil || u.ExitStatus != 0 {
		t.Fatal(u, err)
	}
	if b, _ := os.ReadFile(out); string(b) != dir+"\na b||" {
		t.Errorf("command saw %q", b)
	}
}

func TestRunResolveProgram126And127(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "noexec.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "badinterp"), []byte("#!/nonexistent/interpreter\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "garbage"), []byte("\x00\x01\x02 not a program"), 0o755)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	for _, tc := range []struct {
		name string
		code int
	}{
		{"./missing", 127},
		{"stalecheck-no-such-command", 127},
		{"./noexec.sh", 126},
		{"./sub", 126},
	} {
		_, err := resolveProgram(tc.name, dir, os.Getenv("PATH"))
		var ee *ExecError
		if !errors.As(err, &ee) || ee.Code != tc.code {
			t.Errorf("%s: got %v, want exit %d", tc.name, err, tc.code)
		}
	}
	// Found, but the kernel refuses: a missing interpreter is 127 (ENOENT, as env reports it), a file that
	// is no program 126 (ENOEXEC).
	for name, code := range map[string]int{"./badinterp": 127, "./garbage": 126} {
		_, err := execPlan(t, dir, name).Exec(Stdio{})
		var ee *ExecError
		if !errors.As(err, &ee) || ee.Code != code {
			t.Errorf("%s: got %v, want exit %d", name, err, code)
		}
	}
}

// SIGINT reaches the command through the terminal's process group, so stalecheck ignores it while it
// waits; SIGTERM and SIGHUP are forwarded to the command.
func TestRunSignals(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	script := `trap 'exit 42' TERM; trap 'exit 43' HUP; : > ready; i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; exit 0`
	for _, tc := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGTERM, 42}, {syscall.SIGHUP, 43}} {
		if signal.Ignored(tc.sig) {
			// Under nohup SIGHUP is ignored, and Exec leaves an ignored signal ignored (as nohup means).
			t.Logf("%v is ignored in this process (nohup?): not forwarded, by design; case not run", tc.sig)
			continue
		}
		os.Remove(ready)
		p := execPlan(t, dir, "sh", "-c", script)
		type result struct {
			u   Usage
			err error
		}
		done := make(chan result, 1)
		go func() { u, err := p.Exec(Stdio{}); done <- result{u, err} }()
		waitFile(t, ready)
		syscall.Kill(os.Getpid(), tc.sig)
		select {
		case r := <-done:
			if r.err != nil || r.u.ExitStatus != tc.want {
				t.Errorf("%v: got %+v, %v; want the command's exit %d (the signal forwarded)", tc.sig, r.u, r.err, tc.want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%v was not forwarded", tc.sig)
		}
	}

	// SIGINT to stalecheck alone (not to the group): ignored, the command finishes on its own.
	os.Remove(ready)
	p := execPlan(t, dir, "sh", "-c", `: > ready; sleep 0.5; exit 5`)
	done := make(chan Usage, 1)
	go func() { u, _ := p.Exec(Stdio{}); done <- u }()
	waitFile(t, ready)
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	if u := <-done; u.ExitStatus != 5 {
		t.Errorf("after SIGINT to stalecheck: exit %d, want the command's own 5", u.ExitStatus)
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

func TestRunBuildEnv(t *testing.T) {
	env := []string{"PATH=/bin", "RUSTFLAGS=-C target-cpu=native", "CARGO_PROFILE_RELEASE_DEBUG=true", "CARGO_TERM_COLOR=never",
		"CARGO_REGISTRIES_MY_TOKEN=s3cret", "CARGO_REGISTRY_TOKEN=s3cret", "CUDA_VISIBLE_DEVICES=0,1", "TORCH_CUDA_ARCH_LIST=9.0",
		"CUDA_ARCH=sm_90", "PROVER_WINDOW=7", "API_TOKEN=x", "HOME=/root", "EMPTY_DECLARED="}
	got := buildEnv(env, []string{"PROVER_WINDOW", "EMPTY_DECLARED", "UNSET_DECLARED", "API_TOKEN"})
	want := map[string]string{"RUSTFLAGS": "-C target-cpu=native", "CARGO_PROFILE_RELEASE_DEBUG": "true", "CUDA_VISIBLE_DEVICES": "0,1",
		"TORCH_CUDA_ARCH_LIST": "9.0", "CUDA_ARCH": "sm_90", "PROVER_WINDOW": "7", "EMPTY_DECLARED": ""}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %q (%v), want %q", k, g, ok, v)
		}
	}
	for k, v := range got {
		if strings.Contains(v, "s3cret") {
			t.Errorf("a credential was recorded: %s", k)
		}
	}
}

// A helper started ahead of the pre-run check (StartHelper) runs the plan's command once it is sent:
// streams that are buffers get only the command's bytes, written after what stalecheck wrote to them
// meanwhile; its standard input reaches the command; the floor is the helper's. An unused helper is given
// back by Close and leaves no process behind.
func TestRunPrestartedHelper(t *testing.T) {
	dir := t.TempDir()
	var out, errb strings.Builder
	h := StartHelper(dir, os.Environ(), Stdio{Stdin: strings.NewReader("from stdin\n"), Stdout: &out, Stderr: &errb})
	if h == nil {
		t.Fatal("StartHelper: no helper (ExecHelperHook is called in TestMain)")
	}
	errb.WriteString("stalecheck's own line\n") // what the pre-run check writes while the helper waits
	time.Sleep(50 * time.Millisecond)
	p := execPlan(t, dir, "sh", "-c", `read l; echo "got $l"; pwd; echo oops >&2; exit 3`)
	p.UseHelper(h)
	u, err := p.Exec(Stdio{Stdout: &out, Stderr: &errb})
	if err != nil || u.ExitStatus != 3 {
		t.Fatalf("got %+v, %v", u, err)
	}
	if out.String() != "got from stdin\n"+dir+"\n" || errb.String() != "stalecheck's own line\noops\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
	if u.RSSFloorBytes <= 0 || u.Start.Before(time.Now().Add(-time.Minute)) {
		t.Errorf("floor %d, start %v", u.RSSFloorBytes, u.Start)
	}
	h.Close() // used: a no-op

	// Unused: Close ends and reaps it.
	h = StartHelper(dir, os.Environ(), Stdio{Stdout: &out})
	if h == nil {
		t.Fatal("StartHelper: no helper")
	}
	pid := h.cmd.Process.Pid
	h.Close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the unused helper %d is still there after Close: %v", pid, err)
	}
	// Exec without a helper given starts one of its own.
	if u, err := execPlan(t, dir, "true").Exec(Stdio{}); err != nil || u.ExitStatus != 0 || u.RSSFloorBytes <= 0 {
		t.Errorf("got %+v, %v", u, err)
	}
}
