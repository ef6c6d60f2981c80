package ledger

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A read-only open never creates a SQLite ledger (a mistyped path is an error naming it), reads what a
// writer stored, refuses Insert, and leaves the file as it was. A PostgreSQL database without the tables
// is an empty ledger.
func TestOpenReadOnly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		ro, err := OpenReadOnly(ctxT(t), dsn)
		if IsPostgres(dsn) {
			if err != nil {
				t.Fatalf("OpenReadOnly(empty PostgreSQL database) = %v", err)
			}
			if recs, err := ro.List(ctxT(t), Filter{}); err != nil || len(recs) != 0 {
				t.Fatalf("List on an empty database = %d records, %v", len(recs), err)
			}
			if _, err := ro.Get(ctxT(t), 1); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get on an empty database = %v, want ErrNotFound", err)
			}
			ro.Close()
		} else {
			var me *MissingError
			if !errors.As(err, &me) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), dsn) {
				t.Fatalf("OpenReadOnly(missing file) = %v, want a *MissingError naming %s", err, dsn)
			}
			if _, err := os.Stat(dsn); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("OpenReadOnly created %s (%v)", dsn, err)
			}
		}
		l := mustOpen(t, dsn)
		want := fullRecord("a")
		want.RSSFloorBytes = 2 << 20
		mustInsert(t, l, want)
		mustInsert(t, l, fullRecord("b"))
		l.Close()
		var before []byte
		if !IsPostgres(dsn) {
			before, _ = os.ReadFile(dsn)
		}
		ro, err = OpenReadOnly(ctxT(t), dsn)
		if err != nil {
			t.Fatalf("OpenReadOnly: %v", err)
		}
		defer ro.Close()
		recs, err := ro.List(ctxT(t), Filter{})
		if err != nil || len(recs) != 2 {
			t.Fatalf("List = %d records, %v; want 2", len(recs), err)
		}
		got, err := ro.Get(ctxT(t), want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmpRecords...); diff != "" {
			t.Fatalf("read-only Get differs:\n%s", diff)
		}
		if _, err := ro.Insert(ctxT(t), fullRecord("c")); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Fatalf("Insert on a read-only ledger = %v, want a refusal", err)
		}
		if !IsPostgres(dsn) {
			ro.Close()
			after, _ := os.ReadFile(dsn)
			if string(before) != string(after) {
				t.Fatalf("a read-only open changed %s", dsn)
			}
		}
	})
}

// roChildEnv makes TestMain list a ledger read-only and print the number of records.
const roChildEnv = "STALECHECK_LEDGER_TEST_RO"

