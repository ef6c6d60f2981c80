package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/machine"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/runner"
)

type diffFlags struct {
	ledger, format, name string
	failIfSlower         float64
	failSet              bool // --fail-if-slower given (0 fails on any significant slowdown)
}

func newDiffCmd(st Streams) *cobra.Command {
	var fl diffFlags
	cmd := &cobra.Command{
		Use:   "diff A B  (run IDs or build keys)",
		Short: "Show what differs between the builds of two recorded runs, beside their timings",
		Long: `diff compares two runs of the ledger (IDs as listed by stalecheck runs): their timings, and what differs
between the builds they ran: binaries (digest, size, build-id), the native library copies linked (which
copy, its content fingerprint, its features), source files (digest), toolchain versions, environment
variables and git state. Binaries and sources are compared by their path relative to each run's working
folder, so runs of two copies of a workspace compare file by file. "Same build" means the two timings
timed the same code. A peak RSS marked "≤ floor" is not above the resident set of the process that
started the command (recorded with each run), which Linux counts into the command's peak.

A and B may also name builds: 4 to 12 hex digits of a build key as stalecheck runs --group-by build
prints it (build:HEX for a key of digits only; --name picks the benchmark when a build ran under several
names). diff then reports the change in median wall time between the two builds' runs that exited 0 with
its 95% confidence interval (percentile bootstrap, 5,000 resamples, a fixed seed: the same runs give
the same interval), e.g. "median +19.2% (95% CI +17.8…+20.5%)", and compares the builds through their
newest runs. For two run IDs it adds the same line for the runs' builds when each has 2 runs or more.

It opens with the verdict: whether B is significantly slower or faster than A in wall time ("Performance
has regressed"), then the change in median wall time, CPU time (user + system) and peak RSS with their
95% intervals, each significant when its interval excludes no change; a difference in wall time alone is
named as such. Each run records the machine's conditions (CPU, governor, frequency, kernel, other
processes' CPU use during the run, pressure, GPUs); when the two sides' differ, diff says so first.

Exit status: 0 answered, 1 with --fail-if-slower when B is significantly slower than A by more than
the percentage given, 2 error (no such run or build, an ambiguous build prefix, the ledger cannot be read).`,
		Args: exactArgs("A", "B"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.failSet = cmd.Flags().Changed("fail-if-slower")
			return runDiff(st, args, fl)
		},
	}
	cmd.ValidArgsFunction = completeRuns(&fl)
	f := cmd.Flags()
	f.StringVar(&fl.ledger, "ledger", "", "the ledger: a SQLite file or a postgres:// URL (default $"+ledgerEnv+", else $XDG_STATE_HOME/stalecheck/ledger.db)")
	f.StringVar(&fl.format, "format", "text", "output format: text or json")
	f.StringVar(&fl.name, "name", "", "with builds as A and B: only the runs of this benchmark name")
	f.Float64Var(&fl.failIfSlower, "fail-if-slower", 0, "exit 1 when B's median wall time is significantly more than this percentage above A's (0: any significant slowdown; for CI)")
	return cmd
}

