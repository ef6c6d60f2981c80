package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// TestRunHabits: --warmup runs are neither timed nor recorded, --prepare runs before each run (warm-ups
// too), --min-runs/--max-runs bound the count, --output null keeps the program's output off stdout, and
// the exports hold exactly the recorded runs; each record carries the machine's conditions.
func TestRunHabits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Make program")
	}
	need.Tools(t, "make", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "app: main.c\n\tcc -O2 -o app main.c\n",
		"main.c":   "#include <stdio.h>\nint main(void) { puts(\"program output\"); return 0; }\n",
	})
	shIn(t, dir, nil, "make")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	db := filepath.Join(t.TempDir(), "l.db")
	ej, emd := filepath.Join(dir, "runs.json"), filepath.Join(dir, "runs.md")
	out, stderr, code := runIn(t, dir, "run", "--ledger", db, "--warmup", "2", "--prepare", "echo x >> prepared", "--min-runs", "3", "--max-runs", "3",
		"--output", "null", "--export-json", ej, "--export-markdown", emd, "--", "./app")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "program output") {
		t.Errorf("--output null: the program's output reached stdout: %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "prepared")); strings.Count(string(b), "x\n") != 5 {
		t.Errorf("--prepare ran %d times, want 5 (2 warm-ups, 3 runs)", strings.Count(string(b), "x\n"))
	}
	var docs struct {
		Results []struct {
			Summary struct{ N int } `json:"summary"`
			Runs    []struct {
				ID      int64           `json:"id"`
				Machine json.RawMessage `json:"machine"`
			} `json:"runs"`
		} `json:"results"`
	}
	b, err := os.ReadFile(ej)
	if err != nil || json.Unmarshal(b, &docs) != nil || len(docs.Results) != 1 {
		t.Fatalf("export JSON: %v\n%s", err, b)
	}
	doc := docs.Results[0]
	if doc.Summary.N != 3 || len(doc.Runs) != 3 || doc.Runs[0].ID != 1 || !strings.Contains(string(doc.Runs[0].Machine), `"cpus"`) {
		t.Errorf("export: %d runs (summary n %d), first id %d, machine %s; want runs 1–3 with conditions", len(doc.Runs), doc.Summary.N, doc.Runs[0].ID, doc.Runs[0].Machine)
	}
	if md, _ := os.ReadFile(emd); !strings.Contains(string(md), "| `./app` | ") || !strings.Contains(string(md), " | 3 | ") {
		t.Errorf("markdown export:\n%s", md)
	}
	if runs, _, _ := runIn(t, dir, "runs", "--ledger", db); strings.Count(runs, " app ") != 3 {
		t.Errorf("the ledger holds other than 3 runs (warm-ups recorded?):\n%s", runs)
	}
	for _, bad := range [][]string{{"--repeat", "2", "--max-runs", "3"}, {"--min-runs", "4", "--max-runs", "3"}, {"--output", "file"},
		{"--export-json", filepath.Join(dir, "no-such-folder", "x.json")}, {"--export-csv", dir}} {
		if _, stderr, code := runIn(t, dir, append(append([]string{"run", "--ledger", db}, bad...), "--", "./app")...); code != exitRefused {
			t.Errorf("run %v: exit %d, want %d: %s", bad, code, exitRefused, stderr)
		}
	}
	if runs, _, _ := runIn(t, dir, "runs", "--ledger", db); strings.Count(runs, " app ") != 3 {
		t.Errorf("a refused run was recorded:\n%s", runs)
	}
	// --time-budget 0s with --min-runs 1: one run, not the default budget's many.
	if _, stderr, code := runIn(t, dir, "run", "--ledger", db, "--min-runs", "1", "--time-budget", "0s", "--output", "null", "--", "./app"); code != 0 {
		t.Fatalf("run --time-budget 0s: exit %d: %s", code, stderr)
	}
	if runs, _, _ := runIn(t, dir, "runs", "--ledger", db); strings.Count(runs, " app ") != 4 {
		t.Errorf("--min-runs 1 --time-budget 0s did not run exactly once:\n%s", runs)
	}
}

