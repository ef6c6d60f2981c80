package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/runner"
	"github.com/stalecheck/stalecheck/internal/testutil/pgtest"
)

// testLedgers are the ledgers the prune and import tests run against: a SQLite file, and PostgreSQL when
// STALECHECK_TEST_PG_DSN is set (or CI, where pgtest fails without it).
func testLedgers(t *testing.T) map[string]func(t *testing.T) string {
	m := map[string]func(t *testing.T) string{"sqlite": func(t *testing.T) string { return filepath.Join(t.TempDir(), "l.db") }}
	if os.Getenv(pgtest.Env) != "" || os.Getenv("CI") != "" {
		m["postgres"] = func(t *testing.T) string { return pgtest.DSN(t) }
	}
	return m
}

// pruneRecord is a record of name started daysAgo days before now, of build "a" or "b".
func pruneRecord(name string, daysAgo int, build string, stale bool) *ledger.Record {
	return &ledger.Record{Name: name, Start: time.Now().Add(-time.Duration(daysAgo) * 24 * time.Hour), WallNS: int64(1e9 + daysAgo),
		ExitStatus: 0, Command: []string{"./bench", name}, WorkDir: "/w", Stale: stale,
		Identity: ledger.Identity{Binaries: []ledger.Binary{{Path: "/w/bench", Size: 10, Digest: "blake3:" + strings.Repeat(build, 64)}}}}
}

func pruneIDs(t *testing.T, out string) []int64 {
	t.Helper()
	var doc PruneDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("prune JSON: %v\n%s", err, out)
	}
	var ids []int64
	for _, r := range doc.Records {
		ids = append(ids, r.ID)
	}
	if doc.Count != len(ids) {
		t.Errorf("count %d, %d records", doc.Count, len(ids))
	}
	return ids
}

