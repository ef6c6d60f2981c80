package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/machine"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/runner"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// importJSON is one record as `runs --import` reads it: the shape recordJSON writes (runs --format json,
// and run when the ledger cannot be reached). Pointers tell a missing field from a zero one.
type importJSON struct {
	ID            *int64           `json:"id"`
	Name          *string          `json:"name"`
	Start         *time.Time       `json:"start"`
	StartNS       *int64           `json:"start_ns"`
	WallNS        *int64           `json:"wall_ns"`
	UserNS        *int64           `json:"user_ns"`
	SysNS         *int64           `json:"sys_ns"`
	PeakRSSBytes  *int64           `json:"peak_rss_bytes"`
	RSSFloorBytes *int64           `json:"rss_floor_bytes"`
	ExitStatus    *int             `json:"exit_status"`
	Command       []string         `json:"command"`
	WorkDir       *string          `json:"work_dir"`
	Stale         *bool            `json:"stale"`
	Findings      json.RawMessage  `json:"findings"`
	Identity      *ledger.Identity `json:"identity"`
	// Machine is the run's machine conditions (ledger schema 4; absent before).
	Machine *machine.Conditions `json:"machine"`
	// IdentityKey and Git are a record of a runs document (RunsDoc): its identity is the document's.
	IdentityKey    *string     `json:"identity_key"`
	Git            *ledger.Git `json:"git"`
	Build          *string     `json:"build"`
	PeakRSSAtFloor *bool       `json:"peak_rss_at_floor"`
	Note           *string     `json:"note"`
}

// maxImportBytes bounds the file --import reads.
const maxImportBytes = safeio.MaxCache

