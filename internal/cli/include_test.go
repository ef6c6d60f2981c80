package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

// Repro 01: a header in the cc crate's -I folder is edited; Cargo says Fresh and the binary is stale.
// check exits 1 with untracked-input-changed naming the header, and run refuses (125) without starting
// the program. On the healthy build before it, check --fail-on warning exits 0.
func TestRepro01HeaderEditRefused(t *testing.T) {
	runEnv(t)
	testutil.NeedDebianCrates(t)
	p := testutil.NewProject(t, testutil.CcIncludeWorkspace())
	p.Cargo("build", "--release")
	if out, stderr, code := runIn(t, p.Dir, "check", "--fail-on", "warning"); code != 0 {
		t.Fatalf("healthy build: check --fail-on warning exit %d\n%s%s", code, out, stderr)
	}
	p.Edit("fastmath-sys/native/include/x.h", "banner v1", "banner v2")
	if out := p.Cargo("build", "--release", "-v"); !strings.Contains(out, "Fresh fastmath-sys") {
		t.Fatalf("the premise fails: cargo rebuilt fastmath-sys:\n%s", out)
	}
	bin := p.Path("target/release/app")
	if out, err := exec.Command(bin).Output(); err != nil || !strings.Contains(string(out), "banner v1") {
		t.Fatalf("the premise fails: the binary should still print banner v1: %q %v", out, err)
	}
	out, stderr, code := runIn(t, p.Dir, "check", "-v") // -v: the evidence, how the header is known
	if code != 1 || !strings.Contains(out, "error[untracked-input-changed]") || !strings.Contains(out, "fastmath-sys/native/include/x.h") ||
		!strings.Contains(out, "include-scan") {
		t.Fatalf("check: exit %d (want 1), stdout:\n%s%s", code, out, stderr)
	}
	db := filepath.Join(t.TempDir(), "l.db")
	out, stderr, code = runIn(t, p.Dir, "run", "--ledger", db, "--", "./target/release/app")
	if code != 125 || out != "" || !strings.Contains(stderr, "changed since the build: fastmath-sys/native/include/x.h") {
		t.Fatalf("run: exit %d (want 125), stdout %q, stderr:\n%s", code, out, stderr)
	}
}
