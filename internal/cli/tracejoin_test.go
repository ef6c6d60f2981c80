package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/trace"
)

// traceEnv prepares the process environment for `stalecheck trace -- cargo build` run in-process (the
// build inherits it): offline, no colour, no target-folder or flag settings of the caller.
func traceEnv(t *testing.T) {
	t.Helper()
	if _, err := trace.FindStrace(""); err != nil {
		t.Skipf("strace is not installed (apt-get install strace): %v", err)
	}
	runEnv(t)
	t.Setenv("CARGO_NET_OFFLINE", "true")
	t.Setenv("CARGO_TERM_COLOR", "never")
	for _, k := range []string{"CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR", "CARGO_BUILD_BUILD_DIR", "RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "RUSTC_WRAPPER"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// tracedBuild runs `stalecheck trace -- ARGS…` in dir and fails the test unless it exits 0.
func tracedBuild(t *testing.T, dir string, args ...string) {
	t.Helper()
	out, stderr, code := runIn(t, dir, append([]string{"trace", "--"}, args...)...)
	if code != 0 {
		t.Fatalf("trace %v: exit %d\n%s%s", args, code, out, stderr)
	}
}

// tracedCargo runs `stalecheck trace -- cargo ARGS…` in the project, in its build-dir layout
// (testutil.Project.CargoCommand; the layout's environment is set for the rest of the test, which the
// in-process build inherits), and fails the test unless it exits 0.
func tracedCargo(t *testing.T, p *testutil.Project, args ...string) {
	t.Helper()
	argv, env := p.CargoCommand(args...)
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		t.Setenv(k, v)
	}
	tracedBuild(t, p.Dir, argv...)
}

type traceCheckDoc struct {
	Findings []struct {
		Rule, Severity, Message, Fix string
		Subjects                     []string
		Evidence                     []struct {
			Kind, Path, How, Detail string
			MTimeNS                 int64 `json:"mtime_ns"`
		}
	}
	Notes []string
}

func tracedCheck(t *testing.T, dir string) (traceCheckDoc, string) {
	t.Helper()
	out, stderr, code := runIn(t, dir, "check", "--format", "json")
	if code == 2 {
		t.Fatalf("check: exit 2: %s", stderr)
	}
	var d traceCheckDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("check JSON: %v\n%s", err, out)
	}
	return d, out
}

