package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/benchgroup"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/runner"
)

// pruneSelection is what `runs --prune` removes: the records that match every criterion given.
type pruneSelection struct {
	Name string `json:"name,omitempty"` // only records of this name
	// BeforeNS: only records that started before this time (ns since the epoch; 0: not given). A record
	// without a start time is never selected by it.
	BeforeNS int64  `json:"before_ns,omitempty"`
	Stale    bool   `json:"stale,omitempty"`     // only records marked stale
	Build    string `json:"build,omitempty"`     // only records whose build key starts with this prefix
	KeepLast int    `json:"keep_last,omitempty"` // never the newest KeepLast records of each name (by start, then ID)
}

func (s pruneSelection) empty() bool {
	return s.Name == "" && s.BeforeNS == 0 && !s.Stale && s.Build == "" && s.KeepLast == 0
}

// parseBefore reads --before: an RFC 3339 time, or a Go duration d (older than now − d).
func parseBefore(arg string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, arg); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(arg)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("--before %q: want an RFC 3339 time (2026-05-01T00:00:00Z) or a non-negative duration (720h: older than 30 days)", arg)
	}
	return now.Add(-d), nil
}

// selectPrune returns the records of recs that sel selects, newest (highest ID) first.
func selectPrune(recs []ledger.Record, sel pruneSelection) []ledger.Record {
	kept := map[int64]bool{}
	if sel.KeepLast > 0 {
		byName := map[string][]*ledger.Record{}
		for i := range recs {
			byName[recs[i].Name] = append(byName[recs[i].Name], &recs[i])
		}
		for _, rs := range byName {
			sort.Slice(rs, func(i, j int) bool {
				if a, b := rs[i].Start.UnixNano(), rs[j].Start.UnixNano(); a != b && !rs[i].Start.IsZero() && !rs[j].Start.IsZero() {
					return a > b
				}
				if rs[i].Start.IsZero() != rs[j].Start.IsZero() {
					return !rs[i].Start.IsZero() // a record with no start counts as the oldest
				}
				return rs[i].ID > rs[j].ID
			})
			for _, r := range rs[:min(sel.KeepLast, len(rs))] {
				kept[r.ID] = true
			}
		}
	}
	var out []ledger.Record
	for _, r := range recs {
		switch {
		case kept[r.ID]:
		case sel.Name != "" && r.Name != sel.Name:
		case sel.BeforeNS != 0 && (r.Start.IsZero() || r.Start.UnixNano() >= sel.BeforeNS):
		case sel.Stale && !r.Stale:
		case sel.Build != "" && !strings.HasPrefix(runner.BuildKey(r.Identity), sel.Build):
		default:
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

// PruneDoc is the JSON document of `stalecheck runs --prune`.
type PruneDoc struct {
	report.Envelope
	Ledger    string         `json:"ledger"`
	DryRun    bool           `json:"dry_run"` // true: nothing was removed (no --yes)
	Selection pruneSelection `json:"selection"`
	// Count is the number of records removed (or, in a dry run, that --yes would remove).
	Count   int          `json:"count"`
	Records []recordJSON `json:"records"`
}

// pruneSelectionOf checks the selection flags of --prune.
func pruneSelectionOf(fl runsFlags, now time.Time) (pruneSelection, error) {
	sel := pruneSelection{Name: fl.name, Stale: fl.stale}
	if fl.before != "" {
		t, err := parseBefore(fl.before, now)
		if err != nil {
			return sel, err
		}
		sel.BeforeNS = t.UnixNano()
		if sel.BeforeNS == 0 {
			sel.BeforeNS = 1
		}
	}
	if fl.build != "" {
		p, ok := benchgroup.BuildPrefix("build:" + strings.TrimPrefix(strings.ToLower(fl.build), "build:"))
		if !ok {
			return sel, fmt.Errorf("--build %q: want a build key prefix, 1 to 12 hex digits, as stalecheck runs --group-by build prints it", fl.build)
		}
		sel.Build = p
	}
	if fl.keepLastSet {
		if fl.keepLast < 1 {
			return sel, fmt.Errorf("--keep-last %d: want 1 or more (to remove every run of a name, use --name alone)", fl.keepLast)
		}
		sel.KeepLast = fl.keepLast
	}
	if sel.empty() {
		return sel, errors.New("--prune needs a selection: --name NAME, --before TIME|DURATION, --stale, --build PREFIX and/or --keep-last N (it never removes every run)")
	}
	return sel, nil
}

// openLedgerRW opens the ledger of a command that writes into an existing ledger (runs --prune --yes):
// like openLedgerRO, a SQLite file that does not exist is an error rather than a new ledger.
func openLedgerRW(ctx context.Context, dsn string) (ledger.Ledger, error) {
	if !ledger.IsPostgres(dsn) {
		if err := ledger.CheckDSN(dsn); err != nil {
			return nil, err
		}
		p := ledger.Location(dsn)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return nil, &ledger.MissingError{Ledger: p}
		}
	}
	return ledger.Open(ctx, dsn)
}

func runPrune(st Streams, fl runsFlags) error {
	sel, err := pruneSelectionOf(fl, time.Now())
	if err != nil {
		return &ExitError{2, err}
	}
	dsn := ledgerDSN(fl.ledger)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var l ledger.Ledger
	if fl.yes {
		l, err = openLedgerRW(ctx, dsn)
	} else {
		l, err = openLedgerRO(dsn)
	}
	if err != nil {
		return &ExitError{2, err}
	}
	defer l.Close()
	recs, err := l.List(ctx, ledger.Filter{})
	if err != nil {
		return &ExitError{2, err}
	}
	chosen := selectPrune(recs, sel)
	count := len(chosen)
	if fl.yes && len(chosen) > 0 {
		ids := make([]int64, len(chosen))
		for i := range chosen {
			ids[i] = chosen[i].ID
		}
		if count, err = l.Delete(ctx, ids); err != nil {
			return &ExitError{2, err}
		}
	}
	loc := ledger.Location(dsn)
	if fl.format == "json" {
		doc := PruneDoc{Envelope: report.Envelope{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "runs"},
			Ledger: loc, DryRun: !fl.yes, Selection: sel, Count: count, Records: []recordJSON{}}
		for i := range chosen {
			doc.Records = append(doc.Records, newRecordJSON(&chosen[i]))
		}
		if err := report.WriteJSON(st.Out, doc); err != nil {
			return &ExitError{2, err}
		}
		return nil
	}
	switch {
	case len(chosen) == 0:
		fmt.Fprintf(st.Out, "No run in %s matches the selection; nothing to remove.\n", report.Escape(loc))
		return nil
	case !fl.yes:
		fmt.Fprintf(st.Out, "Would remove %d run(s) from %s (dry run, nothing removed; add --yes to remove them):\n", count, report.Escape(loc))
	default:
		fmt.Fprintf(st.Out, "Removed %d run(s) from %s:\n", count, report.Escape(loc))
	}
	return writeRunsTable(st, chosen, false)
}