// DiffDoc is the JSON document of `stalecheck diff`.
type DiffDoc struct {
	report.Envelope
	Ledger    string           `json:"ledger"`
	A         diffRun          `json:"a"`
	B         diffRun          `json:"b"`
	SameBuild bool             `json:"same_build"`
	Changes   []runner.Change  `json:"changes"`
	Summary   []string         `json:"summary"`
	Timing    map[string]int64 `json:"timing_delta"` // B minus A: wall_ns, user_ns, sys_ns, peak_rss_bytes
	// ABy and BBy say what each argument named: "run" or "build" (then A and B are its newest run).
	ABy    string     `json:"a_by"`
	BBy    string     `json:"b_by"`
	ABuild *buildJSON `json:"a_build"`
	BBuild *buildJSON `json:"b_build"`
	// MedianChange is the change in median wall time from A's build to B's with its 95% CI; null (and
	// MedianChangeNote says why) when a build has fewer than 2 runs that exited 0.
	MedianChange     *medianChangeJSON `json:"median_change"`
	MedianChangeNote string            `json:"median_change_note,omitempty"`
	// Verdict holds wall, CPU and peak-RSS changes of B against A with their intervals (empty with fewer
	// than 2 runs a side); VerdictText is the sentence diff's text opens with; Notes what limits it.
	Verdict     []verdictJSON `json:"verdict"`
	VerdictText string        `json:"verdict_text"`
	Notes       []string      `json:"notes"`
	// Conditions lists how the machines of the two sides differed; AMachine and BMachine are the shown
	// runs' conditions (null when not recorded).
	Conditions []string            `json:"conditions"`
	AMachine   *machine.Conditions `json:"a_machine"`
	BMachine   *machine.Conditions `json:"b_machine"`
	// SourceLines holds, per changed source, the lines git says changed between the two runs' commits
	// (both clean); empty otherwise.
	SourceLines map[string][]string `json:"source_lines"`
}

type diffRun struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	Start        time.Time `json:"start"`
	StartNS      int64     `json:"start_ns"`
	WallNS       int64     `json:"wall_ns"`
	UserNS       int64     `json:"user_ns"`
	SysNS        int64     `json:"sys_ns"`
	PeakRSSBytes int64     `json:"peak_rss_bytes"`
	// RSSFloorBytes and PeakRSSAtFloor are the record's (see recordJSON).
	RSSFloorBytes  int64    `json:"rss_floor_bytes"`
	PeakRSSAtFloor *bool    `json:"peak_rss_at_floor"`
	ExitStatus     int      `json:"exit_status"`
	Stale          bool     `json:"stale"`
	Build          string   `json:"build"`
	Command        []string `json:"command"`
	WorkDir        string   `json:"work_dir"`
}

func newDiffRun(r *ledger.Record) diffRun {
	j := newRecordJSON(r)
	return diffRun{ID: r.ID, Name: r.Name, Start: r.Start, StartNS: j.StartNS, WallNS: r.WallNS, UserNS: r.UserNS, SysNS: r.SysNS,
		PeakRSSBytes: r.PeakRSSBytes, RSSFloorBytes: r.RSSFloorBytes, PeakRSSAtFloor: j.PeakRSSAtFloor, ExitStatus: r.ExitStatus, Stale: r.Stale, Build: j.Build,
		Command: r.Command, WorkDir: r.WorkDir}
}

