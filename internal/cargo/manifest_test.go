package cargo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The CARGO_PKG_* values a manifest gives: its own fields, inherited ones from [workspace.package],
// absent ones empty, an inherited one with nothing to inherit left out; the version split as Cargo does.
func TestReadManifestEnv(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"Cargo.toml": "[workspace]\nmembers = [\"p\"]\n[workspace.package]\nversion = \"1.2.3-beta.1+build\"\nauthors = [\"A <a@x>\", \"B\"]\n",
		"p/Cargo.toml": "[package]\nname = \"p\"\nversion.workspace = true\nauthors.workspace = true\ndescription = \"d\"\n" +
			"repository.workspace = true\n",
	}
	for rel, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := readManifestEnv(filepath.Join(dir, "p/Cargo.toml"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"CARGO_PKG_NAME": "p", "CARGO_PKG_VERSION": "1.2.3-beta.1+build", "CARGO_PKG_VERSION_MAJOR": "1",
		"CARGO_PKG_VERSION_MINOR": "2", "CARGO_PKG_VERSION_PATCH": "3", "CARGO_PKG_VERSION_PRE": "beta.1",
		"CARGO_PKG_AUTHORS": "A <a@x>:B", "CARGO_PKG_DESCRIPTION": "d", "CARGO_PKG_HOMEPAGE": "",
		"CARGO_PKG_LICENSE": "", "CARGO_PKG_LICENSE_FILE": "", "CARGO_PKG_RUST_VERSION": "",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CARGO_PKG_* (-want +got):\n%s", d)
	}
	if _, err := readManifestEnv(filepath.Join(dir, "Cargo.toml")); err == nil {
		t.Error("a manifest with no [package] table: want an error")
	}
}
