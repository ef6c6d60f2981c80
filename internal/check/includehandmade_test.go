package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A hand-written build script runs cc with "-Inative/include" and logs no command line: the header
// edit is found through the folder the script names in that argument (the archive member ties the .c
// to the run), and it is an error while Cargo says Fresh.
func TestIncludeScanHandWrittenDashI(t *testing.T) {
	p := testutil.NewProject(t, testutil.SysCrate("hm-sys", "hm", map[string]string{
		"native/hm.c":         "#include \"hm.h\"\nint native_run(void) { return HM_VAL; }\n",
		"native/include/hm.h": "#define HM_VAL 1\n",
	}, []string{"-Inative/include"}, []string{"cargo:rerun-if-changed=native/hm.c"}))
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Write("hm-sys/native/include/hm.h", "#define HM_VAL 2\n")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh hm-sys") {
		t.Fatalf("the premise fails: cargo rebuilt hm-sys:\n%s", out)
	}
	fs, _ = p.Check()
	f := one(t, fs, "untracked-input-changed")
	if f.Severity != check.Error || f.Subjects[0] != p.Path("hm-sys/native/include/hm.h") {
		t.Errorf("want an error on hm.h, got %v %v", f.Severity, f.Subjects)
	}
	if how := evidenceHow(f, "input"); !strings.Contains(how, "include-scan") {
		t.Errorf("input evidence %q lacks the include-scan clue", how)
	}
}
