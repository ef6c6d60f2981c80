package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// Tests of `check` on Make and Ninja builds (scenarios S12, S13 of shared/scenarios, CMake/Meson + nvcc,
// an archive keeping a removed object): real builds in t.TempDir(), then the fix step.

// nvccEnv makes Debian's nvcc 11.8 accept gcc 12 as its host compiler.
var nvccEnv = []string{"NVCC_PREPEND_FLAGS=-ccbin c++ -allow-unsupported-compiler"}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	need.Tools(t, tools...)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func shIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	need.RealBuild(t)
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// editLater appends to a file and sets its mtime two seconds ahead, so the edit is newer than every
// output whatever the filesystem's timestamp granularity, and waits until that time has passed (so a
// later build's outputs are newer); it returns the mtime in ns.
func editLater(t *testing.T, p, text string) int64 {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(text)
	f.Close()
	when := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(p, when, when); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	time.Sleep(time.Until(when) + 10*time.Millisecond)
	return st.ModTime().UnixNano()
}

type sysFinding struct {
	Rule     string   `json:"rule"`
	Severity string   `json:"severity"`
	Message  string   `json:"message"`
	Subjects []string `json:"subjects"`
	Roots    []string `json:"roots"`
	System   string   `json:"system"`
	Fix      string   `json:"fix"`
	Evidence []struct {
		Kind    string `json:"kind"`
		Path    string `json:"path"`
		MTimeNS int64  `json:"mtime_ns"`
		How     string `json:"how"`
		Detail  string `json:"detail"`
	} `json:"evidence"`
}

