package clean_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/clean"
)

// The totals say the human form only when it says something the byte count does not.
func TestWriteTextBytes(t *testing.T) {
	for _, tc := range []struct {
		total    int64
		executed bool
		want     string
	}{
		{12, false, "total: 1 item(s), 12 bytes; 0 skipped; dry run"},
		{570891, false, "total: 1 item(s), 570891 bytes (557.5 KiB); 0 skipped; dry run"},
		{12, true, "removed 1 item(s), 12 bytes; 0 skipped"},
		{3 << 20, true, "removed 1 item(s), 3145728 bytes (3.0 MiB); 0 skipped"},
	} {
		st := clean.Planned
		if tc.executed {
			st = clean.Removed
		}
		p := &clean.Plan{BuildDir: "/t", TotalBytes: tc.total, FreedBytes: tc.total, Executed: tc.executed,
			Items: []clean.Item{{Kind: clean.KindDepsFile, Rel: "release/deps/x", Bytes: tc.total, Status: st}}}
		var b strings.Builder
		if err := clean.WriteText(&b, p); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "12 bytes (12 bytes)") {
			t.Errorf("total %d: want %q in:\n%s", tc.total, tc.want, b.String())
		}
	}
}

// A FIFO or a /dev/zero symlink as CACHEDIR.TAG: the folder is judged at once (here: not a target
// folder, it has no .rustc_info.json), never a hang or an endless read.
func TestValidateSpecialCacheDirTag(t *testing.T) {
	for _, kind := range []string{"fifo", "devzero"} {
		t.Run(kind, func(t *testing.T) {
			fake := t.TempDir()
			os.MkdirAll(filepath.Join(fake, "release", ".fingerprint"), 0o755)
			tag := filepath.Join(fake, "CACHEDIR.TAG")
			var err error
			if kind == "fifo" {
				err = syscall.Mkfifo(tag, 0o600)
			} else {
				err = os.Symlink("/dev/zero", tag)
			}
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- clean.Validate(&cargo.Layout{TargetDir: fake, BuildDir: fake}) }()
			select {
			case err := <-done:
				if !errors.Is(err, clean.ErrNotTarget) {
					t.Errorf("Validate with a %s CACHEDIR.TAG: %v; want ErrNotTarget", kind, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("Validate with a %s CACHEDIR.TAG did not return", kind)
			}
		})
	}
}
