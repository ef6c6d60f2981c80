package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCargoSubcommandArgs(t *testing.T) {
	got := cargoSubcommandArgs([]string{"/x/cargo-stalecheck", "stalecheck", "check", "."})
	if strings.Join(got, " ") != "/x/cargo-stalecheck check ." {
		t.Fatalf("got %q", got)
	}
	got = cargoSubcommandArgs([]string{"stalecheck", "check"})
	if strings.Join(got, " ") != "stalecheck check" {
		t.Fatalf("got %q", got)
	}
}

// The real binary, linked as cargo-stalecheck on PATH, runs as `cargo stalecheck check`; a bare
// `stalecheck` checks the working folder.
func TestCargoExternalSubcommandAndBareInvocation(t *testing.T) {
	ws := builtProject(t)
	bin := t.TempDir()
	exe := filepath.Join(bin, "stalecheck")
	if out, err := exec.Command("go", "build", "-o", exe, "../../cmd/stalecheck").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Symlink(exe, filepath.Join(bin, "cargo-stalecheck")); err != nil {
		t.Fatal(err)
	}
	env := append(withoutTargetDirs(os.Environ()), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")

	cmd := exec.Command("cargo", "stalecheck", "check", "--fail-on", "warning")
	cmd.Dir = ws
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cargo stalecheck check: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "stalecheck: Cargo workspace "+ws) || !strings.Contains(string(out), "No findings") {
		t.Fatalf("unexpected output:\n%s", out)
	}

	// A bare stalecheck in a subfolder of the workspace, after a native edit: exit 1 and the finding.
	os.WriteFile(filepath.Join(ws, "seed-sys/cuda/groth16.c"), []byte("int native_run(void) { return 3; }\n"), 0o644)
	cmd = exec.Command(exe)
	cmd.Dir = filepath.Join(ws, "seed-sys", "cuda")
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("bare stalecheck: want exit 1, got %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "pending-rebuild") {
		t.Fatalf("bare stalecheck output lacks the finding:\n%s", out)
	}
	// --fail-on none never fails on findings; usage errors exit 2.
	if _, _, code := run(t, "check", "--fail-on", "none", ws); code != 0 {
		t.Fatalf("--fail-on none: exit %d", code)
	}
	if _, stderr, code := run(t, "check", "--format", "xml", ws); code != 2 || !strings.Contains(stderr, "--format") {
		t.Fatalf("bad --format: exit %d %q", code, stderr)
	}
	if _, _, code := run(t, "check", "--bogus"); code != 2 {
		t.Fatalf("unknown flag: exit %d", code)
	}
}
