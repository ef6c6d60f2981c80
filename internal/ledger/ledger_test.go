package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/stalecheck/stalecheck/internal/testutil/pgtest"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/stalecheck/stalecheck/internal/machine"
)

// The PostgreSQL half of the suite runs against the database named by this variable; it is skipped when
// the variable is unset, unless CI is set, where a missing DSN fails.
const pgDSNEnv = pgtest.Env

// backend is one ledger implementation under test; newDSN returns the DSN of a fresh, empty ledger.
type backend struct {
	name   string
	newDSN func(t *testing.T) string
}

func sqliteBackend() backend {
	return backend{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "ledger.db") }}
}

func postgresBackend() backend {
	return backend{"postgres", func(t *testing.T) string { return pgtest.DSN(t) }}
}

// forEachBackend runs f as a subtest against each backend.
func forEachBackend(t *testing.T, f func(t *testing.T, dsn string)) {
	for _, b := range []backend{sqliteBackend(), postgresBackend()} {
		t.Run(b.name, func(t *testing.T) { f(t, b.newDSN(t)) })
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustOpen(t *testing.T, dsn string) Ledger {
	t.Helper()
	l, err := Open(ctxT(t), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func mustInsert(t *testing.T, l Ledger, r *Record) int64 {
	t.Helper()
	id, err := l.Insert(ctxT(t), r)
	if err != nil {
		t.Fatalf("Insert: %v", err)
	}
	return id
}

// rawDB is the database handle under a Ledger, for tests that inspect or tamper with the tables.
func rawDB(l Ledger) *sql.DB { return l.(*sqlLedger).db }

// fullRecord fills every field, with orders and values a careless store would lose.
func fullRecord(name string) *Record {
	return &Record{
		Name:         name,
		Start:        time.Date(2026, 5, 17, 9, 30, 1, 123456789, time.UTC),
		WallNS:       12_345_678_901,
		UserNS:       45_000_000_001,
		SysNS:        1_500_000_002,
		PeakRSSBytes: 7 << 30,
		ExitStatus:   137,
		Command:      []string{"./target/release/msm-bench", "--size", "2^20", "", "arg with spaces", "ünïcode"},
		WorkDir:      "/home/perf/zk",
		Stale:        true,
		Findings:     json.RawMessage(`[{"rule":"untracked-input-changed","severity":"error","subjects":["/src/a.cu"]}]`),
		Identity: Identity{
			Binaries: []Binary{
				{Path: "/home/perf/zk/target/release/msm-bench", Size: 48_213_504, Digest: "blake3:" + strings.Repeat("ab", 32), BuildID: "9f2c0ffee"},
				{Path: "/usr/lib/libcudart.so.12", Size: 700_000, Digest: "blake3:" + strings.Repeat("01", 32)},
			},
			Natives: []Native{
				{Library: "libgroth16_cuda.a", Path: "/t/release/build/zk-cuda-1/out/libgroth16_cuda.a", Fingerprint: "fp:1234",
					Config: NativeConfig{Features: []string{"timing", "sm90"}, Settings: map[string]string{"profile": "release"}}},
				{Library: "libblst.a", Path: "/t/release/build/blst-2/out/libblst.a", Fingerprint: "fp:5678"},
			},
			Sources: []Source{
				{Path: "/home/perf/zk/cuda/msm.cu", Digest: "blake3:" + strings.Repeat("cd", 32)},
				{Path: "/home/perf/zk/src/lib.rs", Digest: "blake3:" + strings.Repeat("ef", 32)},
			},
			Git:       Git{Head: "0123456789abcdef0123456789abcdef01234567", Dirty: true},
			Toolchain: map[string]string{"rustc": "rustc 1.86.0 (05f9846f8 2025-03-31)", "cargo": "cargo 1.86.0", "nvcc": "Cuda compilation tools, release 12.8, V12.8.93"},
			Env:       map[string]string{"CUDA_VISIBLE_DEVICES": "0", "RUSTFLAGS": "-C target-cpu=native", "EMPTY": ""},
		},
		Machine: &machine.Conditions{CPUModel: "AMD EPYC 9654", CPUs: 2, Affinity: 2, Governor: "performance", MHz: 3700,
			Kernel: "6.1.0-28-amd64", Virt: "kvm", Load1: 0.12, Load1At: 1.5, OtherCPUs: 0.9,
			Busiest:  []machine.Proc{{PID: 4242, Name: "cc1plus", Percent: 88}},
			MemTotal: 24 << 30, MemAvailable: 20 << 30, CPUPressure: 3.5, MemPressure: -1,
			GPUs: []machine.GPU{{Name: "NVIDIA H100 80GB HBM3", Driver: "550.54.15", SMClockMHz: 1980, MemClockMHz: 2619, TempC: 34, PowerW: 71.5,
				Processes: []string{"777 python"}}}},
	}
}

// cmpRecords compares records, taking nil and empty slices and maps as equal (and the ledger's
// identity key, set on read, aside).
var cmpRecords = []cmp.Option{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Identity{}, "Key")}

func TestRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		l := mustOpen(t, dsn)
		full := fullRecord("msm-2^20")
		id := mustInsert(t, l, full)
		if full.ID != id || id <= 0 {
			t.Fatalf("Insert returned %d and set ID %d", id, full.ID)
		}
		minimal := &Record{Name: "bare"} // zero Start, nothing else
		mustInsert(t, l, minimal)

		for _, want := range []*Record{full, minimal} {
			got, err := l.Get(ctxT(t), want.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, cmpRecords...); diff != "" {
				t.Errorf("record %q read back differs (-inserted +read):\n%s", want.Name, diff)
			}
		}
		// Findings come back byte for byte.
		got, _ := l.Get(ctxT(t), full.ID)
		if string(got.Findings) != string(full.Findings) {
			t.Errorf("findings = %s, want %s", got.Findings, full.Findings)
		}
		if got, _ := l.Get(ctxT(t), minimal.ID); got.Findings != nil {
			t.Errorf("absent findings read back as %q, want nil", got.Findings)
		}
		// A JSON null is stored as absent.
		n := &Record{Name: "null-findings", Findings: json.RawMessage("null")}
		mustInsert(t, l, n)
		if got, _ := l.Get(ctxT(t), n.ID); got.Findings != nil {
			t.Errorf("null findings read back as %q, want nil", got.Findings)
		}
	})
}

