package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// DebianRegistry is Debian's directory source of Rust crates (librust-psm-dev installs psm and cc there).
const DebianRegistry = "/usr/share/cargo/registry"

// VendorCopy makes a writable copy of Debian's directory registry under dir/vendor (mtimes kept, as
// cp -a does), adds the crates given (crate folder name → relative path → content), and returns its path.
// It fails the test when librust-psm-dev is not installed (CI installs it).
func VendorCopy(t testing.TB, dir string, crates map[string]map[string]string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(DebianRegistry, "psm-0.1.16")); err != nil {
		t.Fatalf("Debian's librust-psm-dev is required (CI installs it: apt-get install librust-psm-dev): %v", err)
	}
	vendor := filepath.Join(dir, "vendor")
	if err := os.MkdirAll(vendor, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", DebianRegistry+"/.", vendor).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s: %v\n%s", DebianRegistry, err, out)
	}
	for crate, files := range crates {
		for rel, content := range files {
			p := filepath.Join(vendor, crate, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return vendor
}

// DirectorySourceConfig is a .cargo/config.toml that replaces crates.io by a directory source.
func DirectorySourceConfig(dir string) string {
	return "[source.crates-io]\nreplace-with = \"vendored\"\n[source.vendored]\ndirectory = \"" + dir + "\"\n[net]\noffline = true\n"
}

// NativeCrate returns the files of a library crate `name` whose build script compiles native/<name>.c
// (which returns val) with cc into lib<name>.a in OUT_DIR and links it, printing the directive lines
// given. Its lib exposes `pub fn val() -> i32`. With checksum, a directory-source `.cargo-checksum.json`
// is included.
func NativeCrate(name, version string, val string, directives []string, checksum bool) map[string]string {
	lib := strings.ReplaceAll(name, "-", "_")
	var b strings.Builder
	b.WriteString("use std::{env, path::PathBuf, process::Command};\n\nfn main() {\n")
	b.WriteString("    let out = PathBuf::from(env::var(\"OUT_DIR\").unwrap());\n")
	b.WriteString("    let obj = out.join(\"" + lib + ".o\");\n")
	b.WriteString("    assert!(Command::new(\"cc\").args([\"-c\", \"-O2\", \"-fPIC\", \"native/" + lib + ".c\", \"-o\"]).arg(&obj).status().unwrap().success());\n")
	b.WriteString("    let a = out.join(\"lib" + lib + ".a\");\n    let _ = std::fs::remove_file(&a);\n")
	b.WriteString("    assert!(Command::new(\"ar\").arg(\"crs\").arg(&a).arg(&obj).status().unwrap().success());\n")
	b.WriteString("    println!(\"cargo:rustc-link-search=native={}\", out.display());\n")
	b.WriteString("    println!(\"cargo:rustc-link-lib=static=" + lib + "\");\n")
	for _, d := range directives {
		b.WriteString("    println!(\"" + d + "\");\n")
	}
	b.WriteString("}\n")
	files := map[string]string{
		"Cargo.toml":           "[package]\nname = \"" + name + "\"\nversion = \"" + version + "\"\nedition = \"2021\"\n",
		"build.rs":             b.String(),
		"native/" + lib + ".c": "int " + lib + "_val(void) { return " + val + "; }\n",
		"src/lib.rs":           "extern \"C\" { fn " + lib + "_val() -> i32; }\npub fn val() -> i32 { unsafe { " + lib + "_val() } }\n",
	}
	if checksum {
		files[".cargo-checksum.json"] = "{\"package\":null,\"files\":{}}\n"
	}
	return files
}

// GitRepo writes files into dir, makes it a git repository and commits them; it returns the
// `file://` URL of the repository.
func GitRepo(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return "file://" + dir
}

// EnvValue returns the value the project's extra environment gives a variable ("" when it sets none).
func (p *Project) EnvValue(k string) string {
	v := ""
	for _, e := range p.Env {
		if x, ok := strings.CutPrefix(e, k+"="); ok {
			v = x
		}
	}
	return v
}
