package cli

import (
	"context"
	"fmt"
	"github.com/stalecheck/stalecheck/internal/humanize"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/runner"
)

type runsFlags struct {
	ledger, name, format string
	limit                int
}

func newRunsCmd(st Streams) *cobra.Command {
	var fl runsFlags
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs recorded by stalecheck run, newest first",
		Long: `runs lists the records of the ledger, newest first: when each run started, its name, wall and CPU
time, peak RSS, exit status, whether the build was stale, and a short build identity (runs with the same
build key timed the same code). --format json gives every record in full, each with a boolean "stale".

Exit status: 0 answered, 2 error (the ledger cannot be opened or read).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runRuns(st, fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.ledger, "ledger", "", "the ledger: a SQLite file or a postgres:// URL (default $"+ledgerEnv+", else $XDG_STATE_HOME/stalecheck/ledger.db)")
	f.StringVar(&fl.name, "name", "", "only runs with this name")
	f.IntVar(&fl.limit, "limit", 0, "at most this many runs, newest first (0: all)")
	f.StringVar(&fl.format, "format", "text", "output format: text or json")
	return cmd
}

// recordJSON is a ledger record as runs, diff and run (on a ledger failure) write it: the record's own
// fields, the start in nanoseconds since the epoch and the short build key.
type recordJSON struct {
	ledger.Record
	StartNS int64  `json:"start_ns"`
	Build   string `json:"build"`
}

func newRecordJSON(r *ledger.Record) recordJSON {
	j := recordJSON{Record: *r, Build: runner.BuildKey(r.Identity)}
	if !r.Start.IsZero() {
		j.StartNS = r.Start.UnixNano()
	}
	return j
}

// RunsDoc is the JSON document of `stalecheck runs`.
type RunsDoc struct {
	report.Envelope
	Ledger  string       `json:"ledger"`
	Records []recordJSON `json:"records"`
}

func openLedger(dsn string) (ledger.Ledger, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return ledger.Open(ctx, dsn)
}

func runRuns(st Streams, fl runsFlags) error {
	if fl.format != "text" && fl.format != "json" {
		return &ExitError{2, fmt.Errorf("--format %q: want text or json", fl.format)}
	}
	dsn := ledgerDSN(fl.ledger)
	l, err := openLedger(dsn)
	if err != nil {
		return &ExitError{2, err}
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	recs, err := l.List(ctx, ledger.Filter{Name: fl.name, Limit: fl.limit})
	if err != nil {
		return &ExitError{2, err}
	}
	if fl.format == "json" {
		doc := RunsDoc{Envelope: report.Envelope{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "runs"},
			Ledger: ledger.Location(dsn), Records: []recordJSON{}}
		for i := range recs {
			doc.Records = append(doc.Records, newRecordJSON(&recs[i]))
		}
		if err := report.WriteJSON(st.Out, doc); err != nil {
			return &ExitError{2, err}
		}
		return nil
	}
	if len(recs) == 0 {
		fmt.Fprintf(st.Out, "No runs in %s.\n", report.Escape(ledger.Location(dsn)))
		return nil
	}
	tw := tabwriter.NewWriter(st.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTART\tNAME\tWALL\tUSER\tSYS\tPEAK RSS\tEXIT\tSTALE\tBUILD\tGIT\tCOMMAND")
	for i := range recs {
		r := &recs[i]
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.ID, r.Start.Local().Format("2006-01-02 15:04:05"),
			report.Escape(r.Name), seconds(r.WallNS), seconds(r.UserNS), seconds(r.SysNS), humanize.Bytes(r.PeakRSSBytes), r.ExitStatus,
			map[bool]string{true: "stale", false: "no"}[r.Stale], runner.BuildKey(r.Identity), gitShort(r.Identity.Git), commandLine(r.Command))
	}
	return tw.Flush()
}

func gitShort(g ledger.Git) string {
	if g.Head == "" {
		return "-"
	}
	s := g.Head
	if len(s) > 10 {
		s = s[:10]
	}
	if g.Dirty {
		s += "+dirty"
	}
	return s
}

// commandLine joins a command for display, quoting arguments with spaces, escaped for the terminal.
func commandLine(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"") {
			a = fmt.Sprintf("%q", a)
		}
		q[i] = report.Escape(a)
	}
	return strings.Join(q, " ")
}
