package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// childRows counts the rows of every child table that belong to record id.
func childRows(t *testing.T, l Ledger, id int64) int {
	t.Helper()
	d := l.(*sqlLedger).d
	n := 0
	for _, tab := range childTables {
		var k int
		if err := rawDB(l).QueryRow(d.q(`SELECT COUNT(*) FROM `+tab+` WHERE record_id = ?`), id).Scan(&k); err != nil {
			t.Fatal(err)
		}
		n += k
	}
	return n
}

// Delete removes exactly the records asked for, with all their identity rows, in one transaction; IDs
// are not reused afterwards; a read-only ledger refuses.
func TestPruneDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		l := mustOpen(t, dsn)
		var ids []int64
		for _, name := range []string{"a", "b", "a", "c"} {
			ids = append(ids, mustInsert(t, l, fullRecord(name)))
		}
		// Four runs of one build: one identity row, no child rows (schema version 3).
		if n := childRows(t, l, ids[0]); n != 0 {
			t.Fatalf("record %d has %d child rows, want 0 (its identity is shared)", ids[0], n)
		}
		if n := identityRows(t, l); n != 1 {
			t.Fatalf("%d identity rows for four runs of one build, want 1", n)
		}
		n, err := l.Delete(ctxT(t), []int64{ids[0], ids[2], 999_999})
		if err != nil || n != 2 {
			t.Fatalf("Delete = %d, %v; want 2 removed", n, err)
		}
		rest, err := l.List(ctxT(t), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if got := recordIDs(rest); !cmp.Equal(got, []int64{ids[3], ids[1]}) {
			t.Fatalf("after Delete: %v, want %v", got, []int64{ids[3], ids[1]})
		}
		for _, id := range []int64{ids[0], ids[2]} {
			if n := childRows(t, l, id); n != 0 {
				t.Errorf("record %d: %d child rows left after the delete", id, n)
			}
		}
		if n := identityRows(t, l); n != 1 {
			t.Errorf("%d identity rows after deleting two of four runs of one build, want 1", n)
		}
		kept, err := l.Get(ctxT(t), ids[1])
		if err != nil || len(kept.Identity.Sources) != 2 || len(kept.Command) != 6 {
			t.Errorf("kept record %d = %+v, %v", ids[1], kept, err)
		}
		if next := mustInsert(t, l, fullRecord("d")); next <= ids[3] {
			t.Errorf("ID %d reused after a delete (highest before: %d)", next, ids[3])
		}
		if n, err := l.Delete(ctxT(t), []int64{ids[1], ids[3]}); n != 2 || err != nil {
			t.Fatalf("Delete of the other runs = %d, %v", n, err)
		}
		if n := identityRows(t, l); n != 1 {
			t.Errorf("%d identity rows while run \"d\" of the build remains, want 1", n)
		}
		if n, err := l.Delete(ctxT(t), nil); n != 0 || err != nil {
			t.Errorf("Delete(nil) = %d, %v", n, err)
		}
		ro, err := OpenReadOnly(ctxT(t), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		if _, err := ro.Delete(ctxT(t), []int64{ids[1]}); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("Delete on a read-only ledger = %v", err)
		}
	})
}

// Import keeps each record's start, timings and identity, skips a record already in the ledger (or
// earlier in the batch), and on an error anywhere imports nothing.
func TestImportRecords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		l := mustOpen(t, dsn)
		first := fullRecord("msm")
		firstID := mustInsert(t, l, first)
		back, err := l.Get(ctxT(t), firstID)
		if err != nil {
			t.Fatal(err)
		}
		other := fullRecord("msm")
		other.Start = other.Start.Add(time.Nanosecond) // one nanosecond later: another run
		env := fullRecord("msm")
		env.Identity.Env["RUSTFLAGS"] = "" // another build identity
		batch := []Record{*back, *other, *other, *env}
		res, err := l.Import(ctxT(t), batch)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 4 || !res[0].Duplicate || res[0].ID != firstID || res[1].Duplicate || !res[2].Duplicate ||
			res[2].ID != res[1].ID || res[3].Duplicate || res[3].ID <= res[1].ID {
			t.Fatalf("Import results %+v", res)
		}
		got, err := l.Get(ctxT(t), res[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		want := fullRecord("msm")
		want.Start, want.ID = other.Start, res[1].ID
		if diff := cmp.Diff(want, got, cmpRecords...); diff != "" {
			t.Errorf("imported record differs:\n%s", diff)
		}
		if all, _ := l.List(ctxT(t), Filter{}); len(all) != 3 {
			t.Errorf("%d records after the import, want 3", len(all))
		}

		// A record the database refuses in the middle of the batch: nothing of the batch stays.
		db, d := rawDB(l), l.(*sqlLedger).d
		if d == sqliteDialect {
			_, err = db.Exec(`CREATE TRIGGER boom BEFORE INSERT ON records WHEN NEW.name = 'boom' BEGIN SELECT RAISE(ABORT, 'boom refused'); END`)
		} else {
			_, err = db.Exec(`CREATE FUNCTION boom() RETURNS trigger AS $$ BEGIN IF NEW.name = 'boom' THEN RAISE EXCEPTION 'boom refused'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
				CREATE TRIGGER boom BEFORE INSERT ON records FOR EACH ROW EXECUTE FUNCTION boom()`)
		}
		if err != nil {
			t.Fatal(err)
		}
		fresh := fullRecord("fresh")
		_, err = l.Import(ctxT(t), []Record{*fresh, *fullRecord("boom")})
		if err == nil || !strings.Contains(err.Error(), "record 2:") || !strings.Contains(err.Error(), "boom refused") {
			t.Fatalf("Import with a refused record = %v, want an error naming record 2", err)
		}
		if rs, _ := l.List(ctxT(t), Filter{Name: "fresh"}); len(rs) != 0 {
			t.Errorf("a failed import left record %v", recordIDs(rs))
		}
		// Invalid findings are refused before anything is written, naming the record.
		bad := fullRecord("fresh")
		bad.Findings = []byte(`[{`)
		if _, err := l.Import(ctxT(t), []Record{*fresh, *bad}); err == nil || !strings.Contains(err.Error(), "record 2:") {
			t.Errorf("Import with bad findings = %v", err)
		}
		if rs, _ := l.List(ctxT(t), Filter{Name: "fresh"}); len(rs) != 0 {
			t.Errorf("a refused import left record %v", recordIDs(rs))
		}
	})
}
