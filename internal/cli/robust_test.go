package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"github.com/stalecheck/stalecheck/internal/testutil/special"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/runner"
)

// runWithin runs the CLI in-process and fails the test when it does not return within d: a command
// that would hang on a FIFO fails the test instead of hanging it.
func runWithin(t *testing.T, d time.Duration, args ...string) (string, string, int) {
	t.Helper()
	type res struct {
		out, err string
		code     int
	}
	ch := make(chan res, 1)
	go func() {
		o, e, c := run(t, args...)
		ch <- res{o, e, c}
	}()
	select {
	case r := <-ch:
		return r.out, r.err, r.code
	case <-time.After(d):
		t.Fatalf("stalecheck %s did not return within %v", strings.Join(args, " "), d)
		return "", "", 0
	}
}

// clean --plan with a FIFO or /dev/zero: exit 2 and an error naming the file, at once (it used to
// block on the FIFO, or read /dev/zero until memory ran out).
func TestCleanPlanSpecialFile(t *testing.T) {
	for _, kind := range special.Kinds {
		plan := filepath.Join(t.TempDir(), "plan.json")
		special.Plant(t, plan, kind)
		_, stderr, code := runWithin(t, 10*time.Second, "clean", "--plan", plan, "--yes")
		if code != 2 || !strings.Contains(stderr, plan) || !strings.Contains(stderr, "not a regular file") || strings.Contains(stderr, "goroutine") {
			t.Errorf("clean --plan %s (%s): exit %d, %q", plan, kind, code, stderr)
		}
	}
}

// run with each state file replaced by a FIFO or a /dev/zero symlink: the caches are ignored and
// rebuilt (the run is recorded, the cache files are regular again); a ledger that is not a regular file
// refuses before the command starts (125), naming it.
func TestRunSpecialStateFiles(t *testing.T) {
	ws := builtProject(t)
	for _, kind := range special.Kinds {
		t.Run(kind, func(t *testing.T) {
			state := runEnv(t)
			dir := filepath.Join(state, "stalecheck")
			os.MkdirAll(dir, 0o700)
			caches := []string{digest.CacheFile, runner.StateFile, evidence.CacheFile}
			for _, f := range caches {
				special.Plant(t, filepath.Join(dir, f), kind)
			}
			db := filepath.Join(t.TempDir(), "l.db")
			t.Chdir(ws)
			_, stderr, code := runWithin(t, 60*time.Second, "run", "--ledger", db, "--", "target/release/app")
			if code != 0 || strings.Contains(stderr, "goroutine") {
				t.Fatalf("run with %s caches: exit %d\n%s", kind, code, stderr)
			}
			if recs := listRecords(t, db); len(recs) != 1 {
				t.Errorf("%d records, want 1", len(recs))
			}
			// The run cache is rewritten (the digest cache too, once it holds an entry whose mtime is not racy).
			for _, f := range []string{runner.StateFile} {
				if st, err := os.Lstat(filepath.Join(dir, f)); err != nil || !st.Mode().IsRegular() {
					t.Errorf("after the run, %s is %v (%v); want a rebuilt cache file", f, st.Mode(), err)
				}
			}

			// The default ledger in the state folder, and a --ledger file, as a FIFO or /dev/zero.
			marker := filepath.Join(t.TempDir(), "started")
			special.Plant(t, filepath.Join(dir, "ledger.db"), kind)
			for _, args := range [][]string{{"run", "--"}, {"run", "--ledger", filepath.Join(dir, "ledger.db"), "--"}} {
				args = append(args, "sh", "-c", ": > "+marker)
				_, stderr, code = runWithin(t, 60*time.Second, args...)
				if code != 125 || !strings.Contains(stderr, filepath.Join(dir, "ledger.db")) || !strings.Contains(stderr, "not a regular file") {
					t.Errorf("run with a %s ledger: exit %d, %q", kind, code, stderr)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Errorf("run started the command with a %s ledger", kind)
				}
			}
			for _, cmd := range [][]string{{"runs"}, {"diff", "1", "2"}} {
				_, stderr, code = runWithin(t, 30*time.Second, cmd...)
				if code != 2 || !strings.Contains(stderr, "ledger.db: not a regular file") {
					t.Errorf("%v with a %s ledger: exit %d, %q", cmd, kind, code, stderr)
				}
			}
		})
	}
}

