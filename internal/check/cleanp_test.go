package check_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// `cargo clean -p` of a -sys crate leaves the binary as it was (the sources did not change) and the
// dependant's fingerprint pointing at records that are gone: Cargo rebuilds both, the binary is not
// stale. pending-rebuild names the dependant (Cargo agrees) as info, and no error is reported.
func TestCleanPackageRecordsGoneIsNotStale(t *testing.T) {
	p := ccEnvProject(t)
	p.Cargo("build")
	p.Cargo("clean", "-p", "e-sys")
	fs, _ := p.Check()
	noErrors(t, fs)
	var pend []check.Finding
	for _, f := range fs {
		if f.Rule == "pending-rebuild" {
			pend = append(pend, f)
		}
	}
	if len(pend) == 0 {
		t.Fatalf("no pending-rebuild after cargo clean -p; findings: %v", fs)
	}
	for _, f := range pend {
		if f.Severity != check.Info || !strings.Contains(f.Message, "records are gone") {
			t.Errorf("want info 'records are gone', got %v: %s", f.Severity, f.Message)
		}
	}
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Compiling e-sys") || !strings.Contains(out, "Compiling app") {
		t.Errorf("the premise fails: cargo did not rebuild e-sys and app:\n%s", out)
	}
}

// cargo clean -p of the -sys crate in debug, then an edit of its C: the debug records that would show
// the edit are gone, but the release units of the same package record the source, and it is newer than
// the debug binary's build: a warning (whether the binary holds the change is unknown; the truth harness
// found an error there false when the content was back).
func TestCleanPackageThenEditIsStale(t *testing.T) {
	p := ccEnvProject(t)
	p.Cargo("build")
	p.Cargo("build", "--release")
	p.Cargo("clean", "-p", "e-sys")
	p.Edit("e-sys/native/e.c", "return 1;", "return 2;")
	fs, _ := p.Check()
	found := false
	for _, f := range fs {
		if f.Rule == "pending-rebuild" && f.Severity == check.Warning && strings.Contains(f.Message, "records are gone") &&
			strings.Contains(f.Message, "e-sys/native/e.c") {
			found = true
		}
	}
	if !found {
		t.Errorf("no pending-rebuild warning naming the edited source of the cleaned package: %v", rules(fs))
	}
}

// The same after a check that recorded the debug build's content baselines: the removed units' baseline
// of the source decides. Only touched (same content): info, not stale (the truth harness found the
// warning false on Debian's libsqlite3-sys shape); edited: an error, the binary predates the edit (it
// found the warning a miss on eight shapes).
func TestCleanPackageThenEditJudgedByContent(t *testing.T) {
	p := ccEnvProject(t)
	p.StateDir = t.TempDir()
	p.Cargo("build")
	p.Cargo("build", "--release")
	p.Check() // records the content baselines of both builds
	p.Cargo("clean", "-p", "e-sys")
	gone := func(fs []check.Finding) check.Finding {
		t.Helper()
		var got []check.Finding
		for _, f := range fs {
			if f.Rule == "pending-rebuild" && strings.Contains(f.Message, "records are gone") {
				got = append(got, f)
			}
		}
		if len(got) != 1 {
			t.Fatalf("want one pending-rebuild about the removed records, got %d: %v", len(got), got)
		}
		return got[0]
	}

	touchLater(t, p.Path("e-sys/native/e.c"))
	fs, _ := p.Check()
	if f := gone(fs); f.Severity != check.Info || !strings.Contains(f.Message, "have the content the removed units of e_sys used") {
		t.Errorf("touched only: want info naming the same content, got %v: %s", f.Severity, f.Message)
	}

	p.Edit("e-sys/native/e.c", "return 1;", "return 2;")
	fs, _ = p.Check()
	f := gone(fs)
	if f.Severity != check.Error || !strings.Contains(f.Message, "e-sys/native/e.c") || !strings.Contains(f.Message, "its content differs from what the removed units of e_sys used") {
		t.Errorf("edited: want an error naming e.c and the content, got %v: %s", f.Severity, f.Message)
	}
	if !testHasRoot(f, p.Path("target/debug/app")) {
		t.Errorf("roots %v do not name target/debug/app", f.Roots)
	}

	// Then a build that fails at the library: the build script's units are back in debug, the library's
	// are not, and the dependant's hash file is empty. The binary still predates the edit: an error (the
	// truth harness missed it on its zstd-sys shape).
	p.Write("e-sys/src/lib.rs", "pub fn tag() -> i32 { nope }\n")
	if _, err := p.CargoErr("build"); err == nil {
		t.Fatal("the premise fails: the broken library built")
	}
	fs, _ = p.Check()
	f = gone(fs)
	if f.Severity != check.Error || !testHasRoot(f, p.Path("target/debug/app")) {
		t.Errorf("after the failed build: want an error on target/debug/app, got %v %v: %s", f.Severity, f.Roots, f.Message)
	}
}

