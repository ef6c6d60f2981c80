package check_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// groth16V1 is the C stand-in of the story's CUDA source; the timing feature passes -DTIMING.
const groth16V1 = "#include <stdio.h>\nint native_run(void) {\n#ifdef TIMING\n  fputs(\"CUZK_TIMING msm\\n\", stderr);\n#endif\n  return 1;\n}\n"
const groth16V2 = "#include <stdio.h>\nint native_run(void) { fputs(\"TIMING_V2 msm split\\n\", stderr); return 1; }\n"

// S01: an edited GPU source (a C stand-in) that Cargo never rebuilds because build.rs declares only itself.
func TestS01UntrackedEditedSource(t *testing.T) {
	p := testutil.NewProject(t, testutil.SysCrate("seed-sys", "groth16_cuda",
		map[string]string{"cuda/groth16.c": groth16V1}, nil, []string{"cargo:rerun-if-changed=build.rs"}))
	p.Cargo("build", "--release")
	fs, _ := p.Check()
	noErrors(t, fs)
	none(t, fs, "untracked-input-changed")

	p.Write("seed-sys/cuda/groth16.c", groth16V2)
	if out := p.Cargo("build", "--release", "-v"); !strings.Contains(out, "Fresh seed-sys") {
		t.Fatalf("the premise fails: cargo rebuilt seed-sys:\n%s", out)
	}
	bin := p.Path("target/release/app")
	if fileContains(t, bin, "TIMING_V2") {
		t.Fatal("the premise fails: the binary already holds TIMING_V2")
	}
	fs, _ = p.Check()
	f := one(t, fs, "untracked-input-changed")
	src := p.Path("seed-sys/cuda/groth16.c")
	runs := runDirs(t, p, "release", "seed-sys")
	if len(runs) != 1 {
		t.Fatalf("want one run folder, got %v", runs)
	}
	if f.Severity != check.Error {
		t.Errorf("severity %v, want error (the archive member groth16.o ties the source to the step)", f.Severity)
	}
	if f.Subjects[0] != src || f.Subjects[1] != runs[0] {
		t.Errorf("subjects %v, want [%s %s ...]", f.Subjects, src, runs[0])
	}
	for _, want := range []string{"seed-sys/cuda/groth16.c", msgTime(t, src), msgTime(t, testutil.StdoutFile(runs[0])), "libgroth16_cuda.a"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if !testutil.HasSubject(check.Finding{Subjects: f.Roots}, bin) {
		t.Errorf("roots %v do not name %s", f.Roots, bin)
	}
	if how := evidenceHow(f, "input"); !strings.Contains(how, "archive-member") {
		t.Errorf("input evidence %q lacks the archive-member clue", how)
	}
	if !strings.Contains(f.Fix, "rerun-if-changed=cuda") {
		t.Errorf("fix %q does not declare the source folder", f.Fix)
	}

	// Fix step: declare the source folder, rebuild: the finding disappears and the binary has the edit.
	p.Edit("seed-sys/build.rs", `println!("cargo:rerun-if-changed=build.rs");`,
		`println!("cargo:rerun-if-changed=build.rs");`+"\n    println!(\"cargo:rerun-if-changed=cuda\");")
	p.Cargo("build", "--release")
	if !fileContains(t, bin, "TIMING_V2") {
		t.Fatal("after the fix the binary still lacks TIMING_V2")
	}
	fs, _ = p.Check()
	none(t, fs, "untracked-input-changed")
	none(t, fs, "rerun-scan-disabled")
	noErrors(t, fs)
}

// S04: a header the compiler read but nobody declared, found through the depfile (-MD) or DWARF (-g).
func TestS04UndeclaredHeader(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		how  string
	}{{"depfile", []string{"-MD"}, "depfile"}, {"dwarf", []string{"-g"}, "dwarf"}} {
		t.Run(tc.name, func(t *testing.T) {
			p := testutil.NewProject(t, testutil.SysCrate("q-sys", "q", map[string]string{
				// q.h declares a type and an inline function, so DWARF's line table lists it (a header
				// holding only macros leaves no trace in DWARF without -g3).
				"csrc/q.c": "#include \"q.h\"\nint native_run(void) { struct q_cfg c = {q_val()}; return c.k; }\n",
				"csrc/q.h": qHeader(7),
			}, tc.args, []string{"cargo:rerun-if-changed=csrc/q.c", "cargo:rerun-if-changed=build.rs"}))
			p.Cargo("build", "--release")
			fs, _ := p.Check()
			noErrors(t, fs)

			p.Write("q-sys/csrc/q.h", qHeader(8))
			if out := p.Cargo("build", "--release", "-v"); !strings.Contains(out, "Fresh q-sys") {
				t.Fatalf("the premise fails: cargo rebuilt q-sys:\n%s", out)
			}
			fs, _ = p.Check()
			f := one(t, fs, "untracked-input-changed")
			if f.Subjects[0] != p.Path("q-sys/csrc/q.h") || f.Severity != check.Error {
				t.Fatalf("want an error naming q.h, got:\n%s", testutil.Dump([]check.Finding{f}))
			}
			if how := evidenceHow(f, "input"); !strings.Contains(how, tc.how) {
				t.Errorf("q.h known by %q, want %s", how, tc.how)
			}

			p.Edit("q-sys/build.rs", `cargo:rerun-if-changed=csrc/q.c`, `cargo:rerun-if-changed=csrc`)
			p.Cargo("build", "--release")
			fs, _ = p.Check()
			none(t, fs, "untracked-input-changed")
			noErrors(t, fs)
		})
	}
}

func qHeader(k int) string {
	return fmt.Sprintf("struct q_cfg { int k; };\nstatic inline int q_val(void) { return %d; }\n", k)
}

// A built workspace copied elsewhere (cp -a keeps mtimes): its depfiles still name the old folder. Cargo
// rewrites root-output paths; so does stalecheck, so an edit in the copy is reported once, under the
// copy's path, and the original is not looked at.
func TestCopiedWorkspaceDepfilePaths(t *testing.T) {
	orig := testutil.NewProject(t, testutil.SysCrate("q-sys", "q", map[string]string{
		"csrc/q.c": "#include \"q.h\"\nint native_run(void) { struct q_cfg c = {q_val()}; return c.k; }\n",
		"csrc/q.h": qHeader(7),
	}, []string{"-MD"}, []string{"cargo:rerun-if-changed=csrc/q.c", "cargo:rerun-if-changed=build.rs"}))
	orig.Cargo("build", "--release")
	cp := testutil.NewProject(t, nil)
	if out, err := exec.Command("cp", "-a", orig.Dir+"/.", cp.Dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	fs, _ := cp.Check()
	noErrors(t, fs)
	cp.Write("q-sys/csrc/q.h", qHeader(8))
	fs, _ = cp.Check()
	f := one(t, fs, "untracked-input-changed")
	if f.Subjects[0] != cp.Path("q-sys/csrc/q.h") || !strings.Contains(evidenceHow(f, "input"), "depfile") {
		t.Fatalf("want the copy's q.h known by its depfile:\n%s", testutil.Dump(fs))
	}
}