func TestListAndGet(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		l := mustOpen(t, dsn)
		var ids []int64
		for i, name := range []string{"a", "b", "a", "c", "a"} {
			r := fullRecord(name)
			r.WallNS = int64(i)
			ids = append(ids, mustInsert(t, l, r))
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Fatalf("IDs do not increase: %v", ids)
			}
		}
		all, err := l.List(ctxT(t), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 5 || all[0].ID != ids[4] || all[4].ID != ids[0] {
			t.Fatalf("List() = %d records, first %d, want 5 newest first", len(all), all[0].ID)
		}
		for _, r := range all {
			want := fullRecord(r.Name)
			want.ID, want.WallNS = r.ID, r.WallNS
			if diff := cmp.Diff(want, &r, cmpRecords...); diff != "" {
				t.Errorf("List record %d differs:\n%s", r.ID, diff)
			}
		}
		as, err := l.List(ctxT(t), Filter{Name: "a", Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(as) != 2 || as[0].ID != ids[4] || as[1].ID != ids[2] {
			t.Fatalf("List(a, 2) = %v", recordIDs(as))
		}
		if none, err := l.List(ctxT(t), Filter{Name: "zzz"}); err != nil || len(none) != 0 {
			t.Fatalf("List(zzz) = %v, %v", none, err)
		}
		_, err = l.Get(ctxT(t), 999_999)
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get(missing) = %v, want ErrNotFound", err)
		}
	})
}

