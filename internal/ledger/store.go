package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stalecheck/stalecheck/internal/machine"
)

// sqlLedger is the Ledger of both backends, over database/sql.
type sqlLedger struct {
	db  *sql.DB
	d   *dialect
	loc string // the ledger's location, for messages
	// version is the ledger's schema version (0: no tables yet, an empty ledger opened read-only).
	version int
	// readOnly says the ledger was opened by OpenReadOnly: Insert refuses.
	readOnly bool
}

var _ Ledger = (*sqlLedger)(nil)

func (l *sqlLedger) Close() error { return l.db.Close() }

func (l *sqlLedger) errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if l.d == sqliteDialect && isCorrupt(err) {
		return &CorruptError{Ledger: l.loc, Detail: err.Error()}
	}
	return fmt.Errorf("ledger %s: %w", l.loc, err)
}

// readError is the error of a failed read: on SQLite, damage that made the read fail in another way
// than SQLite's own "malformed" (a NULL where the schema forbids one, a row of an unknown record) is
// named as such when PRAGMA quick_check finds the file damaged.
func (l *sqlLedger) readError(ctx context.Context, doing string, err error) error {
	if l.d == sqliteDialect && !isCorrupt(err) && ctx.Err() == nil {
		if p := quickCheck(ctx, l.db); p != "" {
			return &CorruptError{Ledger: l.loc, Detail: fmt.Sprintf("%s: %v; PRAGMA quick_check: %s", doing, err, p)}
		}
	}
	return l.errorf("%s: %w", doing, err)
}

// Insert implements Ledger.
func (l *sqlLedger) Insert(ctx context.Context, r *Record) (int64, error) {
	if l.readOnly {
		return 0, l.errorf("insert %q: the ledger was opened read-only", r.Name)
	}
	findings, ident, err := l.prepareInsert(r)
	if err != nil {
		return 0, err
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, l.errorf("insert %q: begin: %w", r.Name, err)
	}
	defer tx.Rollback()
	id, err := l.insertTx(ctx, tx, r, findings, ident)
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, l.errorf("insert %q: commit: %w", r.Name, err)
	}
	r.ID = id
	return id, nil
}

// prepareInsert checks r and returns its findings column and its build identity's row, as insertTx
// takes them.
func (l *sqlLedger) prepareInsert(r *Record) (any, identityRow, error) {
	findings, err := findingsText(r.Findings)
	if err != nil {
		return nil, identityRow{}, l.errorf("insert %q: %w", r.Name, err)
	}
	if l.d.utf8Only {
		if err := checkText(r); err != nil {
			return nil, identityRow{}, l.errorf("insert %q: %s cannot hold %w", r.Name, l.d.name, err)
		}
	}
	return findings, encodeIdentity(r.Identity), nil
}