// runs --prune: each selection flag lists exactly what it selects in a dry run (text and JSON) and
// removes nothing; --yes removes those and runs no longer lists them; no selection is exit 2.
func TestRunsPrune(t *testing.T) {
	runEnv(t)
	for name, newDSN := range testLedgers(t) {
		t.Run(name, func(t *testing.T) {
			dsn := newDSN(t)
			l := openTestLedger(t, dsn)
			ids := map[string]int64{}
			for _, c := range []struct {
				key, name string
				days      int
				build     string
				stale     bool
			}{{"m40a", "msm", 40, "a", false}, {"m35b", "msm", 35, "b", true}, {"m10a", "msm", 10, "a", false}, {"m1b", "msm", 1, "b", false},
				{"f50a", "fft", 50, "a", true}, {"f2a", "fft", 2, "a", false}} {
				id, err := l.Insert(context.Background(), pruneRecord(c.name, c.days, c.build, c.stale))
				if err != nil {
					t.Fatal(err)
				}
				ids[c.key] = id
			}
			keyB := runner.BuildKey(pruneRecord("x", 0, "b", false).Identity)
			want := func(keys ...string) string {
				var v []int64
				for _, k := range keys {
					v = append(v, ids[k])
				}
				sort.Slice(v, func(i, j int) bool { return v[i] > v[j] })
				return fmt.Sprint(v)
			}
			cutoff := time.Now().Add(-30 * 24 * time.Hour).UTC().Format(time.RFC3339)
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"--before", "720h"}, want("m40a", "m35b", "f50a")},
				{[]string{"--before", cutoff}, want("m40a", "m35b", "f50a")},
				{[]string{"--name", "msm", "--before", "720h"}, want("m40a", "m35b")},
				{[]string{"--stale"}, want("m35b", "f50a")},
				{[]string{"--build", keyB[:6]}, want("m35b", "m1b")},
				{[]string{"--keep-last", "1"}, want("m40a", "m35b", "m10a", "f50a")},
				{[]string{"--keep-last", "2", "--name", "msm"}, want("m40a", "m35b")},
				{[]string{"--stale", "--build", "build:" + keyB}, want("m35b")},
				{[]string{"--name", "nothing"}, "[]"},
			} {
				args := append([]string{"runs", "--ledger", dsn, "--prune", "--format", "json"}, c.args...)
				out, stderr, code := run(t, args...)
				if code != 0 {
					t.Fatalf("%v: exit %d\n%s", c.args, code, stderr)
				}
				if got := fmt.Sprint(pruneIDs(t, out)); got != c.want && !(got == "[]" && c.want == "[]") {
					t.Errorf("prune %v selects %s, want %s", c.args, got, c.want)
				}
			}
			if recs := listRecords(t, dsn); len(recs) != 6 {
				t.Fatalf("dry runs removed records: %d left", len(recs))
			}
			// Text dry run: the count and the records.
			out, _, code := run(t, "runs", "--ledger", dsn, "--prune", "--stale")
			if code != 0 || !strings.Contains(out, "Would remove 2 run(s)") || !strings.Contains(out, "dry run, nothing removed") ||
				strings.Count(out, "./bench ") != 2 || !strings.Contains(out, "stale") {
				t.Errorf("text dry run: exit %d\n%s", code, out)
			}
			// No selection, and selection flags without --prune: exit 2, nothing removed.
			for _, args := range [][]string{{"--prune"}, {"--prune", "--yes"}, {"--stale"}, {"--prune", "--keep-last", "0"}, {"--prune", "--before", "yesterday"}, {"--prune", "--build", "xyz"}} {
				_, stderr, code := run(t, append([]string{"runs", "--ledger", dsn}, args...)...)
				if code != 2 || stderr == "" {
					t.Errorf("runs %v: exit %d, stderr %q; want 2 with a message", args, code, stderr)
				}
			}
			_, stderr, _ := run(t, "runs", "--ledger", dsn, "--prune", "--yes")
			if !strings.Contains(stderr, "--prune needs a selection") {
				t.Errorf("no selection: %q", stderr)
			}
			// --yes removes them; runs no longer shows them.
			out, stderr, code = run(t, "runs", "--ledger", dsn, "--prune", "--yes", "--before", "720h", "--format", "json")
			if code != 0 {
				t.Fatalf("--yes: exit %d\n%s", code, stderr)
			}
			var doc PruneDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.DryRun || doc.Count != 3 {
				t.Fatalf("--yes JSON: %v %+v", err, doc)
			}
			var left []string
			for _, r := range listRecords(t, dsn) {
				left = append(left, fmt.Sprint(r.ID))
			}
			if got, w := "["+strings.Join(left, " ")+"]", want("m10a", "m1b", "f2a"); got != w {
				t.Errorf("after --yes: %s, want %s", got, w)
			}
			out, _, _ = run(t, "runs", "--ledger", dsn)
			if strings.Count(out, "./bench ") != 3 {
				t.Errorf("runs after the prune:\n%s", out)
			}
			out, _, code = run(t, "runs", "--ledger", dsn, "--prune", "--yes", "--stale")
			if code != 0 || !strings.Contains(out, "nothing to remove") {
				t.Errorf("nothing left to prune: exit %d\n%s", code, out)
			}
		})
	}
	// --yes on a missing SQLite ledger is an error and creates nothing.
	typo := filepath.Join(t.TempDir(), "legder.db")
	if _, stderr, code := run(t, "runs", "--ledger", typo, "--prune", "--yes", "--stale"); code != 2 || !strings.Contains(stderr, "does not exist") {
		t.Errorf("prune --yes on a missing ledger: exit %d %q", code, stderr)
	}
	if _, err := os.Stat(typo); err == nil {
		t.Errorf("prune created %s", typo)
	}
}

