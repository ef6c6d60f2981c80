package trace_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/trace"
)

func needStrace(t *testing.T) {
	t.Helper()
	if _, err := trace.FindStrace(""); err != nil {
		t.Skipf("strace is not installed (apt-get install strace): %v", err)
	}
}

func runTrace(t *testing.T, opt trace.Options) (*trace.Result, *trace.Trace) {
	t.Helper()
	if opt.StateDir == "" {
		opt.StateDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := trace.Run(ctx, opt)
	if err != nil {
		t.Fatalf("Run %q: %v", opt.Command, err)
	}
	tr, err := trace.Load(opt.StateDir, opt.BuildDir)
	if err != nil {
		t.Fatal(err)
	}
	return res, tr
}

// A failed build is stored marked failed with its status; a path with a newline parses; a daemon the
// build leaves running (holding stdout and stderr open) does not keep Run waiting.
func TestRunFailedBuildNewlinePathDaemon(t *testing.T) {
	needStrace(t)
	dir := t.TempDir()
	odd := filepath.Join(dir, "new\nline \"q\"\x01.txt")
	if err := os.WriteFile(odd, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	begin := time.Now()
	res, tr := runTrace(t, trace.Options{
		Command:  []string{"sh", "-c", `cat new*.txt >/dev/null; sleep 60 & exit 7`},
		Dir:      dir,
		BuildDir: dir,
		Stdout:   out, Stderr: out,
	})
	took := time.Since(begin)
	for _, p := range tr.Processes {
		if p.Running && p.PID > 0 && strings.HasSuffix(p.Exe(), "/sleep") {
			_ = syscall.Kill(p.PID, syscall.SIGKILL) // the daemon this test started
		}
	}
	if took > 5*time.Second {
		t.Errorf("Run took %v with a daemon left running", took)
	}
	if res.ExitStatus != 7 || tr.ExitStatus != 7 || !tr.Failed {
		t.Errorf("status: result %d, stored %d failed %v; want 7, failed", res.ExitStatus, tr.ExitStatus, tr.Failed)
	}
	if res.Detached < 1 {
		t.Errorf("no process reported left running: %+v", res)
	}
	found := false
	for _, a := range tr.FileAccesses(odd) {
		if a.Op == "openat" && a.Errno == "" && a.Mode&trace.ModeRead != 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("no successful open of %q in the trace", odd)
	}
	t.Logf("%v: %d lines, %d processes, %d accesses, %d bytes, %d detached", took, res.Lines, res.Processes, res.Accesses, res.Bytes, res.Detached)
}

func TestRunSignalStatusAndMissing(t *testing.T) {
	needStrace(t)
	dir := t.TempDir()
	res, tr := runTrace(t, trace.Options{Command: []string{"sh", "-c", "kill -SEGV $$"}, Dir: dir, BuildDir: dir})
	if res.ExitStatus != 128+11 || tr.Processes[0].Signal != "SIGSEGV" {
		t.Errorf("killed by SIGSEGV: status %d, process %+v", res.ExitStatus, tr.Processes[0])
	}
	r, err := trace.Run(context.Background(), trace.Options{Command: []string{"no-such-build-tool-xyz"}, Dir: dir, StateDir: t.TempDir()})
	if err == nil || r == nil || r.ExitStatus != 127 || !strings.Contains(err.Error(), "no-such-build-tool-xyz") {
		t.Errorf("missing command: %+v, %v", r, err)
	}
	_, err = trace.Run(context.Background(), trace.Options{Command: []string{"true"}, Strace: "/nonexistent/strace", StateDir: t.TempDir()})
	if !errors.Is(err, trace.ErrNoStrace) || !strings.Contains(err.Error(), "apt-get install strace") {
		t.Errorf("no strace: %v", err)
	}
}

// A build that is found but cannot run (no execute permission, a folder) is 126, as a shell says, and
// the trace stored before stays; a strace that writes nothing is its failure (exit 2 in the CLI, no
// "<nil>"), not "BUILD not found".
func TestRunCannotExecute(t *testing.T) {
	needStrace(t)
	dir, state := t.TempDir(), t.TempDir()
	runTrace(t, trace.Options{Command: []string{"true"}, Dir: dir, BuildDir: dir, StateDir: state})
	stored, err := os.ReadFile(trace.Path(state, dir))
	if err != nil {
		t.Fatalf("the premise fails: no trace stored: %v", err)
	}
	script := filepath.Join(dir, "build.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"./build.sh", "./"} {
		r, err := trace.Run(context.Background(), trace.Options{Command: []string{cmd}, Dir: dir, BuildDir: dir, StateDir: state})
		if err == nil || r == nil || r.ExitStatus != 126 || !strings.Contains(err.Error(), "cannot execute") {
			t.Errorf("%s: %+v, %v (want 126, cannot execute)", cmd, r, err)
		}
	}
	if now, _ := os.ReadFile(trace.Path(state, dir)); !bytes.Equal(now, stored) {
		t.Error("a build that never ran replaced the stored trace")
	}
	fake := filepath.Join(t.TempDir(), "strace")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := trace.Run(context.Background(), trace.Options{Command: []string{"true"}, Dir: dir, BuildDir: dir, StateDir: state, Strace: fake})
	if err == nil || r != nil || strings.Contains(err.Error(), "<nil>") || !strings.Contains(err.Error(), "wrote no trace") {
		t.Errorf("a strace that writes nothing: %+v, %v", r, err)
	}
	if now, _ := os.ReadFile(trace.Path(state, dir)); !bytes.Equal(now, stored) {
		t.Error("a strace that wrote nothing replaced the stored trace")
	}
}

const shapesBuild = `use std::{env, fs, path::PathBuf, process::Command};

fn main() {
    // Declares one unrelated file; reads resources/VERSION and looks for nvcc without saying so.
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let version = fs::read_to_string("resources/VERSION").unwrap();
    let cuda = Command::new("nvcc").arg("--version").output().is_ok();
    fs::write(out.join("gen.rs"), format!("pub const VERSION: &str = {:?};\npub const CUDA: bool = {};\n", version.trim(), cuda)).unwrap();
    // A header no depfile names: no -MD, no -g.
    let obj = out.join("native.o");
    assert!(Command::new("cc").args(["-c", "-O2", "-fPIC", "-Iinclude", "native/native.c", "-o"]).arg(&obj).status().unwrap().success());
    let lib = out.join("libnative.a");
    let _ = fs::remove_file(&lib);
    assert!(Command::new("ar").arg("crs").arg(&lib).arg(&obj).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=native");
}
`

// The two shapes of issue 10 and the undeclared header, on a real cargo build traced with a PATH that
// holds cc, ar, as, ld, cargo and rustc but not nvcc; in both of Cargo's build-dir layouts: the traced
// build-script process and the rustc processes are tied to the units the records hold (the run's
// OUT_DIR, the compile unit, the unit hash of every rustc unit, bins without -C extra-filename in the
// new layout included).
func TestCargoBuildScriptShapes(t *testing.T) {
	needStrace(t)
	testutil.BothLayouts(t, testCargoBuildScriptShapes)
}

func testCargoBuildScriptShapes(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":        "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs":          shapesBuild,
		"src/main.rs":       "include!(concat!(env!(\"OUT_DIR\"), \"/gen.rs\"));\nextern \"C\" { fn native_val() -> i32; }\nfn main() { println!(\"{} {} {}\", VERSION, CUDA, unsafe { native_val() }); }\n",
		"native/native.c":   "#include \"hdr.h\"\nint native_val(void) { return HDR_VAL; }\n",
		"include/hdr.h":     "#define HDR_VAL 42\n",
		"resources/VERSION": "1.2.3\n",
	})
	bin := t.TempDir()
	for _, tool := range []string{"cargo", "rustc", "cc", "ar", "as", "ld"} {
		target, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s is required for this test: %v", tool, err)
		}
		if err := os.Symlink(target, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch k {
		case "PATH", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR", "CARGO_BUILD_BUILD_DIR", "RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS", "RUSTC_WRAPPER":
			continue
		}
		env = append(env, e)
	}
	argv, layoutEnv := p.CargoCommand("build")
	env = append(env, "PATH="+bin, "CARGO_NET_OFFLINE=true", "CARGO_TERM_COLOR=never")
	env = append(env, layoutEnv...)
	l, err := cargo.Locate(p.Dir, cargo.LocateOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "cargo.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	res, tr := runTrace(t, trace.Options{Command: argv, Dir: p.Dir, Env: env, BuildDir: l.BuildDir, Stdout: out, Stderr: out})
	if res.ExitStatus != 0 {
		b, _ := os.ReadFile(out.Name())
		t.Fatalf("cargo build failed under trace (%d):\n%s", res.ExitStatus, b)
	}
	t.Logf("%d lines, %d processes, %d accesses, store %d bytes, %v", res.Lines, res.Processes, res.Accesses, res.Bytes, res.Elapsed)

	var run *trace.BuildScriptRun
	for _, r := range tr.BuildScriptRuns() {
		if strings.HasPrefix(r.Unit, "shapes-") {
			run = &r
		}
	}
	if run == nil {
		t.Fatalf("no build-script run of shapes in the trace: %+v", tr.BuildScriptRuns())
	}
	if want := filepath.Join(l.BuildDir, "debug", "build"); !strings.HasPrefix(run.Proc.Exe(), want+"/") {
		t.Errorf("build script %s not under %s", run.Proc.Exe(), want)
	}

	// The records say which units these are: the run's OUT_DIR and the compile unit's folder in the
	// layout the build used, and every rustc process's hash a unit of the package.
	g, err := cargo.Read(l, cargo.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var runStep, compileStep *graph.Step
	hashes := map[string]string{} // unit hash → kind
	for _, s := range g.Steps {
		if s.Package != "shapes" {
			continue
		}
		if unit.PathsOf(g.BuildDir, s).New != p.NewLayout {
			t.Errorf("%s: read in the other layout (%s)", s.ID, unit.Of(s).FingerprintDir)
		}
		hashes[unit.Of(s).Hash] = string(s.Kind)
		switch s.Kind {
		case graph.ScriptRun:
			runStep = s
		case graph.ScriptCompile:
			compileStep = s
		}
	}
	if runStep == nil || compileStep == nil {
		t.Fatalf("no build-script run or compile of shapes in the records: %v", hashes)
	}
	if run.NewLayout != p.NewLayout || run.OutDir != runStep.Script().OutDir || run.Unit != compileStep.Name ||
		filepath.Dir(run.Proc.Exe()) != unit.PathsOf(g.BuildDir, compileStep).ScriptArtifacts || run.BuildDir != filepath.Join(l.BuildDir, "debug") {
		t.Errorf("build-script run %+v (exe %s), want OUT_DIR %s, unit %s in %s", *run, run.Proc.Exe(), runStep.Script().OutDir, compileStep.Name, unit.PathsOf(g.BuildDir, compileStep).ScriptArtifacts)
	}
	if run.Proc.RanAgain(run.Proc.Start) {
		t.Errorf("RanAgain before the run ended")
	}
	units := map[string]trace.RustcUnit{}
	for _, u := range tr.RustcUnits() {
		if u.OutDir == "" { // Cargo's target-info probe, `rustc - --crate-name ___ --print=file-names …`: no unit
			continue
		}
		units[u.CrateName] = u
		if u.Hash == "" || hashes[u.Hash] == "" || u.NewLayout != p.NewLayout {
			t.Errorf("rustc unit %s (out-dir %s, extra-filename %q): hash %q is not a unit of the records %v (new layout %v)", u.CrateName, u.OutDir, u.ExtraFilename, u.Hash, hashes, u.NewLayout)
		}
	}
	if len(units) != 2 || units["shapes"].Hash == "" || !strings.HasPrefix(units["build_script_build"].ExtraFilename, "-") {
		t.Errorf("rustc units: %+v", units)
	}
	// The new layout gives the bin no -C extra-filename: its hash comes from the --out-dir.
	if p.NewLayout != (units["shapes"].ExtraFilename == "") {
		t.Errorf("bin shapes: extra-filename %q in layout new=%v", units["shapes"].ExtraFilename, p.NewLayout)
	}

	// Shape 1: the data file the script reads.
	version := p.Path("resources/VERSION")
	read := false
	for _, a := range tr.ReadsOf(run.Proc.ID) {
		if a.Path == version && a.Errno == "" && strings.HasPrefix(a.Op, "open") {
			read = a.Proc == run.Proc.ID
		}
	}
	if !read {
		t.Errorf("the build-script process does not read %s in the trace", version)
	}

	// Shape 2: nvcc looked up on PATH and not found; then nvcc appears on PATH.
	var nvcc *trace.Lookup
	for _, lk := range tr.PathLookups(run.Proc.ID) {
		if lk.Name == "nvcc" {
			nvcc = &lk
		}
	}
	if nvcc == nil {
		t.Fatalf("no PATH lookup of nvcc under the build script: %+v", tr.PathLookups(run.Proc.ID))
	}
	// Cargo's rustup proxy puts its own folder first on the build script's PATH.
	triedBin := false
	for _, a := range nvcc.Tried {
		triedBin = triedBin || a.Dir == bin && a.Errno == "ENOENT"
	}
	if nvcc.Found != "" || !triedBin || !strings.Contains(":"+nvcc.PATH+":", ":"+bin+":") {
		t.Errorf("nvcc lookup: %+v", nvcc)
	}
	if now := nvcc.Now(); now != "" {
		t.Errorf("nvcc found now (%s) before it was put on PATH", now)
	}
	if real, err := exec.LookPath("nvcc"); err == nil {
		if err := os.Symlink(real, filepath.Join(bin, "nvcc")); err != nil {
			t.Fatal(err)
		}
		if now := nvcc.Now(); now != filepath.Join(bin, "nvcc") {
			t.Errorf("after nvcc appeared on PATH, Now() = %q", now)
		}
		if now := nvcc.NowWith(filepath.Dir(real)); now != real {
			t.Errorf("with nvcc's folder on PATH, NowWith = %q", now)
		}
	} else {
		t.Logf("nvcc is not installed: the appearing-on-PATH half is not checked")
	}

	// The header cc1 opens, named by no depfile.
	hdr := p.Path("include/hdr.h")
	opened := false
	for _, id := range tr.Tree(run.Proc.ID) {
		pr := &tr.Processes[id]
		if filepath.Base(pr.Exe()) != "cc1" {
			continue
		}
		for _, a := range tr.AccessesOf(id) {
			if a.Path == hdr && a.Op == "openat" && a.Errno == "" {
				opened = true
			}
		}
	}
	if !opened {
		t.Errorf("no cc1 process under the build script opens %s", hdr)
	}
	if got := tr.ProcessesUnder(p.Dir); len(got) == 0 {
		t.Errorf("ProcessesUnder(%s) is empty", p.Dir)
	}
}
