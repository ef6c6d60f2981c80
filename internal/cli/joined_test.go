package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// Tests of the joined graph through the CLI: a Go module whose binary links a Cargo staticlib of a
// sibling Rust workspace (not at or above the Go module), whose build.rs compiles native/x.c with
// Debian's cc crate. Real go, cargo and cc builds in t.TempDir().

// goRustChain writes and builds the chain in a fresh folder and returns the folder; the Rust workspace
// is <dir>/rs, the Go module <dir>/go, its binary <dir>/go/chain (prints rcalc(2) = 6).
func goRustChain(t *testing.T) string {
	t.Helper()
	need.Tools(t, "go", "cargo", "cc", "ar")
	if _, err := os.Stat(filepath.Join(testutil.CCCrate, "Cargo.toml")); err != nil {
		t.Skipf("Debian's librust-cc-dev is not installed: %v", err)
	}
	t.Setenv("GOTOOLCHAIN", "local")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=readonly")
	t.Setenv("GOWORK", "off")
	t.Setenv("CGO_ENABLED", "1")
	t.Setenv("CARGO_NET_OFFLINE", "true")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"rs/.cargo/config.toml": testutil.DirectorySourceConfig(testutil.DebianRegistry),
		"rs/Cargo.toml": "[package]\nname = \"rcalc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\ncrate-type = [\"staticlib\"]\n\n" +
			"[build-dependencies]\ncc = \"1.0\"\n\n[profile.dev]\npanic = \"abort\"\n",
		"rs/build.rs":   "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    println!(\"cargo:rerun-if-changed=native/x.c\");\n    cc::Build::new().file(\"native/x.c\").compile(\"x\");\n}\n",
		"rs/native/x.c": "int x_compute(int v) { return v * 3; }\n",
		"rs/src/lib.rs": "extern \"C\" { fn x_compute(v: i32) -> i32; }\n#[no_mangle]\npub extern \"C\" fn rcalc(x: i32) -> i32 { unsafe { x_compute(x) } }\n",
		"go/go.mod":     "module example.com/chain\n\ngo 1.26\n",
		"go/rbridge/rbridge.go": "package rbridge\n\n/*\n#cgo LDFLAGS: -L${SRCDIR}/../../rs/target/debug -lrcalc -lpthread -ldl -lm\nint rcalc(int);\n*/\nimport \"C\"\n\n" +
			"func Calc(x int) int { return int(C.rcalc(C.int(x))) }\n",
		"go/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/chain/rbridge\"\n)\n\nfunc main() { fmt.Println(rbridge.Calc(2)) }\n",
	})
	shIn(t, filepath.Join(dir, "rs"), nil, "cargo", "build", "--offline")
	shIn(t, filepath.Join(dir, "go"), nil, "go", "build")
	if out := shIn(t, filepath.Join(dir, "go"), nil, filepath.Join(dir, "go", "chain")); out != "6\n" {
		t.Fatalf("the first build prints %q", out)
	}
	return dir
}

// checkDoc runs `check --format json DIR` and returns the findings with their roots, and the notes.
func checkDoc(t *testing.T, dir string) ([]sysFinding, [][]string, []string, int) {
	t.Helper()
	fs, code := checkSystems(t, dir)
	out, _, _ := run(t, "check", "--format", "json", dir)
	var doc struct {
		Findings []struct {
			Roots []string `json:"roots"`
		} `json:"findings"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var roots [][]string
	for _, f := range doc.Findings {
		roots = append(roots, f.Roots)
	}
	return fs, roots, doc.Notes, code
}

// TestCheckGoModuleNamesCFileBehindRustStaticlib: `stalecheck check GO_MODULE_DIR` reads the sibling
// Cargo workspace the Go binary links librcalc.a from (a note says so), names the edited native/x.c
// with the Go binary among the roots before cargo build (Cargo's pending rebuild) and behind the
// rebuilt staticlib after it (binary-older-than-input on the Go binary); relinking the Go binary fixes it.
func TestCheckGoModuleNamesCFileBehindRustStaticlib(t *testing.T) {
	dir := goRustChain(t)
	gomod, rs := filepath.Join(dir, "go"), filepath.Join(dir, "rs")
	app, xc := filepath.Join(gomod, "chain"), filepath.Join(rs, "native", "x.c")
	lib := filepath.Join(rs, "target", "debug", "librcalc.a")

	fs, _, notes, code := checkDoc(t, gomod)
	if code != 0 {
		t.Fatalf("fresh builds: exit %d: %+v", code, fs)
	}
	pulled := false
	for _, n := range notes {
		pulled = pulled || strings.Contains(n, filepath.Join(rs, "target")) && strings.Contains(n, lib) && strings.Contains(n, app)
	}
	if !pulled {
		t.Fatalf("no note says the Cargo build at %s was read for %s: %q", filepath.Join(rs, "target"), app, notes)
	}

	// Edit the C file behind the staticlib; no cargo build yet.
	if err := os.WriteFile(xc, []byte("int x_compute(int v) { return v * 3 + 1000; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ns := editLater(t, xc, "\n")
	fs, roots, _, code := checkDoc(t, gomod)
	hit := -1
	for i, f := range fs {
		if (f.Rule == "pending-rebuild" || f.Rule == "untracked-input-changed") && f.Severity == "error" && slices.Contains(roots[i], app) {
			if mt, _, ok := evidenceAt(f, "input", xc); ok && mt == ns {
				hit = i
			}
		}
	}
	if code != 1 || hit < 0 {
		t.Fatalf("exit %d; x.c (mtime %d) is not named with the Go binary among the roots:\n%+v\nroots %v", code, ns, fs, roots)
	}
	t.Logf("before cargo build: %s: %s", fs[hit].Rule, fs[hit].Message)

	// cargo build rebuilds librcalc.a; the Go binary is not relinked.
	shIn(t, rs, nil, "cargo", "build", "--offline")
	fs, _, _, code = checkDoc(t, gomod)
	b := find(fs, "binary-older-than-input", app)
	if code != 1 || len(b) != 1 || b[0].Severity != "error" || !slices.Contains(b[0].Subjects, lib) {
		t.Fatalf("exit %d; the rebuilt staticlib is not binary-older-than-input against the Go binary: %+v", code, fs)
	}
	if mt, _, ok := evidenceAt(b[0], "input", xc); !ok || mt != ns || !strings.Contains(b[0].Message, "native/x.c") {
		t.Fatalf("x.c (mtime %d) is not named behind the staticlib: %+v", ns, b[0])
	}
	t.Logf("after cargo build: %s", b[0].Message)

	// The fix: relink the Go binary (the finding's fix forces it; an edit of the bridge does too).
	shIn(t, gomod, nil, "go", "build", "-a")
	if out := shIn(t, gomod, nil, app); out != "1006\n" {
		t.Fatalf("after the fix the binary prints %q", out)
	}
	fs, _, _, code = checkDoc(t, gomod)
	for _, f := range fs {
		if f.Severity == "error" || f.Severity == "warning" {
			t.Fatalf("after relinking: exit %d: %+v", code, fs)
		}
	}
}
