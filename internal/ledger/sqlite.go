package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"

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
	// Switching a new database to WAL takes an exclusive lock, and SQLite can report "database is
	// locked" at once, without waiting on the busy timeout, when several processes open a new ledger
	// together. Such an open is retried, with a growing pause, for up to about 10 s.
	var lastErr error
	for attempt := 0; attempt < 40; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, lastErr
			case <-time.After(time.Duration(10+attempt*10) * time.Millisecond):
			}
		}
		db, err := sql.Open("sqlite", sqliteURI(abs))
		if err != nil {
			return nil, fmt.Errorf("ledger %s: %w", abs, err)
		}
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			lastErr = fmt.Errorf("ledger %s: open SQLite database: %w", abs, err)
			if isBusy(err) {
				continue
			}
			return nil, lastErr
		}
		if err := migrate(ctx, db, sqliteDialect, abs); err != nil {
			db.Close()
			lastErr = err
			if isBusy(err) {
				continue
			}
			return nil, err
		}
		return &sqlLedger{db: db, d: sqliteDialect, loc: abs}, nil
	}
	return nil, lastErr
}

// isBusy reports an SQLite lock conflict (SQLITE_BUSY, SQLITE_LOCKED).
func isBusy(err error) bool {
	s := err.Error()
	return strings.Contains(s, "database is locked") || strings.Contains(s, "SQLITE_BUSY") || strings.Contains(s, "database table is locked")
}