func recordIDs(rs []Record) []int64 {
	var ids []int64
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

func TestListMany(t *testing.T) {
	// More records than one IN list holds.
	forEachBackend(t, func(t *testing.T, dsn string) {
		l := mustOpen(t, dsn)
		const n = 1100
		for i := range n {
			mustInsert(t, l, &Record{Name: "many", Command: []string{fmt.Sprint(i)}, Identity: Identity{Env: map[string]string{"I": fmt.Sprint(i)}}})
		}
		rs, err := l.List(ctxT(t), Filter{Name: "many"})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != n {
			t.Fatalf("List = %d records, want %d", len(rs), n)
		}
		for _, r := range rs {
			if len(r.Command) != 1 || r.Identity.Env["I"] != r.Command[0] {
				t.Fatalf("record %d: command %q env %v", r.ID, r.Command, r.Identity.Env)
			}
		}
	})
}

func TestInsertRejectsInvalidFindings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		l := mustOpen(t, dsn)
		r := fullRecord("bad")
		r.Findings = json.RawMessage(`[{"rule":`)
		if _, err := l.Insert(ctxT(t), r); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
			t.Fatalf("Insert(bad findings) = %v, want a JSON error", err)
		}
		if rs, _ := l.List(ctxT(t), Filter{}); len(rs) != 0 {
			t.Fatalf("a rejected record was stored: %v", recordIDs(rs))
		}
	})
}

func TestReopenKeepsRecords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		l, err := Open(ctxT(t), dsn)
		if err != nil {
			t.Fatal(err)
		}
		r := fullRecord("x")
		mustInsert(t, l, r)
		l.Close()
		l = mustOpen(t, dsn)
		got, err := l.Get(ctxT(t), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, got, cmpRecords...); diff != "" {
			t.Fatalf("after reopening:\n%s", diff)
		}
		var n int
		if err := rawDB(l).QueryRow(`SELECT COUNT(*) FROM schema_version`).Scan(&n); err != nil || n != SchemaVersion {
			t.Fatalf("schema_version rows = %d, %v; want %d (one per migration, none repeated)", n, err, SchemaVersion)
		}
	})
}

func TestSchemaTooNew(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		l := mustOpen(t, dsn)
		d := l.(*sqlLedger).d
		if _, err := rawDB(l).Exec(d.q(`INSERT INTO schema_version (version, applied_ns) VALUES (?, ?)`), 7, 0); err != nil {
			t.Fatal(err)
		}
		l.Close()
		_, err := Open(ctxT(t), dsn)
		var tooNew *SchemaTooNewError
		if !errors.As(err, &tooNew) || tooNew.Version != 7 || tooNew.Known != SchemaVersion {
			t.Fatalf("Open = %v, want *SchemaTooNewError{7, %d}", err, SchemaVersion)
		}
		want := fmt.Sprintf("ledger %s has schema version 7; this stalecheck knows up to %d; upgrade stalecheck", Location(dsn), SchemaVersion)
		if err.Error() != want {
			t.Fatalf("error = %q\nwant    %q", err, want)
		}
		if strings.Contains(err.Error(), "search_path") || strings.Contains(err.Error(), "password") {
			t.Fatalf("error leaks URL parameters: %v", err)
		}
	})
}

func TestSQLiteSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd ?#% name.db") // characters a URI would split on
	l := mustOpen(t, path)
	mustInsert(t, l, fullRecord("x"))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("ledger file not at the path given: %v", err)
	}
	db := rawDB(l)
	for pragma, want := range map[string]string{"journal_mode": "wal", "busy_timeout": "10000", "foreign_keys": "1", "synchronous": "2"} {
		var got string
		if err := db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q, %v; want %q", pragma, got, err, want)
		}
	}
	// SQLite keeps strings byte for byte, also those that are not UTF-8.
	r := fullRecord("bytes")
	r.Identity.Sources[0].Path = "/src/\xff\xfe.cu"
	r.Command[1] = "\x80"
	mustInsert(t, l, r)
	got, err := l.Get(ctxT(t), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got, cmpRecords...); diff != "" {
		t.Fatalf("non-UTF-8 strings differ:\n%s", diff)
	}
}

func TestSQLiteNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(path, []byte(strings.Repeat("this is not a database\n", 100)), 0o644)
	_, err := Open(ctxT(t), path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open(text file) = %v, want an error naming %s", err, path)
	}
}

func TestDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	want := filepath.Join(dir, "stalecheck", "ledger.db")
	if got := DefaultPath(); got != want {
		t.Fatalf("DefaultPath = %q, want %q", got, want)
	}
	l := mustOpen(t, "") // creates the folder
	mustInsert(t, l, &Record{Name: "default"})
	if _, err := os.Stat(want); err != nil {
		t.Fatal(err)
	}
	if got := Location(""); got != want {
		t.Fatalf("Location(\"\") = %q", got)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := DefaultPath(); got != "/home/u/.local/state/stalecheck/ledger.db" {
		t.Fatalf("DefaultPath with HOME = %q", got)
	}
}

func TestPostgresRejectsNonUTF8(t *testing.T) {
	dsn := postgresBackend().newDSN(t)
	l := mustOpen(t, dsn)
	r := fullRecord("bytes")
	r.Identity.Sources[1].Path = "/src/\xff.rs"
	_, err := l.Insert(ctxT(t), r)
	if err == nil || !strings.Contains(err.Error(), "sources[1].path") || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("Insert(non-UTF-8) = %v, want an error naming sources[1].path", err)
	}
	r = fullRecord("nul")
	r.Identity.Env["X"] = "a\x00b"
	if _, err := l.Insert(ctxT(t), r); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("Insert(NUL) = %v, want an error", err)
	}
}

func TestPostgresUnreachable(t *testing.T) {
	start := time.Now()
	_, err := Open(context.Background(), "postgres://bench:secret@127.0.0.1:1/x")
	took := time.Since(start)
	if err == nil {
		t.Fatal("Open(127.0.0.1:1) succeeded")
	}
	t.Logf("error after %v: %v", took, err)
	for _, want := range []string{"PostgreSQL", "127.0.0.1:1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error leaks the password: %v", err)
	}
	if took > DefaultConnectTimeout+time.Second {
		t.Errorf("took %v, want at most %v", took, DefaultConnectTimeout+time.Second)
	}
}

// TestPostgresHungServer connects to a server that accepts the connection and never answers: Open must give
// up after the connect timeout, naming the host.
func TestPostgresHungServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, say nothing
		}
	}()
	start := time.Now()
	_, err = Open(context.Background(), "postgres://u@"+ln.Addr().String()+"/x?connect_timeout=1")
	took := time.Since(start)
	t.Logf("error after %v: %v", took, err)
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Fatalf("Open(hung server) = %v, want an error naming %s", err, ln.Addr())
	}
	if took < time.Second || took > 3*time.Second {
		t.Fatalf("took %v, want about the 1 s connect timeout", took)
	}
}

func TestPostgresConnectTimeout(t *testing.T) {
	cfg, err := pgConfig("postgres://u@db.example:5433/ledger")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnectTimeout != DefaultConnectTimeout {
		t.Errorf("default connect timeout = %v, want %v", cfg.ConnectTimeout, DefaultConnectTimeout)
	}
	cfg, err = pgConfig("postgresql://u:pw@db.example/ledger?connect_timeout=2&sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnectTimeout != 2*time.Second {
		t.Errorf("connect_timeout=2 gives %v", cfg.ConnectTimeout)
	}
	if got, want := pgLocation(cfg), "postgres://u@db.example:5432/ledger"; got != want {
		t.Errorf("location = %q, want %q", got, want)
	}
	if _, err := Open(context.Background(), "postgres://u:hunter2@db.example:notaport/x"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad URL: %v", err)
	}
}
