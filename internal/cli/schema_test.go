package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The JSON that check writes on a real, stale build (the demo's story) validates against the
// documented schema, and carries both story findings.
func TestCheckJSONMatchesSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	schema, err := c.Compile(filepath.Join("..", "..", "docs", "schema", "check.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	ws := builtProject(t)
	// A second configuration (a duplicate), a stale untracked edit, and a strange folder name.
	cmd := exec.Command("cargo", "build", "--release", "--features", "timing")
	cmd.Dir = ws
	cmd.Env = append(withoutTargetDirs(os.Environ()), "CARGO_NET_OFFLINE=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cargo: %v\n%s", err, out)
	}
	build := one(t, ws+"/seed-sys/build.rs")
	data, _ := os.ReadFile(build)
	os.WriteFile(build, []byte(strings.Replace(string(data), `println!("cargo:rerun-if-changed=cuda");`, "", 1)), 0o644)
	cmd = exec.Command("cargo", "build", "--release", "--features", "timing")
	cmd.Dir = ws
	cmd.Env = append(withoutTargetDirs(os.Environ()), "CARGO_NET_OFFLINE=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cargo: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(ws, "seed-sys/cuda/groth16.c"), []byte("int native_run(void) { return 2; }\n"), 0o644)
	os.MkdirAll(filepath.Join(ws, "target/release/build/odd\xff-0123456789abcdef"), 0o755)

	out, stderr, code := run(t, "check", "--format", "json", ws)
	if code != 1 {
		t.Fatalf("exit %d (want 1: error findings), stderr %q", code, stderr)
	}
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(doc); err != nil {
		t.Fatalf("output does not match docs/schema/check.v1.json: %v\n%s", err, out)
	}
	for _, rule := range []string{"untracked-input-changed", "duplicate-native-artifact", "orphaned-build-dir", "rerun-scan-disabled"} {
		if !strings.Contains(out, `"rule": "`+rule+`"`) {
			t.Errorf("JSON lacks %s", rule)
		}
	}
}
