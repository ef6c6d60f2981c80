package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

// explain through the CLI: a package (text), a path (JSON envelope), and the error statuses.
func TestExplainCommand(t *testing.T) {
	ws := builtProject(t)
	out, stderr, code := run(t, "explain", "-w", ws, "seed-sys")
	if code != 0 {
		t.Fatalf("explain seed-sys: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"stalecheck explain seed-sys: build folder " + filepath.Join(ws, "target"),
		"seed-sys 0.1.0: path package at " + filepath.Join(ws, "seed-sys"), "lib (lib-seed_sys): 1 unit(s)", "used by target/release/app (bin, release)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	src := filepath.Join(ws, "seed-sys/cuda/groth16.c")
	out, stderr, code = run(t, "explain", "-w", ws, "--format", "json", src)
	if code != 0 {
		t.Fatalf("explain PATH: exit %d: %s", code, stderr)
	}
	var doc struct {
		SchemaVersion int    `json:"schema_version"`
		Command       string `json:"command"`
		Path          struct {
			Path  string `json:"path"`
			Steps []struct {
				Kind     string `json:"kind"`
				Declared bool   `json:"declared"`
				Reasons  []struct {
					Code string `json:"code"`
				} `json:"reasons"`
			} `json:"steps"`
		} `json:"path"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.SchemaVersion != 1 || doc.Command != "explain" || doc.Path.Path != src || len(doc.Path.Steps) != 1 ||
		doc.Path.Steps[0].Kind != "build-script run" || !doc.Path.Steps[0].Declared || doc.Path.Steps[0].Reasons[0].Code != "unchanged" {
		t.Fatalf("unexpected document:\n%s", out)
	}

	if _, stderr, code = run(t, "explain", "-w", ws, "nosuch"); code != 2 || !strings.Contains(stderr, `no unit of package "nosuch"`) {
		t.Fatalf("unknown package: exit %d %q", code, stderr)
	}
	if _, _, code = run(t, "explain", "-w", t.TempDir(), "seed-sys"); code != 2 {
		t.Fatalf("no workspace: exit %d", code)
	}
	if _, _, code = run(t, "explain"); code != 2 {
		t.Fatalf("no argument: exit %d", code)
	}
}

// clean through the CLI on the bundled example built without and with its feature: the JSON plan is
// executed by --plan FILE --yes, the orphaned folders go, and the next build of the live
// configuration is Fresh. Exit 3 while cargo holds the lock, 2 on a folder that is not a target folder.
func TestCleanCommandOnExample(t *testing.T) {
	p := testutil.Example(t, "seed-two-copies")
	p.Cargo("build", "--release")
	runs := p.RunDirs("release", "prover-sys")
	p.Cargo("build", "--release", "--features", "timing")
	if len(runs) != 1 {
		t.Fatalf("run folders of the first build: %v", runs)
	}
	// The run's build folder: build/prover-sys-<hash> (legacy), build/prover-sys/<hash> (new, whose
	// records are in its run/).
	orphan := runs[0]
	if filepath.Base(orphan) == "run" {
		orphan = filepath.Dir(orphan)
	}

	out, stderr, code := run(t, "clean", p.Dir)
	if code != 0 || !strings.Contains(out, "remove ") || !strings.Contains(out, strings.TrimPrefix(orphan, p.Path("target")+"/")+"/") ||
		!strings.Contains(out, "dry run, nothing removed: pass --yes to remove") {
		t.Fatalf("clean (plan): exit %d %s\n%s", code, stderr, out)
	}
	out, stderr, code = run(t, "clean", "--format", "json", p.Dir)
	if code != 0 {
		t.Fatalf("clean --format json: exit %d %s", code, stderr)
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(planFile, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Command    string `json:"command"`
		TotalBytes int64  `json:"total_bytes"`
		Items      []struct {
			Rel    string `json:"rel"`
			Status string `json:"status"`
		} `json:"items"`
	}
	// Legacy: the default configuration's build folders, fingerprint folders and deps/ files, 11
	// items. New layout: one item per unit folder, whole: prover-sys's build-script compile, run and
	// lib, and gpu-prover's bin.
	wantItems := 11
	if p.NewLayout {
		wantItems = 4
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || plan.Command != "clean" || len(plan.Items) != wantItems || plan.TotalBytes == 0 {
		t.Fatalf("plan: %v %+v", err, plan)
	}
	if p.NewLayout {
		for _, it := range plan.Items {
			if parts := strings.Split(it.Rel, "/"); len(parts) != 4 || parts[0] != "release" || parts[1] != "build" || parts[2] != "prover-sys" && parts[2] != "gpu-prover" {
				t.Errorf("new layout: item %s is not a unit folder of the default configuration", it.Rel)
			}
		}
	}
	if _, stderr, code = run(t, "clean", "--plan", planFile, "--profile", "release"); code != 2 || !strings.Contains(stderr, "--plan takes") {
		t.Fatalf("--plan with --profile: exit %d %q", code, stderr)
	}

	// While cargo holds the release lock: refused, exit 3, nothing removed.
	f, err := os.OpenFile(p.Path("target/release/.cargo-lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_EX)
	_, stderr, code = run(t, "clean", "--plan", planFile, "--yes")
	if code != 3 || !strings.Contains(stderr, "refused: a cargo process holds the lock") {
		t.Fatalf("under the lock: exit %d %q", code, stderr)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	f.Close()
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("a refused clean removed %s", orphan)
	}

	out, stderr, code = run(t, "clean", "--plan", planFile, "--yes")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("removed %d item(s)", wantItems)) {
		t.Fatalf("clean --plan --yes: exit %d %s\n%s", code, stderr, out)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("%s is still there", orphan)
	}
	if out := p.Cargo("build", "--release", "--features", "timing", "-v"); strings.Contains(out, "Compiling") || strings.Contains(out, "Dirty") {
		t.Fatalf("the live configuration is not Fresh after the clean:\n%s", out)
	}

	notTarget := t.TempDir()
	os.MkdirAll(filepath.Join(notTarget, "release", ".fingerprint"), 0o755)
	if _, stderr, code = run(t, "clean", "--target-dir", notTarget, "--yes", p.Dir); code != 2 || !strings.Contains(stderr, "not a Cargo target folder") {
		t.Fatalf("not a target folder: exit %d %q", code, stderr)
	}
}