// readImport reads the records of an --import file ("-": standard input): one JSON object, a JSON array
// of objects, or objects one after another (JSON lines). Errors name the file and the 1-based index and
// line of the record.
func readImport(path string, stdin io.Reader) ([]ledger.Record, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, maxImportBytes+1))
		if err == nil && len(data) > maxImportBytes {
			err = fmt.Errorf("more than %d bytes", maxImportBytes)
		}
	} else {
		data, err = safeio.ReadFile(path, maxImportBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("--import %s: %w", path, err)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("--import %s: no records (the file is empty)", path)
	}
	lineAt := func(off int64) int {
		off = min(max(off, 0), int64(len(data)))
		for off < int64(len(data)) && (data[off] == ' ' || data[off] == ',' || data[off] == '\t' || data[off] == '\n' || data[off] == '\r') {
			off++
		}
		return 1 + bytes.Count(data[:off], []byte("\n"))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	where := func(i int, off int64) string {
		return fmt.Sprintf("--import %s: record %d (line %d)", path, i, lineAt(off))
	}
	decodeErr := func(i int, off int64, err error) error {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%s: the file ends inside the record (truncated?)", where(i, off))
		}
		return fmt.Errorf("%s: not valid JSON: %v", where(i, off), err)
	}
	var recs []ledger.Record
	var ids map[string]sharedIdentityJSON // a runs document's identities
	add := func(raw json.RawMessage, i int, off int64) error {
		r, err := decodeImport(raw, ids)
		if err != nil {
			return fmt.Errorf("%s: %w", where(i, off), err)
		}
		recs = append(recs, r)
		return nil
	}
	if trimmed[0] == '{' {
		// A whole `runs --format json` document: its records name their identities by key.
		raws, offs, docIDs, isDoc, err := splitRunsDoc(data)
		if isDoc {
			if err != nil {
				return nil, fmt.Errorf("--import %s: a runs document (line %d): %w", path, lineAt(offs[len(offs)-1]), err)
			}
			ids = docIDs
			for i, raw := range raws {
				if err := add(raw, i+1, offs[i]); err != nil {
					return nil, err
				}
			}
			if len(recs) == 0 {
				return nil, fmt.Errorf("--import %s: no records (a runs document with an empty records list)", path)
			}
			return recs, nil
		}
	}
	if trimmed[0] == '[' {
		if _, err := dec.Token(); err != nil {
			return nil, decodeErr(1, 0, err)
		}
		for i := 1; dec.More(); i++ {
			off := dec.InputOffset()
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, decodeErr(i, off, err)
			}
			if err := add(raw, i, off); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, decodeErr(len(recs)+1, dec.InputOffset(), err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, fmt.Errorf("--import %s: something follows the JSON array (line %d)", path, lineAt(dec.InputOffset()))
		}
		if len(recs) == 0 {
			return nil, fmt.Errorf("--import %s: no records (an empty JSON array)", path)
		}
		return recs, nil
	}
	for i := 1; ; i++ {
		off := dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, decodeErr(i, off, err)
		}
		if err := add(raw, i, off); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// decodeImport checks one record's JSON and returns the record (ID 0). Errors: not an object, an unknown
// field, a required field missing (name, start or start_ns, wall_ns, user_ns, sys_ns, peak_rss_bytes,
// exit_status, command, work_dir, stale, identity), a negative time or size, start and start_ns that
// disagree, and a build key that is not the identity's. A record of a runs document (ids not nil) has
// identity_key and git instead of identity (sharedIdentity).
func decodeImport(raw json.RawMessage, ids map[string]sharedIdentityJSON) (ledger.Record, error) {
	var j importJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return ledger.Record{}, errors.New("not a JSON object (a record is an object, as stalecheck runs --format json writes it)")
	}
	if err := dec.Decode(&j); err != nil {
		return ledger.Record{}, fmt.Errorf("not a record: %v", err)
	}
	var missing []string
	need := func(ok bool, name string) {
		if !ok {
			missing = append(missing, name)
		}
	}
	need(j.Name != nil && *j.Name != "", "name")
	need(j.Start != nil || j.StartNS != nil, "start")
	need(j.WallNS != nil, "wall_ns")
	need(j.UserNS != nil, "user_ns")
	need(j.SysNS != nil, "sys_ns")
	need(j.PeakRSSBytes != nil, "peak_rss_bytes")
	need(j.ExitStatus != nil, "exit_status")
	need(len(j.Command) > 0, "command")
	need(j.WorkDir != nil, "work_dir")
	need(j.Stale != nil, "stale")
	if j.IdentityKey != nil || j.Git != nil {
		if err := sharedIdentity(&j, ids); err != nil {
			return ledger.Record{}, err
		}
	}
	need(j.Identity != nil, "identity")
	if len(missing) > 0 {
		return ledger.Record{}, fmt.Errorf("missing required field(s): %s", joinQuoted(missing))
	}
	r := ledger.Record{Name: *j.Name, WallNS: *j.WallNS, UserNS: *j.UserNS, SysNS: *j.SysNS, PeakRSSBytes: *j.PeakRSSBytes,
		ExitStatus: *j.ExitStatus, Command: j.Command, WorkDir: *j.WorkDir, Stale: *j.Stale, Identity: *j.Identity}
	if j.RSSFloorBytes != nil {
		r.RSSFloorBytes = *j.RSSFloorBytes
	}
	r.Machine = j.Machine
	for _, f := range []struct {
		name string
		v    int64
	}{{"wall_ns", r.WallNS}, {"user_ns", r.UserNS}, {"sys_ns", r.SysNS}, {"peak_rss_bytes", r.PeakRSSBytes}, {"rss_floor_bytes", r.RSSFloorBytes}} {
		if f.v < 0 {
			return ledger.Record{}, fmt.Errorf("%s is negative (%d)", f.name, f.v)
		}
	}
	switch {
	case j.StartNS != nil && *j.StartNS != 0:
		r.Start = time.Unix(0, *j.StartNS)
		if j.Start != nil && !j.Start.Equal(r.Start) {
			return ledger.Record{}, fmt.Errorf("start %s and start_ns %d disagree", j.Start.Format(time.RFC3339Nano), *j.StartNS)
		}
	case j.Start != nil && !j.Start.IsZero():
		if j.StartNS != nil {
			return ledger.Record{}, fmt.Errorf("start %s and start_ns 0 disagree", j.Start.Format(time.RFC3339Nano))
		}
		r.Start = *j.Start
	}
	if t := bytes.TrimSpace(j.Findings); len(t) > 0 && string(t) != "null" {
		r.Findings = j.Findings
	}
	if j.Build != nil {
		if key := runner.BuildKey(r.Identity); *j.Build != key {
			return ledger.Record{}, fmt.Errorf("build %q is not the build key of the record's identity (%s): the identity was changed after the record was written", *j.Build, key)
		}
	}
	return r, nil
}

