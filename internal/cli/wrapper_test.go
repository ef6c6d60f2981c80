package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

// Repro 02: the debug binary is stale (a declared C source edited, only the release build redone). A
// command that runs it through `sh -c`, a script or an interpreter is refused before it starts, as the
// direct command is; a run let through with --allow-stale records the debug binary it ran, not the
// release one; a string naming the fresh release binary runs and records that one.
func TestRunThroughWrappersRefusesStale(t *testing.T) {
	runEnv(t)
	p := testutil.NewProject(t, testutil.SysCrate("fastmath-sys", "fastmath", map[string]string{"native/x.c": "int native_run(void) { return 1; }\n"},
		nil, []string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=native/x.c"}))
	p.Cargo("build")
	p.Cargo("build", "--release")
	time.Sleep(20 * time.Millisecond)
	p.Write("fastmath-sys/native/x.c", "int native_run(void) { return 2; }\n")
	p.Cargo("build", "--release")
	ws := p.Dir
	p.Write("run.sh", "#!/bin/sh\n# the benchmark\n: > started\n./target/debug/app 5\n")
	p.Write("plain.sh", ": > started\n./target/debug/app 5\n") // no #!: only an interpreter runs it
	p.Write("scripts/outer.sh", "#!/bin/sh\ncd \"$(dirname \"$0\")/..\"\nsh scripts/inner.sh\n")
	p.Write("scripts/inner.sh", "#!/bin/sh\n: > started\nexec ../target/debug/app\n") // relative to the script's folder
	for _, s := range []string{"run.sh", "scripts/outer.sh", "scripts/inner.sh"} {
		os.Chmod(p.Path(s), 0o755)
	}
	db := filepath.Join(t.TempDir(), "l.db")
	marker := p.Path("started")
	for _, tc := range []struct {
		argv []string
		how  string
	}{
		{[]string{"./target/debug/app", "5"}, "target/debug/app (named in the command line) is stale"},
		{[]string{"sh", "-c", ": > started; ./target/debug/app 5"}, "target/debug/app (named in an argument string of the command line) is stale"},
		{[]string{"bash", "-ec", "cd . && " + filepath.Join(ws, "target/debug/app")}, "(named in an argument string of the command line) is stale"},
		{[]string{"./run.sh"}, "target/debug/app (named in the script run.sh) is stale"},
		{[]string{"sh", "plain.sh"}, "target/debug/app (named in the script plain.sh) is stale"},
		{[]string{"env", "X=1", "sh", "-c", "./run.sh"}, "target/debug/app (named in the script run.sh) is stale"},
		{[]string{"./scripts/outer.sh"}, "target/debug/app (named in the script scripts/inner.sh) is stale"},
	} {
		os.Remove(marker)
		_, stderr, code := runIn(t, ws, append([]string{"run", "--ledger", db, "-q", "--"}, tc.argv...)...)
		if code != 125 || !strings.Contains(stderr, tc.how) {
			t.Errorf("%q: exit %d (want 125), stderr lacks %q:\n%s", tc.argv, code, tc.how, stderr)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%q: the stale command was started", tc.argv)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatalf("a refused run created the ledger")
	}

	// Let through: the record names the binary that ran.
	_, stderr, code := runIn(t, ws, "run", "--ledger", db, "-q", "--allow-stale", "--", "sh", "-c", "./target/debug/app 5")
	if code != 0 {
		t.Fatalf("--allow-stale: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runIn(t, ws, "run", "--ledger", db, "-q", "--", "sh", "-c", "./target/release/app 5")
	if code != 0 {
		t.Fatalf("fresh release binary through sh -c: exit %d\n%s", code, stderr)
	}
	out, _, code := runIn(t, ws, "runs", "--ledger", db, "--format", "json")
	// runs --format json (schema 2): each identity once in identities, records name theirs by key.
	var doc struct {
		Identities map[string]struct {
			Binaries []struct {
				Path string `json:"path"`
			} `json:"binaries"`
		} `json:"identities"`
		Records []struct {
			Command     []string `json:"command"`
			Stale       bool     `json:"stale"`
			IdentityKey string   `json:"identity_key"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || len(doc.Records) != 2 {
		t.Fatalf("runs: exit %d, %v\n%s", code, err, out)
	}
	for i, want := range []struct {
		stale      bool
		bin, other string
	}{{false, "target/release/app", "target/debug/app"}, {true, "target/debug/app", "target/release/app"}} {
		r := doc.Records[i]
		var bins []string
		for _, b := range doc.Identities[r.IdentityKey].Binaries {
			bins = append(bins, b.Path)
		}
		if r.Stale != want.stale || !contains(bins, filepath.Join(ws, want.bin)) || contains(bins, filepath.Join(ws, want.other)) {
			t.Errorf("record %q: stale %v, binaries %v; want stale %v with %s and without %s", r.Command, r.Stale, bins, want.stale, want.bin, want.other)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