func runDiff(st Streams, args []string, fl diffFlags) error {
	if fl.format != "text" && fl.format != "json" {
		return &ExitError{2, fmt.Errorf("--format %q: want text or json", fl.format)}
	}
	if fl.failSet && !(fl.failIfSlower >= 0) { // NaN too
		return &ExitError{2, fmt.Errorf("--fail-if-slower %v: want a percentage of 0 or more (0: fail on any significant slowdown)", fl.failIfSlower)}
	}
	dsn := ledgerDSN(fl.ledger)
	l, err := openLedgerRO(dsn)
	if err != nil {
		return &ExitError{2, err}
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sides, err := resolveDiffSides(ctx, l, dsn, args, fl.name)
	if err != nil {
		return &ExitError{2, err}
	}
	mc, mcLine, mcWhy := diffMedian(sides)
	a, b := sides[0].Rec, sides[1].Rec
	d := runner.Diff(a, b)
	conds := sideConditions(sides)
	verdict, sentence, notes := diffVerdict(sides, conds)
	if n := commandNote(sides); n != "" {
		notes = append(notes, n)
	}
	if len(verdict) == 0 && len(conds) > 0 {
		notes = append(notes, "the two sides ran under different conditions ("+strings.Join(conds, "; ")+")")
	}
	var failed error
	if fl.failSet {
		for _, v := range verdict {
			if v.Metric == "wall" && v.Significant && v.Rel > 0 && 100*v.Rel > fl.failIfSlower {
				failed = &ExitError{Code: 1}
			}
		}
	}
	if fl.format == "json" {
		doc := DiffDoc{Envelope: report.Envelope{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "diff"},
			Ledger: ledger.Location(dsn), A: newDiffRun(a), B: newDiffRun(b), SameBuild: d.SameBuild(),
			Changes: d.Changes, Summary: d.Summary(),
			Timing: map[string]int64{"wall_ns": b.WallNS - a.WallNS, "user_ns": b.UserNS - a.UserNS, "sys_ns": b.SysNS - a.SysNS, "peak_rss_bytes": b.PeakRSSBytes - a.PeakRSSBytes}}
		for i, p := range []*string{&doc.ABy, &doc.BBy} {
			*p = map[bool]string{true: "build", false: "run"}[sides[i].ByBuild]
		}
		for i, p := range []**buildJSON{&doc.ABuild, &doc.BBuild} {
			if g := sides[i].Group; g != nil {
				j := newBuildJSON(g)
				*p = &j
			}
		}
		doc.MedianChange = mc
		if mcWhy != nil {
			doc.MedianChangeNote = mcWhy.Error()
		}
		doc.Verdict, doc.VerdictText, doc.Notes, doc.Conditions = verdict, sentence, notes, conds
		doc.AMachine, doc.BMachine = a.Machine, b.Machine
		doc.SourceLines = sourceLines(ctx, a, b, d.Changes)
		if doc.SourceLines == nil {
			doc.SourceLines = map[string][]string{}
		}
		if doc.Verdict == nil {
			doc.Verdict = []verdictJSON{}
		}
		if doc.Notes == nil {
			doc.Notes = []string{}
		}
		if doc.Conditions == nil {
			doc.Conditions = []string{}
		}
		if doc.Changes == nil {
			doc.Changes = []runner.Change{}
		}
		if doc.Summary == nil {
			doc.Summary = []string{}
		}
		if err := report.WriteJSON(st.Out, doc); err != nil {
			return &ExitError{2, err}
		}
		return failed
	}
	if sentence != "" {
		fmt.Fprintln(st.Out, sentence)
	}
	for _, n := range notes {
		fmt.Fprintf(st.Out, "note: %s\n", report.Escape(n))
	}
	for _, r := range []*ledger.Record{a, b} {
		stale := ""
		if r.Stale {
			stale = "  (stale build)"
		}
		fmt.Fprintf(st.Out, "run %d  %s  %s  build %s  exit %d%s\n", r.ID, report.Escape(r.Name), startTime(r.Start),
			runner.BuildKey(r.Identity), r.ExitStatus, stale)
	}
	// Records of schema version 1 hold no floor: this process's own peak stands in for it.
	estimate := runner.SelfPeakRSS()
	var fn floorNotes
	rssA, rssB := fn.mark(a, estimate), fn.mark(b, estimate)
	rssChange := rssA + " (same)"
	if a.PeakRSSBytes != b.PeakRSSBytes {
		rssChange = rssA + " → " + rssB
		if a.PeakRSSBytes != 0 {
			rssChange += fmt.Sprintf(" (%+.1f%%)", 100*float64(b.PeakRSSBytes-a.PeakRSSBytes)/float64(a.PeakRSSBytes))
		}
	}
	fmt.Fprintf(st.Out, "timing: wall %s, user %s, sys %s, peak RSS %s\n",
		change(a.WallNS, b.WallNS, seconds), change(a.UserNS, b.UserNS, seconds), change(a.SysNS, b.SysNS, seconds), rssChange)
	for _, l := range fn.lines() {
		fmt.Fprintf(st.Out, "  %s\n", l)
	}
	writeDiffBuilds(st.Out, sides, mcWhy)
	if mcWhy == nil {
		fmt.Fprintf(st.Out, "%s\n", mcLine)
	}
	switch {
	case d.SameBuild() && d.KeyA != d.KeyB:
		fmt.Fprintf(st.Out, "same build, in another folder: binaries, linked copies, sources, toolchain and environment are identical relative to each run's working folder (%s, %s); the build keys differ because they hold absolute paths\n",
			report.Escape(a.WorkDir), report.Escape(b.WorkDir))
	case d.SameBuild():
		fmt.Fprintln(st.Out, "same build: binaries, linked copies, sources, toolchain and environment are identical")
	default:
		fmt.Fprintln(st.Out, "build differences:")
	}
	for _, line := range d.Summary() {
		fmt.Fprintf(st.Out, "  %s\n", report.Escape(line))
	}
	lines := sourceLines(ctx, a, b, d.Changes)
	for _, c := range d.Changes {
		if ls := lines[c.Name]; len(ls) > 0 {
			fmt.Fprintf(st.Out, "  %s, changed lines (git diff %.12s %.12s):\n", report.Escape(c.Name), a.Identity.Git.Head, b.Identity.Git.Head)
			for _, l := range ls {
				fmt.Fprintf(st.Out, "    %s\n", report.Escape(l))
			}
		}
	}
	return failed
}

// change formats "a → b (+x.x%)".
func change(a, b int64, f func(int64) string) string {
	if a == b {
		return f(a) + " (same)"
	}
	s := f(a) + " → " + f(b)
	if a != 0 {
		s += fmt.Sprintf(" (%+.1f%%)", 100*float64(b-a)/float64(a))
	}
	return s
}

// completeRuns offers `diff` its arguments: the newest runs' IDs (described by name, start and build)
// and the build keys they ran, read from the ledger --ledger names (read-only; nothing when it cannot
// be opened: completion never prints an error into the shell).
func completeRuns(fl *diffFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= 2 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		l, err := openLedgerRO(ledgerDSN(fl.ledger))
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer l.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		recs, err := l.List(ctx, ledger.Filter{Name: fl.name, Limit: 50})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		seen := map[string]bool{}
		for _, r := range recs {
			key := runner.BuildKey(r.Identity)
			out = append(out, cobra.CompletionWithDesc(fmt.Sprint(r.ID), fmt.Sprintf("%s %s build %s", r.Name, r.Start.UTC().Format("2006-01-02 15:04"), key)))
			if strings.Trim(key, "0123456789") == "" && key != "" {
				key = "build:" + key // a key of digits only would read as a run ID
			}
			if key != "" && !seen[key] {
				seen[key] = true
				out = append(out, cobra.CompletionWithDesc(key, "build of "+r.Name))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// commandNote says when the runs compared ran different command lines (or in different folders): a
// timing difference may then be the arguments', not the build's, and the build identity does not
// hold the arguments. "" when every run compared ran the same command.
func commandNote(sides [2]diffSide) string {
	var seen [2][]string
	for i, s := range sides {
		runs := []*ledger.Record{s.Rec}
		if s.ByBuild && s.Group != nil && len(s.Group.Timed) > 0 {
			runs = s.Group.Timed
		}
		for _, r := range runs {
			if r == nil {
				continue
			}
			c := commandLine(r.Command)
			if r.WorkDir != "" {
				c += " (in " + report.Escape(r.WorkDir) + ")"
			}
			if !slices.Contains(seen[i], c) {
				seen[i] = append(seen[i], c)
			}
		}
	}
	if len(seen[0]) == 1 && len(seen[1]) == 1 && seen[0][0] == seen[1][0] {
		return ""
	}
	list := func(cs []string) string {
		if len(cs) > 3 {
			return strings.Join(cs[:3], " | ") + fmt.Sprintf(" | and %d more", len(cs)-3)
		}
		return strings.Join(cs, " | ")
	}
	return fmt.Sprintf("the runs compared ran different commands (A: %s; B: %s): a difference in timing may be the arguments', not the build's", list(seen[0]), list(seen[1]))
}