// TestRunSeveralCommands: -c once per command checks every command first (a stale one refuses the
// call and nothing is timed), then runs each in turn and says which was fastest, by how much, with the
// interval; the exports hold one result per command and the relative summary.
func TestRunSeveralCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Make program")
	}
	need.Tools(t, "make", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "all: fast slow\nfast: fast.c\n\tcc -O2 -o fast fast.c\nslow: slow.c\n\tcc -O2 -o slow slow.c\n",
		"fast.c":   "int main(void) { return 0; }\n",
		"slow.c":   "#include <unistd.h>\nint main(void) { usleep(40000); return 0; }\n",
	})
	shIn(t, dir, nil, "make")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	db := filepath.Join(t.TempDir(), "l.db")
	ej, emd := filepath.Join(dir, "runs.json"), filepath.Join(dir, "runs.md")
	_, stderr, code := runIn(t, dir, "run", "--ledger", db, "--repeat", "6", "--output", "null", "--export-json", ej, "--export-markdown", emd,
		"--cleanup", "echo x >> cleaned", "-c", "./slow", "-c", "./fast")
	if code != 0 {
		t.Fatalf("run -c -c: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cleaned")); string(b) != "x\nx\n" {
		t.Errorf("--cleanup ran %d times, want once per command (2)", strings.Count(string(b), "x"))
	}
	if !strings.Contains(stderr, "summary (median wall time): './fast' ran") || !regexp.MustCompile(`\d+\.\d\d times as fast as './slow' \(95% CI`).MatchString(stderr) {
		t.Errorf("no relative summary naming ./fast the fastest:\n%s", stderr)
	}
	var doc struct {
		Results []struct {
			Name    string
			Summary struct{ N int }
		}
		Relative []struct {
			Name        string
			Ratio       float64
			Significant bool
		}
	}
	if b, err := os.ReadFile(ej); err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("export JSON: %v\n%s", err, b)
	}
	if len(doc.Results) != 2 || doc.Results[0].Name != "./slow" || doc.Results[1].Summary.N != 6 || len(doc.Relative) != 2 ||
		doc.Relative[1].Name != "./slow" || doc.Relative[1].Ratio < 2 || !doc.Relative[1].Significant {
		t.Errorf("export: %+v", doc)
	}
	if md, _ := os.ReadFile(emd); strings.Count(string(md), "\n") != 4 || !strings.Contains(string(md), "| `./fast` | ") || !strings.Contains(string(md), " | 1.00 |") {
		t.Errorf("markdown export (a row per command, the fastest 1.00):\n%s", md)
	}
	runs, _, _ := runIn(t, dir, "runs", "--ledger", db)
	if strings.Count(runs, "sh -c ./fast") != 6 || strings.Count(runs, "sh -c ./slow") != 6 {
		t.Errorf("the ledger does not hold 6 runs of each command:\n%s", runs)
	}

	// A stale build in one command refuses both, before either is timed (an edit: a touch alone leaves
	// the content the build used, which is no refusal).
	future := time.Now().Add(time.Hour)
	if err := os.WriteFile(filepath.Join(dir, "slow.c"), []byte("#include <unistd.h>\nint main(void) { usleep(50000); return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "slow.c"), future, future); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runIn(t, dir, "run", "--ledger", db, "--output", "null", "-c", "./fast", "-c", "./slow")
	if code != exitRefused || !strings.Contains(stderr, "refusing to run ./slow") || !strings.Contains(stderr, "no command was run") {
		t.Errorf("a stale ./slow: exit %d, want %d with a refusal naming it:\n%s", code, exitRefused, stderr)
	}
	if after, _, _ := runIn(t, dir, "runs", "--ledger", db); after != runs {
		t.Errorf("a refused call recorded runs:\n%s", after)
	}
	// Names once per command, and never the same twice.
	for _, bad := range [][]string{{"--name", "a", "--name", "b", "--name", "c", "-c", "./fast", "-c", "./fast"}, {"-c", "./fast", "-c", "./fast"},
		{"-c", "./fast", "--", "./fast"}} {
		if _, stderr, code := runIn(t, dir, append([]string{"run", "--ledger", db}, bad...)...); code != exitRefused {
			t.Errorf("run %v: exit %d, want %d: %s", bad, code, exitRefused, stderr)
		}
	}
}
