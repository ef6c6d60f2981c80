package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// DefaultConnectTimeout bounds connecting to a PostgreSQL server when the URL sets no connect_timeout.
const DefaultConnectTimeout = 5 * time.Second

// pgConfig parses a PostgreSQL URL, applying DefaultConnectTimeout when it sets no connect_timeout.
func pgConfig(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err // pgconn redacts the password in its message
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
		d := &net.Dialer{Timeout: DefaultConnectTimeout, KeepAlive: 5 * time.Minute}
		cfg.DialFunc = d.DialContext
	}
	return cfg, nil
}

// pgLocation names a PostgreSQL ledger without its password: postgres://user@host:port/database.
func pgLocation(cfg *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", Host: pgHost(cfg), Path: "/" + cfg.Database}
	if cfg.User != "" {
		u.User = url.User(cfg.User)
	}
	return u.String()
}

// pgHost is host:port of the first server (a Unix socket folder stays a path).
func pgHost(cfg *pgx.ConnConfig) string {
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// Location returns how messages name the ledger dsn selects: the absolute SQLite path, or the PostgreSQL
// URL reduced to postgres://user@host:port/database (no password, no parameters).
func Location(dsn string) string {
	if IsPostgres(dsn) {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return "postgres://(unparsable URL)"
		}
		return pgLocation(cfg)
	}
	if dsn == "" {
		dsn = DefaultPath()
	}
	if abs, err := filepath.Abs(dsn); err == nil {
		return abs
	}
	return dsn
}

// connectPostgres opens the pool and pings the server once, under one deadline: pgx applies the
// connect timeout to each attempt (each address, TLS then plain text), so a server that accepts
// connections and never answers would cost it several times. It returns the pool and the ledger's
// location for messages.
func connectPostgres(ctx context.Context, cfg *pgx.ConnConfig) (*sql.DB, string, error) {
	loc := pgLocation(cfg)
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(8)
	db.SetConnMaxIdleTime(time.Minute)
	pctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout+time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("ledger %s: cannot connect to PostgreSQL server at %s (connect timeout %v): %w",
			loc, pgHost(cfg), cfg.ConnectTimeout, connectCause(ctx, err, cfg.ConnectTimeout))
	}
	return db, loc, nil
}

func openPostgres(ctx context.Context, dsn string) (Ledger, error) {
	cfg, err := pgConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("ledger: PostgreSQL URL: %w", err)
	}
	db, loc, err := connectPostgres(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, db, postgresDialect, loc); err != nil {
		db.Close()
		return nil, err
	}
	return &sqlLedger{db: db, d: postgresDialect, loc: loc, version: SchemaVersion}, nil
}

// openPostgresRO connects with every transaction read-only (default_transaction_read_only) and reads the
// schema version without migrating: a database without stalecheck's tables is an empty ledger.
func openPostgresRO(ctx context.Context, dsn string) (Ledger, error) {
	cfg, err := pgConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("ledger: PostgreSQL URL: %w", err)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	db, loc, err := connectPostgres(ctx, cfg)
	if err != nil {
		return nil, err
	}
	v, err := currentVersion(ctx, db)
	switch {
	case err != nil && isNoSchema(err):
		v = 0
	case err != nil:
		db.Close()
		return nil, fmt.Errorf("ledger %s: read schema version: %w", loc, err)
	case v > len(postgresDialect.migrations):
		db.Close()
		return nil, tooNewOrCorrupt(ctx, db, postgresDialect, loc, v)
	}
	return &sqlLedger{db: db, d: postgresDialect, loc: loc, readOnly: true, version: v}, nil
}

// connectCause shortens a pgx connection error to its cause: the network error ("dial tcp 127.0.0.1:1:
// connect: connection refused") when there is one, or that the server did not answer within timeout (pgx
// repeats the cause once per address and TLS mode). Server-side refusals (authentication, unknown
// database) are returned whole.
func connectCause(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		if ctx.Err() != nil {
			return ctx.Err() // the caller's context ended
		}
		return fmt.Errorf("no answer within %v", timeout)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	return err
}
