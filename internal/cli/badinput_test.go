package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stalecheck/stalecheck/internal/runner"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// run runs the CLI in-process and returns stdout, stderr and the exit status.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"stalecheck"}, args...), Streams{Out: &out, Err: &errb})
	return out.String(), errb.String(), code
}

var (
	builtOnce sync.Once
	builtDir  string
	builtErr  error
)

// builtProject returns a private copy (hard links and mtimes kept, as cp -a does) of one real
// release build of a -sys crate workspace, made once per test binary.
func builtProject(t *testing.T) string {
	t.Helper()
	builtOnce.Do(func() {
		var dir string
		dir, builtErr = os.MkdirTemp("", "stalecheck-built-")
		if builtErr != nil {
			return
		}
		builtDir = dir
		files := testutil.SysCrate("seed-sys", "groth16_cuda", map[string]string{"cuda/groth16.c": "int native_run(void) { return 1; }\n"},
			nil, []string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=cuda"})
		for rel, c := range files {
			p := filepath.Join(dir, rel)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if builtErr = os.WriteFile(p, []byte(c), 0o644); builtErr != nil {
				return
			}
		}
		// cargo 1.95's default (legacy) layout, whatever STALECHECK_TEST_CARGO_LAYOUT says: the cases
		// here name legacy records (.fingerprint/, output); the new layout's damaged records are
		// internal/cargo's TestReadNewLayoutOddRecords.
		cmd := exec.Command("cargo", "build", "--release")
		cmd.Dir = dir
		cmd.Env = append(withoutTargetDirs(os.Environ()), "CARGO_NET_OFFLINE=true")
		if out, err := cmd.CombinedOutput(); err != nil {
			builtErr = err
			builtDir = string(out)
		}
	})
	if builtErr != nil {
		t.Fatalf("building the fixture project: %v\n%s", builtErr, builtDir)
	}
	dst := filepath.Join(t.TempDir(), "ws")
	if out, err := exec.Command("cp", "-a", builtDir, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return dst
}

// withoutTargetDirs drops the caller's CARGO_*DIR settings so the fixture builds into its own target/.
func withoutTargetDirs(env []string) []string {
	var out []string
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		if strings.HasPrefix(k, "CARGO_") && strings.HasSuffix(k, "_DIR") {
			continue
		}
		out = append(out, e)
	}
	return out
}

func TestMain(m *testing.M) {
	runner.ExecHelperHook()
	code := m.Run()
	if builtDir != "" && builtErr == nil {
		os.RemoveAll(builtDir)
	}
	if ccDir != "" {
		os.RemoveAll(ccDir)
	}
	os.Exit(code)
}

func one(t *testing.T, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(pattern)
	if len(m) != 1 {
		t.Fatalf("want one match for %s, got %v", pattern, m)
	}
	return m[0]
}

// oneOf returns the one path of m (what a testutil layout helper found) and fails the test unless there
// is exactly one.
func oneOf(t *testing.T, m []string) string {
	t.Helper()
	if len(m) != 1 {
		t.Fatalf("want one file, got %v", m)
	}
	return m[0]
}

func TestNoTargetFolder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Cargo.toml"), []byte("[package]\nname = \"x\"\nversion = \"0.1.0\"\n"), 0o644)
	_, stderr, code := run(t, "check", dir)
	if code != 2 || !strings.Contains(stderr, filepath.Join(dir, "target")) || !strings.Contains(stderr, "run cargo build first") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestNeverBuiltTargetFolder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Cargo.toml"), []byte("[package]\nname = \"x\"\nversion = \"0.1.0\"\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "target"), 0o755)
	_, stderr, code := run(t, "check", dir)
	if code != 2 || !strings.Contains(stderr, "holds no profile folder") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestNoWorkspace(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := run(t, "check", dir)
	if code != 2 || !strings.Contains(stderr, "no Cargo.toml at or above "+dir) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, "check", filepath.Join(dir, "missing"))
	if code != 2 || !strings.Contains(stderr, filepath.Join(dir, "missing")) {
		t.Fatalf("missing path: exit %d, stderr %q", code, stderr)
	}
}

