package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeOutput calls write with the standard output, or, when path is set, with a temporary file in
// path's folder that is synced and renamed onto path once write succeeds (readers never see a partial
// report; on any error the temporary file is removed and path is left as it was). The file gets mode
// 0644 (0666 less the usual umask; an existing file's mode is kept).
func writeOutput(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(stdout)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("--output %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("--output %s: not a regular file", path)
		}
		mode = st.Mode().Perm()
	}
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("--output %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("--output %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--output %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		done = true
		return fmt.Errorf("--output %s: %w", path, err)
	}
	done = true
	return nil
}
