package safeio

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteOptions say how WriteFileAtomic writes.
type WriteOptions struct {
	// Perm is the file's permission bits; 0 keeps those of the file it replaces, else 0o644.
	Perm fs.FileMode
	// MkdirPerm, when not 0, creates the file's folder (and those above it) with these bits first.
	MkdirPerm fs.FileMode
	// Replace: whatever is at path is replaced (a cache's own file, where a FIFO or a link is no
	// one's data); otherwise a path that is not a regular file is an error and left alone.
	Replace bool
	// Sync flushes the file, and after the rename its folder, to the disk: for what a user keeps (a
	// report, the run state), not for caches that a crash may lose.
	Sync bool
}

// WriteFileAtomic writes path through a temporary file in the same folder renamed over it, so that a
// reader sees the old file or the new one whole, never a part: write fills the temporary file. On any
// error the temporary file is removed and path is left as it was; the error names path.
func WriteFileAtomic(path string, opt WriteOptions, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if opt.MkdirPerm != 0 {
		if err := os.MkdirAll(dir, opt.MkdirPerm); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	perm := opt.Perm
	if st, err := os.Stat(path); err == nil && !opt.Replace {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("write %s: %w", path, ErrNotRegular)
		}
		if perm == 0 {
			perm = st.Mode().Perm()
		}
	}
	if perm == 0 {
		perm = 0o644
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if opt.Sync {
		if err = tmp.Sync(); err != nil {
			return err
		}
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if opt.Sync {
		if d, err := os.Open(dir); err == nil {
			d.Sync() // best effort: some file systems refuse to sync a folder
			d.Close()
		}
	}
	return nil
}

// WriteBytesAtomic is WriteFileAtomic of one byte slice.
func WriteBytesAtomic(path string, opt WriteOptions, data []byte) error {
	return WriteFileAtomic(path, opt, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
