package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/stdlib"
)

// identityRows counts the rows of the identities table.
func identityRows(t *testing.T, l Ledger) int {
	t.Helper()
	var n int
	if err := rawDB(l).QueryRow(`SELECT COUNT(*) FROM identities`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The identity encoding keeps every string byte for byte, decodes what it encoded, gives one key to
// identities that differ only in map order or nil against empty, and names damage instead of panicking.
func TestIdentityEncoding(t *testing.T) {
	id := fullRecord("x").Identity
	id.Git = Git{}
	id.Sources[0].Path = "/src/\xff\xfe.cu"
	id.Binaries[1].Size = -1
	row := encodeIdentity(id)
	got, err := decodeIdentity(row.doc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(id, got, cmpRecords...); diff != "" {
		t.Fatalf("decoded identity differs:\n%s", diff)
	}
	empty := id
	empty.Natives = append([]Native(nil), id.Natives...)
	empty.Natives[1].Config.Features = []string{}
	empty.Env = map[string]string{"EMPTY": "", "RUSTFLAGS": "-C target-cpu=native", "CUDA_VISIBLE_DEVICES": "0"}
	if encodeIdentity(empty).key != row.key {
		t.Errorf("nil and empty features, or another map order, changed the key")
	}
	other := id
	other.Sources = append([]Source(nil), id.Sources...)
	other.Sources[1].Digest = "blake3:00"
	if encodeIdentity(other).key == row.key {
		t.Errorf("another source digest kept the key %s", row.key)
	}
	for cut := 0; cut < len(row.doc); cut++ {
		if _, err := decodeIdentity(row.doc[:cut]); err == nil {
			t.Fatalf("identity cut to %d of %d bytes decoded without error", cut, len(row.doc))
		}
	}
	if _, err := decodeIdentity(append(append([]byte(nil), row.doc...), 0)); err == nil || !strings.Contains(err.Error(), "after the identity") {
		t.Errorf("trailing byte: %v", err)
	}
	cmd := []string{"./bench", "\x80", ""}
	if got, err := decodeCommand(encodeCommand(cmd)); err != nil || !cmp.Equal(got, cmd) {
		t.Errorf("command round trip = %q, %v", got, err)
	}
	if got, err := decodeCommand(encodeCommand(nil)); err != nil || got != nil {
		t.Errorf("empty command round trip = %q, %v", got, err)
	}
}

// rawOpen opens the database of a test DSN without the ledger's migration.
func rawOpen(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	if IsPostgres(dsn) {
		cfg, err := pgConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		return stdlib.OpenDB(*cfg)
	}
	db, err := sql.Open("sqlite", sqliteURI(dsn))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// insertV2 writes r as stalecheck did before schema version 3: the record's row and one row per
// argument and identity entry in the child tables.
func insertV2(t *testing.T, db *sql.DB, d *dialect, r *Record) int64 {
	t.Helper()
	var id int64
	if err := db.QueryRow(d.q(`INSERT INTO records
		(name, start_ns, wall_ns, user_ns, sys_ns, peak_rss_bytes, rss_floor_bytes, exit_status, work_dir, stale, findings, git_head, git_dirty)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		r.Name, startNS(r.Start), r.WallNS, r.UserNS, r.SysNS, r.PeakRSSBytes, r.RSSFloorBytes, r.ExitStatus, r.WorkDir,
		r.Stale, string(r.Findings), r.Identity.Git.Head, r.Identity.Git.Dirty).Scan(&id); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		if _, err := db.Exec(d.q(q), args...); err != nil {
			t.Fatal(err)
		}
	}
	for i, a := range r.Command {
		exec(`INSERT INTO args (record_id, ord, arg) VALUES (?, ?, ?)`, id, i, a)
	}
	for i, b := range r.Identity.Binaries {
		exec(`INSERT INTO binaries (record_id, ord, path, size, digest, build_id) VALUES (?, ?, ?, ?, ?, ?)`, id, i, b.Path, b.Size, b.Digest, b.BuildID)
	}
	for i, n := range r.Identity.Natives {
		cfg := `{}`
		if len(n.Config.Features) > 0 {
			cfg = fmt.Sprintf(`{"features":["%s"]}`, strings.Join(n.Config.Features, `","`))
		}
		exec(`INSERT INTO natives (record_id, ord, library, path, fingerprint, config) VALUES (?, ?, ?, ?, ?, ?)`, id, i, n.Library, n.Path, n.Fingerprint, cfg)
	}
	for i, s := range r.Identity.Sources {
		exec(`INSERT INTO sources (record_id, ord, path, digest) VALUES (?, ?, ?, ?)`, id, i, s.Path, s.Digest)
	}
	for k, v := range r.Identity.Toolchain {
		exec(`INSERT INTO toolchain (record_id, tool, version) VALUES (?, ?, ?)`, id, k, v)
	}
	for k, v := range r.Identity.Env {
		exec(`INSERT INTO env (record_id, name, value) VALUES (?, ?, ?)`, id, k, v)
	}
	return id
}

// A ledger of schema version 2 (identities in child tables) is read as it is by OpenReadOnly, migrated
// by Open keeping its records readable, takes new records beside the old ones (which then share one
// identity row), and Delete removes an old record's child rows and an identity no record names.
func TestSchemaV2Migrated(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		d := sqliteDialect
		if IsPostgres(dsn) {
			d = postgresDialect
		}
		db := rawOpen(t, dsn)
		for _, stmt := range append(append([]string{createSchemaVersion}, d.migrations[0]...), d.migrations[1]...) {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Exec(`INSERT INTO schema_version VALUES (1, 0), (2, 0)`); err != nil {
			t.Fatal(err)
		}
		old := fullRecord("old")
		old.Identity.Natives[0].Config.Settings = nil // insertV2 writes features only
		old.RSSFloorBytes = 99
		old.Machine = nil // no machine column before version 4
		oldID := insertV2(t, db, d, old)
		old.ID = oldID
		db.Close()

		ro, err := OpenReadOnly(ctxT(t), dsn)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := ro.List(ctxT(t), Filter{})
		ro.Close()
		if err != nil || len(recs) != 1 {
			t.Fatalf("read-only List of a version 2 ledger = %+v, %v", recs, err)
		}
		if diff := cmp.Diff(old, &recs[0], cmpRecords...); diff != "" {
			t.Fatalf("version 2 record read back differs:\n%s", diff)
		}

		l := mustOpen(t, dsn)
		var v int
		rawDB(l).QueryRow(`SELECT MAX(version) FROM schema_version`).Scan(&v)
		if v != SchemaVersion {
			t.Fatalf("schema version %d after Open, want %d", v, SchemaVersion)
		}
		a, b := fullRecord("new"), fullRecord("new")
		a.Identity.Natives[0].Config.Settings = nil
		b.Identity = a.Identity
		b.Identity.Git.Head = "other"
		aID, bID := mustInsert(t, l, a), mustInsert(t, l, b)
		if n := identityRows(t, l); n != 1 {
			t.Errorf("%d identity rows for two runs of one build (git state aside), want 1", n)
		}
		recs, err = l.List(ctxT(t), Filter{})
		if err != nil || len(recs) != 3 || recs[0].ID != bID || recs[1].ID != aID || recs[2].ID != oldID {
			t.Fatalf("after migration: %+v, %v", recs, err)
		}
		for i, want := range []*Record{b, a, old} {
			if diff := cmp.Diff(want, &recs[i], cmpRecords...); diff != "" {
				t.Errorf("record %d after migration differs:\n%s", want.ID, diff)
			}
		}
		if n, err := l.Delete(ctxT(t), []int64{oldID, aID}); n != 2 || err != nil {
			t.Fatalf("Delete = %d, %v", n, err)
		}
		if n := childRows(t, l, oldID); n != 0 {
			t.Errorf("%d child rows of the deleted version 2 record left", n)
		}
		if n := identityRows(t, l); n != 1 {
			t.Errorf("%d identity rows while one run of the build remains, want 1", n)
		}
		if n, err := l.Delete(ctxT(t), []int64{bID}); n != 1 || err != nil {
			t.Fatalf("Delete = %d, %v", n, err)
		}
		if n := identityRows(t, l); n != 0 {
			t.Errorf("%d identity rows after every run was deleted, want 0", n)
		}
	})
}

// A SQLite file that holds another program's tables and no ledger: Open refuses it, naming it, and adds
// nothing to it (stalecheck's tables were created beside the other program's).
func TestOpenRefusesOtherProgramsDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", sqliteURI(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	l, err := Open(context.Background(), path)
	if err == nil {
		l.Close()
		t.Fatal("Open took another program's database for a ledger")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "another program") {
		t.Errorf("error %v does not name the file and say why", err)
	}
	// Nor is it read as an empty ledger (runs, diff and report said "No runs", exit 0).
	if l, err := OpenReadOnly(context.Background(), path); err == nil {
		l.Close()
		t.Error("OpenReadOnly read another program's database as an empty ledger")
	} else if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "another program") {
		t.Errorf("OpenReadOnly: error %v does not name the file and say why", err)
	}
	db, err = sql.Open("sqlite", sqliteURI(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("tables in the other program's database after Open: %d, %v; want its 1", n, err)
	}
}
