package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	var doc struct {
		Summary struct{ N int } `json:"summary"`
		Runs    []struct {
			ID      int64           `json:"id"`
			Machine json.RawMessage `json:"machine"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(ej)
	if err != nil || json.Unmarshal(b, &doc) != nil {
		t.Fatalf("export JSON: %v\n%s", err, b)
	}
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
