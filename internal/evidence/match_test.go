package evidence

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil/fixtures"
)

func matchFiles(t *testing.T, bin string, cands ...string) *Result {
	t.Helper()
	b, err := OpenBinary(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var cs []*Candidate
	for _, c := range cands {
		cd, err := ReadCandidate(c)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, cd)
	}
	r, err := Match(b, cs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// S15: the linkorder executables hold the copy the run_*.txt truth says: app_a_first v1 (linkorder/a),
// app_b_first v2 (linkorder/b).
func TestS15LinkOrderFixtures(t *testing.T) {
	fixtures := fixtures.CUDA(t)
	a := filepath.Join(fixtures, "linkorder/a/libgroth16_cuda.a")
	b := filepath.Join(fixtures, "linkorder/b/libgroth16_cuda.a")
	for bin, want := range map[string]string{"linkorder/app_a_first": a, "linkorder/app_b_first": b} {
		r := matchFiles(t, filepath.Join(fixtures, bin), a, b)
		got := r.MatchedPaths()
		if r.Outcome != Matched || len(got) != 1 || got[0] != want {
			t.Errorf("%s: outcome %s matched %v, want %s; %+v", bin, r.Outcome, got, want, r)
			continue
		}
		if r.Confidence != "certain" {
			t.Errorf("%s: confidence %s", bin, r.Confidence)
		}
	}
	if _, err := os.Stat(filepath.Join(fixtures, "linkorder/run_a_first.txt")); err != nil {
		t.Fatal(err)
	}
}

// gcc -O0 puts string literals in plain .rodata with no symbol, not in a merged-string section: two
// copies of a library that differ in one literal (a -DFAST build appending "+fast") differ nowhere else
// but there, and Match must still tell which is inside a program built with it.
func TestMatchLiteralInPlainRodata(t *testing.T) {
	for _, tool := range []string{"cc", "ar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	src := "const char *tag(void) { return \"TAG_a_0|TAG_h_0\"\n#ifdef FAST\n \"+fast\"\n#endif\n; }\n"
	main := "#include <stdio.h>\nconst char *tag(void);\nint main(void) { puts(tag()); return 0; }\n"
	for name, body := range map[string]string{"t.c": src, "main.c": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh := func(args ...string) { t.Helper(); runIn(t, dir, args...) }
	for _, v := range []struct{ sub, def string }{{"plain", "-DPLAIN"}, {"fast", "-DFAST"}} {
		if err := os.Mkdir(filepath.Join(dir, v.sub), 0o755); err != nil {
			t.Fatal(err)
		}
		sh("cc", "-O0", "-fPIC", v.def, "-c", "t.c", "-o", v.sub+"/t.o")
		sh("ar", "crs", v.sub+"/libt.a", v.sub+"/t.o")
	}
	// Premise: the literal sits in .rodata, not in a merged-string section.
	sh("sh", "-c", "readelf -SW fast/t.o | grep -q ' .rodata ' && ! readelf -SW fast/t.o | grep -q rodata.str")
	plain, fast := filepath.Join(dir, "plain/libt.a"), filepath.Join(dir, "fast/libt.a")
	for bin, lib := range map[string]string{"app-plain": plain, "app-fast": fast} {
		sh("cc", "-O0", "-o", bin, "main.c", lib)
		r := matchFiles(t, filepath.Join(dir, bin), plain, fast)
		if got := r.MatchedPaths(); r.Outcome != Matched || len(got) != 1 || got[0] != lib {
			t.Errorf("%s: outcome %s, matched %v; want %s matched (%+v)", bin, r.Outcome, got, lib, r)
		}
	}
}

// TestOneCopyLiteralJudgedBySection: with one copy, a literal of it that is absent is evidence against
// it only where the link would have kept it: gcc -ffunction-sections -fdata-sections puts tag's
// literal in .rodata.tag.str1.1, which .text.tag points at; plain gcc puts a member's literals in one section
// beside its one .text. A copy rebuilt with another literal is not inside (its literal is absent while
// tag's code is present); the copy the program linked is, although another member's literals (in a
// member the link never took) are absent.
func TestOneCopyLiteralJudgedBySection(t *testing.T) {
	for _, tool := range []string{"cc", "ar", "readelf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	for _, v := range []struct {
		name, section string
		cflags        []string
	}{
		{"function-sections", " .rodata.tag.str1", []string{"-O2", "-ffunction-sections", "-fdata-sections"}},
		{"O2", " .rodata.str1", []string{"-O2"}},
		{"O0", " .rodata ", []string{"-O0"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, body string) {
				t.Helper()
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("unused.c", "const char *unused(void) { return \"a literal nobody links\"; }\n")
			write("main.c", "#include <stdio.h>\nconst char *tag(void);\nint main(void) { puts(tag()); return 0; }\n")
			sh := func(args ...string) { t.Helper(); runIn(t, dir, args...) }
			build := func(literal string) {
				write("t.c", "const char *tag(void) { return \""+literal+"\"; }\n")
				for _, src := range []string{"t", "unused"} {
					sh(append(append([]string{"cc", "-fPIC"}, v.cflags...), "-c", src+".c", "-o", src+".o")...)
				}
				sh("rm", "-f", "libt.a")
				sh("ar", "crs", "libt.a", "t.o", "unused.o")
			}
			build("TAG_a_0|one literal of tag")
			// Premise: the literal sits in the section this variant is about.
			sh("sh", "-c", "readelf -SW t.o | grep -q '"+v.section+"'")
			sh("cc", "-Wl,--gc-sections", "-o", "app", "main.c", "libt.a")
			lib := filepath.Join(dir, "libt.a")
			if r := matchFiles(t, filepath.Join(dir, "app"), lib); r.Outcome != Matched {
				t.Errorf("the linked copy: outcome %s, want %s (%+v)", r.Outcome, Matched, r)
			}
			build("TAG_a_1|one literal of tag")
			if r := matchFiles(t, filepath.Join(dir, "app"), lib); r.Outcome != NoneInside {
				t.Errorf("a copy rebuilt with another literal: outcome %s, want %s (%+v)", r.Outcome, NoneInside, r)
			}
		})
	}
}

// runIn runs a command in dir, failing the test with its output when it fails.
func runIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}
