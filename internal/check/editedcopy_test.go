package check_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// runBin runs a built binary and returns its trimmed output.
func runBin(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}

// writeAbs writes a file outside the project folder (making its folder).
func writeAbs(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// regdepProject is a package that takes nativefoo 0.1.0 from a writable copy of Debian's directory
// registry, where nativefoo's build script (no rerun-if line: keyed on its version) compiles a C file.
func regdepProject(t *testing.T, extra map[string]string) (*testutil.Project, string) {
	p := testutil.NewProject(t, nil)
	vendor := testutil.VendorCopy(t, t.TempDir(), map[string]map[string]string{
		"nativefoo-0.1.0": testutil.NativeCrate("nativefoo", "0.1.0", "41", nil, true),
	})
	files := map[string]string{
		".cargo/config.toml": testutil.DirectorySourceConfig(vendor),
		"Cargo.toml":         "[package]\nname = \"regdep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nnativefoo = \"0.1\"\n",
		"src/main.rs":        "fn main() { println!(\"{}\", nativefoo::val()); }\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	for k, v := range files {
		p.Write(k, v)
	}
	return p, vendor
}

// S08: an edit inside the (writable) directory registry copy Cargo builds from. Cargo never looks.
func TestS08EditedRegistryCopy(t *testing.T) {
	p, vendor := regdepProject(t, nil)
	p.Cargo("build", "--release")
	bin := p.Path("target/release/regdep")
	fs, _ := p.Check()
	none(t, fs, "edited-copy-not-built")
	noErrors(t, fs)

	copyRoot := filepath.Join(vendor, "nativefoo-0.1.0")
	src := filepath.Join(copyRoot, "native/nativefoo.c")
	editFile(t, src, "41", "42")
	if out := p.Cargo("build", "--release", "-v"); !strings.Contains(out, "Fresh nativefoo v0.1.0") {
		t.Fatalf("the premise fails: cargo rebuilt nativefoo:\n%s", out)
	}
	if got := runBin(t, bin); got != "41" {
		t.Fatalf("the premise fails: the binary prints %q", got)
	}
	fs, _ = p.Check()
	f := one(t, fs, "edited-copy-not-built")
	if f.Severity != check.Error {
		t.Errorf("severity %v, want error", f.Severity)
	}
	if strings.Join(f.Subjects, " ") != src+" "+copyRoot {
		t.Errorf("subjects %v, want [%s %s]", f.Subjects, src, copyRoot)
	}
	for _, want := range []string{src + " was modified at " + msgTime(t, src), "after nativefoo 0.1.0 was last built at",
		"Cargo takes nativefoo from " + copyRoot + " (a directory (vendored) source that replaces a registry) and treats it as immutable",
		"1 edited file(s)"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, f.Message)
		}
	}
	if strings.Join(f.Roots, " ") != bin {
		t.Errorf("roots %v, want [%s]", f.Roots, bin)
	}
	wantFix := "[patch.crates-io] nativefoo = { path = \"" + copyRoot + "\" }"
	if !strings.Contains(f.Fix, wantFix) {
		t.Errorf("fix %q lacks %q", f.Fix, wantFix)
	}

	// Fix step: the [patch] hint makes the copy a path package; Cargo builds the edit.
	p.Write("Cargo.toml", "[package]\nname = \"regdep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nnativefoo = \"0.1\"\n\n"+
		"[patch.crates-io]\nnativefoo = { path = \""+copyRoot+"\" }\n")
	p.Cargo("build", "--release")
	if got := runBin(t, bin); got != "42" {
		t.Fatalf("after the fix the binary prints %q, want 42", got)
	}
	fs, _ = p.Check()
	none(t, fs, "edited-copy-not-built")
	noErrors(t, fs)
}

