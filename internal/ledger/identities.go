package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// A build identity (Identity without Git, which is the work tree's state at the run and stays in the
// record's row) is stored once in the identities table (schema version 3) in this encoding, chosen over
// JSON because it keeps strings byte for byte (SQLite ledgers store non-UTF-8 paths as given) and is
// deterministic (maps sorted by key), so its SHA-256 is the identity's key:
//
//	"SCI1"
//	binaries:  uvarint n, then n × (str path, varint size, str digest, str build_id)
//	natives:   uvarint n, then n × (str library, str path, str fingerprint,
//	           uvarint k, k × str feature, uvarint m, m × (str key, str value) sorted by key)
//	sources:   uvarint n, then n × (str path, str digest)
//	toolchain: uvarint n, then n × (str tool, str version) sorted by tool
//	env:       uvarint n, then n × (str name, str value) sorted by name
//
// where str is a uvarint byte length followed by the bytes. Empty lists and maps decode as nil (SameRun
// treats nil and empty alike).
const identityMagic = "SCI1"

// identityRow is a build identity as the identities table holds it.
type identityRow struct {
	key string // "sha256:<hex>" of doc
	doc []byte
}

type identityEncoder struct{ b []byte }

func (e *identityEncoder) uint(n uint64) { e.b = binary.AppendUvarint(e.b, n) }
func (e *identityEncoder) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *identityEncoder) kv(m map[string]string) {
	keys := sortedKeys(m)
	e.uint(uint64(len(keys)))
	for _, k := range keys {
		e.str(k)
		e.str(m[k])
	}
}

// encodeIdentity returns id's row in the identities table.
func encodeIdentity(id Identity) identityRow {
	e := &identityEncoder{b: []byte(identityMagic)}
	e.uint(uint64(len(id.Binaries)))
	for _, b := range id.Binaries {
		e.str(b.Path)
		e.b = binary.AppendVarint(e.b, b.Size)
		e.str(b.Digest)
		e.str(b.BuildID)
	}
	e.uint(uint64(len(id.Natives)))
	for _, n := range id.Natives {
		e.str(n.Library)
		e.str(n.Path)
		e.str(n.Fingerprint)
		e.uint(uint64(len(n.Config.Features)))
		for _, f := range n.Config.Features {
			e.str(f)
		}
		e.kv(n.Config.Settings)
	}
	e.uint(uint64(len(id.Sources)))
	for _, s := range id.Sources {
		e.str(s.Path)
		e.str(s.Digest)
	}
	e.kv(id.Toolchain)
	e.kv(id.Env)
	sum := sha256.Sum256(e.b)
	return identityRow{key: "sha256:" + hex.EncodeToString(sum[:]), doc: e.b}
}

// KeyOf returns the key of a build identity as the identities table holds it: id.Key when the identity
// was read from a ledger of schema version 3, else "sha256:<hex>" of the encoding above (every field but
// Git and Key). Equal keys mean equal identities; `runs --format json` names each record's identity by it.
func KeyOf(id Identity) string {
	if id.Key != "" {
		return id.Key
	}
	return encodeIdentity(id).key
}

var errShortIdentity = errors.New("truncated or damaged encoding (the ledger row was altered)")

type identityDecoder struct {
	b   []byte
	err error
}

func (d *identityDecoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	n, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.err = errShortIdentity
		return 0
	}
	d.b = d.b[k:]
	return n
}

func (d *identityDecoder) int() int64 {
	if d.err != nil {
		return 0
	}
	n, k := binary.Varint(d.b)
	if k <= 0 {
		d.err = errShortIdentity
		return 0
	}
	d.b = d.b[k:]
	return n
}

// count reads a list length, bounded by the bytes left (every element takes at least one byte).
func (d *identityDecoder) count() int {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.err = errShortIdentity
		return 0
	}
	return int(n)
}

func (d *identityDecoder) str() string {
	n := d.uint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = errShortIdentity
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *identityDecoder) kv() map[string]string {
	n := d.count()
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.str()
		m[k] = d.str()
	}
	return m
}

