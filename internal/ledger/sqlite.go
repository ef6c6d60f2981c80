package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
			lastErr = sqliteError(ctx, db, abs, "open SQLite database", err)
			db.Close()
			if isBusy(err) {
				continue
			}
			return nil, lastErr
		}
		if err := migrate(ctx, db, sqliteDialect, abs); err != nil {
			db.Close()
			var ce *CorruptError
			if isCorrupt(err) && !errors.As(err, &ce) {
				err = &CorruptError{Ledger: abs, Detail: err.Error()}
			}
			lastErr = err
			if isBusy(err) {
				continue
			}
			return nil, err
		}
		return &sqlLedger{db: db, d: sqliteDialect, loc: abs, version: SchemaVersion}, nil
	}
	return nil, lastErr
}

// isBusy reports an SQLite lock conflict (SQLITE_BUSY, SQLITE_LOCKED).
func isBusy(err error) bool {
	s := err.Error()
	return strings.Contains(s, "database is locked") || strings.Contains(s, "SQLITE_BUSY") || strings.Contains(s, "database table is locked")
}

// sqliteROParams are the settings of a read-only connection: no journal-mode or synchronous pragma (they
// would write), the same busy timeout.
const sqliteROParams = "mode=ro&_busy_timeout=10000&_fk=1"

func openSQLiteRO(ctx context.Context, path string) (Ledger, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", path, err)
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return nil, &MissingError{Ledger: abs}
	} else if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", abs, err)
	}
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(abs)
	l, err := openSQLiteROURI(ctx, abs, "file:"+esc+"?"+sqliteROParams)
	if err != nil && (isCantOpen(err) || isReadOnly(err)) {
		// A WAL ledger whose -shm and -wal files are absent and cannot be created (a folder the user may
		// not write): no writer has it open (a writer keeps them), so it is read as an immutable file.
		l, err = openSQLiteROURI(ctx, abs, "file:"+esc+"?"+sqliteROParams+"&immutable=1")
	}
	return l, err
}

func openSQLiteROURI(ctx context.Context, abs, uri string) (Ledger, error) {
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, fmt.Errorf("ledger %s: %w", abs, err)
	}
	v, err := currentVersion(ctx, db)
	if err != nil && isNoSchema(err) {
		// An existing SQLite file without stalecheck's tables (an empty file): no records; one with
		// another program's tables is not a ledger.
		if ferr := foreignSQLite(ctx, db, abs); ferr != nil {
			db.Close()
			return nil, ferr
		}
		return &sqlLedger{db: db, d: sqliteDialect, loc: abs, readOnly: true, version: 0}, nil
	}
	if err != nil {
		db.Close()
		return nil, sqliteError(ctx, db, abs, "open SQLite database", err)
	}
	if v > len(sqliteDialect.migrations) {
		err := tooNewOrCorrupt(ctx, db, sqliteDialect, abs, v)
		db.Close()
		return nil, err
	}
	return &sqlLedger{db: db, d: sqliteDialect, loc: abs, readOnly: true, version: v}, nil
}

// isCantOpen reports SQLITE_CANTOPEN ("unable to open database file").
func isCantOpen(err error) bool {
	s := err.Error()
	return strings.Contains(s, "unable to open database file") || strings.Contains(s, "SQLITE_CANTOPEN")
}

// isReadOnly reports SQLITE_READONLY and its extended codes (e.g. 1544, SQLITE_READONLY_DIRECTORY: WAL
// files that cannot be created in the ledger's folder).
func isReadOnly(err error) bool {
	s := err.Error()
	return strings.Contains(s, "attempt to write a readonly database") || strings.Contains(s, "SQLITE_READONLY")
}

// isNoSchema reports a query on a table that does not exist.
func isNoSchema(err error) bool {
	s := err.Error()
	return strings.Contains(s, "no such table") || strings.Contains(s, "does not exist (SQLSTATE 42P01)")
}

// isCorrupt reports SQLite's own words for a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB).
func isCorrupt(err error) bool {
	s := err.Error()
	return strings.Contains(s, "malformed") || strings.Contains(s, "SQLITE_CORRUPT") || strings.Contains(s, "file is not a database") || strings.Contains(s, "SQLITE_NOTADB")
}

// sqliteError names damage as such (*CorruptError) and wraps any other error with what was being done.
func sqliteError(ctx context.Context, db *sql.DB, abs, doing string, err error) error {
	if isCorrupt(err) {
		return &CorruptError{Ledger: abs, Detail: err.Error()}
	}
	return fmt.Errorf("ledger %s: %s: %w", abs, doing, err)
}

// quickCheck runs PRAGMA quick_check and returns "" when SQLite finds the file sound, else the first
// problem it names (or the error that kept it from checking).
func quickCheck(ctx context.Context, db *sql.DB) string {
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check(1)`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var first string
	for rows.Next() {
		if err := rows.Scan(&first); err != nil {
			return err.Error()
		}
		break
	}
	if err := rows.Err(); err != nil {
		return err.Error()
	}
	if first == "ok" {
		return ""
	}
	first = strings.ReplaceAll(strings.TrimPrefix(first, "*** in database main ***\n"), "\n", "; ")
	if first == "" {
		return "PRAGMA quick_check gave no answer"
	}
	return first
}

// tooNewOrCorrupt is the error for a schema version v above what this build knows: *CorruptError when
// the file is damaged (SQLite: PRAGMA quick_check; any backend:
// the version is far beyond any plausible release), else *SchemaTooNewError.
func tooNewOrCorrupt(ctx context.Context, db *sql.DB, d *dialect, loc string, v int) error {
	if d == sqliteDialect {
		if p := quickCheck(ctx, db); p != "" {
			return &CorruptError{Ledger: loc, Detail: fmt.Sprintf("PRAGMA quick_check: %s (the schema version reads as %d)", p, v)}
		}
	}
	if v > maxPlausibleVersion {
		return &CorruptError{Ledger: loc, Detail: fmt.Sprintf("the schema version reads as %d, beyond any stalecheck release (this one knows up to %d)", v, len(d.migrations))}
	}
	return &SchemaTooNewError{Ledger: loc, Version: v, Known: len(d.migrations)}
}

// maxPlausibleVersion bounds the schema version a real ledger can have: one migration per release at most.
const maxPlausibleVersion = 10000
