package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/htmlreport"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

type reportFlags struct {
	ledger, name, output string
}

func newReportCmd(st Streams) *cobra.Command {
	var fl reportFlags
	cmd := &cobra.Command{
		Use:   "report -o FILE.html",
		Short: "Write the ledger's runs as one self-contained HTML page: timings per build, build changes, stale runs",
		Long: `report writes one HTML page that loads nothing from elsewhere (no script, no network): per benchmark
name, a plot of the wall times in the order the runs started, each point coloured by its build identity,
a dashed marker where the build changed, stale runs (--allow-stale) hollow with a red ring, failed runs as
squares, each point's run, build, times and identity on hover; then a table of the builds with n, median,
mean ± σ, min, max and outliers (of the runs that exited 0). The ledger is opened read-only.

  stalecheck report -o bench.html
  stalecheck report --name gpu-prover --ledger postgres://bench@db/bench -o gpu-prover.html

Exit status: 0 written, 2 error (the ledger cannot be read, FILE cannot be written).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(st, fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.ledger, "ledger", "", "the ledger: a SQLite file or a postgres:// URL (default $"+ledgerEnv+", else $XDG_STATE_HOME/stalecheck/ledger.db)")
	f.StringVar(&fl.name, "name", "", "only runs with this name")
	f.StringVarP(&fl.output, "output", "o", "", "the HTML file to write (- for stdout); required")
	return cmd
}

func runReport(st Streams, fl reportFlags) error {
	if fl.output == "" {
		return &ExitError{2, fmt.Errorf("report: -o FILE.html is required")}
	}
	dsn := ledgerDSN(fl.ledger)
	if fl.output != "-" {
		if err := checkOutputFile("-o", fl.output, ledgerFiles(dsn)); err != nil {
			return &ExitError{2, fmt.Errorf("report: %w", err)}
		}
	}
	l, err := openLedgerRO(dsn)
	if err != nil {
		return &ExitError{2, err}
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	recs, err := l.List(ctx, ledger.Filter{Name: fl.name})
	if err != nil {
		return &ExitError{2, err}
	}
	if len(recs) == 0 && fl.name != "" {
		// A page of nothing is no report: a --name typo.
		return &ExitError{2, fmt.Errorf("report: %s", noRunsNamed(ctx, l, fl.name, ledger.Location(dsn)))}
	}
	opt := htmlreport.Options{Ledger: ledger.Location(dsn), Name: fl.name, Tool: "stalecheck " + Version, Generated: time.Now()}
	if fl.output == "-" {
		if err := htmlreport.Write(st.Out, recs, opt); err != nil {
			return &ExitError{2, err}
		}
		return nil
	}
	// Written beside the target and renamed over it: a reader never sees half a page.
	if err := safeio.WriteFileAtomic(fl.output, safeio.WriteOptions{Perm: 0o644, Sync: true}, func(w io.Writer) error {
		return htmlreport.Write(w, recs, opt)
	}); err != nil {
		return &ExitError{2, fmt.Errorf("report: %w", err)}
	}
	fmt.Fprintf(st.Err, "stalecheck: wrote %s: %d run(s)\n", report.Escape(fl.output), len(recs))
	return nil
}
