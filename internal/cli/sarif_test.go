package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// check --format sarif --output FILE on a real build: the file is written whole (no temporary file
// left beside it), validates against the OASIS schema, and a stale build gives its error results with
// exit 1; an --output in a missing folder is an error naming it, and stdout stays empty.
func TestCheckSarifOutputFile(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	schema, err := c.Compile(filepath.Join("..", "report", "testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	ws := builtProject(t)
	outDir := t.TempDir()
	file := filepath.Join(outDir, "stalecheck.sarif")
	read := func() map[string]any {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Fatalf("not valid SARIF: %v\n%s", err, data)
		}
		var doc map[string]any
		json.Unmarshal(data, &doc)
		return doc
	}
	stdout, stderr, code := run(t, "check", "--format", "sarif", "--output", file, ws)
	if code != 0 || stdout != "" {
		t.Fatalf("clean build: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	doc := read()
	run0 := doc["runs"].([]any)[0].(map[string]any)
	if n := len(run0["results"].([]any)); n != 0 {
		t.Fatalf("clean build: %d results", n)
	}
	if ents, _ := os.ReadDir(outDir); len(ents) != 1 {
		t.Fatalf("files beside the output: %v", ents)
	}

	os.WriteFile(filepath.Join(ws, "seed-sys/cuda/groth16.c"), []byte("int native_run(void) { return 4; }\n"), 0o644)
	_, stderr, code = run(t, "check", "--format", "sarif", "-o", file, ws)
	if code != 1 {
		t.Fatalf("stale build: exit %d (want 1), stderr %q", code, stderr)
	}
	run0 = read()["runs"].([]any)[0].(map[string]any)
	errs := 0
	for _, r := range run0["results"].([]any) {
		r := r.(map[string]any)
		if r["ruleId"] == "pending-rebuild" && r["level"] == "error" {
			errs++
		}
	}
	if errs == 0 {
		t.Fatalf("stale build: no pending-rebuild error result: %v", run0["results"])
	}
	// The text report (the default) goes to a file too, uncoloured.
	txt := filepath.Join(outDir, "report.txt")
	if _, _, code := run(t, "check", "-o", txt, ws); code != 1 {
		t.Fatalf("text to a file: exit %d", code)
	}
	if data, _ := os.ReadFile(txt); !strings.Contains(string(data), "pending-rebuild") || strings.Contains(string(data), "\x1b[") {
		t.Fatalf("text report file:\n%s", data)
	}
	missing := filepath.Join(outDir, "no such folder", "x.sarif")
	stdout, stderr, code = run(t, "check", "--format", "sarif", "-o", missing, ws)
	if code != 2 || stdout != "" || !strings.Contains(stderr, missing) {
		t.Fatalf("missing folder: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// The example's findings uploaded to code scanning: every alert's primary location is a file of the
// repository (git ls-files), under %SRCROOT%, so GitHub shows its source lines; and an alert's text is
// byte-identical after the same edit is saved again with another mtime.
func TestExampleSarifLocationsAreTrackedFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("real cargo builds")
	}
	p := testutil.Example(t, "seed-two-copies")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = p.Dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	p.Write(".gitignore", "/target\n")
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "example")
	p.Cargo("build", "--release")
	p.Cargo("build", "--release", "--features", "timing")
	src := "prover-sys/cuda/groth16_cuda.c"
	p.Edit(src, "#ifdef CUZK_TIMING", "#ifdef CUZK_TIMING\n    fprintf(stderr, \"TIMING_V2\\n\");")
	p.Cargo("build", "--release", "--features", "timing")
	tracked := map[string]bool{}
	for _, f := range strings.Fields(git("ls-files")) {
		tracked[f] = true
	}
	sarif := func() map[string]string {
		t.Helper()
		out, stderr, code := run(t, "check", "--no-cache", "--format", "sarif", p.Dir)
		if code != 1 {
			t.Fatalf("check --format sarif: exit %d (want 1: the edit is an error)\n%s", code, stderr)
		}
		var log report.SarifLog
		if err := json.Unmarshal([]byte(out), &log); err != nil {
			t.Fatal(err)
		}
		texts := map[string]string{}
		for _, r := range log.Runs[0].Results {
			loc := r.Locations[0].PhysicalLocation.ArtifactLocation
			if loc.URIBaseID != report.SrcRoot || !tracked[loc.URI] {
				t.Errorf("%s: primary location %s %q is not a tracked file of the repository (tracked: %v)", r.RuleID, loc.URIBaseID, loc.URI, tracked)
			}
			texts[r.RuleID+" "+loc.URI] = r.Message.Text
		}
		if len(texts) == 0 {
			t.Fatal("no SARIF results on the stale example")
		}
		return texts
	}
	first := sarif()
	// The same content again, with another mtime: nothing an alert says may change.
	later := time.Now().Add(3 * time.Second)
	if err := os.Chtimes(p.Path(src), later, later); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(first, sarif()); d != "" {
		t.Errorf("alert texts changed with the mtime (-first +second):\n%s", d)
	}
}
