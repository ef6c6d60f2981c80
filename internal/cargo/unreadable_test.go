package cargo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A profile folder whose unit records cannot be listed (mode 000) is no answer: Read fails naming the
// folder (check exits 2), never a pass with nothing judged. Root reads mode-000 folders, so as root the
// test runs its reading half as uid 65534 through setpriv (a re-run of this test binary).
func TestUnreadableProfileFolderIsAnError(t *testing.T) {
	if ws := os.Getenv("STALECHECK_TEST_UNREADABLE_WS"); ws != "" {
		l := &Layout{Workspace: ws, TargetDir: filepath.Join(ws, "target"), BuildDir: filepath.Join(ws, "target")}
		_, err := Read(l, ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(ws, "target", "debug")) {
			t.Fatalf("Read = %v, want an error naming target/debug", err)
		}
		return
	}
	base, err := os.MkdirTemp("", "sc-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	ws := filepath.Join(base, "ws")
	fp := filepath.Join(ws, "target", "debug", ".fingerprint", "app-0123456789abcdef")
	if err := os.MkdirAll(fp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "Cargo.toml"), []byte("[package]\nname = \"app\"\nversion = \"0.1.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fp, "bin-app"), []byte("0123456789abcdef"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{base, ws, filepath.Join(ws, "target")} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(ws, "target", "debug"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(ws, "target", "debug"), 0o755)
	args := []string{os.Args[0], "-test.run=^TestUnreadableProfileFolderIsAnError$"}
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv: root reads mode-000 folders")
		}
		args = append([]string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "STALECHECK_TEST_UNREADABLE_WS="+ws, "HOME="+base, "XDG_STATE_HOME="+base, "GOCOVERDIR="+base)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

// A folder in place of a unit's hash file (beside its fingerprint JSON) is a record that cannot be
// read, named as such, and its profile is not judged: not a unit whose records are gone.
func TestHashFileFolderIsAProblem(t *testing.T) {
	ws := t.TempDir()
	fp := filepath.Join(ws, "target", "debug", ".fingerprint", "app-0123456789abcdef")
	hash := filepath.Join(fp, "bin-app")
	if err := os.MkdirAll(hash, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "Cargo.toml"), []byte("[package]\nname = \"app\"\nversion = \"0.1.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hash+".json", []byte(`{"rustc":1,"features":"[]","deps":[],"local":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &Layout{Workspace: ws, TargetDir: filepath.Join(ws, "target"), BuildDir: filepath.Join(ws, "target")}
	g, err := Read(l, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range g.Problems {
		if p.Path == hash && strings.Contains(p.Err, "a folder") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no problem names %s: %+v", hash, g.Problems)
	}
	if _, ok := g.Unjudged["debug"]; !ok {
		t.Errorf("the profile is judged: %v", g.Unjudged)
	}
}
