package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestWhichThroughLink: a link to the binary (~/bin/app -> target/release/app) is answered as the binary
// is (it said there was no Cargo.toml at or above the link's folder).
func TestWhichThroughLink(t *testing.T) {
	ws := ccToggled(t)
	runEnv(t)
	bin := filepath.Join(ws, "target/release/app")
	direct, stderr, code := run(t, "which", "--format", "json", bin)
	if code != 0 {
		t.Fatalf("the premise fails: which %s: exit %d\n%s", bin, code, stderr)
	}
	link := filepath.Join(t.TempDir(), "app")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	via, stderr, code := run(t, "which", "--format", "json", link)
	if code != 0 {
		t.Fatalf("which through a link: exit %d\n%s", code, stderr)
	}
	libs := func(doc string) string {
		var d struct {
			Libraries []struct{ Name, Outcome string }
		}
		if err := json.Unmarshal([]byte(doc), &d); err != nil || len(d.Libraries) == 0 {
			t.Fatalf("no libraries in %s (%v)", doc, err)
		}
		b, _ := json.Marshal(d.Libraries)
		return string(b)
	}
	if a, b := libs(direct), libs(via); a != b {
		t.Errorf("through a link: %s, directly: %s", b, a)
	}
}
