package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// childTables are the tables whose rows belong to one record (record_id) of schema version 1 or 2,
// deleted with it.
var childTables = []string{"args", "binaries", "natives", "sources", "toolchain", "env"}

// Delete implements Ledger.
func (l *sqlLedger) Delete(ctx context.Context, ids []int64) (int, error) {
	if l.readOnly {
		return 0, l.errorf("delete: the ledger was opened read-only")
	}
	if len(ids) == 0 {
		return 0, nil
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, l.errorf("delete: begin: %w", err)
	}
	defer tx.Rollback()
	n := 0
	const chunk = 500
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(part)), ", ") + ")"
		// The child rows go first and explicitly: the foreign keys cascade, but a connection that does
		// not enforce them (another SQLite client) must not leave orphans either.
		for _, t := range childTables {
			if _, err := tx.ExecContext(ctx, l.d.q(`DELETE FROM `+t+` WHERE record_id IN `+in), args...); err != nil {
				return 0, l.errorf("delete: %s: %w", t, err)
			}
		}
		res, err := tx.ExecContext(ctx, l.d.q(`DELETE FROM records WHERE id IN `+in), args...)
		if err != nil {
			return 0, l.errorf("delete: records: %w", err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return 0, l.errorf("delete: records: %w", err)
		}
		n += int(k)
	}
	// Build identities no record names any more (every run of that build removed) go too.
	if _, err := tx.ExecContext(ctx, `DELETE FROM identities WHERE NOT EXISTS (SELECT 1 FROM records WHERE records.identity_id = identities.id)`); err != nil {
		return 0, l.errorf("delete: identities: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, l.errorf("delete: commit: %w", err)
	}
	return n, nil
}

// importLock serializes concurrent imports into one PostgreSQL ledger (an arbitrary constant, another
// key than the migration lock), so that two imports of one record cannot both miss the other's copy.
// SQLite needs none: its write transactions begin with the write lock.
const importLock = `SELECT pg_advisory_xact_lock(5781926514470022)`

// Import implements Ledger.
func (l *sqlLedger) Import(ctx context.Context, recs []Record) ([]ImportResult, error) {
	if l.readOnly {
		return nil, l.errorf("import: the ledger was opened read-only")
	}
	type prepared struct {
		findings any
		ident    identityRow
	}
	preps := make([]prepared, len(recs))
	for i := range recs {
		f, c, err := l.prepareInsert(&recs[i])
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i+1, err)
		}
		preps[i] = prepared{f, c}
	}
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, l.errorf("import: begin: %w", err)
	}
	defer tx.Rollback()
	if l.d == postgresDialect {
		if _, err := tx.ExecContext(ctx, importLock); err != nil {
			return nil, l.errorf("import: lock: %w", err)
		}
	}
	out := make([]ImportResult, len(recs))
	for i := range recs {
		r := &recs[i]
		// Candidates of the same run: same name, start and folder (records_name_id narrows by name).
		cands, err := l.queryRecordsIn(ctx, tx, `SELECT `+l.recordColumns()+` FROM records WHERE name = ? AND start_ns = ? AND work_dir = ? ORDER BY id`,
			r.Name, startNS(r.Start), r.WorkDir)
		if err != nil {
			return nil, l.errorf("import: record %d: look for a copy: %w", i+1, err)
		}
		dup := int64(0)
		for j := range cands {
			if SameRun(&cands[j], r) {
				dup = cands[j].ID
				break
			}
		}
		if dup != 0 {
			out[i] = ImportResult{ID: dup, Duplicate: true}
			continue
		}
		id, err := l.insertTx(ctx, tx, r, preps[i].findings, preps[i].ident)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i+1, err)
		}
		out[i] = ImportResult{ID: id}
	}
	if err := tx.Commit(); err != nil {
		return nil, l.errorf("import: commit: %w", err)
	}
	for i := range recs {
		recs[i].ID = out[i].ID
	}
	return out, nil
}

// SameRun reports whether a and b record the same run: the same name, start (to the nanosecond),
// command, working folder and build identity (binaries, natives, sources, git state, toolchain and
// environment; nil and empty lists and maps are equal). IDs, timings and findings are not compared: a
// record exported and imported back keeps them, and the identity above already tells runs apart.
func SameRun(a, b *Record) bool {
	if a.Name != b.Name || startNS(a.Start) != startNS(b.Start) || a.WorkDir != b.WorkDir || !slices.Equal(a.Command, b.Command) {
		return false
	}
	ja, erra := json.Marshal(normIdentity(a.Identity))
	jb, errb := json.Marshal(normIdentity(b.Identity))
	return erra == nil && errb == nil && string(ja) == string(jb)
}

// normIdentity makes empty lists and maps nil, so that an identity read back from the ledger (no rows:
// nil) and one decoded from JSON ([] or {}) compare equal.
func normIdentity(id Identity) Identity {
	if len(id.Binaries) == 0 {
		id.Binaries = nil
	}
	if len(id.Sources) == 0 {
		id.Sources = nil
	}
	if len(id.Toolchain) == 0 {
		id.Toolchain = nil
	}
	if len(id.Env) == 0 {
		id.Env = nil
	}
	if len(id.Natives) == 0 {
		id.Natives = nil
	} else {
		ns := make([]Native, len(id.Natives))
		copy(ns, id.Natives)
		for i := range ns {
			if len(ns[i].Config.Features) == 0 {
				ns[i].Config.Features = nil
			}
			if len(ns[i].Config.Settings) == 0 {
				ns[i].Config.Settings = nil
			}
		}
		id.Natives = ns
	}
	return id
}
