// Package pgtest gives tests a PostgreSQL ledger of their own: the server comes from
// STALECHECK_TEST_PG_DSN (internal/ledger/PG_SETUP.md). Without it the test skips, except under CI, where
// a missing DSN fails the test so that CI cannot silently skip PostgreSQL.
package pgtest

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Env is the environment variable holding the test server's URL.
const Env = "STALECHECK_TEST_PG_DSN"

// DSN returns a URL of the test server whose search_path is a schema made for this test alone and
// dropped at cleanup.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but %s is not: the PostgreSQL tests must run in CI (see internal/ledger/PG_SETUP.md)", Env)
		}
		t.Skipf("%s is not set; skipping the PostgreSQL backend (see internal/ledger/PG_SETUP.md)", Env)
	}
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "stalecheck_test_" + hex.EncodeToString(b)
	if _, err := db.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatalf("PostgreSQL at %s:%d: create schema: %v", cfg.Host, cfg.Port, err)
	}
	t.Cleanup(func() {
		db := stdlib.OpenDB(*cfg)
		defer db.Close()
		if _, err := db.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s must be a URL: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
