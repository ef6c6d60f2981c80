package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
)

// RunsDoc is the JSON document of `stalecheck runs --format json` (docs/json-schema.md): each build
// identity once, in Identities under its key (ledger.KeyOf), and the records, newest first, each naming
// its identity by that key. The runs of one build share one identity, so 10,000 runs of 20 builds print
// 20 identities, not 10,000 (an identity of 400 sources is about 80 KB of JSON).
type RunsDoc struct {
	report.Envelope
	Ledger     string                        `json:"ledger"`
	Identities map[string]sharedIdentityJSON `json:"identities"`
	Records    []runsRecordJSON              `json:"records"`
}

// runsRecordJSON is a record of RunsDoc: recordJSON without its identity, which is in the document's
// identities under IdentityKey; Git (the work tree's state at the run) stays with the record.
type runsRecordJSON struct {
	recordJSON
	// Identity hides the embedded record's identity from the JSON (it is never set).
	Identity    *struct{}  `json:"identity,omitempty"`
	IdentityKey string     `json:"identity_key"`
	Git         ledger.Git `json:"git"`
}

// RunsSchemaVersion is the schema version of the `runs --format json` listing: 2 since each build
// identity is printed once in `identities` and records name theirs by `identity_key` (version 1 records
// held their whole `identity`; runs --import reads both).
const RunsSchemaVersion = 2

// sharedIdentityJSON is a build identity as RunsDoc's identities hold it: ledger.Identity without Git.
type sharedIdentityJSON struct {
	Binaries  []ledger.Binary   `json:"binaries"`
	Natives   []ledger.Native   `json:"natives"`
	Sources   []ledger.Source   `json:"sources"`
	Toolchain map[string]string `json:"toolchain"`
	Env       map[string]string `json:"env"`
}

// newRunsDoc builds the document of recs; each identity is keyed once (records read from a ledger of
// schema version 3 carry their key; older ones are encoded to find it).
func newRunsDoc(loc string, recs []ledger.Record) RunsDoc {
	doc := RunsDoc{Envelope: report.Envelope{SchemaVersion: RunsSchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "runs"},
		Ledger: loc, Identities: map[string]sharedIdentityJSON{}, Records: make([]runsRecordJSON, 0, len(recs))}
	for i := range recs {
		r := &recs[i]
		key := ledger.KeyOf(r.Identity)
		if _, ok := doc.Identities[key]; !ok {
			id := r.Identity
			doc.Identities[key] = sharedIdentityJSON{Binaries: id.Binaries, Natives: id.Natives, Sources: id.Sources, Toolchain: id.Toolchain, Env: id.Env}
		}
		doc.Records = append(doc.Records, runsRecordJSON{recordJSON: newRecordJSON(r), IdentityKey: key, Git: r.Identity.Git})
	}
	return doc
}

// resolve puts each record's identity back from the document's identities (and its own git), as
// ledger.Record holds it. Errors name a record whose identity_key is not among the identities.
func (d *RunsDoc) resolve() error {
	for i := range d.Records {
		r := &d.Records[i]
		id, ok := d.Identities[r.IdentityKey]
		if !ok {
			return fmt.Errorf("record %d (id %d): identity_key %q is not among the document's identities", i+1, r.ID, r.IdentityKey)
		}
		r.Record.Identity = ledger.Identity{Binaries: id.Binaries, Natives: id.Natives, Sources: id.Sources, Toolchain: id.Toolchain, Env: id.Env, Git: r.Git}
	}
	return nil
}

// sharedIdentity fills j.Identity of a record of a runs document from the document's identities: the
// identity under j.IdentityKey with the record's git. Errors: identity_key outside a runs document, or
// naming no identity of it, beside an identity of its own, or git without identity_key.
func sharedIdentity(j *importJSON, ids map[string]sharedIdentityJSON) error {
	switch {
	case j.IdentityKey == nil:
		return errors.New(`"git" beside the record belongs with "identity_key" (a record of a runs document); a record with its own "identity" holds git inside it`)
	case j.Identity != nil:
		return errors.New(`both "identity" and "identity_key": give one`)
	case ids == nil:
		return fmt.Errorf("identity_key %q names an identity of a runs document: import the whole document (stalecheck runs --format json), or give the record its identity", *j.IdentityKey)
	}
	id, ok := ids[*j.IdentityKey]
	if !ok {
		return fmt.Errorf("identity_key %q is not among the document's identities", *j.IdentityKey)
	}
	ident := ledger.Identity{Binaries: id.Binaries, Natives: id.Natives, Sources: id.Sources, Toolchain: id.Toolchain, Env: id.Env}
	if j.Git != nil {
		ident.Git = *j.Git
	}
	if ledger.KeyOf(ident) != *j.IdentityKey {
		return fmt.Errorf("identity_key %q is not the key of the identity the document holds under it (%s): the identity was changed after the document was written", *j.IdentityKey, ledger.KeyOf(ident))
	}
	j.Identity = &ident
	return nil
}

// splitRunsDoc reads data as a `runs --format json` document (an object with "records"): the raw
// records with their byte offsets, and the identities. isDoc is false when data is not such a document
// (a single record, JSON lines: then nothing is returned). offs always ends with the offset of an
// error, if any.
func splitRunsDoc(data []byte) (raws []json.RawMessage, offs []int64, ids map[string]sharedIdentityJSON, isDoc bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	fail := func(e error) ([]json.RawMessage, []int64, map[string]sharedIdentityJSON, bool, error) {
		return nil, append(offs, dec.InputOffset()), nil, isDoc, e
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, nil, false, nil
	}
	var command string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, nil, false, nil
		}
		key, _ := t.(string)
		switch key {
		case "records":
			isDoc = true
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return fail(errors.New(`"records" is not a list`))
			}
			for dec.More() {
				off := dec.InputOffset()
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return fail(fmt.Errorf("record %d: not valid JSON: %v", len(raws)+1, err))
				}
				raws, offs = append(raws, raw), append(offs, off)
			}
			if _, err := dec.Token(); err != nil {
				return fail(err)
			}
		case "identities":
			if err := dec.Decode(&ids); err != nil {
				return fail(fmt.Errorf(`"identities": %v`, err))
			}
		case "command":
			if err := dec.Decode(&command); err != nil {
				return nil, nil, nil, false, nil
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				if isDoc {
					return fail(err)
				}
				return nil, nil, nil, false, nil
			}
		}
	}
	if !isDoc {
		return nil, nil, nil, false, nil
	}
	if _, err := dec.Token(); err != nil {
		return fail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(errors.New("something follows the document"))
	}
	if command != "runs" {
		return fail(fmt.Errorf(`an object with "records" whose "command" is %q, not "runs"`, command))
	}
	if ids == nil {
		ids = map[string]sharedIdentityJSON{}
	}
	return raws, offs, ids, true, nil
}