// findingsOf returns the findings of rule whose subjects include path.
func (d traceCheckDoc) findingsOf(rule, path string) []int {
	var out []int
	for i, f := range d.Findings {
		if f.Rule != rule {
			continue
		}
		for _, s := range f.Subjects {
			if s == path || path == "" {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

const versionBuild = `use std::{env, fs, path::PathBuf, process::Command};

fn main() {
    // One unrelated declaration; reads resources/VERSION without declaring it (posit-dev/ark #777).
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let version = fs::read_to_string("resources/VERSION").unwrap();
    fs::write(out.join("gen.rs"), format!("pub const VERSION: &str = {:?};\n", version.trim())).unwrap();
    // cc called directly: no -MD, no -g, and an include folder named only at run time, so no record
    // (depfile, DWARF, logged command line, include scan) ties hdr.h to the run; only the trace does.
    let inc = format!("-I{}", ["inc", "lude"].concat());
    let obj = out.join("native.o");
    assert!(Command::new("cc").args(["-c", "-O2", "-fPIC", &inc, "native/native.c", "-o"]).arg(&obj).status().unwrap().success());
    let lib = out.join("libnative.a");
    let _ = fs::remove_file(&lib);
    assert!(Command::new("ar").arg("crs").arg(&lib).arg(&obj).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=native");
}
`

// Issue 10's first shape and the undeclared header, through `stalecheck trace` and `stalecheck check`:
// build.rs reads resources/VERSION into generated code and runs cc on a header no record names while
// declaring only build.rs. After an edit of either, Cargo says Fresh, and check reports
// untracked-input-changed with the trace as evidence; after the fix (touch build.rs, build again under
// trace) the finding is gone. A rebuild that is not traced makes the trace out of date for the run:
// check says so in a note and no longer uses it. In both of Cargo's build-dir layouts (the new one's
// build-script program is build/<pkg>/<hash>/out/build-script-build).
func TestTraceJoinDataFileAndHeader(t *testing.T) {
	traceEnv(t)
	testutil.BothLayouts(t, testTraceJoinDataFileAndHeader)
}

func testTraceJoinDataFileAndHeader(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":        "[package]\nname = \"tj\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs":          versionBuild,
		"src/main.rs":       "include!(concat!(env!(\"OUT_DIR\"), \"/gen.rs\"));\nextern \"C\" { fn native_val() -> i32; }\nfn main() { println!(\"{} {}\", VERSION, unsafe { native_val() }); }\n",
		"native/native.c":   "#include \"hdr.h\"\nint native_val(void) { return HDR_VAL; }\n",
		"include/hdr.h":     "#define HDR_VAL 42\n",
		"resources/VERSION": "1.2.3\n",
	})
	tracedCargo(t, p, "build")
	version, hdr := p.Path("resources/VERSION"), p.Path("include/hdr.h")
	d, raw := tracedCheck(t, p.Dir)
	if n := d.findingsOf("untracked-input-changed", ""); len(n) > 0 {
		t.Fatalf("healthy traced build: untracked-input-changed reported:\n%s", raw)
	}
	t.Logf("healthy check notes: %q", d.Notes)
	if !strings.Contains(strings.Join(d.Notes, "\n"), "joined to") {
		t.Errorf("no note says the trace was joined: %q", d.Notes)
	}

	for _, edit := range []struct{ rel, old, new string }{{"resources/VERSION", "1.2.3", "1.2.4"}, {"include/hdr.h", "42", "43"}} {
		p.Edit(edit.rel, edit.old, edit.new)
	}
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh tj") || strings.Contains(out, "Dirty") {
		t.Fatalf("the premise fails: cargo rebuilt tj:\n%s", out)
	}
	if out, _ := exec.Command(p.Path("target/debug/tj")).Output(); strings.TrimSpace(string(out)) != "1.2.3 42" {
		t.Fatalf("the premise fails: the binary prints %q, want the old 1.2.3 42", out)
	}
	d, raw = tracedCheck(t, p.Dir)
	for _, path := range []string{version, hdr} {
		fs := d.findingsOf("untracked-input-changed", path)
		if len(fs) != 1 {
			t.Fatalf("want one untracked-input-changed naming %s, got %d:\n%s", path, len(fs), raw)
		}
		f := d.Findings[fs[0]]
		if f.Severity != "error" {
			t.Errorf("%s: severity %s", path, f.Severity)
		}
		var input, tr bool
		for _, e := range f.Evidence {
			switch e.Kind {
			case "input":
				st, _ := os.Stat(path)
				input = e.Path == path && strings.Contains(e.How, "trace") && e.MTimeNS == st.ModTime().UnixNano()
			case "trace":
				tr = strings.HasSuffix(e.Path, ".trace") && e.MTimeNS > 0 && strings.Contains(e.Detail, "pid ")
			}
		}
		if !input || !tr {
			t.Errorf("%s: evidence lacks the traced input (how trace, mtime ns) or the trace record:\n%+v", path, f.Evidence)
		}
		t.Logf("%s: %s (fix: %s; evidence %+v)", filepath.Base(path), f.Message, f.Fix, f.Evidence[0])
	}

	// explain PATH says what the trace says about the file.
	out, stderr, code := runIn(t, p.Dir, "explain", "resources/VERSION")
	if code != 0 || !strings.Contains(out, "access(es) of the file") || !strings.Contains(out, "/build-script-build) read: openat at ") ||
		!strings.Contains(out, "in build script tj-") {
		t.Errorf("explain resources/VERSION: exit %d, no traced read by the build script:\n%s%s", code, out, stderr)
	}
	out, _, _ = runIn(t, p.Dir, "explain", "--format", "json", "resources/VERSION")
	var ej struct {
		Trace []struct {
			Accesses []struct {
				PID    int   `json:"pid"`
				TimeNS int64 `json:"time_ns"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &ej); err != nil || len(ej.Trace) != 1 || len(ej.Trace[0].Accesses) == 0 || ej.Trace[0].Accesses[0].PID == 0 {
		t.Errorf("explain --format json: no trace accesses (%v):\n%s", err, out)
	}

	// The fix: rerun the build script, under trace.
	p.Write("build.rs", versionBuild+"\n")
	tracedCargo(t, p, "build")
	if out, _ := exec.Command(p.Path("target/debug/tj")).Output(); strings.TrimSpace(string(out)) != "1.2.4 43" {
		t.Fatalf("after the fix the binary prints %q", out)
	}
	d, raw = tracedCheck(t, p.Dir)
	if n := d.findingsOf("untracked-input-changed", ""); len(n) > 0 {
		t.Fatalf("after the fix: untracked-input-changed still reported:\n%s", raw)
	}

	// An untraced rerun: the trace no longer describes the run, and check says so.
	p.Write("build.rs", versionBuild+"\n\n")
	p.Cargo("build")
	p.Edit("resources/VERSION", "1.2.4", "1.2.5")
	d, raw = tracedCheck(t, p.Dir)
	if !strings.Contains(strings.Join(d.Notes, "\n"), "is out of date for") {
		t.Errorf("no note says the trace is out of date for the rerun build script:\n%s", raw)
	}
	// (build.rs names resources/VERSION, so the edit is still found: by that clue, never by the trace.)
	for _, i := range d.findingsOf("untracked-input-changed", version) {
		for _, e := range d.Findings[i].Evidence {
			if strings.Contains(e.How, "trace") || strings.Contains(e.Detail, ".trace") {
				t.Errorf("a trace out of date was used:\n%s", raw)
			}
		}
	}
}

const nvccBuild = `use std::{env, fs, path::PathBuf, process::Command};

fn main() {
    // vortex-data/vortex #8707: kernels only when nvcc is on PATH, else an empty kernel table.
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let cuda = Command::new("nvcc").arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    fs::write(out.join("gen.rs"), format!("pub const KERNELS: usize = {};\n", if cuda { 1 } else { 0 })).unwrap();
}
`

// Issue 10's second shape (vortex): build.rs looks for nvcc on PATH and finds none; later a folder with
// nvcc is put first on PATH, and Cargo does not rerun the script. check, run with the new PATH, reports
// path-lookup-changed naming nvcc with both answers; after the script is rerun under trace with that
// PATH the finding is gone. Real nvcc (Debian's nvidia-cuda-toolkit) through a symlink.
func TestTraceJoinNvccAppearsOnPath(t *testing.T) {
	traceEnv(t)
	real, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skipf("nvcc is not installed (apt-get install nvidia-cuda-toolkit): %v", err)
	}
	// A PATH without nvcc: the tools cargo's build needs, by symlink.
	bin := t.TempDir()
	for _, tool := range []string{"cargo", "rustc", "cc", "ld", "as"} {
		target, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s is required for this test: %v", tool, err)
		}
		if err := os.Symlink(target, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":  "[package]\nname = \"kern\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs":    nvccBuild,
		"src/main.rs": "include!(concat!(env!(\"OUT_DIR\"), \"/gen.rs\"));\nfn main() { println!(\"{}\", KERNELS); }\n",
	})
	tracedCargo(t, p, "build")
	if d, raw := tracedCheck(t, p.Dir); len(d.findingsOf("path-lookup-changed", "")) > 0 {
		t.Fatalf("healthy traced build: path-lookup-changed reported:\n%s", raw)
	}

	// The CUDA toolkit goes on PATH.
	cuda := t.TempDir()
	nvcc := filepath.Join(cuda, "nvcc")
	if err := os.Symlink(real, nvcc); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", cuda+":"+bin)
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh kern") || strings.Contains(out, "Dirty") {
		t.Fatalf("the premise fails: cargo reran something:\n%s", out)
	}
	if out, _ := exec.Command(p.Path("target/debug/kern")).Output(); strings.TrimSpace(string(out)) != "0" {
		t.Fatalf("the premise fails: the binary prints %q, want the empty table 0", out)
	}
	d, raw := tracedCheck(t, p.Dir)
	fs := d.findingsOf("path-lookup-changed", nvcc)
	if len(fs) != 1 {
		t.Fatalf("want one path-lookup-changed naming %s, got %d:\n%s", nvcc, len(fs), raw)
	}
	f := d.Findings[fs[0]]
	var then, now, tr bool
	for _, e := range f.Evidence {
		switch e.Kind {
		case "then":
			then = e.Path == "" && strings.Contains(e.Detail, "none")
		case "now":
			now = e.Path == nvcc && strings.Contains(e.Detail, cuda)
		case "trace":
			tr = strings.HasSuffix(e.Path, ".trace") && e.MTimeNS > 0 && strings.Contains(e.Detail, bin)
		}
	}
	if f.Severity != "warning" || !strings.Contains(f.Message, "nvcc") || !then || !now || !tr {
		t.Errorf("finding lacks the severity, the name or both answers:\n%+v", f)
	}
	t.Logf("%s\nfix: %s", f.Message, f.Fix)

	// The fix: rerun the build script with the new PATH, under trace.
	p.Write("build.rs", nvccBuild+"\n")
	tracedCargo(t, p, "build")
	if out, _ := exec.Command(p.Path("target/debug/kern")).Output(); strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("after the fix the binary prints %q, want 1 (nvcc found)", out)
	}
	if d, raw := tracedCheck(t, p.Dir); len(d.findingsOf("path-lookup-changed", "")) > 0 {
		t.Fatalf("after the fix: path-lookup-changed still reported:\n%s", raw)
	}
}

// A header read by cc with no depfile and no -g, in a Make project: no record names inc/hdr.h (make
// knows main.c; nothing in the objects or on disk lists the header), so only the trace ties it to
// main.o. After an edit make says nothing to do, and check reports untracked-input-changed (make) on
// the trace's evidence; after `make -B` under trace it is gone.
func TestTraceJoinMakeHeaderWithoutDepfile(t *testing.T) {
	dir := makeTraceProject(t, map[string]string{
		"Makefile":  "app: main.o\n\tcc -o app main.o\n\nmain.o: main.c\n\tcc -c -O2 -Iinc main.c -o main.o\n",
		"main.c":    "#include \"hdr.h\"\nint main(void) { return HDR_VAL; }\n",
		"inc/hdr.h": "#define HDR_VAL 3\n",
	})
	tracedBuild(t, dir, "make")
	hdr := filepath.Join(dir, "inc/hdr.h")
	d, raw := tracedCheck(t, dir)
	if len(d.findingsOf("untracked-input-changed", "")) > 0 {
		t.Fatalf("healthy traced build: untracked-input-changed reported:\n%s", raw)
	}
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(hdr, []byte("#define HDR_VAL 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("make", "-q", "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("the premise fails: make -q says something is to do (%v):\n%s", err, out)
	}
	d, raw = tracedCheck(t, dir)
	fs := d.findingsOf("untracked-input-changed", hdr)
	if len(fs) != 1 {
		t.Fatalf("want one untracked-input-changed naming %s, got %d:\n%s", hdr, len(fs), raw)
	}
	f := d.Findings[fs[0]]
	var how string
	var tr bool
	for _, e := range f.Evidence {
		if e.Kind == "input" {
			how = e.How
		}
		tr = tr || e.Kind == "trace" && strings.Contains(e.Detail, "cc1")
	}
	if f.Severity != "error" || how != "trace" || !tr {
		t.Errorf("want an error known only by the trace (how %q), with cc1's read as evidence:\n%+v", how, f)
	}
	t.Logf("%s (fix: %s)", f.Message, f.Fix)
	tracedBuild(t, dir, "make", "-B")
	if d, raw := tracedCheck(t, dir); len(d.findingsOf("untracked-input-changed", "")) > 0 {
		t.Fatalf("after make -B: untracked-input-changed still reported:\n%s", raw)
	}
}

// An include-folder search whose answer differs now: cc -Ia -Ib finds hdr.h in b (cc1 tries a/hdr.h
// first and fails); a header of that name then appears in a. make -q still says nothing to do; check
// reports path-lookup-changed (make) naming both headers.
func TestTraceJoinIncludeFolderLookup(t *testing.T) {
	dir := makeTraceProject(t, map[string]string{
		"Makefile": "main.o: main.c\n\tcc -c -Ia -Ib main.c -o main.o\n",
		"main.c":   "#include \"hdr.h\"\nint f(void) { return HDR_VAL; }\n",
		"b/hdr.h":  "#define HDR_VAL 1\n",
		"a/README": "a is searched first (GCC drops an -I folder missing when it starts)\n",
	})
	tracedBuild(t, dir, "make")
	if d, raw := tracedCheck(t, dir); len(d.findingsOf("path-lookup-changed", "")) > 0 {
		t.Fatalf("healthy traced build: path-lookup-changed reported:\n%s", raw)
	}
	shadow := filepath.Join(dir, "a", "hdr.h")
	if err := os.MkdirAll(filepath.Dir(shadow), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shadow, []byte("#define HDR_VAL 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, raw := tracedCheck(t, dir)
	fs := d.findingsOf("path-lookup-changed", shadow)
	if len(fs) != 1 {
		t.Fatalf("want one path-lookup-changed naming %s, got %d:\n%s", shadow, len(fs), raw)
	}
	f := d.Findings[fs[0]]
	var then, now bool
	for _, e := range f.Evidence {
		then = then || e.Kind == "then" && e.Path == filepath.Join(dir, "b", "hdr.h")
		now = now || e.Kind == "now" && e.Path == shadow
	}
	if !then || !now || !strings.Contains(f.Message, "header hdr.h") {
		t.Errorf("finding lacks both answers:\n%+v", f)
	}
	t.Logf("%s (fix: %s)", f.Message, f.Fix)
}

// makeTraceProject writes a Make project's files (relative path → content) into a fresh folder for a
// traced build; it skips when strace, make or cc is missing.
func makeTraceProject(t *testing.T, files map[string]string) string {
	t.Helper()
	traceEnv(t)
	for _, tool := range []string{"make", "cc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	dir := t.TempDir()
	for rel, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
