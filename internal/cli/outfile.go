package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// checkOutputFile refuses, before any work, a file a command is asked to write (-o, --export-*) that it
// could not write, or must not: its folder missing, a path that exists as something other than a
// regular file, or one of the files the command reads and keeps (the ledger: `report --ledger L -o L`
// replaced every recorded run with the page).
// keptFile is a file a command must not overwrite, and what it is in words.
type keptFile struct{ path, what string }

func checkOutputFile(flag, path string, keep []keptFile) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s %s: the folder %s does not exist", flag, path, dir)
	}
	st, err := os.Lstat(path)
	if err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s: %s, not a regular file", flag, path, safeio.Kind(st.Mode()))
	}
	abs, _ := filepath.Abs(path)
	for _, k := range keep {
		same := abs == k.path
		if !same && err == nil {
			kst, kerr := os.Stat(k.path)
			same = kerr == nil && os.SameFile(st, kst)
		}
		if same {
			return fmt.Errorf("%s %s: that is %s (%s): writing it would destroy it; name another file", flag, path, k.path, k.what)
		}
	}
	return nil
}

// ledgerFiles are the files of the SQLite ledger dsn names (the database and SQLite's journals beside
// it); none for PostgreSQL.
func ledgerFiles(dsn string) []keptFile {
	if ledger.IsPostgres(dsn) {
		return nil
	}
	db := ledger.Location(dsn)
	return []keptFile{{db, "the ledger"}, {db + "-wal", "the ledger's write-ahead log"}, {db + "-shm", "the ledger's shared memory"}, {db + "-journal", "the ledger's journal"}}
}