func testHasRoot(f check.Finding, root string) bool {
	for _, r := range f.Roots {
		if r == root {
			return true
		}
	}
	return false
}

// cargo clean -p of the -sys crate, then an edit that does not compile: the build fails on e-sys's
// lib, whose new records hold no success. Cargo builds that unit on the next build (the truth harness
// found stalecheck silent on it: Cargo agreement 99.9%), so pending-rebuild names it, as info (the
// binary's staleness is judged from the removed units' baselines); after the fix and a build it is gone.
func TestCleanPackageThenFailedBuildNamesTheUnit(t *testing.T) {
	p := ccEnvProject(t)
	p.Cargo("build")
	p.Cargo("clean", "-p", "e-sys")
	p.Edit("e-sys/src/lib.rs", "pub fn tag()", "pub fn tag() -> i32 { broken }\npub fn tag2()")
	if _, err := p.CargoErr("build"); err == nil {
		t.Fatal("the premise fails: the broken lib.rs built")
	}
	fs, _ := p.Check()
	var got []check.Finding
	for _, f := range fs {
		if f.Rule == "pending-rebuild" && strings.Contains(f.Message, "no successful build of it is on record") {
			got = append(got, f)
		}
	}
	if len(got) != 1 || got[0].Severity != check.Info || !strings.Contains(got[0].Message, "e-sys (lib-e_sys)") {
		for _, f := range fs {
			t.Log(f.Rule, f.Severity, f.Message)
		}
		t.Fatalf("want one info pending-rebuild naming e-sys's lib with no success on record; got %v\nall: %v", got, rules(fs))
	}
	// The script's folders from the failed build are the ones Cargo's retry reuses: live, not orphaned.
	for _, f := range fs {
		if f.Rule == "orphaned-build-dir" {
			t.Errorf("the failed build's own build-script folder called orphaned: %s", f.Message)
		}
	}
	ref := false
	for _, ev := range got[0].Evidence {
		if ev.Kind == "reference" && testutil.FingerprintDirRe("debug", "e-sys").MatchString(ev.Path) {
			ref = true
		}
	}
	if !ref {
		t.Errorf("no reference evidence in the unit's fingerprint folder: %+v", got[0].Evidence)
	}
	if out, _ := p.CargoErr("build", "-v"); !strings.Contains(out, "Compiling e-sys") {
		t.Errorf("the premise fails: cargo did not build e-sys again:\n%s", out)
	}
	p.Edit("e-sys/src/lib.rs", "pub fn tag() -> i32 { broken }\npub fn tag2()", "pub fn tag()")
	p.Cargo("build")
	fs, _ = p.Check()
	noErrors(t, fs)
	for _, f := range fs {
		if f.Rule == "pending-rebuild" {
			t.Errorf("pending-rebuild after the fix and a build: %s", f.Message)
		}
	}
}

