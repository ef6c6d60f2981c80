package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// sqliteParams are the connection settings of every SQLite connection: wait up to 10 s for a lock, WAL
// journal, foreign keys enforced, fsync at each commit (a benchmark ledger writes rarely and must keep
// what it wrote), and write transactions that take the write lock at BEGIN, so that two writers queue on
// the busy timeout instead of failing to upgrade a read lock.
const sqliteParams = "_busy_timeout=10000&_journal_mode=WAL&_fk=1&_sync=FULL&_txlock=immediate"

// sqliteURI returns the modernc.org/sqlite DSN of the database file at the absolute path abs.
func sqliteURI(abs string) string {
	// A file: URI, so that SQLite decodes %XX; escape what a URI would otherwise split on.
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(abs)
	return "file:" + esc + "?" + sqliteParams
}

func openSQLite(ctx context.Context, path string) (Ledger, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", sqliteURI(abs))
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", abs, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("ledger %s: open SQLite database: %w", abs, err)
	}
	if err := migrate(ctx, db, sqliteDialect, abs); err != nil {
		db.Close()
		return nil, err
	}
	return &sqlLedger{db: db, d: sqliteDialect, loc: abs}, nil
}