// decodeIdentity decodes encodeIdentity's bytes (Git is left zero).
func decodeIdentity(b []byte) (Identity, error) {
	var id Identity
	if !strings.HasPrefix(string(b), identityMagic) {
		return id, errors.New("not an identity encoding (no SCI1 magic)")
	}
	d := &identityDecoder{b: b[len(identityMagic):]}
	if n := d.count(); n > 0 {
		id.Binaries = make([]Binary, n)
		for i := range id.Binaries {
			id.Binaries[i] = Binary{Path: d.str(), Size: d.int(), Digest: d.str(), BuildID: d.str()}
		}
	}
	if n := d.count(); n > 0 {
		id.Natives = make([]Native, n)
		for i := range id.Natives {
			nv := &id.Natives[i]
			nv.Library, nv.Path, nv.Fingerprint = d.str(), d.str(), d.str()
			if k := d.count(); k > 0 {
				nv.Config.Features = make([]string, k)
				for j := range nv.Config.Features {
					nv.Config.Features[j] = d.str()
				}
			}
			nv.Config.Settings = d.kv()
		}
	}
	if n := d.count(); n > 0 {
		id.Sources = make([]Source, n)
		for i := range id.Sources {
			id.Sources[i] = Source{Path: d.str(), Digest: d.str()}
		}
	}
	id.Toolchain = d.kv()
	id.Env = d.kv()
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d bytes after the identity encoding", len(d.b))
	}
	return id, d.err
}

// upsertIdentity returns the ID of row in the identities table, inserting it when no run of that build
// was recorded before. Both dialects take INSERT … ON CONFLICT DO NOTHING; under PostgreSQL a concurrent
// insert of the same key waits for the other transaction, after which the SELECT (a new statement in
// READ COMMITTED) sees its row.
func upsertIdentity(ctx context.Context, tx *sql.Tx, d *dialect, row identityRow) (int64, error) {
	if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO identities (key, identity) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`), row.key, row.doc); err != nil {
		return 0, fmt.Errorf("identities: %w", err)
	}
	var id int64
	if err := tx.QueryRowContext(ctx, d.q(`SELECT id FROM identities WHERE key = ?`), row.key).Scan(&id); err != nil {
		return 0, fmt.Errorf("identities: %w", err)
	}
	return id, nil
}

// loadIdentities fills the Identity (all but Git, which the record's row holds) of each record in
// byIdentity from the identities table, reading and decoding each identity once; records of one build
// share the decoded slices and maps (callers treat records as read-only).
func (l *sqlLedger) loadIdentities(ctx context.Context, q querier, byIdentity map[int64][]*Record) error {
	ids := make([]any, 0, len(byIdentity))
	for id := range byIdentity {
		ids = append(ids, id)
	}
	const chunk = 500
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		in := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(part)), ", ") + ")"
		rows, err := q.QueryContext(ctx, l.d.q(`SELECT id, key, identity FROM identities WHERE id IN `+in), part...)
		if err != nil {
			return fmt.Errorf("identities: %w", err)
		}
		for rows.Next() {
			var id int64
			var key string
			var doc []byte
			if err := rows.Scan(&id, &key, &doc); err != nil {
				rows.Close()
				return fmt.Errorf("identities: %w", err)
			}
			ident, err := decodeIdentity(doc)
			if err != nil {
				rows.Close()
				return fmt.Errorf("identities: identity %d: %w", id, err)
			}
			ident.Key = key
			for _, r := range byIdentity[id] {
				ident.Git = r.Identity.Git
				r.Identity = ident
			}
			delete(byIdentity, id)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("identities: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("identities: %w", err)
		}
	}
	for id, recs := range byIdentity {
		return fmt.Errorf("identities: identity %d, which record %d names, is missing", id, recs[0].ID)
	}
	return nil
}

// encodeCommand is the records.command column (schema version 3): uvarint n, then n × str, strings byte
// for byte.
func encodeCommand(args []string) []byte {
	e := &identityEncoder{}
	e.uint(uint64(len(args)))
	for _, a := range args {
		e.str(a)
	}
	return e.b
}

// decodeCommand decodes encodeCommand's bytes; an empty command is nil.
func decodeCommand(b []byte) ([]string, error) {
	d := &identityDecoder{b: b}
	n := d.count()
	if n == 0 {
		return nil, d.err
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d bytes after the command", len(d.b))
	}
	return out, d.err
}
