package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Repro 13 (b): runs and diff never create a ledger: a mistyped path is an error (exit 2) naming it,
// for the default ledger too. (d): clean --format json writes every list as a list, also when nothing
// is planned.
func TestReadOnlyCommandsMissingLedgerAndEmptyCleanPlan(t *testing.T) {
	state := runEnv(t)
	ws := builtProject(t)
	typo := filepath.Join(t.TempDir(), "legder.db")
	for _, args := range [][]string{{"runs", "--ledger", typo}, {"runs", "--ledger", typo, "--format", "json"}, {"diff", "--ledger", typo, "1", "2"}} {
		out, stderr, code := runIn(t, ws, args...)
		if code != 2 || !strings.Contains(stderr, typo+" does not exist") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming %s", args, code, out, stderr, typo)
		}
		if _, err := os.Stat(typo); err == nil {
			t.Fatalf("%v created %s", args, typo)
		}
	}
	def := filepath.Join(state, "stalecheck", "ledger.db")
	if _, stderr, code := runIn(t, ws, "runs"); code != 2 || !strings.Contains(stderr, def+" does not exist") {
		t.Errorf("runs with no default ledger yet: exit %d, %q", code, stderr)
	}
	// After a run, the same commands answer.
	if _, stderr, code := runIn(t, ws, "run", "-q", "--", "target/release/app"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	if out, stderr, code := runIn(t, ws, "runs"); code != 0 || !strings.Contains(out, "target/release/app") {
		t.Errorf("runs after a run: exit %d\n%s%s", code, out, stderr)
	}

	out, stderr, code := runIn(t, ws, "clean", "--format", "json")
	if code != 0 {
		t.Fatalf("clean: exit %d\n%s", code, stderr)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"items", "notes", "profiles", "locks"} {
		if v := strings.TrimSpace(string(doc[k])); !strings.HasPrefix(v, "[") {
			t.Errorf("clean JSON %q = %s, want a list", k, v)
		}
	}
	if v := strings.TrimSpace(string(doc["items"])); v != "[]" {
		t.Errorf("a fresh build plans items %s, want []", v)
	}
}

// A PostgreSQL URL that cannot be parsed is an error before the command starts (125), not after it ran.
func TestRunRefusesBadPostgresURLBeforeStarting(t *testing.T) {
	runEnv(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	_, stderr, code := runIn(t, dir, "run", "--ledger", "postgres://bench:hunter2@db:notaport/x", "--", "sh", "-c", ": > "+marker)
	if code != 125 || !strings.Contains(stderr, "invalid port") || strings.Contains(stderr, "hunter2") {
		t.Errorf("run with a bad URL: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command was started with a ledger URL that cannot work")
	}
	if _, stderr, code := runIn(t, dir, "runs", "--ledger", "postgres://bench@db/x?sslmode=bogus"); code != 2 || !strings.Contains(stderr, "sslmode is invalid") {
		t.Errorf("runs with a bad URL: exit %d, %q", code, stderr)
	}
}
