package cli

import (
	"fmt"
	"io"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// writeOutput calls write with the standard output, or, when path is set, with a temporary file in
// path's folder that is synced and renamed onto path once write succeeds (readers never see a partial
// report; on any error the temporary file is removed and path is left as it was). The file gets mode
// 0644 (0666 less the usual umask; an existing file's mode is kept).
func writeOutput(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(stdout)
	}
	var werr error // write's own error, returned as it is
	err := safeio.WriteFileAtomic(path, safeio.WriteOptions{Sync: true}, func(w io.Writer) error {
		werr = write(w)
		return werr
	})
	if err != nil && werr != nil {
		return werr
	}
	if err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	return nil
}