// checkSystems runs `check --format json` on dir with extra flags and returns the findings and exit code.
func checkSystems(t *testing.T, dir string, flags ...string) ([]sysFinding, int) {
	t.Helper()
	out, stderr, code := run(t, append(append([]string{"check", "--format", "json"}, flags...), dir)...)
	if code == 2 {
		t.Fatalf("check %s: exit 2: %s", dir, stderr)
	}
	var doc struct {
		Findings []sysFinding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	// Every document validates against the documented schema.
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	schema, err := c.Compile(filepath.Join("..", "..", "docs", "schema", "check.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw any
	json.Unmarshal([]byte(out), &raw)
	if err := schema.Validate(raw); err != nil {
		t.Fatalf("output does not match docs/schema/check.v1.json: %v\n%s", err, out)
	}
	return doc.Findings, code
}

// find returns the findings of rule whose first subject is subject (any subject when "").
func find(fs []sysFinding, rule, subject string) []sysFinding {
	var out []sysFinding
	for _, f := range fs {
		if f.Rule == rule && (subject == "" || len(f.Subjects) > 0 && f.Subjects[0] == subject) {
			out = append(out, f)
		}
	}
	return out
}

func evidenceAt(f sysFinding, kind, path string) (int64, string, bool) {
	for _, e := range f.Evidence {
		if e.Kind == kind && e.Path == path {
			return e.MTimeNS, e.How + " " + e.Detail, true
		}
	}
	return 0, "", false
}

// TestS12MakeDepfilesNeverIncluded: -MMD writes main.d and point.d, which the Makefile never includes;
// point.h changes and make says it is up to date. check names point.h against both objects, known by
// the depfiles (and DWARF), as make's words; including the depfiles and running make fixes it.
func TestS12MakeDepfilesNeverIncluded(t *testing.T) {
	needTools(t, "make", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile": "CFLAGS = -g -O0 -MMD\nOBJS = main.o point.o\napp: $(OBJS)\n\t$(CC) $(OBJS) -o $@\n",
		"point.h":  "struct point { int x, y; };\nint norm(struct point p);\n",
		"point.c":  "#include \"point.h\"\nint norm(struct point p) { return p.x + p.y; }\n",
		"main.c":   "#include \"point.h\"\nint main(void) { struct point p = {1, 2}; return norm(p) - 3; }\n",
	})
	shIn(t, dir, nil, "make")
	hdr := filepath.Join(dir, "point.h")
	ns := editLater(t, hdr, "struct point3 { int x, y, z; };\n")
	if out := shIn(t, dir, nil, "make"); !strings.Contains(out, "up to date") {
		t.Fatalf("make rebuilt after the header edit (the scenario needs it not to):\n%s", out)
	}
	fs, code := checkSystems(t, dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %+v", code, fs)
	}
	for _, obj := range []string{"main", "point"} {
		var got *sysFinding
		for _, f := range find(fs, "untracked-input-changed", hdr) {
			if len(f.Subjects) > 1 && f.Subjects[1] == filepath.Join(dir, obj+".o") {
				got = &f
			}
		}
		if got == nil {
			t.Fatalf("no untracked-input-changed for point.h against %s.o: %+v", obj, fs)
		}
		mt, how, ok := evidenceAt(*got, "input", hdr)
		if !ok || mt != ns || !strings.Contains(how, "depfile") || !strings.Contains(how, filepath.Join(dir, obj+".d")) {
			t.Fatalf("input evidence %d %q (want mtime %d, depfile %s.d)", mt, how, ns, obj)
		}
		if got.Severity != "error" || got.System != "make" || !strings.Contains(got.Message, "make does not have it as a prerequisite of "+obj+".o") ||
			!strings.Contains(got.Fix, "-include") {
			t.Fatalf("finding %+v", got)
		}
		if _, d, ok := evidenceAt(*got, "record", filepath.Join(dir, obj+".o")); !ok || !strings.Contains(d, "does not call "+obj+".o out of date") {
			t.Fatalf("make -q evidence %q", d)
		}
	}
	if len(find(fs, "missing-depfile", "")) != 0 {
		t.Fatalf("depfiles exist: no missing-depfile wanted: %+v", find(fs, "missing-depfile", ""))
	}
	// The fix: include the depfiles; make now sees point.h and rebuilds both objects.
	f, _ := os.OpenFile(filepath.Join(dir, "Makefile"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("-include $(OBJS:.o=.d)\n")
	f.Close()
	if out := shIn(t, dir, nil, "make"); !strings.Contains(out, "point.o") {
		t.Fatalf("make did not rebuild after the fix:\n%s", out)
	}
	fs, code = checkSystems(t, dir)
	if code != 0 || len(find(fs, "untracked-input-changed", "")) != 0 {
		t.Fatalf("after the fix: exit %d, %+v", code, fs)
	}
}

// TestS13NinjaRuleWithoutDepfile: build.ninja compiles main.c (which includes m.h) with no depfile or
// deps; m.h changes and ninja has no work to do. check gives missing-depfile on the rule and
// untracked-input-changed for m.h (the include scan); --system narrows; the fix (a depfile with deps =
// gcc, -MD -MF) and a ninja run leave no finding.
func TestS13NinjaRuleWithoutDepfile(t *testing.T) {
	needTools(t, "ninja", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"build.ninja": "rule cc\n  command = cc -c $in -o $out\nrule link\n  command = cc $in -o $out\nbuild main.o: cc main.c\nbuild app: link main.o\n",
		"m.h":         "#define M 0\n",
		"main.c":      "#include \"m.h\"\nint main(void) { return M; }\n",
	})
	shIn(t, dir, nil, "ninja")
	mh := filepath.Join(dir, "m.h")
	ns := editLater(t, mh, "#undef M\n#define M 1\n")
	if out := shIn(t, dir, nil, "ninja", "-n"); !strings.Contains(out, "no work to do") {
		t.Fatalf("ninja would rebuild after the header edit (the scenario needs it not to):\n%s", out)
	}
	obj := filepath.Join(dir, "main.o")
	fs, code := checkSystems(t, dir)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %+v", code, fs)
	}
	md := find(fs, "missing-depfile", obj)
	if len(md) != 1 || md[0].Severity != "warning" || md[0].System != "ninja" || !strings.Contains(md[0].Message, "rule cc") ||
		!strings.Contains(md[0].Message, "neither depfile nor deps") {
		t.Fatalf("missing-depfile %+v in %+v", md, fs)
	}
	if _, d, ok := evidenceAt(md[0], "rule", obj); !ok || !strings.Contains(d, "cc -c main.c -o main.o") || !strings.Contains(d, "build.ninja:5") {
		t.Fatalf("rule evidence %q", d)
	}
	if mt, how, ok := evidenceAt(md[0], "input", mh); !ok || mt != ns || !strings.Contains(how, "include-scan") {
		t.Fatalf("missing-depfile names no header seen by the include scan: %q", how)
	}
	un := find(fs, "untracked-input-changed", mh)
	if len(un) != 1 || un[0].Severity != "error" || un[0].System != "ninja" || un[0].Subjects[1] != obj ||
		!strings.Contains(un[0].Message, "the Ninja edge main.o (rule cc) has no depfile or deps entry naming it") {
		t.Fatalf("untracked-input-changed %+v", un)
	}
	// ninja's own dry run, or Read's evaluation of ninja's rules standing in for it when that finds no work.
	if _, d, ok := evidenceAt(un[0], "record", obj); !ok || !strings.Contains(d, "dry-run ninja -n -d explain would not run this edge") &&
		!strings.Contains(d, "dry-run stalecheck's evaluation of ninja's rules") {
		t.Fatalf("dry-run evidence %q", d)
	}
	// The text report names the system.
	out, _, _ := run(t, "check", dir)
	if !strings.Contains(out, "stalecheck: ninja build folder "+dir) || !strings.Contains(out, "missing-depfile] (ninja)") {
		t.Fatalf("text report:\n%s", out)
	}
	// --system: make finds nothing here (exit 2, naming what was found); ninja is what the default read.
	if _, stderr, code := run(t, "check", "--system", "make", dir); code != 2 || !strings.Contains(stderr, "ninja at "+dir) {
		t.Fatalf("--system make: exit %d %q", code, stderr)
	}
	if _, stderr, code := run(t, "check", "--system", "scons", dir); code != 2 || !strings.Contains(stderr, "unknown build system") {
		t.Fatalf("--system scons: exit %d %q", code, stderr)
	}
	if fs2, _ := checkSystems(t, dir, "--system", "ninja"); len(fs2) != len(fs) {
		t.Fatalf("--system ninja: %d findings, default %d", len(fs2), len(fs))
	}
	// The fix: a depfile the compiler writes; the changed command makes ninja recompile.
	writeFiles(t, dir, map[string]string{"build.ninja": "rule cc\n  command = cc -MD -MF $out.d -c $in -o $out\n  depfile = $out.d\n  deps = gcc\n" +
		"rule link\n  command = cc $in -o $out\nbuild main.o: cc main.c\nbuild app: link main.o\n"})
	shIn(t, dir, nil, "ninja")
	fs, code = checkSystems(t, dir, "--fail-on", "warning")
	if code != 0 || len(fs) != 0 {
		t.Fatalf("after the fix: exit %d, %+v", code, fs)
	}
}

// TestMakeArchiveKeepsRemovedObject: libk.a is made with `ar rcs $@ $^` from a.o and b.o; b.c is
// removed from the Makefile and a.c edited: make rewrites a.o into the archive and keeps b.o. check
// names b.o as a member no rule makes; removing the archive and running make fixes it.
func TestMakeArchiveKeepsRemovedObject(t *testing.T) {
	needTools(t, "make", "cc", "ar")
	dir := t.TempDir()
	mk := func(objs string) string {
		return "CFLAGS = -O0 -MMD\nOBJS = " + objs + "\napp: main.o libk.a\n\t$(CC) main.o libk.a -o $@\nlibk.a: $(OBJS)\n\t$(AR) rcs $@ $^\n-include *.d\n"
	}
	writeFiles(t, dir, map[string]string{
		"Makefile": mk("a.o b.o"),
		"a.c":      "int a(void) { return 1; }\n",
		"b.c":      "int b(void) { return 2; }\n",
		"main.c":   "int a(void);\nint main(void) { return a() - 1; }\n",
	})
	shIn(t, dir, nil, "make")
	// A check records the commands the build ran: without one, the Makefile edit below leaves whether
	// main.o's command changed untold (a warning of its own, TestMakeIncludedMakefileNoBaseline).
	if fs, code := checkSystems(t, dir, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
		t.Fatalf("the first build: exit %d, %+v", code, fs)
	}
	writeFiles(t, dir, map[string]string{"Makefile": mk("a.o")})
	os.Remove(filepath.Join(dir, "b.c"))
	os.Remove(filepath.Join(dir, "b.o"))
	os.Remove(filepath.Join(dir, "b.d"))
	editLater(t, filepath.Join(dir, "a.c"), "int a2(void) { return 3; }\n")
	shIn(t, dir, nil, "make")
	if out := shIn(t, dir, nil, "ar", "t", filepath.Join(dir, "libk.a")); !strings.Contains(out, "b.o") {
		t.Fatalf("ar dropped b.o (the scenario needs it kept): %s", out)
	}
	lib := filepath.Join(dir, "libk.a")
	fs, _ := checkSystems(t, dir)
	am := find(fs, "archive-member-without-rule", lib)
	if len(am) != 1 || am[0].Severity != "warning" || am[0].System != "make" || am[0].Subjects[1] != lib+":b.o" ||
		!strings.Contains(am[0].Message, "holds b.o, which no rule of Make makes any more (its object is no longer on disk)") {
		t.Fatalf("archive-member-without-rule %+v in %+v", am, fs)
	}
	if _, d, ok := evidenceAt(am[0], "artifact", lib); !ok || !strings.Contains(d, "archive member "+lib+":b.o") {
		t.Fatalf("artifact evidence %q", d)
	}
	if len(find(fs, "archive-member-without-rule", "")) != 1 {
		t.Fatalf("a.o is made by a rule: only b.o wanted: %+v", fs)
	}
	os.Remove(lib)
	shIn(t, dir, nil, "make")
	fs, code := checkSystems(t, dir, "--fail-on", "warning")
	if code != 0 || len(fs) != 0 {
		t.Fatalf("after the fix: exit %d, %+v", code, fs)
	}
}

const (
	cudaKernel = "#include \"kern.cuh\"\n__global__ void k(int *x) { x[0] = SCALE; }\nextern \"C\" int launch(void) { return SCALE; }\n"
	cudaMain   = "int launch(void);\nint main(void) { return launch() - 2; }\n"
)

// TestCMakeNinjaNvccCuhEdit: CMake 3.25 + Ninja + nvcc 11.8. CMake passes -MD -MF to nvcc with deps =
// gcc, so ninja watches kern.cuh: the edit is pending-rebuild (Ninja's words), with the deps-log
// record as its clue; cmake --build fixes it.
func TestCMakeNinjaNvccCuhEdit(t *testing.T) {
	needTools(t, "cmake", "ninja", "cc", "nvcc")
	root := t.TempDir()
	src, bld := filepath.Join(root, "src"), filepath.Join(root, "build")
	writeFiles(t, src, map[string]string{
		"CMakeLists.txt": "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES C CUDA)\nadd_executable(k main.c kern.cu)\n",
		"kern.cuh":       "#define SCALE 2\n", "kern.cu": cudaKernel, "main.c": cudaMain,
	})
	shIn(t, root, nvccEnv, "cmake", "-S", src, "-B", bld, "-G", "Ninja")
	shIn(t, bld, nvccEnv, "ninja")
	cuh := filepath.Join(src, "kern.cuh")
	ns := editLater(t, cuh, "#undef SCALE\n#define SCALE 3\n")
	fs, code := checkSystems(t, root)
	if code != 1 {
		t.Fatalf("exit %d: %+v", code, fs)
	}
	p := find(fs, "pending-rebuild", cuh)
	if len(p) != 1 || p[0].System != "ninja" || !strings.HasSuffix(p[0].Subjects[1], "kern.cu.o") || !strings.Contains(p[0].Message, "Ninja watches it") ||
		p[0].Fix != "cmake --build "+bld {
		t.Fatalf("pending-rebuild %+v in %+v", p, fs)
	}
	if mt, how, ok := evidenceAt(p[0], "input", cuh); !ok || mt != ns || !strings.Contains(how, "deps-log") {
		t.Fatalf("input evidence %d %q", mt, how)
	}
	if len(find(fs, "missing-depfile", "")) != 0 || len(find(fs, "untracked-input-changed", "")) != 0 {
		t.Fatalf("CMake's nvcc rule writes its depfile: %+v", fs)
	}
	shIn(t, bld, nvccEnv, "cmake", "--build", bld)
	if fs, code = checkSystems(t, root, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
		t.Fatalf("after cmake --build: exit %d %+v", code, fs)
	}
}

// TestMesonCudaDepfileNeverWritten: Meson 1.0's CUDA rule names a depfile (deps = gcc) but calls nvcc
// without -MD, so a .cuh edit leaves ninja with nothing to do: missing-depfile on the rule and
// untracked-input-changed for kern.cuh (include scan). Recompiling the kernel (the fix step) clears the
// staleness; the rule's missing depfile stays a warning.
func TestMesonCudaDepfileNeverWritten(t *testing.T) {
	needTools(t, "meson", "ninja", "cc", "nvcc")
	src := t.TempDir()
	bld := filepath.Join(src, "b")
	writeFiles(t, src, map[string]string{
		"meson.build": "project('k', 'c', 'cuda')\nexecutable('k', 'main.c', 'kern.cu')\n",
		"kern.cuh":    "#define SCALE 2\n", "kern.cu": cudaKernel, "main.c": cudaMain,
	})
	shIn(t, src, nvccEnv, "meson", "setup", bld)
	shIn(t, bld, nvccEnv, "ninja")
	cuh := filepath.Join(src, "kern.cuh")
	ns := editLater(t, cuh, "#undef SCALE\n#define SCALE 3\n")
	fs, code := checkSystems(t, src)
	if code != 1 {
		t.Fatalf("exit %d: %+v", code, fs)
	}
	var obj string
	for _, f := range find(fs, "missing-depfile", "") {
		if strings.HasSuffix(f.Subjects[0], "kern.cu.o") {
			obj = f.Subjects[0]
			if f.System != "ninja" || !strings.Contains(f.Message, "has no -MD/-MMD/-MF") {
				t.Fatalf("missing-depfile %+v", f)
			}
			if _, d, ok := evidenceAt(f, "depfile", f.Subjects[1]); !ok || !strings.Contains(d, "not on disk") {
				t.Fatalf("depfile evidence %q", d)
			}
		}
	}
	if obj == "" {
		t.Fatalf("no missing-depfile for kern.cu.o: %+v", fs)
	}
	un := find(fs, "untracked-input-changed", cuh)
	if len(un) != 1 || un[0].Subjects[1] != obj || un[0].System != "ninja" {
		t.Fatalf("untracked-input-changed %+v in %+v", un, fs)
	}
	if mt, how, ok := evidenceAt(un[0], "input", cuh); !ok || mt != ns || !strings.Contains(how, "include-scan") {
		t.Fatalf("input evidence %d %q", mt, how)
	}
	// The fix step: remove the stale object and build again.
	os.Remove(obj)
	shIn(t, bld, nvccEnv, "ninja")
	fs, _ = checkSystems(t, src)
	if len(find(fs, "untracked-input-changed", "")) != 0 || len(find(fs, "pending-rebuild", "")) != 0 || len(find(fs, "missing-depfile", "")) != 1 {
		t.Fatalf("after the rebuild: %+v", fs)
	}
}

// TestMakeAndNinjaTogether: a folder holding a Make folder and a Ninja folder that share no file is
// refused as two builds; --system make,ninja reads both, each finding naming its system, and --system
// make narrows to one.
func TestMakeAndNinjaTogether(t *testing.T) {
	needTools(t, "make", "ninja", "cc")
	root := t.TempDir()
	mk, nj := filepath.Join(root, "mk"), filepath.Join(root, "nj")
	writeFiles(t, mk, map[string]string{"Makefile": "CFLAGS = -MMD\nx: x.o\n\t$(CC) x.o -o $@\n", "x.h": "#define X 0\n",
		"x.c": "#include \"x.h\"\nint main(void) { return X; }\n"})
	writeFiles(t, nj, map[string]string{"build.ninja": "rule cc\n  command = cc -c $in -o $out\nbuild y.o: cc y.c\n", "y.h": "#define Y 0\n",
		"y.c": "#include \"y.h\"\nint y(void) { return Y; }\n"})
	shIn(t, mk, nil, "make")
	shIn(t, nj, nil, "ninja")
	editLater(t, filepath.Join(mk, "x.h"), "\n")
	editLater(t, filepath.Join(nj, "y.h"), "\n")
	// Two builds that share no file: one report would mix them, so the folder above both is refused,
	// naming each; --system reads what it names together.
	if _, stderr, code := run(t, "check", root); code != 2 || !strings.Contains(stderr, "make at "+mk) || !strings.Contains(stderr, "ninja at "+nj) {
		t.Fatalf("check of the folder holding both: exit %d, %s", code, stderr)
	}
	fs, _ := checkSystems(t, root, "--system", "make,ninja")
	if a, b := find(fs, "untracked-input-changed", filepath.Join(mk, "x.h")), find(fs, "untracked-input-changed", filepath.Join(nj, "y.h")); len(a) != 1 || a[0].System != "make" || len(b) != 1 || b[0].System != "ninja" {
		t.Fatalf("findings %+v", fs)
	}
	fs, _ = checkSystems(t, root, "--system", "make")
	for _, f := range fs {
		if f.System != "make" {
			t.Fatalf("--system make gave %+v", f)
		}
	}
	if len(fs) == 0 {
		t.Fatal("--system make: no finding")
	}
}

// TestNinjaDamagedLogs: a .ninja_log that is not one and a truncated .ninja_deps are unreadable-record
// findings naming each file (Ninja's words in the fix), and the check goes on (the dry run is skipped,
// as ninja would rewrite them).
func TestNinjaDamagedLogs(t *testing.T) {
	needTools(t, "ninja", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"build.ninja": "rule cc\n  command = cc -MD -MF $out.d -c $in -o $out\n  depfile = $out.d\n  deps = gcc\nbuild main.o: cc main.c\n",
		"m.h":         "#define M 0\n", "main.c": "#include \"m.h\"\nint main(void) { return M; }\n",
	})
	shIn(t, dir, nil, "ninja")
	logp, deps := filepath.Join(dir, ".ninja_log"), filepath.Join(dir, ".ninja_deps")
	data, err := os.ReadFile(deps)
	if err != nil || len(data) < 20 {
		t.Fatalf("deps log %d bytes: %v", len(data), err)
	}
	os.WriteFile(deps, data[:len(data)-3], 0o644)
	os.WriteFile(logp, []byte("garbage\x00\xff\n"), 0o644)
	fs, _ := checkSystems(t, dir)
	for _, p := range []string{logp, deps} {
		u := find(fs, "unreadable-record", p)
		// The message names the file once, as the report shows paths (relative to the workspace); the
		// evidence has it whole.
		if len(u) != 1 || u[0].System != "ninja" || !strings.Contains(u[0].Message, "could not read "+filepath.Base(p)+":") ||
			len(u[0].Evidence) == 0 || u[0].Evidence[0].Path != p || !strings.Contains(u[0].Fix, "ninja run") {
			t.Fatalf("unreadable-record for %s: %+v in %+v", p, u, fs)
		}
	}
}

// TestMesonConfigureSameValue: `meson configure -D<opt>=<the value it has>` rewrites
// meson-private/coredata.dat with other bytes (a pickle whose set order varies from run to run), so
// ninja will regenerate build.ninja, and then has nothing to rebuild: the pending regeneration is judged
// by meson-info/intro-buildoptions.json, written with it (info, exit 0). Another value is an error.
func TestMesonConfigureSameValue(t *testing.T) {
	needTools(t, "meson", "ninja", "cc")
	src := t.TempDir()
	bld := filepath.Join(src, "build")
	writeFiles(t, src, map[string]string{
		"meson.build":       "project('app', 'c')\nconf = configuration_data()\nconf.set('LEVEL', get_option('level'))\nconfigure_file(output: 'config.h', configuration: conf)\nexecutable('app', 'main.c')\n",
		"meson_options.txt": "option('level', type: 'integer', value: 1)\n",
		"main.c":            "#include \"config.h\"\nint main(void) { return LEVEL; }\n",
	})
	shIn(t, src, nil, "meson", "setup", bld)
	shIn(t, bld, nil, "ninja")
	if fs, code := checkSystems(t, src); code != 0 {
		t.Fatalf("clean build: exit %d: %+v", code, fs)
	}
	coredata := filepath.Join(bld, "meson-private", "coredata.dat")
	was, err := os.ReadFile(coredata)
	if err != nil {
		t.Fatal(err)
	}
	// The premise: the same value rewrites other bytes (the order of a set in the pickle is random;
	// a few tries make the same bytes all along vanishingly rare).
	for i := 0; ; i++ {
		time.Sleep(20 * time.Millisecond)
		shIn(t, src, nil, "meson", "configure", bld, "-Dlevel=1")
		if now, _ := os.ReadFile(coredata); !bytes.Equal(now, was) {
			break
		}
		if i == 8 {
			t.Fatal("premise: meson configure of the same value kept coredata.dat's bytes 9 times")
		}
	}
	fs, code := checkSystems(t, src)
	pend := find(fs, "pending-rebuild", coredata)
	if code != 0 || len(pend) != 1 || pend[0].Severity != "info" || !strings.Contains(pend[0].Message, "intro-buildoptions.json") {
		t.Fatalf("same value: exit %d, %+v", code, fs)
	}
	time.Sleep(20 * time.Millisecond)
	shIn(t, src, nil, "meson", "configure", bld, "-Dlevel=2")
	fs, code = checkSystems(t, src)
	if pend := find(fs, "pending-rebuild", coredata); code != 1 || len(pend) != 1 || pend[0].Severity != "error" {
		t.Fatalf("another value: exit %d, %+v", code, fs)
	}
	shIn(t, bld, nil, "ninja")
	if fs, code := checkSystems(t, src); code != 0 {
		t.Fatalf("after the rebuild: exit %d: %+v", code, fs)
	}
}

// TestBuildScriptReadsFileOutsidePackage: a build script reads ../shared/cfg.txt (in the workspace,
// outside its package) and declares only build.rs; Cargo's package scan never sees the file, so an
// edit of it leaves the build Fresh and the binary old: untracked-input-changed naming it. Before the
// edit, nothing.
func TestBuildScriptReadsFileOutsidePackage(t *testing.T) {
	need.RealBuild(t)
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":     "[workspace]\nmembers = [\"app\"]\nresolver = \"2\"\n",
		"shared/cfg.txt": "7\n",
		"app/Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"app/build.rs": `use std::{env, fs, path::PathBuf};
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let v = fs::read_to_string("../shared/cfg.txt").unwrap();
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out.join("cfg.rs"), format!("pub const CFG: u32 = {};\n", v.trim())).unwrap();
}
`,
		"app/src/main.rs": "include!(concat!(env!(\"OUT_DIR\"), \"/cfg.rs\"));\nfn main() { println!(\"{}\", CFG); }\n",
	})
	p.Cargo("build")
	cfg := p.Path("shared/cfg.txt")
	if fs, code := checkSystems(t, p.Dir); code != 0 || len(find(fs, "untracked-input-changed", "")) != 0 {
		t.Fatalf("fresh build: exit %d %+v", code, fs)
	}
	editLater(t, cfg, "8\n")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh app") {
		t.Fatalf("premise: cargo rebuilt app:\n%s", out)
	}
	fs, code := checkSystems(t, p.Dir)
	if u := find(fs, "untracked-input-changed", cfg); code != 1 || len(u) != 1 || u[0].Severity != "error" {
		t.Fatalf("after editing the file outside the package: exit %d %+v", code, fs)
	}
}

// TestMakeArchiveCommandDropsMember: an object dropped from an archive's rule (its source deleted,
// its call gone) changes the archive's command, but `ar r` keeps the member, so redoing the command
// would not change the archive: the command change is a warning that says so, beside the member's own
// archive-member-without-rule warning; the binary, which takes nothing from the member, is no error.
func TestMakeArchiveCommandDropsMember(t *testing.T) {
	needTools(t, "make", "cc", "ar")
	dir := t.TempDir()
	mk := func(objs string) string {
		return "OBJS = " + objs + "\napp: main.o libz.a\n\tcc -o app main.o libz.a\nlibz.a: $(OBJS)\n\tar rcs $@ $^\n%.o: %.c\n\tcc -c $< -o $@\n"
	}
	writeFiles(t, dir, map[string]string{
		"Makefile": mk("a.o b.o"),
		"a.c":      "int f(void) { return 1; }\n",
		"b.c":      "int g(void) { return 2; }\n",
		"main.c":   "int f(void); int g(void);\nint main(void) { return f() + g() - 3; }\n",
	})
	shIn(t, dir, nil, "make", "-s")
	if fs, code := checkSystems(t, dir); code != 0 {
		t.Fatalf("fresh build: exit %d %+v", code, fs)
	}
	time.Sleep(20 * time.Millisecond)
	os.Remove(filepath.Join(dir, "b.c"))
	writeFiles(t, dir, map[string]string{"Makefile": mk("a.o"), "main.c": "int f(void);\nint main(void) { return f() - 1; }\n"})
	shIn(t, dir, nil, "make", "-s")
	fs, code := checkSystems(t, dir)
	mkfile := filepath.Join(dir, "Makefile")
	u := find(fs, "untracked-input-changed", mkfile)
	if code != 0 || len(u) != 1 || u[0].Severity != "warning" || !strings.Contains(u[0].Message, "only leaves out b.o") ||
		len(find(fs, "archive-member-without-rule", "")) != 1 {
		t.Fatalf("b.o dropped from the archive's rule: exit %d %+v", code, fs)
	}
}

// TestMakeIncludedMakefileChangesCommand: a recipe's flags come from an included config.mk; an edit of
// it changes the command make would run, which make does not redo the object for: the error names
// config.mk as what changed it (not the environment, nor the Makefile).
func TestMakeIncludedMakefileChangesCommand(t *testing.T) {
	needTools(t, "make", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile":  "include config.mk\napp: main.o\n\tcc -o app main.o\nmain.o: main.c\n\tcc $(CFLAGS) -c main.c -o main.o\n",
		"config.mk": "CFLAGS += -DVAL=1\n",
		"main.c":    "int main(void) { return VAL - 1; }\n",
	})
	shIn(t, dir, nil, "make", "-s")
	if fs, code := checkSystems(t, dir); code != 0 {
		t.Fatalf("fresh build: exit %d %+v", code, fs)
	}
	cfg := filepath.Join(dir, "config.mk")
	writeFiles(t, dir, map[string]string{"config.mk": "CFLAGS += -DVAL=2\n"})
	when := time.Now().Add(2 * time.Second)
	os.Chtimes(cfg, when, when)
	if out := shIn(t, dir, nil, "make", "-n"); strings.Contains(out, "cc ") {
		t.Fatalf("premise: make would redo something:\n%s", out)
	}
	fs, code := checkSystems(t, dir)
	u := find(fs, "untracked-input-changed", cfg)
	if code != 1 || len(u) != 1 || u[0].Severity != "error" || !strings.HasPrefix(u[0].Message, "config.mk changed the command of main.o") {
		t.Fatalf("config.mk edited: exit %d %+v", code, fs)
	}
}

// TestMakeCommandChangeRedoneAnyway: config.mk is also a prerequisite of main.o (as CMake's flags.make
// is of its objects): the edit changes the command, and make redoes main.o for it. That is
// pending-rebuild naming config.mk, and no untracked-input-changed (no "make will not redo").
func TestMakeCommandChangeRedoneAnyway(t *testing.T) {
	needTools(t, "make", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile":  "include config.mk\napp: main.o\n\tcc -o app main.o\nmain.o: main.c config.mk\n\tcc $(CFLAGS) -c main.c -o main.o\n",
		"config.mk": "CFLAGS += -DVAL=1\n",
		"main.c":    "int main(void) { return VAL - 1; }\n",
	})
	shIn(t, dir, nil, "make", "-s")
	if fs, code := checkSystems(t, dir); code != 0 {
		t.Fatalf("fresh build: exit %d %+v", code, fs)
	}
	cfg := filepath.Join(dir, "config.mk")
	writeFiles(t, dir, map[string]string{"config.mk": "CFLAGS += -DVAL=2\n"})
	when := time.Now().Add(2 * time.Second)
	os.Chtimes(cfg, when, when)
	if out := shIn(t, dir, nil, "make", "-n"); !strings.Contains(out, "-DVAL=2 -c main.c") {
		t.Fatalf("premise: make would not redo main.o with the new flags:\n%s", out)
	}
	fs, code := checkSystems(t, dir)
	if u := find(fs, "untracked-input-changed", cfg); len(u) != 0 {
		t.Errorf("untracked-input-changed for a change make redoes: %+v", u)
	}
	if p := find(fs, "pending-rebuild", cfg); code != 1 || len(p) != 1 || p[0].Severity != "error" {
		t.Fatalf("config.mk edited: exit %d %+v", code, fs)
	}
}

// TestPreprocessorGenerator: gen.c is made by running the C preprocessor over tmpl.c (cc -E), whose
// #include of tmpl.h no rule names, under Make and under CMake's Ninja. The fresh build has nothing to
// say (gen.d, gcc's depfile of gen.o, is not taken for gen.c's); after tmpl.h is edited and the build
// has run (nothing remakes gen.c), tmpl.h is an untracked input of app, through gen.c.
func TestPreprocessorGenerator(t *testing.T) {
	files := map[string]string{
		"main.c": "int g(void);\nint main(void) { return g(); }\n",
		"tmpl.c": "#include \"tmpl.h\"\nint g(void) { return GVAL; }\n",
		"tmpl.h": "#define GVAL 0\n",
	}
	for _, sys := range []string{"make", "cmake"} {
		t.Run(sys, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, files)
			bdir, buildCmd := dir, []string{"make", "-s"}
			if sys == "make" {
				needTools(t, "make", "cc")
				writeFiles(t, dir, map[string]string{"Makefile": "CFLAGS = -O2 -MMD\napp: main.o gen.o\n\t$(CC) -o $@ $^\ngen.c: tmpl.c\n\t$(CC) -E -P tmpl.c -o gen.c\n-include main.d gen.d\n"})
			} else {
				needTools(t, "cmake", "ninja", "cc")
				writeFiles(t, dir, map[string]string{"CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\nproject(p C)\nadd_custom_command(OUTPUT gen.c COMMAND ${CMAKE_C_COMPILER} -E -P ${CMAKE_SOURCE_DIR}/tmpl.c -o gen.c DEPENDS tmpl.c)\nadd_executable(app main.c gen.c)\n"})
				bdir = filepath.Join(dir, "build")
				shIn(t, dir, nil, "cmake", "-S", ".", "-B", bdir, "-G", "Ninja")
				buildCmd = []string{"cmake", "--build", bdir}
			}
			shIn(t, dir, nil, buildCmd[0], buildCmd[1:]...)
			if fs, code := checkSystems(t, bdir); code != 0 || len(find(fs, "unreadable-record", "")) != 0 {
				t.Fatalf("fresh build: exit %d %+v", code, fs)
			}
			editLater(t, filepath.Join(dir, "tmpl.h"), "#define GVAL 1\n")
			shIn(t, dir, nil, buildCmd[0], buildCmd[1:]...)
			fs, code := checkSystems(t, bdir)
			if u := find(fs, "untracked-input-changed", filepath.Join(dir, "tmpl.h")); code != 1 || len(u) != 1 || u[0].Severity != "error" {
				t.Fatalf("tmpl.h edited and built: exit %d %+v", code, fs)
			}
		})
	}
}

// TestNinjaMultiConfig: CMake's Ninja Multi-Config writes build.ninja (the default configuration,
// Debug) and build-<Config>.ninja for each; after an edit only Debug is rebuilt, and build/Release/app
// is stale: the error names it, its fix builds that configuration, and run refuses it. Both built,
// nothing is said (build-Debug.ninja adds no second copy of Debug's steps).
func TestNinjaMultiConfig(t *testing.T) {
	needTools(t, "cmake", "ninja", "cc")
	dir := t.TempDir()
	bdir := filepath.Join(dir, "build")
	writeFiles(t, dir, map[string]string{
		"CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\nproject(p C)\nadd_executable(app main.c)\n",
		"main.c":         "int main(void) { return 0; }\n",
	})
	shIn(t, dir, nil, "cmake", "-S", ".", "-B", bdir, "-G", "Ninja Multi-Config")
	shIn(t, dir, nil, "cmake", "--build", bdir, "--config", "Debug")
	shIn(t, dir, nil, "cmake", "--build", bdir, "--config", "Release")
	if fs, code := checkSystems(t, bdir); code != 0 || len(fs) != 0 {
		t.Fatalf("both configurations built: exit %d %+v", code, fs)
	}
	editLater(t, filepath.Join(dir, "main.c"), "int f(void) { return 1; }\n")
	shIn(t, dir, nil, "cmake", "--build", bdir, "--config", "Debug")
	fs, code := checkSystems(t, bdir)
	rel := filepath.Join(bdir, "Release", "app")
	var found bool
	for _, f := range fs {
		if f.Severity == "error" && slices.Contains(f.Roots, rel) {
			found = true
			if !strings.Contains(f.Fix, "--config Release") {
				t.Errorf("fix %q does not build Release", f.Fix)
			}
		}
		if slices.Contains(f.Roots, filepath.Join(bdir, "Debug", "app")) {
			t.Errorf("a finding on the rebuilt Debug/app: %+v", f)
		}
	}
	if code != 1 || !found {
		t.Fatalf("Release/app stale: exit %d %+v", code, fs)
	}
	if _, stderr, code := run(t, "run", "--", rel); code != 125 {
		t.Errorf("run -- Release/app: exit %d, want 125: %s", code, stderr)
	}
	// build-Release.ninja gone or damaged: Release/app is not checked, and that is said, naming it.
	manifest := filepath.Join(bdir, "build-Release.ninja")
	good, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for what, damage := range map[string]func() error{
		"removed":  func() error { return nil },
		"a folder": func() error { return os.Mkdir(manifest, 0o755) },
		"unparsable": func() error {
			return os.WriteFile(manifest, append(append([]byte{}, good...), "build bad: $\n"...), 0o644)
		},
	} {
		if err := os.RemoveAll(manifest); err != nil {
			t.Fatal(err)
		}
		if err := damage(); err != nil {
			t.Fatal(err)
		}
		fs, _ := checkSystems(t, bdir)
		if w := find(fs, "unreadable-record", manifest); len(w) != 1 || !strings.Contains(w[0].Message, "not checked") {
			t.Errorf("build-Release.ninja %s: want an unreadable-record warning naming it, got %+v", what, fs)
		}
	}
	os.RemoveAll(manifest)
	if err := os.WriteFile(manifest, good, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMakeFixNamesNonDefaultTarget: make's default goal (the first target) builds app1 only; both
// programs link util.o; after an edit of util.c and a plain make, app2 is stale and only a make
// naming it relinks it: the fix names it, and running the fix clears the error.
func TestMakeFixNamesNonDefaultTarget(t *testing.T) {
	needTools(t, "make", "cc")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"util.c":   "int util(int x) { return x * 3; }\n",
		"m1.c":     "int util(int);\nint main(int c, char **v) { return util(c) - 3; }\n",
		"m2.c":     "int util(int);\nint main(int c, char **v) { return util(c) - 3; }\n",
		"Makefile": "CFLAGS = -MMD -MP\napp1: m1.o util.o\n\tcc -o $@ $^\napp2: m2.o util.o\n\tcc -o $@ $^\n-include *.d\n",
	})
	shIn(t, dir, nil, "make", "-s", "app1", "app2")
	editLater(t, filepath.Join(dir, "util.c"), "int util2(void) { return 0; }\n")
	shIn(t, dir, nil, "make", "-s")
	fs, code := checkSystems(t, dir)
	app2 := filepath.Join(dir, "app2")
	var fix string
	for _, f := range fs {
		if f.Severity == "error" && slices.Contains(f.Subjects, app2) {
			fix = f.Fix
		}
	}
	if code != 1 || fix != "make -C "+dir+" app2" {
		t.Fatalf("app2 left stale by the default goal: exit %d, fix %q, %+v", code, fix, fs)
	}
	shIn(t, dir, nil, "make", "-s", "app2")
	if fs, code := checkSystems(t, dir); code != 0 {
		t.Fatalf("after the fix: exit %d %+v", code, fs)
	}
}

// TestCargoFixNamesPackageOutsideDefaultMembers: a workspace whose default-members is a; both a and b
// use common; after an edit of common and a plain cargo build, b is stale and only a build naming it
// rebuilds it: every fix for b names it (-p b), and running the fix clears the errors.
func TestCargoFixNamesPackageOutsideDefaultMembers(t *testing.T) {
	need.RealBuild(t)
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":        "[workspace]\nmembers = [\"a\", \"b\", \"common\"]\ndefault-members = [\"a\"]\nresolver = \"2\"\n",
		"common/Cargo.toml": "[package]\nname = \"common\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"common/src/lib.rs": "pub fn k(x: u32) -> u32 { x * 3 }\n",
		"a/Cargo.toml":      "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ncommon = { path = \"../common\" }\n",
		"a/src/main.rs":     "fn main() { println!(\"{}\", common::k(1)); }\n",
		"b/Cargo.toml":      "[package]\nname = \"b\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ncommon = { path = \"../common\" }\n",
		"b/src/main.rs":     "fn main() { println!(\"{}\", common::k(2)); }\n",
	})
	p.Cargo("build", "--workspace")
	p.Edit("common/src/lib.rs", "x * 3", "x * 4")
	p.Cargo("build")
	fs, code := checkSystems(t, p.Dir)
	b := p.Path("target/debug/b")
	n := 0
	for _, f := range fs {
		if f.Severity == "error" {
			n++
			if !strings.HasSuffix(f.Fix, " -p b") {
				t.Errorf("fix of %s %v: %q", f.Rule, f.Subjects, f.Fix)
			}
		}
	}
	if code != 1 || n == 0 || len(find(fs, "binary-older-than-input", b)) == 0 {
		t.Fatalf("b left stale by the default members: exit %d %+v", code, fs)
	}
	p.Cargo("build", "-p", "b")
	if fs, code := checkSystems(t, p.Dir); code != 0 {
		t.Fatalf("after the fix: exit %d %+v", code, fs)
	}
}

// TestCargoConfigurationChanged: Cargo reads its manifests and config.toml on every build. After a
// check has kept their settings: a comment, a package's description, the release profile of a debug
// build or another platform's flags edited, no finding; an [env] variable the code does not read, or
// the profile of dependencies (there are none), a warning (whether Cargo redoes anything is not told,
// and a build that redoes nothing leaves no trace); the dev profile's opt-level, the default features,
// config.toml's rustflags or an [env] variable env! reads edited with no build since, a
// pending-rebuild error naming the file (Cargo rebuilds for them); after cargo build, nothing. A file
// edited with nothing kept to compare with is a warning that says so.
func TestCargoConfigurationChanged(t *testing.T) {
	need.RealBuild(t)
	if _, set := os.LookupEnv("LEVEL"); set {
		t.Skip("LEVEL is set in the environment: the force row below needs it unset")
	}
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"cfgd\"\nversion = \"0.1.0\"\nedition = \"2021\"\ndescription = \"one\"\n\n" +
			"[features]\ndefault = [\"fast\"]\nfast = []\n\n[profile.dev]\nopt-level = 0\n\n[profile.release]\nlto = false\n",
		".cargo/config.toml": "[build]\nrustflags = []\n\n[env]\nLEVEL = \"1\"\nUNREAD = \"1\"\n",
		"src/main.rs":        "fn main() { println!(\"{} {}\", cfg!(feature = \"fast\"), env!(\"LEVEL\")); }\n",
	})
	p.Cargo("build")
	manifest := p.Path("Cargo.toml")
	if fs, code := checkSystems(t, p.Dir); code != 0 || len(find(fs, "pending-rebuild", "")) != 0 {
		t.Fatalf("fresh build: exit %d %+v", code, fs)
	}
	for _, e := range []struct {
		file, old, new string
		want           string // the severity of the pending-rebuild naming the file, "" for none
	}{
		{"Cargo.toml", "opt-level = 0\n", "opt-level = 0 # still none\n", ""},
		{"Cargo.toml", "description = \"one\"", "description = \"two\"", ""},
		{"Cargo.toml", "lto = false", "lto = true", ""}, // another profile's
		{".cargo/config.toml", "[env]", "[target.x86_64-pc-windows-msvc]\nrustflags = [\"-Ctarget-feature=+crt-static\"]\n\n[env]", ""},
		{".cargo/config.toml", "UNREAD = \"1\"", "UNREAD = \"2\"", "warning"},                                             // nothing the program's code reads
		{"Cargo.toml", "[profile.release]", "[profile.dev.package.\"*\"]\nopt-level = 1\n\n[profile.release]", "warning"}, // dependencies only
		{"Cargo.toml", "opt-level = 0", "opt-level = 2", "error"},
		{"Cargo.toml", "default = [\"fast\"]", "default = []", "error"},
		{".cargo/config.toml", "rustflags = []", "rustflags = [\"--cfg\", \"fast2\"]", "error"},
		{".cargo/config.toml", "LEVEL = \"1\"", "LEVEL = \"2\"", "error"}, // env!("LEVEL")
		// The same value in another form, and force on a variable this environment does not set:
		// Cargo's build is Fresh.
		{".cargo/config.toml", "LEVEL = \"2\"", "LEVEL = { value = \"2\" }", ""},
		{".cargo/config.toml", "LEVEL = { value = \"2\" }", "LEVEL = { value = \"2\", force = true }", ""},
	} {
		p.Edit(e.file, e.old, e.new)
		when := time.Now().Add(2 * time.Second)
		os.Chtimes(p.Path(e.file), when, when)
		fs, _ := checkSystems(t, p.Dir)
		pend := find(fs, "pending-rebuild", p.Path(e.file))
		if e.want == "" {
			if len(pend) != 0 {
				t.Fatalf("%s: %q -> %q: %+v", e.file, e.old, e.new, fs)
			}
			continue
		}
		if len(pend) != 1 || pend[0].Severity != e.want {
			t.Fatalf("%s: %q -> %q with no build: want a %s, got %+v", e.file, e.old, e.new, e.want, fs)
		}
		if e.want != "error" {
			continue // Cargo finds nothing to redo and leaves no trace of the build: the warning stays
		}
		time.Sleep(time.Until(when) + 10*time.Millisecond)
		if out := p.Cargo("build", "-v"); !strings.Contains(out, "Running") {
			t.Fatalf("premise: cargo did not rebuild for %q -> %q:\n%s", e.old, e.new, out)
		}
		if fs, code := checkSystems(t, p.Dir); len(find(fs, "pending-rebuild", p.Path(e.file))) != 0 {
			t.Fatalf("%s after cargo build: exit %d %+v", e.file, code, fs)
		}
	}
	// Nothing kept: a fresh state folder, then an edit.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	p.Edit("Cargo.toml", "opt-level = 2", "opt-level = 3")
	when := time.Now().Add(2 * time.Second)
	os.Chtimes(manifest, when, when)
	fs, _ := checkSystems(t, p.Dir)
	if w := find(fs, "pending-rebuild", manifest); len(w) != 1 || w[0].Severity != "warning" {
		t.Fatalf("with nothing kept: %+v", fs)
	}
}

// TestObjectCompiledWithOtherFlags: built once with `make CFLAGS=...` (and, for CMake's Unix Makefiles,
// `make C_FLAGS=...`, whose objects sit in a subfolder the command cds into), then a plain make that
// redoes nothing: the objects' DWARF producer says -O0, the command now -O2, an error naming the
// object; the clean build before had no finding, and the fix (rm the object, make) clears it.
func TestObjectCompiledWithOtherFlags(t *testing.T) {
	needTools(t, "make", "cc")
	t.Run("make", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{
			"Makefile": "CFLAGS = -O2 -g -MMD -MP\napp: main.o\n\t$(CC) -o $@ $^\n-include main.d\n",
			"main.c":   "int main(int c, char **v) { int s = 0; for (int i = 0; i < c * 100; i++) s += i; return s == 0; }\n",
		})
		shIn(t, dir, nil, "make", "-s")
		if fs, code := checkSystems(t, dir, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
			t.Fatalf("clean build: exit %d %+v", code, fs)
		}
		obj := filepath.Join(dir, "main.o")
		os.Remove(obj)
		shIn(t, dir, nil, "make", "-s", "CFLAGS=-O0 -g -MMD -MP")
		objectOtherFlags(t, dir, obj, "make", "-s")
	})
	t.Run("cmake", func(t *testing.T) {
		needTools(t, "cmake")
		root := t.TempDir()
		src, bld := filepath.Join(root, "src"), filepath.Join(root, "build")
		writeFiles(t, src, map[string]string{
			"CMakeLists.txt":     "cmake_minimum_required(VERSION 3.10)\nproject(p C)\nadd_subdirectory(lib)\nadd_executable(app main.c)\ntarget_link_libraries(app k)\n",
			"lib/CMakeLists.txt": "add_library(k STATIC k.c)\n",
			"lib/k.c":            "int k(int x) { int s = 0; for (int i = 0; i < x; i++) s += i; return s; }\n",
			"main.c":             "int k(int);\nint main(int c, char **v) { return k(c) != 0; }\n",
		})
		shIn(t, root, nil, "cmake", "-S", src, "-B", bld, "-G", "Unix Makefiles", "-DCMAKE_BUILD_TYPE=RelWithDebInfo")
		shIn(t, root, nil, "cmake", "--build", bld)
		if fs, code := checkSystems(t, bld, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
			t.Fatalf("clean build: exit %d %+v", code, fs)
		}
		obj := filepath.Join(bld, "lib", "CMakeFiles", "k.dir", "k.c.o")
		os.Remove(obj)
		shIn(t, bld, nil, "make", "-s", "C_FLAGS=-O0 -g")
		objectOtherFlags(t, bld, obj, "make", "-s")
	})
}

func objectOtherFlags(t *testing.T, dir, obj string, build ...string) {
	t.Helper()
	f, err := binfmt.OpenELF(obj)
	if err != nil {
		t.Fatal(err)
	}
	cus, err := f.CompileUnits()
	f.Close()
	if err != nil || len(cus) == 0 || !strings.Contains(cus[0].Producer, " -O0") {
		t.Fatalf("premise: %s's producer does not say -O0: %v %+v", obj, err, cus)
	}
	shIn(t, dir, nil, build[0], build[1:]...)
	if out := shIn(t, dir, nil, "make", "-n"); strings.Contains(out, obj) {
		t.Fatalf("premise: a plain make redoes %s:\n%s", obj, out)
	}
	fs, code := checkSystems(t, dir)
	u := find(fs, "untracked-input-changed", obj)
	if code != 1 || len(u) != 1 || u[0].Severity != "error" || !strings.Contains(u[0].Message, "compiled with -O0, but the command") ||
		!strings.Contains(u[0].Message, "now gives -O2") || !strings.HasPrefix(u[0].Fix, "rm ") {
		t.Fatalf("object built with -O0: exit %d %+v", code, fs)
	}
	shIn(t, dir, nil, "sh", "-c", u[0].Fix[:strings.Index(u[0].Fix, " (")])
	if fs, code := checkSystems(t, dir); code != 0 {
		t.Fatalf("after the fix %q: exit %d %+v", u[0].Fix, code, fs)
	}
}

// TestInstalledCopy: a CMake (Ninja and Unix Makefiles) or Meson build installed to a prefix beside it;
// after the install every copy is current; an edit and a build with no install leave the installed
// program older than the build's (binary-older-than-input on the installed copy, fix the install
// command), and `run` of the installed program finds the build that installed it and refuses it;
// installing again clears it. A shared library the program loads is installed too, with no finding.
func TestInstalledCopy(t *testing.T) {
	for _, c := range []struct{ name, gen string }{{"cmake-ninja", "Ninja"}, {"cmake-make", "Unix Makefiles"}, {"meson", ""}} {
		t.Run(c.name, func(t *testing.T) {
			if c.gen == "" {
				needTools(t, "meson", "ninja", "cc")
			} else {
				needTools(t, "cmake", "ninja", "make", "cc")
			}
			root := t.TempDir()
			bld, inst := filepath.Join(root, "build"), filepath.Join(root, "inst")
			var setup, build, installCmd []string
			if c.gen == "" {
				writeFiles(t, root, map[string]string{
					"meson.build": "project('p', 'c')\nk = shared_library('k', 'k.c', install: true)\nexecutable('app', 'main.c', link_with: k, install: true)\n",
				})
				setup = []string{"meson", "setup", bld, "--prefix=" + inst}
				build, installCmd = []string{"ninja", "-C", bld}, []string{"meson", "install", "-C", bld}
			} else {
				writeFiles(t, root, map[string]string{
					"CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(p C)\nadd_library(k SHARED k.c)\nadd_executable(app main.c)\n" +
						"target_link_libraries(app k)\ninstall(TARGETS app k)\n",
				})
				setup = []string{"cmake", "-S", root, "-B", bld, "-G", c.gen, "-DCMAKE_INSTALL_PREFIX=" + inst}
				build, installCmd = []string{"cmake", "--build", bld}, []string{"cmake", "--install", bld}
			}
			writeFiles(t, root, map[string]string{
				"k.c":    "int k(int x) { return x * 3; }\n",
				"main.c": "int k(int);\nint main(int c, char **v) { return k(c) != 3; }\n",
			})
			shIn(t, root, nil, setup[0], setup[1:]...)
			shIn(t, root, nil, build[0], build[1:]...)
			shIn(t, root, nil, installCmd[0], installCmd[1:]...)
			app := filepath.Join(inst, "bin", "app")
			if _, err := os.Stat(app); err != nil {
				t.Fatalf("premise: nothing installed at %s: %v", app, err)
			}
			fs, code := checkSystems(t, bld, "--fail-on", "warning", "-v")
			if code != 0 || len(fs) != 0 {
				t.Fatalf("after the install: exit %d %+v", code, fs)
			}
			// The build and the install copy whole-second mtimes: the edit lands in a later second.
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
			writeFiles(t, root, map[string]string{"main.c": "int k(int);\nint main(int c, char **v) { return k(c) != 3 + 0; }\n"})
			shIn(t, root, nil, build[0], build[1:]...)
			fs, code = checkSystems(t, bld)
			o := find(fs, "binary-older-than-input", app)
			if code != 1 || len(o) != 1 || o[0].Severity != "error" || o[0].Fix != strings.Join(installCmd, " ") ||
				!strings.Contains(o[0].Message, "was installed at") || len(fs) != 1 {
				t.Fatalf("rebuilt, not installed: exit %d %+v", code, fs)
			}
			t.Run("run", func(t *testing.T) { // its own test: runIn's folder change ends with it
				if _, stderr, code := runIn(t, root, "run", "--ledger", filepath.Join(root, "l.db"), "-q", "--", app); code != 125 || !strings.Contains(stderr, "binary-older-than-input") {
					t.Fatalf("run of the installed copy: exit %d %s", code, stderr)
				}
			})
			shIn(t, root, nil, installCmd[0], installCmd[1:]...)
			if fs, code := checkSystems(t, bld, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
				t.Fatalf("installed again: exit %d %+v", code, fs)
			}
			// The shared library: the installed copy is what programs load from the prefix.
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
			writeFiles(t, root, map[string]string{"k.c": "int k(int x) { return x * 3 + 0; }\n"})
			shIn(t, root, nil, build[0], build[1:]...)
			fs, code = checkSystems(t, bld)
			lib := 0
			for _, f := range fs {
				if f.Rule != "binary-older-than-input" || f.Severity != "error" || f.Fix != strings.Join(installCmd, " ") {
					t.Fatalf("library rebuilt, not installed: %+v", f)
				}
				if strings.HasPrefix(f.Subjects[0], inst+"/lib") {
					lib++
				}
			}
			if code != 1 || lib != 1 {
				t.Fatalf("library rebuilt, not installed: exit %d %+v", code, fs)
			}
		})
	}
}

// TestMakeIncludedMakefileNoBaseline: config.mk, which the Makefile includes for its flags, edited after
// the build, with no check before the edit: nothing recorded the command main.o ran, so whether the
// edit changed it cannot be told, a warning naming config.mk (one for both steps), again at the next
// check (the command now is not recorded as the one the run ran); after make -B, nothing.
func TestMakeIncludedMakefileNoBaseline(t *testing.T) {
	needTools(t, "make", "cc")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Makefile":  "include config.mk\napp: main.o\n\tcc -o app main.o\nmain.o: main.c\n\tcc $(CFLAGS) -MMD -MP -c main.c -o main.o\n-include main.d\n",
		"config.mk": "CFLAGS += -DVAL=1\n",
		"main.c":    "int main(void) { return VAL - 1; }\n",
	})
	shIn(t, dir, nil, "make", "-s")
	cfg := filepath.Join(dir, "config.mk")
	edited := editLater(t, cfg, "CFLAGS += -DVAL=2\n")
	if out := shIn(t, dir, nil, "make", "-n"); strings.Contains(out, "cc ") {
		t.Fatalf("premise: make would redo something:\n%s", out)
	}
	for i := 0; i < 2; i++ {
		fs, code := checkSystems(t, dir)
		u := find(fs, "untracked-input-changed", cfg)
		if code != 0 || len(fs) != 1 || len(u) != 1 || u[0].Severity != "warning" || !strings.Contains(u[0].Message, "cannot be told") {
			t.Fatalf("check %d: exit %d %+v", i+1, code, fs)
		}
	}
	time.Sleep(time.Until(time.Unix(0, edited)) + 10*time.Millisecond) // the rebuild comes after the edit's mtime
	shIn(t, dir, nil, "make", "-s", "-B")
	if fs, code := checkSystems(t, dir, "--fail-on", "warning"); code != 0 || len(fs) != 0 {
		t.Fatalf("after make -B: exit %d %+v", code, fs)
	}
}
