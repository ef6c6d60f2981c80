package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A Rust source edited after the binary was built: Cargo's dep-info rule says the next build redoes it.
func TestPendingRebuildRustSource(t *testing.T) {
	p := testutil.NewProject(t, testutil.SysCrate("seed-sys", "groth16_cuda",
		map[string]string{"cuda/groth16.c": groth16V1}, nil, []string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=cuda"}))
	p.Cargo("build", "--release")
	fs, _ := p.Check()
	noErrors(t, fs)
	none(t, fs, "pending-rebuild")

	p.Edit("seed-sys/src/lib.rs", "unsafe { native_run() }", "unsafe { native_run() + 1 }")
	fs, _ = p.Check()
	f := one(t, fs, "pending-rebuild")
	if f.Subjects[0] != p.Path("seed-sys/src/lib.rs") || f.Severity != check.Error {
		t.Fatalf("want an error naming lib.rs:\n%s", testutil.Dump(fs))
	}
	if !testutil.HasSubject(check.Finding{Subjects: f.Roots}, p.Path("target/release/app")) {
		t.Errorf("roots %v do not name the app binary", f.Roots)
	}
	// A declared native source edited: the build script reruns next time.
	p.Write("seed-sys/cuda/groth16.c", groth16V2)
	fs, _ = p.Check()
	var native bool
	for _, f := range testutil.Rule(fs, "pending-rebuild") {
		if f.Subjects[0] == p.Path("seed-sys/cuda") && strings.Contains(f.Message, "build script of seed-sys") {
			native = true
		}
	}
	if !native {
		t.Fatalf("want pending-rebuild for the declared cuda folder:\n%s", testutil.Dump(fs))
	}
	none(t, fs, "untracked-input-changed")

	p.Cargo("build", "--release")
	fs, _ = p.Check()
	none(t, fs, "pending-rebuild")
	noErrors(t, fs)
}

// A build script that fails leaves an empty hash file and invoked.timestamp newer than output:
// reported as last-build-failed, not as staleness.
func TestLastBuildFailed(t *testing.T) {
	files := testutil.SysCrate("seed-sys", "groth16_cuda",
		map[string]string{"cuda/groth16.c": groth16V1}, nil,
		[]string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-env-changed=FAIL_BUILD"})
	files["seed-sys/build.rs"] = strings.Replace(files["seed-sys/build.rs"], "fn main() {\n",
		"fn main() {\n    if env::var_os(\"FAIL_BUILD\").is_some() { panic!(\"asked to fail\"); }\n", 1)
	p := testutil.NewProject(t, files)
	p.Cargo("build", "--release")
	p.Env = []string{"FAIL_BUILD=1"}
	if out, err := p.CargoErr("build", "--release"); err == nil {
		t.Fatalf("the premise fails: the build succeeded:\n%s", out)
	}
	fs, _ := p.Check()
	got := testutil.Rule(fs, "last-build-failed")
	if len(got) == 0 {
		t.Fatalf("want last-build-failed:\n%s", testutil.Dump(fs))
	}
	runs := runDirs(t, p, "release", "seed-sys")
	var named bool
	for _, f := range got {
		if f.Subjects[0] == runs[0] && strings.Contains(f.Message, "invoked.timestamp") {
			named = true
		}
	}
	if !named {
		t.Errorf("no finding names the run folder %s with invoked.timestamp:\n%s", runs[0], testutil.Dump(got))
	}
	noErrors(t, fs)

	p.Env = nil
	p.Cargo("build", "--release")
	fs, _ = p.Check()
	none(t, fs, "last-build-failed")
	noErrors(t, fs)
}

// A source edit that breaks the build: the last build failed, and the binary on disk predates the edit.
// That is staleness (pending-rebuild, an error), reported beside last-build-failed, so `run` refuses it.
func TestFailedBuildAfterEditIsStale(t *testing.T) {
	p := testutil.NewProject(t, testutil.SysCrate("seed-sys", "groth16_cuda",
		map[string]string{"cuda/groth16.c": groth16V1}, nil, []string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=cuda"}))
	p.Cargo("build", "--release")
	p.Write("app/src/main.rs", "fn main() { this does not compile }\n")
	if out, err := p.CargoErr("build", "--release"); err == nil {
		t.Fatalf("the premise fails: the build succeeded:\n%s", out)
	}
	fs, _ := p.Check()
	if len(testutil.Rule(fs, "last-build-failed")) == 0 {
		t.Fatalf("want last-build-failed:\n%s", testutil.Dump(fs))
	}
	var stale bool
	for _, f := range testutil.Rule(fs, "pending-rebuild") {
		if f.Severity == check.Error && f.Subjects[0] == p.Path("app/src/main.rs") && strings.Contains(f.Message, "failed") &&
			testutil.HasSubject(check.Finding{Subjects: f.Roots}, p.Path("target/release/app")) {
			stale = true
		}
	}
	if !stale {
		t.Fatalf("want pending-rebuild naming app/src/main.rs for target/release/app:\n%s", testutil.Dump(fs))
	}
}
