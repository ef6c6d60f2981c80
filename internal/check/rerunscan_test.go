package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// S03: a build script that prints only rerun-if-env-changed switches off Cargo's package scan.
func TestS03EnvOnlyDirective(t *testing.T) {
	p := testutil.NewProject(t, testutil.SysCrate("add-sys", "add",
		map[string]string{"native/add.c": "int native_run(void) { return 2 + 3; }\n"}, nil,
		[]string{"cargo:rerun-if-env-changed=ADD_FLAGS"}))
	p.Cargo("build", "--release")
	fs, _ := p.Check()
	noErrors(t, fs)
	w := one(t, fs, "rerun-scan-disabled")
	// Info, not a warning: the archive member add.o ties add.c to the step, so an edit to it is the
	// untracked-input-changed error below; a healthy build gets no warning (issue 8).
	if w.Severity != check.Info || w.Subjects[0] != p.Path("add-sys/build.rs") ||
		!strings.Contains(w.Message, "rerun-if-env-changed lines (ADD_FLAGS)") || !strings.Contains(w.Message, "native/add.c") {
		t.Fatalf("unexpected rerun-scan-disabled:\n%s", testutil.Dump([]check.Finding{w}))
	}

	p.Write("add-sys/native/add.c", "int native_run(void) { return 2 + 4; }\n")
	if out := p.Cargo("build", "--release", "-v"); !strings.Contains(out, "Fresh add-sys") {
		t.Fatalf("the premise fails: cargo rebuilt add-sys:\n%s", out)
	}
	fs, _ = p.Check()
	one(t, fs, "rerun-scan-disabled")
	f := one(t, fs, "untracked-input-changed")
	if f.Subjects[0] != p.Path("add-sys/native/add.c") || f.Severity != check.Error {
		t.Fatalf("want an error naming add.c:\n%s", testutil.Dump([]check.Finding{f}))
	}
	if !strings.Contains(f.Message, "rerun-if-env-changed=ADD_FLAGS") {
		t.Errorf("message does not say what was declared: %s", f.Message)
	}

	p.Edit("add-sys/build.rs", `println!("cargo:rerun-if-env-changed=ADD_FLAGS");`,
		`println!("cargo:rerun-if-env-changed=ADD_FLAGS");`+"\n    println!(\"cargo:rerun-if-changed=native\");")
	p.Cargo("build", "--release")
	fs, _ = p.Check()
	none(t, fs, "rerun-scan-disabled")
	none(t, fs, "untracked-input-changed")
	noErrors(t, fs)
}

// A native source that no record ties to the step (a header nothing includes) keeps the warning:
// an edit to it would itself be only a candidate warning.
func TestRerunScanDisabledCandidateWarns(t *testing.T) {
	p := testutil.NewProject(t, testutil.SysCrate("add-sys", "add", map[string]string{
		"native/add.c":   "int native_run(void) { return 2 + 3; }\n",
		"native/spare.h": "#define SPARE 1\n",
	}, nil, []string{"cargo:rerun-if-env-changed=ADD_FLAGS"}))
	p.Cargo("build", "--release")
	fs, _ := p.Check()
	noErrors(t, fs)
	w := one(t, fs, "rerun-scan-disabled")
	if w.Severity != check.Warning || !strings.Contains(w.Message, "native/spare.h") || strings.Contains(w.Message, "untracked-input-changed error") {
		t.Fatalf("want a warning naming the candidate spare.h:\n%s", testutil.Dump([]check.Finding{w}))
	}
}
