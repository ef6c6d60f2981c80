package digest

import (
	"github.com/stalecheck/stalecheck/internal/testutil/special"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO or a symlink to /dev/zero in place of digests.v1 (or digests.lock): the cache is ignored (LoadErr
// names the file), works, and Save replaces the intruder with a real cache file.
func TestSpecialCacheFileIgnored(t *testing.T) {
	for _, kind := range []string{"fifo", "devzero"} {
		for _, name := range []string{CacheFile, lockFileName} {
			t.Run(kind+"-"+name, func(t *testing.T) {
				state := t.TempDir()
				planted := filepath.Join(state, name)
				if kind == "fifo" {
					if err := syscall.Mkfifo(planted, 0o600); err != nil {
						t.Fatal(err)
					}
				} else if err := os.Symlink("/dev/zero", planted); err != nil {
					t.Fatal(err)
				}
				src := filepath.Join(t.TempDir(), "a.c")
				writeFile(t, src, "int a;\n", time.Now().Add(-time.Hour))
				special.Within(t, 10*time.Second, "OpenCache, File and Save", func() {
					c, err := OpenCache(state)
					if err != nil {
						t.Errorf("OpenCache: %v", err)
						return
					}
					if name == CacheFile {
						if le := c.LoadErr(); le == nil || !strings.Contains(le.Error(), planted) || !strings.Contains(le.Error(), "not a regular file") {
							t.Errorf("LoadErr = %v; want it to name %s as not a regular file", le, planted)
						}
					}
					if d := mustFile(t, c, src); d != Bytes([]byte("int a;\n")) {
						t.Errorf("digest %v", d)
					}
					if err := c.Save(); err != nil {
						t.Errorf("Save: %v", err)
					}
					c2, _ := OpenCache(state)
					if c2.LoadErr() != nil || c2.Stats().Entries != 1 {
						t.Errorf("reopened: LoadErr %v, %d entries; want the saved cache", c2.LoadErr(), c2.Stats().Entries)
					}
				})
				if name == CacheFile {
					if st, err := os.Lstat(planted); err != nil || !st.Mode().IsRegular() {
						t.Errorf("after Save, %s is %v (%v); want a regular file", planted, st.Mode(), err)
					}
				}
			})
		}
	}
}

// A FIFO or a device given to HashFile or File is an error naming it, never a hang.
func TestHashSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "zero")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	c, _ := OpenCache(t.TempDir())
	for _, p := range []string{fifo, link} {
		special.Within(t, 10*time.Second, "hashing "+p, func() {
			if _, err := HashFile(p); err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("HashFile(%s) = %v; want an error naming it", p, err)
			}
			if _, err := c.File(p); err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("File(%s) = %v; want an error naming it", p, err)
			}
		})
	}
}