// A ledger the user may only read, in a folder the user may not write (so SQLite cannot create the WAL
// files beside it): read-only commands list it. As root (whom permissions do not stop) the reader runs as
// the user nobody.
func TestReadOnlyFileAndFolder(t *testing.T) {
	// Not t.TempDir: its parent folder is private to the owner.
	base, err := os.MkdirTemp("", "stalecheck-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "ro"), 0o755); os.RemoveAll(base) })
	dir := filepath.Join(base, "ro")
	os.Mkdir(dir, 0o755)
	db := filepath.Join(dir, "ledger.db")
	l := mustOpen(t, db)
	mustInsert(t, l, fullRecord("a"))
	mustInsert(t, l, fullRecord("b"))
	l.Close()
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(db + suffix); err == nil {
			t.Fatalf("%s left after the last writer closed", db+suffix)
		}
	}
	os.Chmod(db, 0o444)
	os.Chmod(dir, 0o555)
	os.Chmod(base, 0o755)

	if os.Geteuid() != 0 {
		ro, err := OpenReadOnly(ctxT(t), db)
		if err != nil {
			t.Fatalf("OpenReadOnly of a read-only ledger: %v", err)
		}
		defer ro.Close()
		if recs, err := ro.List(ctxT(t), Filter{}); err != nil || len(recs) != 2 {
			t.Fatalf("List = %d, %v; want 2 records", len(recs), err)
		}
		return
	}
	// The test binary, where nobody may run it.
	bin := filepath.Join(base, "ledger.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Dir(base)} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("%s is not searchable by other users", p)
		}
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = []string{roChildEnv + "=" + db, "HOME=/nonexistent"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "2" {
		t.Fatalf("listing as nobody: %v\n%s", err, out)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(db + suffix); err == nil {
			t.Fatalf("the reader created %s", db+suffix)
		}
	}
}

// roChild is the child of TestReadOnlyFileAndFolder.
func roChild(db string) int {
	l, err := OpenReadOnly(context.Background(), db)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	defer l.Close()
	recs, err := l.List(context.Background(), Filter{})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString(strconv.Itoa(len(recs)) + "\n")
	return 0
}

// A ledger of schema version 1 (no floor column) is read as it is by OpenReadOnly (floor 0) and migrated
// by Open, keeping its records.
func TestReadOldSchema(t *testing.T) {
	db := filepath.Join(t.TempDir(), "v1.db")
	raw, err := sql.Open("sqlite", sqliteURI(db))
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range append([]string{createSchemaVersion}, sqliteDialect.migrations[0]...) {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(`INSERT INTO schema_version VALUES (1, 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO records (name, start_ns, wall_ns, user_ns, sys_ns, peak_rss_bytes, exit_status, work_dir, stale, findings, git_head, git_dirty)
		VALUES ('old', 0, 5, 1, 1, 4096, 0, '/w', 0, NULL, '', 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	ro, err := OpenReadOnly(ctxT(t), db)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ro.List(ctxT(t), Filter{})
	ro.Close()
	if err != nil || len(recs) != 1 || recs[0].Name != "old" || recs[0].PeakRSSBytes != 4096 || recs[0].RSSFloorBytes != 0 {
		t.Fatalf("read-only List of a version 1 ledger = %+v, %v", recs, err)
	}
	l := mustOpen(t, db)
	r := fullRecord("new")
	r.RSSFloorBytes = 1234
	mustInsert(t, l, r)
	recs, err = l.List(ctxT(t), Filter{})
	if err != nil || len(recs) != 2 || recs[0].RSSFloorBytes != 1234 || recs[1].RSSFloorBytes != 0 {
		t.Fatalf("after migration: %+v, %v", recs, err)
	}
	var v int
	rawDB(l).QueryRow(`SELECT MAX(version) FROM schema_version`).Scan(&v)
	if v != SchemaVersion {
		t.Fatalf("schema version %d after Open, want %d", v, SchemaVersion)
	}
}

// Random bytes written over the pages of a ledger never read as "written by a newer stalecheck": a
// damaged file is named corrupt (or, where the damage touched nothing that is read, listed).
func TestCorruptLedgerNamed(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	l := mustOpen(t, good)
	for i := range 3 {
		mustInsert(t, l, fullRecord("r"+strconv.Itoa(i)))
	}
	var page int
	if err := rawDB(l).QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = 'schema_version'`).Scan(&page); err != nil {
		t.Fatal(err)
	}
	l.Close()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	rng := rand.New(rand.NewSource(8))
	corrupt := 0
	// Offsets in the schema_version page (where the repro hit), and elsewhere in the file.
	var offs []int
	for i := 0; i < 24; i++ {
		offs = append(offs, (page-1)*pageSize+rng.Intn(pageSize-256))
	}
	for i := 0; i < 24; i++ {
		offs = append(offs, pageSize+rng.Intn(len(data)-pageSize-256))
	}
	for i, off := range offs {
		bad := filepath.Join(dir, "bad"+strconv.Itoa(i)+".db")
		b := append([]byte{}, data...)
		rng.Read(b[off : off+256])
		os.WriteFile(bad, b, 0o644)
		for _, open := range []struct {
			name string
			f    func() (Ledger, error)
		}{{"OpenReadOnly", func() (Ledger, error) { return OpenReadOnly(ctxT(t), bad) }}, {"Open", func() (Ledger, error) { return Open(ctxT(t), bad) }}} {
			l, err := open.f()
			if err == nil {
				_, err = l.List(ctxT(t), Filter{})
				l.Close()
			}
			var tooNew *SchemaTooNewError
			var ce *CorruptError
			switch {
			case errors.As(err, &tooNew):
				t.Errorf("offset %d, %s: %v", off, open.name, err)
			case errors.As(err, &ce):
				corrupt++
				if ce.Ledger != bad || !strings.Contains(err.Error(), "is corrupt") {
					t.Errorf("offset %d, %s: %v does not name %s", off, open.name, err, bad)
				}
			}
		}
	}
	if corrupt == 0 {
		t.Fatalf("no damaged copy was named corrupt")
	}
}