// Files of a registry copy that no build of it as a dependency reads (its integration tests, examples,
// CI and Debian packaging data) are not lost edits; once `cargo test -p` builds the copy's tests, its
// tests/ folder is read, and an edit there is one.
func TestEditedCopyUnbuiltFolders(t *testing.T) {
	p, vendor := regdepProject(t, nil)
	p.Cargo("build", "--release")
	copyRoot := filepath.Join(vendor, "nativefoo-0.1.0")
	it := filepath.Join(copyRoot, "tests/it.rs")
	for _, f := range []string{it, filepath.Join(copyRoot, "examples/demo.rs"), filepath.Join(copyRoot, "benches/b.rs"),
		filepath.Join(copyRoot, ".github/workflows/ci.yml"), filepath.Join(copyRoot, "debian/changelog")} {
		content := "# not Rust\n"
		if strings.HasSuffix(f, ".rs") {
			content = "fn main() {}\n#[test]\nfn it() { assert_eq!(nativefoo::val(), 41); }\n"
		}
		writeAbs(t, f, content)
	}
	fs, _ := p.Check()
	none(t, fs, "edited-copy-not-built")
	noErrors(t, fs)

	// A source file Cargo compiles is still an edit, and the files above are not counted with it.
	lib := filepath.Join(copyRoot, "src/lib.rs")
	editFile(t, lib, "pub fn val", "// edited\npub fn val")
	fs, _ = p.Check()
	f := one(t, fs, "edited-copy-not-built")
	if !strings.Contains(f.Message, "1 edited file(s)") || f.Subjects[0] != lib {
		t.Errorf("want the one edit of %s:\n%s", lib, f.Message)
	}

	// cargo test -p builds nativefoo's tests: its tests/ folder is now read, and is watched.
	p.Cargo("test", "--release", "-p", "nativefoo", "--no-run")
	editFile(t, it, "41", "41 + 0")
	fs, _ = p.Check()
	f = one(t, fs, "edited-copy-not-built")
	if f.Subjects[0] != it {
		t.Errorf("subjects %v, want %s first", f.Subjects, it)
	}
	for _, e := range f.Evidence {
		if strings.Contains(e.Path, "/debian/") || strings.Contains(e.Path, "/.github/") {
			t.Errorf("evidence names a file no build reads: %s", e.Path)
		}
	}
}

// S09: a [patch] whose version does not satisfy the dependency, so the original is built and edits
// to the local copy do nothing.
func TestS09PatchNotApplied(t *testing.T) {
	local := filepath.Join(t.TempDir(), "nativefoo-local")
	p, vendor := regdepProject(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"regdep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nnativefoo = \"0.1\"\n\n" +
			"[patch.crates-io]\nnativefoo = { path = \"" + local + "\" }\n",
	})
	for rel, c := range testutil.NativeCrate("nativefoo", "0.2.0", "41", nil, false) {
		writeAbs(t, filepath.Join(local, rel), c)
	}
	out := p.Cargo("build", "--release")
	if !strings.Contains(out, "was not used in the crate graph") {
		t.Fatalf("the premise fails: cargo applied the patch:\n%s", out)
	}
	bin := p.Path("target/release/regdep")
	fs, _ := p.Check()
	none(t, fs, "edited-copy-not-built")

	writeAbs(t, filepath.Join(local, "native/nativefoo.c"), "int nativefoo_val(void) { return 99; }\n")
	p.Cargo("build", "--release")
	if got := runBin(t, bin); got != "41" {
		t.Fatalf("the premise fails: the binary prints %q", got)
	}
	fs, _ = p.Check()
	f := one(t, fs, "edited-copy-not-built")
	used := filepath.Join(vendor, "nativefoo-0.1.0")
	if f.Severity != check.Error || strings.Join(f.Subjects, " ") != local+" "+used {
		t.Fatalf("want an error with subjects [%s %s], got:\n%s", local, used, testutil.Dump([]check.Finding{f}))
	}
	for _, want := range []string{
		local + ", the [patch] copy of nativefoo 0.2.0 ([patch.crates-io] in " + p.Path("Cargo.toml") + "), has 1 file(s) modified after nativefoo was last built",
		"Cargo takes nativefoo 0.1.0 from " + used + " (directory source replacing registry+https://github.com/rust-lang/crates.io-index)",
		"Cargo.lock lists nativefoo 0.2.0 under [[patch.unused]]"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, f.Message)
		}
	}
	if !strings.Contains(f.Fix, "cargo update -p nativefoo") {
		t.Errorf("fix %q", f.Fix)
	}

	// Fix step: give the local copy the locked version; the patch applies and the edit is built.
	writeAbs(t, filepath.Join(local, "Cargo.toml"), "[package]\nname = \"nativefoo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
	p.Cargo("build", "--release")
	if got := runBin(t, bin); got != "99" {
		t.Fatalf("after the fix the binary prints %q, want 99", got)
	}
	fs, _ = p.Check()
	none(t, fs, "edited-copy-not-built")
	noErrors(t, fs)
}
