package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
// check says so in a note and no longer uses it.
func TestTraceJoinDataFileAndHeader(t *testing.T) {
	traceEnv(t)
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":        "[package]\nname = \"tj\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs":          versionBuild,
		"src/main.rs":       "include!(concat!(env!(\"OUT_DIR\"), \"/gen.rs\"));\nextern \"C\" { fn native_val() -> i32; }\nfn main() { println!(\"{} {}\", VERSION, unsafe { native_val() }); }\n",
		"native/native.c":   "#include \"hdr.h\"\nint native_val(void) { return HDR_VAL; }\n",
		"include/hdr.h":     "#define HDR_VAL 42\n",
		"resources/VERSION": "1.2.3\n",
	})
	tracedBuild(t, p.Dir, "cargo", "build")
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

	// The fix: rerun the build script, under trace.
	p.Write("build.rs", versionBuild+"\n")
	tracedBuild(t, p.Dir, "cargo", "build")
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
	if n := d.findingsOf("untracked-input-changed", version); len(n) > 0 {
		t.Errorf("a trace out of date was used:\n%s", raw)
	}
}