// Usage errors: an unknown ledger URL scheme, a negative --limit, an unknown --color.
func TestLedgerAndFlagUsageErrors(t *testing.T) {
	runEnv(t)
	t.Chdir(t.TempDir())
	want := "unsupported ledger URL scheme mysql: use a file path or postgres://"
	if _, stderr, code := run(t, "run", "--ledger", "mysql://x", "--", "true"); code != 125 || !strings.Contains(stderr, want) || strings.Contains(stderr, "folder") {
		t.Errorf("run --ledger mysql://x: exit %d, %q", code, stderr)
	}
	for _, cmd := range [][]string{{"runs", "--ledger", "mysql://x"}, {"diff", "--ledger", "mysql://x", "1", "2"}} {
		if _, stderr, code := run(t, cmd...); code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, %q", cmd, code, stderr)
		}
	}
	if _, stderr, code := run(t, "runs", "--limit", "-5"); code != 2 || !strings.Contains(stderr, "--limit -5: want 0 (all runs) or a positive number") {
		t.Errorf("runs --limit -5: exit %d, %q", code, stderr)
	}
	if _, stderr, code := run(t, "run", "--color", "bogus", "--", "true"); code != 125 || !strings.Contains(stderr, `--color "bogus": want auto, always or never`) {
		t.Errorf("run --color bogus: exit %d, %q", code, stderr)
	}
}