// runs --import: the record a real `stalecheck run` printed when its ledger was unreachable goes into a
// ledger with its own start and identity, runs shows it, a second import skips it; bad files (not JSON,
// truncated, a missing field, a build key that does not match) are errors naming the file and the record,
// and import nothing.
func TestRunsImport(t *testing.T) {
	runEnv(t)
	ws := builtProject(t)
	unreachable := "postgres://stalecheck:x@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"
	var lines []string
	for i := 0; i < 2; i++ {
		_, stderr, code := runIn(t, ws, "run", "--name", "imp", "--ledger", unreachable, "--", "target/release/app")
		if code != 0 || !strings.Contains(stderr, "the record follows as JSON") {
			t.Fatalf("run with an unreachable ledger: exit %d\n%s", code, stderr)
		}
		for _, line := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(line, "{") {
				lines = append(lines, line)
			}
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d record lines on stderr, want 2", len(lines))
	}
	var printed recordJSON
	if err := json.Unmarshal([]byte(lines[0]), &printed); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	jsonl := filepath.Join(dir, "both.jsonl")
	os.WriteFile(one, []byte(lines[0]+"\n"), 0o644)
	os.WriteFile(jsonl, []byte(lines[0]+"\n"+lines[1]+"\n"), 0o644)

	for name, newDSN := range testLedgers(t) {
		t.Run(name, func(t *testing.T) {
			dsn := newDSN(t)
			openTestLedger(t, dsn) // an existing, empty ledger
			out, stderr, code := run(t, "runs", "--ledger", dsn, "--import", one)
			if code != 0 || !strings.Contains(out, "Imported 1 record(s)") {
				t.Fatalf("import: exit %d\n%s%s", code, out, stderr)
			}
			recs := listRecords(t, dsn)
			if len(recs) != 1 {
				t.Fatalf("%d records after the import", len(recs))
			}
			got := recs[0]
			if got.Start.UnixNano() != printed.StartNS || got.WallNS != printed.WallNS || got.PeakRSSBytes != printed.PeakRSSBytes ||
				runner.BuildKey(got.Identity) != printed.Build || got.WorkDir != ws || !ledger.SameRun(&got, &printed.Record) {
				t.Errorf("imported record %+v\nprinted %+v", got, printed)
			}
			out, _, _ = run(t, "runs", "--ledger", dsn)
			if !strings.Contains(out, "imp") || !strings.Contains(out, printed.Build) {
				t.Errorf("runs after the import:\n%s", out)
			}
			// Both lines (JSON lines): the first is skipped as already there, the second imported.
			out, stderr, code = run(t, "runs", "--ledger", dsn, "--import", jsonl, "--format", "json")
			if code != 0 {
				t.Fatalf("import jsonl: exit %d\n%s", code, stderr)
			}
			var doc ImportDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Imported != 1 || doc.Skipped != 1 || !doc.Records[0].Duplicate || doc.Records[0].ID != got.ID || doc.Records[1].Duplicate {
				t.Errorf("jsonl import: %+v", doc)
			}
			// An array of both again: both skipped, text says so.
			arr := filepath.Join(t.TempDir(), "arr.json")
			os.WriteFile(arr, []byte("[\n"+lines[0]+",\n"+lines[1]+"\n]\n"), 0o644)
			out, _, code = run(t, "runs", "--ledger", dsn, "--import", arr)
			if code != 0 || strings.Count(out, "already in the ledger as run") != 2 || !strings.Contains(out, "Imported 0 record(s)") {
				t.Errorf("array import twice: exit %d\n%s", code, out)
			}
			if n := len(listRecords(t, dsn)); n != 2 {
				t.Errorf("%d records after importing duplicates, want 2", n)
			}

			// Bad files: each names the file and the record; nothing of the file is imported.
			fresh := strings.Replace(lines[1], `"name":"imp"`, `"name":"fresh"`, 1)
			var noCmd map[string]any
			json.Unmarshal([]byte(fresh), &noCmd)
			delete(noCmd, "command")
			noCmdLine, _ := json.Marshal(noCmd)
			badDir := t.TempDir()
			for _, c := range []struct{ name, body, want string }{
				{"garbage.json", fresh + "\n{\"name\": nope}\n", "record 2 (line 2): not valid JSON"},
				{"truncated.jsonl", fresh + "\n" + fresh[:len(fresh)/2], "record 2 (line 2): the file ends inside the record (truncated?)"},
				{"truncated-array.json", "[" + fresh + ",\n" + fresh[:40], "record 2 (line 2): the file ends inside the record"},
				{"missing.jsonl", fresh + "\n" + string(noCmdLine) + "\n", `record 2 (line 2): missing required field(s): "command"`},
				{"edited.json", strings.Replace(fresh, `"wall_ns":`, `"wall_ns":-`, 1), "record 1 (line 1): wall_ns is negative"},
				{"tampered.json", strings.Replace(fresh, `"build":"`, `"build":"0`, 1), "is not the build key"},
				{"number.json", "[" + fresh + ", 42]", "record 2 (line 1): not a JSON object"},
				{"unknown.json", strings.Replace(fresh, `{`, `{"colour":1,`, 1), `unknown field "colour"`},
				{"empty.json", "\n", "no records"},
			} {
				p := filepath.Join(badDir, c.name)
				os.WriteFile(p, []byte(c.body), 0o644)
				_, stderr, code := run(t, "runs", "--ledger", dsn, "--import", p)
				if code != 2 || !strings.Contains(stderr, "--import "+p+": ") || !strings.Contains(stderr, c.want) {
					t.Errorf("%s: exit %d, stderr %q; want 2 naming %s and %q", c.name, code, stderr, p, c.want)
				}
			}
			for _, r := range listRecords(t, dsn) {
				if r.Name == "fresh" {
					t.Errorf("a failed import left record %d", r.ID)
				}
			}
		})
	}
}
