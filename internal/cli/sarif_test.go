package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
