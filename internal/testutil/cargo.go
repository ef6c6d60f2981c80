// Package testutil builds real Cargo projects in temporary folders for stalecheck's tests and reads
// them back through the cargo adapter and the checks. Tests fail (never skip) when cargo is missing:
// CI installs it.
package testutil

import (
	"github.com/stalecheck/stalecheck/internal/testutil/need"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/analyze"
	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// Project is a Cargo workspace in a temporary folder.
type Project struct {
	T   testing.TB
	Dir string
	Env []string // extra environment for cargo
	// StateDir is the state folder Check uses for content baselines and caches ("" = none kept between
	// checks, as a first check on a fresh machine).
	StateDir string
	// NewLayout builds in Cargo's new build-dir layout (layout.go; NewProject sets it from
	// CargoLayoutEnv or InNewLayout).
	NewLayout bool
}

// NewProject writes files (relative path → content) into a fresh temporary folder.
func NewProject(t testing.TB, files map[string]string) *Project {
	t.Helper()
	return NewProjectIn(t, t.TempDir(), files)
}

// NewProjectIn is NewProject in dir (which the caller made and removes).
func NewProjectIn(t testing.TB, dir string, files map[string]string) *Project {
	t.Helper()
	need.RealBuild(t)
	if _, err := exec.LookPath("cargo"); err != nil {
		t.Fatalf("cargo is required for this test (CI installs it): %v", err)
	}
	p := &Project{T: t, Dir: dir, NewLayout: newLayoutDefault}
	for rel, content := range files {
		p.Write(rel, content)
	}
	return p
}

// Path returns the absolute path of a project file.
func (p *Project) Path(rel string) string { return filepath.Join(p.Dir, rel) }

// Write writes a file and makes sure its mtime is later than anything written before: Linux stamps
// files from a coarse clock, so two writes in one tick could share an mtime.
func (p *Project) Write(rel, content string) {
	p.T.Helper()
	path := p.Path(rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.T.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.T.Fatal(err)
	}
}

// Edit replaces old with new in a file (which must contain old) and bumps its mtime.
func (p *Project) Edit(rel, old, new string) {
	p.T.Helper()
	data, err := os.ReadFile(p.Path(rel))
	if err != nil {
		p.T.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		p.T.Fatalf("%s does not contain %q", rel, old)
	}
	p.Write(rel, strings.Replace(string(data), old, new, 1))
}

// Cargo runs cargo offline in the project and returns its combined output; it fails the test on error.
func (p *Project) Cargo(args ...string) string {
	p.T.Helper()
	out, err := p.CargoErr(args...)
	if err != nil {
		p.T.Fatalf("cargo %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// CargoErr runs cargo and returns its output and error.
func (p *Project) CargoErr(args ...string) (string, error) {
	args, layoutEnv := p.cargoArgs(args)
	cmd := exec.Command("cargo", args...)
	cmd.Dir = p.Dir
	// The caller's target-folder and flag settings must not leak into the project's build.
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch k {
		case "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR", "CARGO_BUILD_BUILD_DIR", "RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS":
			continue
		}
		cmd.Env = append(cmd.Env, e)
	}
	cmd.Env = append(cmd.Env, "CARGO_NET_OFFLINE=true", "CARGO_TERM_COLOR=never")
	cmd.Env = append(cmd.Env, layoutEnv...)
	cmd.Env = append(cmd.Env, p.Env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Check reads the project's build folder and runs every rule.
func (p *Project) Check() ([]check.Finding, *graph.Graph) {
	p.T.Helper()
	l, err := cargo.Locate(p.Dir, cargo.LocateOptions{Getenv: func(k string) string {
		for _, e := range p.Env {
			if v, ok := strings.CutPrefix(e, k+"="); ok {
				return v
			}
		}
		if strings.HasPrefix(k, "CARGO_") && k != "CARGO_HOME" {
			return ""
		}
		return os.Getenv(k)
	}})
	if err != nil {
		p.T.Fatal(err)
	}
	g, err := cargo.Read(l, cargo.ReadOptions{CargoHome: p.EnvValue("CARGO_HOME")})
	if err != nil {
		p.T.Fatal(err)
	}
	// The pipeline of the CLI (internal/analyze), without the evidence cache.
	return analyze.Annotate(g, analyze.Options{StateDir: p.StateDir}), g
}

// Rule returns the findings of one rule.
func Rule(fs []check.Finding, rule string) []check.Finding {
	var out []check.Finding
	for _, f := range fs {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// AtLeast returns the findings at or above a severity.
func AtLeast(fs []check.Finding, sev check.Severity) []check.Finding {
	var out []check.Finding
	for _, f := range fs {
		if f.Severity >= sev {
			out = append(out, f)
		}
	}
	return out
}

// Dump formats findings for a failure message.
func Dump(fs []check.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Severity.String() + " " + f.Rule + ": " + f.Message + "\n")
		for _, e := range f.Evidence {
			b.WriteString("    " + e.Kind + " " + e.Path + " " + e.How + " " + e.Detail + "\n")
		}
	}
	return b.String()
}

// HasSubject reports whether a finding names path among its subjects.
func HasSubject(f check.Finding, path string) bool {
	for _, s := range f.Subjects {
		if s == path {
			return true
		}
	}
	return false
}

// SysCrate returns the files of a workspace with a bin `app` depending on a `-sys` style crate `name`
// whose build.rs compiles each source given (relative to the crate) with cc into lib<lib>.a in OUT_DIR,
// passing extra cc arguments, and prints the given directive lines plus the link lines.
func SysCrate(name, lib string, sources map[string]string, ccArgs []string, directives []string) map[string]string {
	crate := strings.ReplaceAll(name, "-", "_")
	files := map[string]string{
		"Cargo.toml": "[workspace]\nmembers = [\"app\", \"" + name + "\"]\nresolver = \"2\"\n",
		"app/Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[features]\ntiming = [\"" + name + "/timing\"]\n\n[dependencies]\n" +
			name + " = { path = \"../" + name + "\" }\n",
		"app/src/main.rs":    "fn main() { println!(\"{}\", " + crate + "::run()); }\n",
		name + "/Cargo.toml": "[package]\nname = \"" + name + "\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[features]\ntiming = []\n",
		name + "/src/lib.rs": "extern \"C\" { fn native_run() -> i32; }\npub fn run() -> i32 { unsafe { native_run() } }\n",
	}
	var compile []string
	for src, content := range sources {
		files[name+"/"+src] = content
		if !strings.HasSuffix(src, ".h") {
			compile = append(compile, src)
		}
	}
	var b strings.Builder
	b.WriteString("use std::{env, path::PathBuf, process::Command};\n\nfn main() {\n")
	b.WriteString("    let out = PathBuf::from(env::var(\"OUT_DIR\").unwrap());\n    let mut objs = Vec::new();\n")
	b.WriteString("    let timing = env::var_os(\"CARGO_FEATURE_TIMING\").is_some();\n")
	for _, src := range compile {
		stem := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
		b.WriteString("    {\n        let obj = out.join(\"" + stem + ".o\");\n        let mut c = Command::new(\"cc\");\n")
		b.WriteString("        c.args([\"-c\", \"-O2\", \"-fPIC\"")
		for _, a := range ccArgs {
			b.WriteString(", \"" + a + "\"")
		}
		b.WriteString("]);\n        if timing { c.arg(\"-DTIMING\"); }\n")
		b.WriteString("        c.arg(\"" + src + "\").arg(\"-o\").arg(&obj);\n")
		b.WriteString("        assert!(c.status().unwrap().success());\n        objs.push(obj);\n    }\n")
	}
	b.WriteString("    let lib = out.join(\"lib" + lib + ".a\");\n    let _ = std::fs::remove_file(&lib);\n")
	b.WriteString("    assert!(Command::new(\"ar\").arg(\"crs\").arg(&lib).args(&objs).status().unwrap().success());\n")
	b.WriteString("    println!(\"cargo:rustc-link-search=native={}\", out.display());\n")
	b.WriteString("    println!(\"cargo:rustc-link-lib=static=" + lib + "\");\n")
	for _, d := range directives {
		b.WriteString("    println!(\"" + d + "\");\n")
	}
	b.WriteString("}\n")
	files[name+"/build.rs"] = b.String()
	return files
}

// Example copies a runnable project of the repository's examples/ folder (without any target folder)
// into a fresh temporary folder. Its builds use the C stand-ins even where nvcc is on PATH, so that
// results do not depend on the machine.
func Example(t testing.TB, name string) *Project {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test's folder")
		}
	}
	src := filepath.Join(dir, "examples", name)
	files := map[string]string{}
	err = filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && rel == "target" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files[rel] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("example %s: %v", name, err)
	}
	p := NewProject(t, files)
	p.Env = []string{"STALECHECK_DEMO_NO_NVCC=1"}
	return p
}