// insert stores records in a fresh SQLite ledger and returns its path.
func insert(t *testing.T, recs ...*ledger.Record) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "l.db")
	l := openTestLedger(t, db)
	for _, r := range recs {
		if _, err := l.Insert(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// runs: a record whose findings column is not valid JSON is listed with findings null and a note (the
// other records too); control characters in the git column are escaped; times are RFC 3339 with
// nanoseconds in UTC; a peak RSS at or below stalecheck's own is marked "≤ floor" with its footnote.
func TestRunsRobustOutput(t *testing.T) {
	runEnv(t)
	start := time.Date(2026, 11, 30, 8, 51, 36, 947357198, time.UTC)
	stale := &ledger.Record{Name: "stale", Start: start, PeakRSSBytes: 1 << 20, Stale: true, Findings: json.RawMessage(`[{"rule":"x"}]`),
		Command: []string{"true"}, WorkDir: "/ws", Identity: ledger.Identity{Git: ledger.Git{Head: "ab\x1b[31mcdef0123456789", Dirty: true}}}
	big := &ledger.Record{Name: "big", Start: start.Add(time.Second), PeakRSSBytes: 8 << 30, Command: []string{"true"}, WorkDir: "/ws"}
	db := insert(t, stale, big)
	// Corrupt the stored findings, as a damaged or hand-edited ledger would have them.
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`UPDATE records SET findings = '[{"rule": "x", trunc' WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()

	out, stderr, code := run(t, "runs", "--ledger", db, "--format", "json")
	if code != 0 {
		t.Fatalf("runs --format json: exit %d, %s", code, stderr)
	}
	var doc struct {
		Records []struct {
			ID       int64           `json:"id"`
			Findings json.RawMessage `json:"findings"`
			Note     string          `json:"note"`
			Stale    bool            `json:"stale"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Records) != 2 {
		t.Fatalf("runs JSON: %v\n%s", err, out)
	}
	r1 := doc.Records[1]
	if r1.ID != 1 || string(r1.Findings) != "null" || !strings.Contains(r1.Note, "not valid JSON") || !r1.Stale || doc.Records[0].Note != "" {
		t.Errorf("records: %+v", doc.Records)
	}

	out, stderr, code = run(t, "runs", "--ledger", db)
	if code != 0 {
		t.Fatalf("runs: exit %d, %s", code, stderr)
	}
	if strings.ContainsRune(out, 0x1b) || !strings.Contains(out, `ab\x1b[31mcde+dirty`) {
		t.Errorf("git column not escaped:\n%q", out)
	}
	if !strings.Contains(out, "2026-11-30T08:51:36Z") || !strings.Contains(out, "2026-11-30T08:51:37Z") {
		t.Errorf("start times not RFC 3339 to the second in UTC:\n%s", out)
	}
	if !strings.Contains(out, "1.0 MiB (≤ floor)") || strings.Contains(out, "8.0 GiB (≤ floor)") || !strings.Contains(out, "\n≤ floor: the peak RSS is not above the resident set of the process that started the command") {
		t.Errorf("peak RSS floor mark:\n%s", out)
	}
	if !strings.Contains(out, "note: the findings column of record 1 in the ledger is not valid JSON") {
		t.Errorf("text lacks the note on record 1:\n%s", out)
	}

	out, _, code = run(t, "diff", "--ledger", db, "1", "2")
	if code != 0 || !strings.Contains(out, "run 1  stale  2026-11-30T08:51:36.947357198Z  build ") ||
		!strings.Contains(out, "peak RSS 1.0 MiB (≤ floor) → 8.0 GiB (+819100.0%)") || !strings.Contains(out, "  ≤ floor: ") {
		t.Errorf("diff 1 2: exit %d\n%s", code, out)
	}
}

// diff of runs from two copies of a workspace: the same relative path is one file (changed or the same),
// never "only in run N" twice.
func TestDiffTwoCopiesCLI(t *testing.T) {
	runEnv(t)
	rec := func(ws, mainDigest string) *ledger.Record {
		return &ledger.Record{Name: "gpu-prover", Start: time.Now(), WorkDir: ws, Command: []string{"target/release/gpu-prover"}, Identity: ledger.Identity{
			Binaries: []ledger.Binary{{Path: ws + "/target/release/gpu-prover", Size: 10, Digest: "blake3:" + strings.Repeat("a", 64)}},
			Natives: []ledger.Native{{Library: "libgroth16_cuda.a", Path: ws + "/target/release/build/prover-sys-1/out/libgroth16_cuda.a",
				Fingerprint: runner.FingerprintPrefix + strings.Repeat("1", 64)}},
			Sources: []ledger.Source{{Path: ws + "/prover-sys/cuda/a.c", Digest: "blake3:" + strings.Repeat("1", 64)},
				{Path: ws + "/gpu-prover/src/main.rs", Digest: mainDigest}},
		}}
	}
	d1, d2 := "blake3:"+strings.Repeat("2", 64), "blake3:"+strings.Repeat("3", 64)
	db := insert(t, rec("/tmp/one/ws", d1), rec("/tmp/two/ws", d1), rec("/tmp/two/ws", d2))
	out, stderr, code := run(t, "diff", "--ledger", db, "1", "2")
	if code != 0 || !strings.Contains(out, "same build, in another folder: ") || strings.Contains(out, "only in") {
		t.Errorf("diff 1 2: exit %d %s\n%s", code, stderr, out)
	}
	out, _, _ = run(t, "diff", "--ledger", db, "1", "3")
	if !strings.Contains(out, "build differences:\n  1 source changed: gpu-prover/src/main.rs\n") || strings.Contains(out, "only in") {
		t.Errorf("diff 1 3:\n%s", out)
	}
}

// explain: a path that does not exist (and no record names) exits 2 with "no such file"; the help shows
// no argument name pflag made of backquoted text.
func TestExplainMissingPathAndHelp(t *testing.T) {
	ws := builtProject(t)
	_, stderr, code := run(t, "explain", "-w", ws, filepath.Join(ws, "seed-sys/cuda/nosuch.c"))
	if code != 2 || !strings.Contains(stderr, "no such file") {
		t.Errorf("explain of a missing file: exit %d, %q", code, stderr)
	}
	out, _, code := run(t, "explain", "--help")
	if code != 0 || !regexp.MustCompile(`--ask-cargo +also ask Cargo`).MatchString(out) {
		t.Errorf("explain --help: exit %d\n%s", code, out)
	}
	// No flag of the commands owned here has backquotes in its usage (pflag would take them as the
	// argument's name).
	root := NewRoot(Streams{Out: &strings.Builder{}, Err: &strings.Builder{}})
	for _, name := range []string{"run", "runs", "diff", "explain", "clean"} {
		c, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				t.Errorf("%s --%s: backquotes in %q", name, f.Name, f.Usage)
			}
		})
	}
}
