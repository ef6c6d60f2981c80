package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/humanize"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/runner"
)

type runsFlags struct {
	ledger, name, format, groupBy string
	limit                         int
	// --prune and its selection; --import.
	prune, yes, stale, keepLastSet bool
	wide                           bool // whole names and commands in the table
	before, build, importFile      string
	keepLast                       int
}

func newRunsCmd(st Streams) *cobra.Command {
	var fl runsFlags
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs recorded by stalecheck run, newest first",
		Long: `runs lists the records of the ledger, newest first: when each run started, its name, wall and CPU
time, peak RSS, exit status, whether the build was stale, and a short build identity (runs with the same
build key timed the same code). A peak RSS marked "≤ floor" is not above the resident set of the process
that started the command (recorded with each run), which Linux counts into the command's peak: the
command's own peak was at most that much. --format json gives every record in full, each with a boolean "stale".

--prune removes the runs a selection names (--name, --before, --stale, --build, --keep-last; every
one given must match): without --yes it only lists them (a dry run), with --yes it removes them in one
transaction. --import FILE reads records that stalecheck run printed as JSON when it could not reach the
ledger (one object, an array, or JSON lines; "-" for stdin) and inserts them with their own times, all
or none; a record already in the ledger is skipped.

Exit status: 0 answered, 2 error (the ledger cannot be opened or read, a bad selection or import file).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.keepLastSet = cmd.Flags().Changed("keep-last")
			return runRuns(st, fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.ledger, "ledger", "", "the ledger: a SQLite file or a postgres:// URL (default $"+ledgerEnv+", else $XDG_STATE_HOME/stalecheck/ledger.db)")
	f.StringVar(&fl.name, "name", "", "only runs with this name")
	f.IntVar(&fl.limit, "limit", 0, "at most this many runs, newest first (0: all)")
	f.BoolVarP(&fl.wide, "wide", "w", false, "show whole names and commands (the table cuts them to 32 and 40 characters)")
	f.StringVar(&fl.format, "format", "text", "output format: text or json")
	f.StringVar(&fl.groupBy, "group-by", "", `"build": statistics of the wall times per name and build identity (n, median, mean ± σ, min, max, outliers)`)
	f.BoolVar(&fl.prune, "prune", false, "remove the runs the selection flags name (a dry run that lists them unless --yes)")
	f.BoolVar(&fl.yes, "yes", false, "with --prune: remove the selected runs (in one transaction)")
	f.StringVar(&fl.before, "before", "", "with --prune: only runs started before this RFC 3339 time, or longer ago than this duration (720h)")
	f.BoolVar(&fl.stale, "stale", false, "with --prune: only runs recorded as stale (--allow-stale)")
	f.StringVar(&fl.build, "build", "", "with --prune: only runs whose build key starts with this prefix (as --group-by build prints it)")
	f.IntVar(&fl.keepLast, "keep-last", 0, "with --prune: never the newest N runs of each name (by start time)")
	f.StringVar(&fl.importFile, "import", "", `insert the records of this JSON file (as run prints them when the ledger is unreachable; "-": stdin)`)
	return cmd
}

// recordJSON is a ledger record as runs, diff and run (on a ledger failure) write it: the record's own
// fields, the start in nanoseconds since the epoch and the short build key. Note says what could not be
// written as it is in the ledger (findings that are not valid JSON are written as null).
type recordJSON struct {
	ledger.Record
	StartNS int64  `json:"start_ns"`
	Build   string `json:"build"`
	// PeakRSSAtFloor says peak_rss_bytes is not above rss_floor_bytes (within rssFloorSlack): the command's
	// own peak was at most that much. Null when the record holds no floor (schema version 1).
	PeakRSSAtFloor *bool  `json:"peak_rss_at_floor"`
	Note           string `json:"note,omitempty"`
}

func newRecordJSON(r *ledger.Record) recordJSON {
	j := recordJSON{Record: *r, Build: runner.BuildKey(r.Identity)}
	if r.RSSFloorBytes > 0 {
		at := strings.HasSuffix(peakRSS(r.PeakRSSBytes, r.RSSFloorBytes), rssFloorMark)
		j.PeakRSSAtFloor = &at
	}
	if !r.Start.IsZero() {
		j.StartNS = r.Start.UnixNano()
	}
	if note := findingsProblem(r); note != "" {
		j.Findings = nil
		j.Note = note
	}
	return j
}

// findingsProblem says why a record's findings cannot be written as JSON ("" when they can): the ledger
// holds them byte for byte, and a corrupt column must not keep the other records from being listed.
func findingsProblem(r *ledger.Record) string {
	if len(r.Findings) == 0 || json.Valid(r.Findings) {
		return ""
	}
	return fmt.Sprintf("the findings column of record %d in the ledger is not valid JSON (%d bytes); written as null", r.ID, len(r.Findings))
}

// startTime formats a record's start for people (report.TimeLayout, UTC); "-" when it has none.
func startTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return report.FormatTime(t)
}

// startSecond is a run's start to the second, in UTC (the table's; --format json has the nanoseconds).
func startSecond(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// cut shortens s to at most n characters, ending in "…" when it was longer.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// wrap breaks a line at spaces so that no line is longer than width characters (a word longer than
// that stays whole); continuation lines start with indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		l := len([]rune(w))
		switch {
		case i == 0:
		case n+1+l > width:
			b.WriteString("\n" + indent)
			n = len(indent)
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}

// rssFloorMark follows a peak RSS that is not above the floor.
const rssFloorMark = " (≤ floor)"

// rssFloorSlack is the margin above the floor that still counts as the floor: it is read just before
// the command starts (stalecheck may grow a little until exec), and Linux counts RSS approximately.
const rssFloorSlack = 512 << 10

// peakRSS formats a peak RSS, marked when it is at or below floor (0: floor unknown, no mark).
func peakRSS(b, floor int64) string {
	s := humanize.Bytes(b)
	if floor > 0 && b > 0 && b <= floor+rssFloorSlack {
		s += rssFloorMark
	}
	return s
}

// floorHow says where the floor of a "≤ floor" footnote comes from.
type floorHow int

const (
	floorMeasured  floorHow = iota // measured for the run just made (floor is its value)
	floorRecorded                  // recorded with each run listed (floor is the largest of those marked)
	floorEstimated                 // records without a floor (schema version 1): this process's own peak
)

// floorNote is the footnote of the "≤ floor" mark.
func floorNote(floor int64, how floorHow) string {
	about := humanize.Bytes(floor)
	switch how {
	case floorRecorded:
		about = "recorded with each run, rss_floor_bytes in --format json; up to " + about + " here"
	case floorEstimated:
		about = "not recorded by the stalecheck that made the run; about " + about + ", estimated from this stalecheck process"
	}
	return fmt.Sprintf("≤ floor: the peak RSS is not above the resident set of the process that started the command (%s), which Linux counts into the command's peak at exec: the command's own peak was at most that much", about)
}

// recordFloor is the floor of a record's peak RSS: the recorded one, else (older records) estimate.
func recordFloor(r *ledger.Record, estimate int64) (int64, floorHow) {
	if r.RSSFloorBytes > 0 {
		return r.RSSFloorBytes, floorRecorded
	}
	return estimate, floorEstimated
}

// floorNotes collects the footnotes of the "≤ floor" marks of several records.
type floorNotes struct {
	recorded, estimated int64
	anyRecorded, anyEst bool
}

// mark formats r's peak RSS, marked when at the floor, and notes which kind of floor was used.
func (n *floorNotes) mark(r *ledger.Record, estimate int64) string {
	floor, how := recordFloor(r, estimate)
	s := peakRSS(r.PeakRSSBytes, floor)
	if strings.HasSuffix(s, rssFloorMark) {
		if how == floorRecorded {
			n.anyRecorded, n.recorded = true, max(n.recorded, floor)
		} else {
			n.anyEst, n.estimated = true, floor
		}
	}
	return s
}

// lines are the footnotes to print, none when nothing was marked.
func (n *floorNotes) lines() []string {
	var out []string
	if n.anyRecorded {
		out = append(out, floorNote(n.recorded, floorRecorded))
	}
	if n.anyEst {
		out = append(out, floorNote(n.estimated, floorEstimated))
	}
	return out
}

// openLedgerRO opens the ledger of a command that only reads it (runs, diff): read-only, so that a
// ledger the user may only read can be listed, and a missing SQLite file is an error naming it rather
// than a new empty ledger.
func openLedgerRO(dsn string) (ledger.Ledger, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return ledger.OpenReadOnly(ctx, dsn)
}

func runRuns(st Streams, fl runsFlags) error {
	if fl.format != "text" && fl.format != "json" {
		return &ExitError{2, fmt.Errorf("--format %q: want text or json", fl.format)}
	}
	if fl.limit < 0 {
		return &ExitError{2, fmt.Errorf("--limit %d: want 0 (all runs) or a positive number", fl.limit)}
	}
	if fl.groupBy != "" && fl.groupBy != "build" {
		return &ExitError{2, fmt.Errorf("--group-by %q: want build", fl.groupBy)}
	}
	if err := checkRunsModes(fl); err != nil {
		return &ExitError{2, err}
	}
	if fl.importFile != "" {
		return runImport(st, fl)
	}
	if fl.prune {
		return runPrune(st, fl)
	}
	tuneGC() // 10,000 records are short-lived garbage
	dsn := ledgerDSN(fl.ledger)
	l, err := openLedgerRO(dsn)
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
	if len(recs) == 0 && fl.name != "" && fl.format == "text" {
		msg := noRunsNamed(ctx, l, fl.name, ledger.Location(dsn))
		fmt.Fprintln(st.Out, "N"+msg[1:]+".")
		return nil
	}
	// The table writer writes cell by cell: unbuffered, that is a write system call per cell (240,000
	// for 10,000 records, most of the time `runs` took).
	bw := bufio.NewWriterSize(st.Out, 64<<10)
	err = listRuns(Streams{Out: bw, Err: st.Err}, fl, dsn, recs)
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = &ExitError{2, ferr}
	}
	return err
}

// listRuns writes the records runs lists (text table, JSON or --group-by build).
func listRuns(st Streams, fl runsFlags, dsn string, recs []ledger.Record) error {
	if fl.groupBy == "build" {
		return writeGroups(st, fl.format, dsn, recs)
	}
	if fl.format == "json" {
		if err := report.WriteJSON(st.Out, newRunsDoc(ledger.Location(dsn), recs)); err != nil {
			return &ExitError{2, err}
		}
		return nil
	}
	if len(recs) == 0 {
		fmt.Fprintf(st.Out, "No runs in %s.\n", report.Escape(ledger.Location(dsn)))
		return nil
	}
	return writeRunsTable(st, recs, fl.wide)
}

// checkRunsModes refuses flags that do not go together: --import and --prune each stand alone, and the
// selection flags of --prune mean nothing without it.
func checkRunsModes(fl runsFlags) error {
	switch {
	case fl.importFile != "" && (fl.prune || fl.yes || fl.name != "" || fl.limit != 0 || fl.groupBy != "" || fl.before != "" || fl.stale || fl.build != "" || fl.keepLastSet):
		return errors.New("--import takes no other flag than --ledger and --format")
	case fl.prune && (fl.limit != 0 || fl.groupBy != ""):
		return errors.New("--prune does not go with --limit or --group-by (select with --name, --before, --stale, --build, --keep-last)")
	case !fl.prune && (fl.yes || fl.before != "" || fl.stale || fl.build != "" || fl.keepLastSet):
		return errors.New("--yes, --before, --stale, --build and --keep-last select runs to remove: use them with --prune")
	}
	return nil
}

// writeRunsTable prints records as the table of `stalecheck runs`, with the footnotes of its marks.
func writeRunsTable(st Streams, recs []ledger.Record, wide bool) error {
	name, command := func(s string) string { return s }, func(s string) string { return s }
	if !wide {
		name, command = func(s string) string { return cut(s, 32) }, func(s string) string { return cut(s, 40) }
	}
	// Records of schema version 1 hold no floor: this process's own peak stands in for it (the same program).
	estimate := runner.SelfPeakRSS()
	tw := newColumns(st.Out, 12, len(recs)+1)
	tw.row("ID", "START", "NAME", "WALL", "USER", "SYS", "PEAK RSS", "EXIT", "STALE", "BUILD", "GIT", "COMMAND")
	var fn floorNotes
	var notes []string
	for i := range recs {
		r := &recs[i]
		rss := fn.mark(r, estimate)
		if p := findingsProblem(r); p != "" {
			notes = append(notes, p)
		}
		tw.row(strconv.FormatInt(r.ID, 10), startSecond(r.Start), name(report.Escape(r.Name)), seconds(r.WallNS), seconds(r.UserNS),
			seconds(r.SysNS), rss, strconv.Itoa(r.ExitStatus), staleWord(r.Stale), runner.BuildKey(r.Identity),
			report.Escape(gitShort(r.Identity.Git)), command(commandLine(r.Command)))
	}
	if err := tw.flush(); err != nil {
		return &ExitError{2, err}
	}
	for _, l := range fn.lines() {
		fmt.Fprintln(st.Out, wrap(l, 100, "  "))
	}
	for _, n := range notes {
		fmt.Fprintf(st.Out, "note: %s\n", n)
	}
	return nil
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

func staleWord(stale bool) string {
	if stale {
		return "stale"
	}
	return "no"
}

// noRunsNamed says that the ledger at loc has no run named name, and which names it has (a typo is
// the usual cause).
func noRunsNamed(ctx context.Context, l ledger.Ledger, name, loc string) string {
	msg := fmt.Sprintf("no runs named %q in %s", name, loc)
	all, err := l.List(ctx, ledger.Filter{Limit: 100_000})
	if err != nil {
		return msg
	}
	var names []string
	for _, r := range all {
		if !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		return msg + " (it holds no runs)"
	}
	slices.Sort(names)
	if len(names) > 10 {
		names = append(names[:10], fmt.Sprintf("and %d more", len(names)-10))
	}
	return report.Escape(msg + " (names there: " + strings.Join(names, ", ") + ")")
}
