package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The reliability tests re-execute this test binary as child processes; these variables tell a child what
// to do (TestMain runs it instead of the tests).
const (
	childModeEnv   = "STALECHECK_LEDGER_TEST_CHILD" // "insert-mid" or "insert-many"
	childDSNEnv    = "STALECHECK_LEDGER_TEST_DSN"
	childWorkerEnv = "STALECHECK_LEDGER_TEST_WORKER"
	childCountEnv  = "STALECHECK_LEDGER_TEST_COUNT"
	childGoEnv     = "STALECHECK_LEDGER_TEST_GO" // a file whose appearance starts the workers together
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	if db := os.Getenv(roChildEnv); db != "" {
		os.Exit(roChild(db))
	}
	os.Exit(m.Run())
}

func runChild(mode string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "child %s: "+format+"\n", append([]any{mode}, args...)...)
		return 1
	}
	if g := os.Getenv(childGoEnv); g != "" {
		for {
			if _, err := os.Stat(g); err == nil {
				break
			}
			if ctx.Err() != nil {
				return fail("no start signal")
			}
			time.Sleep(time.Millisecond)
		}
	}
	l, err := Open(ctx, os.Getenv(childDSNEnv))
	if err != nil {
		return fail("open: %v", err)
	}
	defer l.Close()
	switch mode {
	case "insert-mid":
		// The failpoint blocks this Insert inside its transaction until the parent kills us.
		_, err := l.Insert(ctx, fullRecord("killed"))
		return fail("Insert returned (%v); the failpoint should have blocked it", err)
	case "insert-many":
		w := os.Getenv(childWorkerEnv)
		n, _ := strconv.Atoi(os.Getenv(childCountEnv))
		for i := range n {
			r := fullRecord("worker-" + w)
			r.Command = []string{w, strconv.Itoa(i)}
			if _, err := l.Insert(ctx, r); err != nil {
				return fail("worker %s insert %d: %v", w, i, err)
			}
		}
		return 0
	}
	return fail("unknown mode")
}

// child returns a command that re-executes the test binary in the given mode.
func child(mode, dsn string, env ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childModeEnv+"="+mode, childDSNEnv+"="+dsn)
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// checkConsistent verifies that no child-table row lacks its record (no partial record is visible).
func checkConsistent(t *testing.T, l Ledger) {
	t.Helper()
	db := rawDB(l)
	for _, table := range []string{"args", "binaries", "natives", "sources", "toolchain", "env"} {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM ` + table + ` WHERE record_id NOT IN (SELECT id FROM records)`).Scan(&n); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if n != 0 {
			t.Errorf("%s holds %d rows of no record", table, n)
		}
	}
	if l.(*sqlLedger).d == sqliteDialect {
		var res string
		if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
			t.Errorf("integrity_check = %q, %v", res, err)
		}
	}
}

// TestKilledWriter kills a writer (SIGKILL) in the middle of Insert, inside its transaction after some of
// the record's rows are written, and checks that the ledger stays readable, shows no partial record, and
// takes new records.
func TestKilledWriter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		l := mustOpen(t, dsn)
		before := fullRecord("before")
		mustInsert(t, l, before)

		marker := filepath.Join(t.TempDir(), "reached")
		cmd, out := child("insert-mid", dsn, failpointEnv+"=ledger-insert-mid", failpointMarkerEnv+"="+marker)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.After(time.Minute)
	wait:
		for {
			select {
			case err := <-exited:
				t.Fatalf("child exited before the failpoint: %v\n%s", err, out)
			case <-deadline:
				cmd.Process.Kill()
				t.Fatalf("child did not reach the failpoint in a minute\n%s", out)
			case <-time.After(5 * time.Millisecond):
				if _, err := os.Stat(marker); err == nil {
					break wait
				}
			}
		}

		// The child holds an open transaction with part of its record written: a reader sees none of it.
		if rs, err := l.List(ctxT(t), Filter{}); err != nil || len(rs) != 1 {
			t.Fatalf("during the child's transaction: List = %v, %v; want only the first record", recordIDs(rs), err)
		}

		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := <-exited
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child ended with %v, want SIGKILL\n%s", err, out)
		}

		l2 := mustOpen(t, dsn)
		for _, led := range []Ledger{l, l2} {
			rs, err := led.List(ctxT(t), Filter{})
			if err != nil {
				t.Fatalf("List after the kill: %v", err)
			}
			if len(rs) != 1 || rs[0].Name != "before" {
				t.Fatalf("after the kill: records %v, want only %d", recordIDs(rs), before.ID)
			}
			checkConsistent(t, led)
		}
		after := fullRecord("after")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := l2.Insert(ctx, after); err != nil {
			t.Fatalf("Insert after the kill: %v", err)
		}
		rs, err := l.List(ctxT(t), Filter{})
		if err != nil || len(rs) != 2 || rs[0].ID != after.ID {
			t.Fatalf("after a new insert: %v, %v", recordIDs(rs), err)
		}
		checkConsistent(t, l2)
	})
}

// TestConcurrentProcesses has 8 processes insert into one new ledger at once (they also race to create
// and migrate it) and checks that every record arrives whole, exactly once.
func TestConcurrentProcesses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		const workers, each = 8, 25
		goFile := filepath.Join(t.TempDir(), "go")
		type proc struct {
			cmd *exec.Cmd
			out *bytes.Buffer
		}
		var procs []proc
		for w := range workers {
			cmd, out := child("insert-many", dsn, childWorkerEnv+"="+strconv.Itoa(w),
				childCountEnv+"="+strconv.Itoa(each), childGoEnv+"="+goFile)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			procs = append(procs, proc{cmd, out})
		}
		start := time.Now()
		if err := os.WriteFile(goFile, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for w, p := range procs {
			if err := p.cmd.Wait(); err != nil {
				t.Errorf("worker %d: %v\n%s", w, err, p.out)
			}
		}
		t.Logf("%d processes inserted %d records each in %v", workers, each, time.Since(start))
		if t.Failed() {
			return
		}

		l := mustOpen(t, dsn)
		rs, err := l.List(ctxT(t), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != workers*each {
			t.Fatalf("ledger holds %d records, want %d", len(rs), workers*each)
		}
		seen := map[string]bool{}
		for _, r := range rs {
			if len(r.Command) != 2 || r.Name != "worker-"+r.Command[0] {
				t.Fatalf("record %d: name %q command %q", r.ID, r.Name, r.Command)
			}
			key := r.Command[0] + "/" + r.Command[1]
			if seen[key] {
				t.Fatalf("record %s stored twice", key)
			}
			seen[key] = true
			if len(r.Identity.Binaries) != 2 || len(r.Identity.Natives) != 2 || len(r.Identity.Env) != 3 {
				t.Fatalf("record %d is not whole: %+v", r.ID, r.Identity)
			}
		}
		checkConsistent(t, l)
	})
}