func TestBrokenCargoManifest(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Cargo.toml"), []byte("[package\nname = "), 0o644)
	_, stderr, code := run(t, "check", dir)
	if code != 2 || !strings.Contains(stderr, filepath.Join(dir, "Cargo.toml")) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// checkJSON runs check --format json and decodes the findings.
func checkJSON(t *testing.T, dir string) []map[string]any {
	t.Helper()
	out, stderr, code := run(t, "check", "--format", "json", "--fail-on", "none", dir)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var doc struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	return doc.Findings
}

func findRule(fs []map[string]any, rule, subject string) map[string]any {
	for _, f := range fs {
		if f["rule"] != rule {
			continue
		}
		for _, s := range f["subjects"].([]any) {
			if s == subject {
				return f
			}
		}
	}
	return nil
}

func TestCorruptRecords(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, ws string) string // returns the file the finding must name
		rule    string
		words   string
	}{
		{"empty fingerprint JSON", func(t *testing.T, ws string) string {
			p := one(t, ws+"/target/release/.fingerprint/app-*/bin-app.json")
			os.WriteFile(p, nil, 0o644)
			return p
		}, "unreadable-record", "invalid fingerprint JSON"},
		{"truncated fingerprint JSON", func(t *testing.T, ws string) string {
			p := one(t, ws+"/target/release/.fingerprint/seed-sys-*/lib-seed_sys.json")
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)/2], 0o644)
			return p
		}, "unreadable-record", "invalid fingerprint JSON"},
		{"odd JSON", func(t *testing.T, ws string) string {
			p := one(t, ws+"/target/release/.fingerprint/app-*/bin-app.json")
			os.WriteFile(p, []byte(`{"rustc": "x", "deps": [[1, 2]], "local": 7}`), 0o644)
			return p
		}, "unreadable-record", "fingerprint JSON"},
		{"truncated hash file", func(t *testing.T, ws string) string {
			p := one(t, ws+"/target/release/.fingerprint/app-*/bin-app")
			os.WriteFile(p, []byte("2cff7e"), 0o644)
			return p
		}, "unreadable-record", "want 16 hex digits"},
		{"empty hash file", func(t *testing.T, ws string) string {
			p := one(t, ws+"/target/release/.fingerprint/app-*/bin-app")
			os.WriteFile(p, nil, 0o644)
			return filepath.Dir(p)
		}, "last-build-failed", "is empty"},
		{"run folder without output", func(t *testing.T, ws string) string {
			p := one(t, ws+"/target/release/build/seed-sys-*/output")
			os.Remove(p)
			os.Remove(filepath.Join(filepath.Dir(p), "invoked.timestamp"))
			return p
		}, "unreadable-record", "no output file"},
		{"interrupted run: no output but invoked.timestamp", func(t *testing.T, ws string) string {
			p := one(t, ws+"/target/release/build/seed-sys-*/output")
			os.Remove(p)
			return filepath.Dir(p)
		}, "last-build-failed", "never finished"},
		{"unreadable fingerprint (a folder where a file belongs)", func(t *testing.T, ws string) string {
			p := one(t, ws+"/target/release/.fingerprint/app-*/bin-app.json")
			os.Remove(p)
			os.Mkdir(p, 0o755)
			return p
		}, "unreadable-record", "not a regular file (a folder)"},
		{"corrupt dep-info", func(t *testing.T, ws string) string {
			p := one(t, ws+"/target/release/.fingerprint/app-*/dep-bin-app")
			os.WriteFile(p, []byte{1, 0, 0, 0, 0xff, 1, 9, 0, 0, 0, 0}, 0o644)
			return p
		}, "unreadable-record", "offset"},
		{"corrupt archive", func(t *testing.T, ws string) string {
			p := one(t, ws+"/target/release/build/seed-sys-*/out/libgroth16_cuda.a")
			data, _ := os.ReadFile(p)
			copy(data[8:], "garbage garbage garbage garbage garbage")
			os.WriteFile(p, data, 0o644)
			return p
		}, "unreadable-record", "offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := builtProject(t)
			subject := tc.corrupt(t, ws)
			fs := checkJSON(t, ws)
			f := findRule(fs, tc.rule, subject)
			if f == nil {
				js, _ := json.MarshalIndent(fs, "", " ")
				t.Fatalf("no %s finding naming %s:\n%s", tc.rule, subject, js)
			}
			if !strings.Contains(f["message"].(string), tc.words) {
				t.Errorf("message %q lacks %q", f["message"], tc.words)
			}
			// The text report works too and names the file.
			out, stderr, code := run(t, "check", "--fail-on", "none", ws)
			if code != 0 || !strings.Contains(out, tc.rule) {
				t.Errorf("text report: exit %d, stderr %q\n%s", code, stderr, out)
			}
		})
	}
}

// Names with control characters never reach the terminal raw; a name that is not UTF-8 keeps its
// bytes in JSON (path_bytes / subjects_bytes).
func TestStrangeNames(t *testing.T) {
	ws := builtProject(t)
	evil := filepath.Join(ws, "target/release/build", "evil\x1b[31m\nred-0123456789abcdef")
	bad := filepath.Join(ws, "target/release/build", "bad\xff\xfe-fedcba9876543210")
	for _, d := range []string{evil, bad} {
		if err := os.MkdirAll(filepath.Join(d, "out"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "out", "lib\x07bell.a"), []byte("!<arch>\n"), 0o644)
	}
	out, _, code := run(t, "check", "--fail-on", "none", ws)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.ContainsAny(out, "\x1b\x07") || strings.Contains(out, "\xff") {
		t.Fatalf("raw control or non-UTF-8 bytes reached the text output:\n%q", out)
	}
	if !strings.Contains(out, `evil\x1b[31m\nred-0123456789abcdef`) || !strings.Contains(out, `bad\xff\xfe-fedcba9876543210`) {
		t.Fatalf("escaped names missing from the text output:\n%s", out)
	}
	fs := checkJSON(t, ws)
	var sawBytes bool
	for _, f := range fs {
		if f["rule"] != "orphaned-build-dir" {
			continue
		}
		for _, e := range f["evidence"].([]any) {
			ev := e.(map[string]any)
			if b, ok := ev["path_bytes"].(string); ok {
				raw, err := base64.StdEncoding.DecodeString(b)
				if err != nil || string(raw) != bad {
					t.Fatalf("path_bytes %q does not decode to %q", b, bad)
				}
				sawBytes = true
			}
		}
	}
	if !sawBytes {
		t.Fatalf("no path_bytes for the non-UTF-8 folder")
	}
}

// A project whose only build ran `cargo check` has records but no binary: the report must not call it
// fresh.
func TestNoBinaryToJudge(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Cargo.toml"), []byte("[package]\nname = \"onlycheck\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "src/main.rs"), []byte("fn main() {}\n"), 0o644)
	cmd := exec.Command("cargo", "check")
	cmd.Dir = dir
	cmd.Env = append(withoutTargetDirs(os.Environ()), "CARGO_NET_OFFLINE=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cargo check: %v\n%s", err, out)
	}
	out, _, code := run(t, "check", dir)
	if code != 0 || !strings.Contains(out, "no binary to judge") || strings.Contains(out, "is built from the sources on disk") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
