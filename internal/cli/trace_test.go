package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/trace"
)

// `stalecheck trace -- BUILD` passes the build's status through and stores the trace of the working
// folder (no Cargo workspace here); `--show` reads it back; a damaged store is an error naming the file.
func TestTraceCommand(t *testing.T) {
	if _, err := trace.FindStrace(""); err != nil {
		t.Skipf("strace is not installed (apt-get install strace): %v", err)
	}
	dir := t.TempDir()
	state := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile(filepath.Join(dir, "input.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main([]string{"stalecheck", "trace", "--state-dir", state, "--", "sh", "-c", "cat input.txt; no-such-tool-abc 2>/dev/null; exit 7"}, Streams{Out: &out, Err: &errb})
	if code != 7 || out.String() != "x" || !strings.Contains(errb.String(), "failed, exit status 7") {
		t.Fatalf("trace: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := Main([]string{"stalecheck", "trace", "--state-dir", state, "--show"}, Streams{Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("--show: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"failed (exit status 7)", "not found on PATH: no-such-tool-abc"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--show output lacks %q:\n%s", want, out.String())
		}
	}
	file := trace.Path(state, dir)
	if err := os.WriteFile(file, []byte("stalecheck-trace v1\nH\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := Main([]string{"stalecheck", "trace", "--state-dir", state, "--show"}, Streams{Out: &out, Err: &errb}); code != 2 || !strings.Contains(errb.String(), file) {
		t.Errorf("damaged store: exit %d, stderr %q (want 2 naming %s)", code, errb.String(), file)
	}
	if code := Main([]string{"stalecheck", "trace", "--state-dir", state}, Streams{Out: &out, Err: &errb}); code != 2 {
		t.Errorf("no command: exit %d", code)
	}
}