// cargo clean -p after CFLAGS changed: the records that logged the old value are gone, but the content
// store kept what the removed run read; Cargo reruns the script in today's environment, so the binary
// you have (built without the flag) is stale: an error naming the variable and both values. The truth
// harness found this a miss on five shapes. After a build in this environment it is gone.
func TestCleanPackageAfterEnvChangeIsStale(t *testing.T) {
	p := ccEnvProject(t)
	p.StateDir = t.TempDir()
	t.Setenv("CFLAGS", "")
	os.Unsetenv("CFLAGS")
	p.Cargo("build")
	p.Check() // records the run's environment reads with its content baselines
	p.Cargo("clean", "-p", "e-sys")
	t.Setenv("CFLAGS", "-DENVTAG=7")
	fs, _ := p.Check()
	f := removedDepFinding(t, fs)
	if f.Severity != check.Error {
		t.Fatalf("severity %v, want error: %s", f.Severity, f.Message)
	}
	for _, want := range []string{"CFLAGS", "unset when it ran", `"-DENVTAG=7" now`, "Cargo reruns the script in this environment"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	env := false
	for _, ev := range f.Evidence {
		if ev.Kind == "env" && testutil.StdoutRe("debug", "e-sys").MatchString(ev.Path) {
			env = true
		}
	}
	if !env {
		t.Errorf("no env evidence naming the removed run's output: %+v", f.Evidence)
	}
	p.Env = append(p.Env, "CFLAGS=-DENVTAG=7")
	p.Cargo("build")
	if out, _ := exec.Command(p.Path("target/debug/app")).Output(); strings.TrimSpace(string(out)) != "7" {
		t.Fatalf("the premise fails: after the rebuild the binary prints %q, want 7", out)
	}
	fs, _ = p.Check()
	noErrors(t, fs)
}

// An unwatched header edited before the debug build (Cargo said Fresh: the debug binary is stale), then
// cargo clean -p: no source of the package is newer than the binary, but the header differs from what
// the removed units used, and Cargo's rebuild will use it: an error. The truth harness found this a miss
// (cc-include after clean -p). A build fixes it.
func TestCleanPackageOfStaleUnitsIsStale(t *testing.T) {
	p := ccEnvProject(t)
	p.StateDir = t.TempDir()
	p.Write("e-sys/native/e.h", "#define E_VAL 1\n")
	p.Write("e-sys/native/e.c", "#include \"e.h\"\nint e_tag(void) { return E_VAL; }\n")
	p.Cargo("build")
	p.Cargo("build", "--release")
	p.Check()
	time.Sleep(20 * time.Millisecond)
	p.Edit("e-sys/native/e.h", "E_VAL 1", "E_VAL 2")
	time.Sleep(20 * time.Millisecond)
	p.Edit("app/src/main.rs", "fn main()", "// edited\nfn main()")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh e-sys") {
		t.Fatalf("the premise fails: cargo reran e-sys's build script for the unwatched header:\n%s", out)
	}
	if out, _ := exec.Command(p.Path("target/debug/app")).Output(); strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("the premise fails: the debug binary prints %q, want 1 (built before the header edit)", out)
	}
	p.Cargo("clean", "-p", "e-sys")
	fs, _ := p.Check()
	f := removedDepFinding(t, fs)
	if f.Severity != check.Error || !strings.Contains(f.Message, "e-sys/native/e.h") || !strings.Contains(f.Message, "stale already") {
		t.Fatalf("want an error naming e.h, stale already; got %v: %s", f.Severity, f.Message)
	}
	p.Cargo("build")
	if out, _ := exec.Command(p.Path("target/debug/app")).Output(); strings.TrimSpace(string(out)) != "2" {
		t.Fatalf("the premise fails: after the rebuild the binary prints %q, want 2", out)
	}
	fs, _ = p.Check()
	for _, f := range fs {
		if f.Rule == "pending-rebuild" && strings.Contains(f.Message, "records are gone") {
			t.Errorf("after the rebuild: %s", f.Message)
		}
		if f.Severity == check.Error && strings.Contains(strings.Join(f.Roots, " "), "target/debug/") {
			t.Errorf("error on the rebuilt debug binary: %s: %s", f.Rule, f.Message)
		}
	}
}

func removedDepFinding(t *testing.T, fs []check.Finding) check.Finding {
	t.Helper()
	var got []check.Finding
	for _, f := range fs {
		if f.Rule == "pending-rebuild" && strings.Contains(f.Message, "records are gone") {
			got = append(got, f)
		}
	}
	if len(got) != 1 {
		t.Fatalf("want one pending-rebuild about the removed records, got %d; all: %v", len(got), rules(fs))
	}
	return got[0]
}
