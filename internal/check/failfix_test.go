package check_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A build that fails after an edit, then the edit undone: the content is again what the last
// successful build used, so the binary is not stale although Cargo retries the units. With the edit in
// place it is an error; after the fix, info. Both for the build script's C source and for a Rust source.
func TestFailedThenFixedIsNotStale(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	p.StateDir = t.TempDir()
	p.Cargo("build")
	fs, _ := p.Check() // records the content baselines
	noErrors(t, fs)
	for _, rel := range []string{"fastmath-sys/native/x.c", "app/src/main.rs"} {
		good, err := os.ReadFile(p.Path(rel))
		if err != nil {
			t.Fatal(err)
		}
		bad := "\n#error truth-fail\n"
		if strings.HasSuffix(rel, ".rs") {
			bad = "\ncompile_error!(\"truth-fail\");\n"
		}
		p.Write(rel, string(good)+bad)
		if _, err := p.CargoErr("build"); err == nil {
			t.Fatalf("the premise fails: the build with %s broken succeeded", rel)
		}
		fs, _ = p.Check()
		if !hasError(fs, "pending-rebuild") {
			t.Errorf("%s broken: want a pending-rebuild error, got %v", rel, rules(fs))
		}
		p.Write(rel, string(good))
		fs, _ = p.Check()
		noErrors(t, fs)
		found := false
		for _, f := range fs {
			if f.Rule == "pending-rebuild" && f.Severity == check.Info && strings.Contains(f.Message, "its content is the same") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s fixed: want pending-rebuild info naming the same content, got %v", rel, rules(fs))
		}
		if out := p.Cargo("build", "-v"); !strings.Contains(out, "Compiling") {
			t.Errorf("the premise fails: cargo did not retry after the fix:\n%s", out)
		}
		fs, _ = p.Check()
		noErrors(t, fs)
	}
}

func hasError(fs []check.Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule && f.Severity == check.Error {
			return true
		}
	}
	return false
}

func rules(fs []check.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Severity.String()+" "+f.Rule)
	}
	return out
}
