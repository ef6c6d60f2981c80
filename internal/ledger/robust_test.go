package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// openWithin opens dsn in a goroutine and fails the test when Open does not return within d (a FIFO
// would otherwise hang the test rather than fail it).
func openWithin(t *testing.T, dsn string, d time.Duration) (Ledger, error) {
	t.Helper()
	type res struct {
		l   Ledger
		err error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := Open(context.Background(), dsn)
		ch <- res{l, err}
	}()
	select {
	case r := <-ch:
		if r.l != nil {
			t.Cleanup(func() { r.l.Close() })
		}
		return r.l, r.err
	case <-time.After(d):
		t.Fatalf("Open(%s) did not return within %v", dsn, d)
		return nil, nil
	}
}

// A FIFO or a /dev/zero symlink where the SQLite file (or its WAL) belongs: a clear error naming the
// file, never a hang or an endless read.
func TestOpenRefusesSpecialFiles(t *testing.T) {
	for _, tc := range []struct{ name, suffix, kind string }{
		{"fifo", "", "fifo"}, {"devzero", "", "zero"}, {"fifo-wal", "-wal", "fifo"}, {"devzero-shm", "-shm", "zero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "ledger.db")
			special := dsn + tc.suffix
			if tc.kind == "fifo" {
				if err := syscall.Mkfifo(special, 0o600); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Symlink("/dev/zero", special); err != nil {
				t.Fatal(err)
			}
			_, err := openWithin(t, dsn, 10*time.Second)
			if err == nil || !strings.Contains(err.Error(), special) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Open with %s at %s: %v; want an error naming it as not a regular file", tc.kind, special, err)
			}
		})
	}
	// The default ledger (XDG_STATE_HOME) is checked the same way.
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	os.MkdirAll(filepath.Join(state, "stalecheck"), 0o700)
	if err := syscall.Mkfifo(filepath.Join(state, "stalecheck", "ledger.db"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openWithin(t, "", 10*time.Second); err == nil || !strings.Contains(err.Error(), "ledger.db: not a regular file (a FIFO)") {
		t.Errorf("default ledger as a FIFO: %v", err)
	}
}

func TestOpenUnsupportedScheme(t *testing.T) {
	for dsn, scheme := range map[string]string{"mysql://x": "mysql", "sqlite:///tmp/l.db": "sqlite", "HTTP://host/db": "HTTP"} {
		_, err := openWithin(t, dsn, 10*time.Second)
		want := "unsupported ledger URL scheme " + scheme + ": use a file path or postgres://"
		if err == nil || err.Error() != want {
			t.Errorf("Open(%q) = %v, want %q", dsn, err, want)
		}
		if err := CheckDSN(dsn); err == nil || err.Error() != want {
			t.Errorf("CheckDSN(%q) = %v", dsn, err)
		}
	}
	for _, ok := range []string{"postgres://u@h/db", "postgresql://h/db", "ledger.db", "./a:b/ledger.db", ""} {
		if err := CheckDSN(ok); err != nil {
			t.Errorf("CheckDSN(%q) = %v, want nil", ok, err)
		}
	}
}

// A PostgreSQL URL that cannot be parsed is refused by CheckDSN (so run refuses before the command
// starts), naming the problem, with the password masked.
func TestCheckDSNBadPostgresURL(t *testing.T) {
	for dsn, why := range map[string]string{
		"postgres://bench:hunter2@db:notaport/x":      "invalid port",
		"postgres://bench@db/x?sslmode=bogus":         "sslmode is invalid",
		"postgresql://bench@db/x?connect_timeout=abc": "invalid connect_timeout",
	} {
		err := CheckDSN(dsn)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "PostgreSQL URL") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("CheckDSN(%q) = %v, want an error saying %q without the password", dsn, err, why)
		}
	}
}
