package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil/fixtures"
)

// TestCompilersFromTheBytes: a C program built with gcc -g -O2 names GCC from .comment and its flags
// from DWARF, and no CUDA; nvcc 13's app fixture names its cubin and PTX code versions; a script gives
// nothing.
func TestCompilersFromTheBytes(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.c")
	if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app")
	if out, err := exec.Command("gcc", "-g", "-O2", "-o", app, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	m, err := Compilers(app)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m["cc"], "GCC: ") || !strings.Contains(m["cc producers"], "GNU C") || !strings.Contains(m["cc producers"], "-O2") || m["cuda device code"] != "" || m["rustc"] != "" {
		t.Errorf("gcc -g -O2 program: %q", m)
	}

	cu, err := Compilers(filepath.Join(fixtures.CUDA(t), "v1", "app"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("nvcc app: %q", cu)
	if c := cu["cuda device code"]; !strings.Contains(c, "cubin sm_") || !strings.Contains(c, "PTX sm_") {
		t.Errorf("nvcc app: cuda device code %q (all: %q)", c, cu)
	}

	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if m, err := Compilers(script); err != nil || len(m) != 0 {
		t.Errorf("a script: %q, %v", m, err)
	}
}