// insertTx writes r's row in tx, and its build identity's row in identities unless a run of the same
// build put it there before, and returns the new ID (r.ID is not set).
func (l *sqlLedger) insertTx(ctx context.Context, tx *sql.Tx, r *Record, findings any, ident identityRow) (int64, error) {
	identityID, err := upsertIdentity(ctx, tx, l.d, ident)
	if err != nil {
		return 0, l.errorf("insert %q: %w", r.Name, err)
	}
	// Between the identity and the record: the point where a killed writer must leave no trace.
	if err := failpoint(ctx, "ledger-insert-mid"); err != nil {
		return 0, l.errorf("insert %q: %w", r.Name, err)
	}
	command := encodeCommand(r.Command)
	var id int64
	err = tx.QueryRowContext(ctx, l.d.q(`INSERT INTO records
		(name, start_ns, wall_ns, user_ns, sys_ns, peak_rss_bytes, rss_floor_bytes, exit_status, work_dir, stale, findings, git_head, git_dirty, identity_id, command, machine)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		r.Name, startNS(r.Start), r.WallNS, r.UserNS, r.SysNS, r.PeakRSSBytes, r.RSSFloorBytes, r.ExitStatus, r.WorkDir,
		r.Stale, findings, r.Identity.Git.Head, r.Identity.Git.Dirty, identityID, command, machineJSON(r.Machine)).Scan(&id)
	if err != nil {
		return 0, l.errorf("insert %q: records: %w", r.Name, err)
	}
	return id, nil
}

// startNS is t in nanoseconds since the Unix epoch; the zero Time is stored as 0 (and 0 read back as the
// zero Time).
func startNS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// rowInserter runs INSERTs in a transaction through one prepared statement per table, keeping the first error.
type rowInserter struct {
	ctx   context.Context
	tx    *sql.Tx
	d     *dialect
	query string
	stmt  *sql.Stmt
	err   error
}

func (w *rowInserter) exec(table, query string, args ...any) {
	if w.err != nil {
		return
	}
	if query != w.query {
		w.close()
		w.stmt, w.err = w.tx.PrepareContext(w.ctx, w.d.q(query))
		if w.err != nil {
			w.err = fmt.Errorf("%s: %w", table, w.err)
			return
		}
		w.query = query
	}
	if _, err := w.stmt.ExecContext(w.ctx, args...); err != nil {
		w.err = fmt.Errorf("%s: %w", table, err)
	}
}

func (w *rowInserter) close() {
	if w.stmt != nil {
		w.stmt.Close()
		w.stmt, w.query = nil, ""
	}
}

// findingsText validates raw findings and returns them as a nullable string (nil and JSON null give NULL).
func findingsText(f json.RawMessage) (any, error) {
	t := strings.TrimSpace(string(f))
	if t == "" || t == "null" {
		return nil, nil
	}
	if !json.Valid(f) {
		return nil, errors.New("findings are not valid JSON")
	}
	return string(f), nil
}

// checkText returns an error naming the first string of r that is not valid UTF-8 or holds a NUL byte.
func checkText(r *Record) error {
	bad := func(s string) string {
		if !utf8.ValidString(s) {
			return "is not valid UTF-8"
		}
		if strings.IndexByte(s, 0) >= 0 {
			return "contains a NUL byte"
		}
		return ""
	}
	type field struct {
		name string
		val  string
	}
	fields := []field{{"name", r.Name}, {"work_dir", r.WorkDir}, {"findings", string(r.Findings)},
		{"git.head", r.Identity.Git.Head}}
	for i, a := range r.Command {
		fields = append(fields, field{fmt.Sprintf("command[%d]", i), a})
	}
	for i, b := range r.Identity.Binaries {
		fields = append(fields, field{fmt.Sprintf("binaries[%d].path", i), b.Path},
			field{fmt.Sprintf("binaries[%d].digest", i), b.Digest}, field{fmt.Sprintf("binaries[%d].build_id", i), b.BuildID})
	}
	for i, n := range r.Identity.Natives {
		fields = append(fields, field{fmt.Sprintf("natives[%d].library", i), n.Library},
			field{fmt.Sprintf("natives[%d].path", i), n.Path}, field{fmt.Sprintf("natives[%d].fingerprint", i), n.Fingerprint})
		for j, f := range n.Config.Features {
			fields = append(fields, field{fmt.Sprintf("natives[%d].config.features[%d]", i, j), f})
		}
		for k, v := range n.Config.Settings {
			fields = append(fields, field{fmt.Sprintf("natives[%d].config.settings key %q", i, k), k},
				field{fmt.Sprintf("natives[%d].config.settings[%q]", i, k), v})
		}
	}
	for i, s := range r.Identity.Sources {
		fields = append(fields, field{fmt.Sprintf("sources[%d].path", i), s.Path}, field{fmt.Sprintf("sources[%d].digest", i), s.Digest})
	}
	for _, m := range []struct {
		name string
		m    map[string]string
	}{{"toolchain", r.Identity.Toolchain}, {"env", r.Identity.Env}} {
		for _, k := range sortedKeys(m.m) {
			fields = append(fields, field{fmt.Sprintf("%s key %q", m.name, k), k}, field{fmt.Sprintf("%s[%q]", m.name, k), m.m[k]})
		}
	}
	for _, f := range fields {
		if why := bad(f.val); why != "" {
			return fmt.Errorf("field %s: it %s", f.name, why)
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// recordColumns are the columns of records queryRecords scans, for the ledger's schema version (a
// version 1 ledger, read without migrating, has no floor: 0; before version 3 no identity_id or command:
// NULL, the identity and command are in the child tables).
func (l *sqlLedger) recordColumns() string {
	floor := "rss_floor_bytes"
	if l.version < 2 {
		floor = "0"
	}
	ident := "identity_id, command"
	if l.version < 3 {
		ident = "NULL, NULL"
	}
	mach := "machine"
	if l.version < 4 {
		mach = "NULL"
	}
	return `id, name, start_ns, wall_ns, user_ns, sys_ns, peak_rss_bytes, ` + floor + `, exit_status, work_dir, stale, findings, git_head, git_dirty, ` + ident + `, ` + mach
}

// Get implements Ledger.
func (l *sqlLedger) Get(ctx context.Context, id int64) (*Record, error) {
	if l.version == 0 {
		return nil, l.errorf("record %d: %w", id, ErrNotFound)
	}
	recs, err := l.queryRecords(ctx, `SELECT `+l.recordColumns()+` FROM records WHERE id = ?`, id)
	if err != nil {
		return nil, l.readError(ctx, fmt.Sprintf("get record %d", id), err)
	}
	if len(recs) == 0 {
		return nil, l.errorf("record %d: %w", id, ErrNotFound)
	}
	return &recs[0], nil
}

// List implements Ledger.
func (l *sqlLedger) List(ctx context.Context, f Filter) ([]Record, error) {
	if l.version == 0 {
		return nil, nil
	}
	query := `SELECT ` + l.recordColumns() + ` FROM records`
	var args []any
	if f.Name != "" {
		query += ` WHERE name = ?`
		args = append(args, f.Name)
	}
	query += ` ORDER BY id DESC`
	if f.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	recs, err := l.queryRecords(ctx, query, args...)
	if err != nil {
		return nil, l.readError(ctx, "list", err)
	}
	return recs, nil
}

// queryRecords runs a query over records (selecting recordColumns) and loads the rows of each record's
// child tables. Records are immutable once committed, so reading the children in separate statements sees
// them whole.
func (l *sqlLedger) queryRecords(ctx context.Context, query string, args ...any) ([]Record, error) {
	return l.queryRecordsIn(ctx, l.db, query, args...)
}

// querier is what queryRecordsIn reads through: the pool (*sql.DB) or a transaction (*sql.Tx).
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryRecordsIn is queryRecords reading through q.
func (l *sqlLedger) queryRecordsIn(ctx context.Context, q querier, query string, args ...any) ([]Record, error) {
	rows, err := q.QueryContext(ctx, l.d.q(query), args...)
	if err != nil {
		return nil, err
	}
	// Rows are gathered in blocks and copied into one slice at the end: appending 10,000 records (about
	// 300 bytes each) one by one copied and cleared them over and over (a sixth of `runs`' time).
	var blocks [][]Record
	var identityOf []int64 // per record: its identities row, 0 for a record of schema version 1 or 2
	var commands [][]byte
	for rows.Next() {
		var (
			r        Record
			start    int64
			findings sql.NullString
			identity sql.NullInt64
			command  []byte
			mach     sql.NullString
		)
		if err := rows.Scan(&r.ID, &r.Name, &start, &r.WallNS, &r.UserNS, &r.SysNS, &r.PeakRSSBytes, &r.RSSFloorBytes, &r.ExitStatus,
			&r.WorkDir, &r.Stale, &findings, &r.Identity.Git.Head, &r.Identity.Git.Dirty, &identity, &command, &mach); err != nil {
			rows.Close()
			return nil, err
		}
		if mach.Valid && mach.String != "" {
			// Conditions a later stalecheck wrote with fields this one lacks are read as far as known;
			// an unreadable value leaves them unknown rather than fail the read.
			var c machine.Conditions
			if json.Unmarshal([]byte(mach.String), &c) == nil {
				r.Machine = &c
			}
		}
		if start != 0 {
			r.Start = time.Unix(0, start)
		}
		if findings.Valid {
			r.Findings = json.RawMessage(findings.String)
		}
		if len(blocks) == 0 || len(blocks[len(blocks)-1]) == cap(blocks[len(blocks)-1]) {
			blocks = append(blocks, make([]Record, 0, min(4096, 64<<len(blocks))))
		}
		blocks[len(blocks)-1] = append(blocks[len(blocks)-1], r)
		identityOf = append(identityOf, identity.Int64)
		commands = append(commands, command)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(identityOf) == 0 {
		return nil, nil
	}
	recs := make([]Record, 0, len(identityOf))
	for _, b := range blocks {
		recs = append(recs, b...)
	}
	blocks = nil
	// Records of schema version 3 name their identity (shared by the runs of one build) and hold their
	// command; older ones have rows in the child tables.
	byID := map[int64]*Record{}
	var old []any
	byIdentity := map[int64][]*Record{}
	for i := range recs {
		r := &recs[i]
		if identityOf[i] == 0 {
			byID[r.ID] = r
			old = append(old, r.ID)
			continue
		}
		byIdentity[identityOf[i]] = append(byIdentity[identityOf[i]], r)
		cmd, err := decodeCommand(commands[i])
		if err != nil {
			return nil, fmt.Errorf("record %d: command: %w", r.ID, err)
		}
		r.Command = cmd
	}
	if len(byIdentity) > 0 {
		if err := l.loadIdentities(ctx, q, byIdentity); err != nil {
			return nil, err
		}
	}
	// Bounded IN lists: SQLite and PostgreSQL both cap the number of parameters of a statement.
	const chunk = 500
	for start := 0; start < len(old); start += chunk {
		part := old[start:min(start+chunk, len(old))]
		if err := l.loadChildren(ctx, q, byID, part); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// loadChildren reads the child-table rows of the records with the given IDs into byID.
func (l *sqlLedger) loadChildren(ctx context.Context, q querier, byID map[int64]*Record, ids []any) error {
	in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + ")"
	each := func(table, query string, scan func(rows *sql.Rows) error) error {
		rows, err := q.QueryContext(ctx, l.d.q(query+` WHERE record_id IN `+in+` ORDER BY record_id, 2`), ids...)
		if err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
		return nil
	}
	rec := func(id int64) (*Record, error) {
		r, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("row for record %d, which was not asked for", id)
		}
		return r, nil
	}
	var id int64
	var ord int
	err := each("args", `SELECT record_id, ord, arg FROM args`, func(rows *sql.Rows) error {
		var a string
		if err := rows.Scan(&id, &ord, &a); err != nil {
			return err
		}
		r, err := rec(id)
		if err != nil {
			return err
		}
		r.Command = append(r.Command, a)
		return nil
	})
	if err != nil {
		return err
	}
	err = each("binaries", `SELECT record_id, ord, path, size, digest, build_id FROM binaries`, func(rows *sql.Rows) error {
		var b Binary
		if err := rows.Scan(&id, &ord, &b.Path, &b.Size, &b.Digest, &b.BuildID); err != nil {
			return err
		}
		r, err := rec(id)
		if err != nil {
			return err
		}
		r.Identity.Binaries = append(r.Identity.Binaries, b)
		return nil
	})
	if err != nil {
		return err
	}
	err = each("natives", `SELECT record_id, ord, library, path, fingerprint, config FROM natives`, func(rows *sql.Rows) error {
		var n Native
		var config string
		if err := rows.Scan(&id, &ord, &n.Library, &n.Path, &n.Fingerprint, &config); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(config), &n.Config); err != nil {
			return fmt.Errorf("record %d native %d: config: %w", id, ord, err)
		}
		r, err := rec(id)
		if err != nil {
			return err
		}
		r.Identity.Natives = append(r.Identity.Natives, n)
		return nil
	})
	if err != nil {
		return err
	}
	err = each("sources", `SELECT record_id, ord, path, digest FROM sources`, func(rows *sql.Rows) error {
		var s Source
		if err := rows.Scan(&id, &ord, &s.Path, &s.Digest); err != nil {
			return err
		}
		r, err := rec(id)
		if err != nil {
			return err
		}
		r.Identity.Sources = append(r.Identity.Sources, s)
		return nil
	})
	if err != nil {
		return err
	}
	for _, m := range []struct{ table, query string }{
		{"toolchain", `SELECT record_id, tool, version FROM toolchain`},
		{"env", `SELECT record_id, name, value FROM env`},
	} {
		err = each(m.table, m.query, func(rows *sql.Rows) error {
			var k, v string
			if err := rows.Scan(&id, &k, &v); err != nil {
				return err
			}
			r, err := rec(id)
			if err != nil {
				return err
			}
			dst := &r.Identity.Env
			if m.table == "toolchain" {
				dst = &r.Identity.Toolchain
			}
			if *dst == nil {
				*dst = map[string]string{}
			}
			(*dst)[k] = v
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// machineJSON is the machine column's value: the conditions as JSON, NULL when unknown.
func machineJSON(c *machine.Conditions) any {
	if c == nil {
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	return string(b)
}