func joinQuoted(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", x)
	}
	return b.String()
}

// ImportDoc is the JSON document of `stalecheck runs --import`.
type ImportDoc struct {
	report.Envelope
	Ledger   string             `json:"ledger"`
	File     string             `json:"file"`
	Imported int                `json:"imported"`
	Skipped  int                `json:"skipped"`
	Records  []importResultJSON `json:"records"`
}

// importResultJSON is what --import did with one record of the file.
type importResultJSON struct {
	Index int    `json:"index"` // 1-based, in the file
	ID    int64  `json:"id"`    // the new run ID, or the ID of the copy already in the ledger
	Name  string `json:"name"`
	// StartNS is the record's start, nanoseconds since the epoch (0: none).
	StartNS int64  `json:"start_ns"`
	Build   string `json:"build"`
	// Duplicate says the record was already in the ledger (as run ID) and was not imported again.
	Duplicate bool `json:"duplicate"`
}

func runImport(st Streams, fl runsFlags) error {
	recs, err := readImport(fl.importFile, os.Stdin)
	if err != nil {
		return &ExitError{2, err}
	}
	dsn := ledgerDSN(fl.ledger)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := ledger.Open(ctx, dsn)
	if err != nil {
		return &ExitError{2, err}
	}
	defer l.Close()
	res, err := l.Import(ctx, recs)
	if err != nil {
		return &ExitError{2, fmt.Errorf("--import %s: %w; nothing was imported", fl.importFile, err)}
	}
	doc := ImportDoc{Envelope: report.Envelope{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "runs"},
		Ledger: ledger.Location(dsn), File: fl.importFile, Records: []importResultJSON{}}
	for i, r := range res {
		j := importResultJSON{Index: i + 1, ID: r.ID, Name: recs[i].Name, Build: runner.BuildKey(recs[i].Identity), Duplicate: r.Duplicate}
		if !recs[i].Start.IsZero() {
			j.StartNS = recs[i].Start.UnixNano()
		}
		if r.Duplicate {
			doc.Skipped++
		} else {
			doc.Imported++
		}
		doc.Records = append(doc.Records, j)
	}
	if fl.format == "json" {
		if err := report.WriteJSON(st.Out, doc); err != nil {
			return &ExitError{2, err}
		}
		return nil
	}
	for i, j := range doc.Records {
		what := fmt.Sprintf("%s, started %s, build %s", report.Escape(j.Name), startTime(recs[i].Start), j.Build)
		if j.Duplicate {
			fmt.Fprintf(st.Out, "skipped record %d (%s): already in the ledger as run %d (same name, start, command, folder and build identity)\n", j.Index, what, j.ID)
		} else {
			fmt.Fprintf(st.Out, "imported record %d (%s) as run %d\n", j.Index, what, j.ID)
		}
	}
	fmt.Fprintf(st.Out, "Imported %d record(s) from %s into %s; skipped %d already there.\n", doc.Imported,
		report.Escape(fl.importFile), report.Escape(doc.Ledger), doc.Skipped)
	return nil
}
