package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/machine"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/runner"
	"github.com/stalecheck/stalecheck/internal/vcache"
)

// exitRefused is run's own status: it refused to run stale code, or could not run the command at all
// (usage, no workspace): the convention of env(1) and timeout(1).
const exitRefused = 125

// ledgerEnv names the ledger when --ledger is not given.
const ledgerEnv = "STALECHECK_LEDGER"

type runFlags struct {
	ledger, targetDir, buildDir, color string
	binaries, names, commands          []string
	repeat                             int
	allowStale, quiet, noCache         bool
	// hyperfine's habits: untimed warm-up runs, a command before each run, a run count between bounds
	// within a time budget, where the command's output goes, and the runs exported.
	warmup, minRuns, maxRuns        int
	prepare, cleanup, output        string
	budget                          time.Duration
	exportJSON, exportCSV, exportMD string
	repeatSet                       bool // --repeat given on the command line
	budgetSet, counted              bool // --time-budget given; any of --min-runs, --max-runs, --time-budget given
}

func newRunCmd(st Streams) *cobra.Command {
	var fl runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] [--] COMMAND [ARGS...] | run [flags] -c 'COMMAND LINE' [-c ...]",
		Short: "Check the build, refuse stale code, run COMMAND and record its timing with the build identity",
		Long: `run checks the Cargo workspace of COMMAND (found from the program's folder, else the working folder).
When an error finding touches a binary that matters (--binary; else the workspace binaries the command
names: as arguments, inside argument strings such as sh -c "./target/debug/app", and inside the scripts it
runs; else the workspace's release binaries) it refuses, prints the findings on stderr and does not start
COMMAND. A binary only the command's execution picks (a path in a variable, cargo run) is not seen: name it
with --binary. Otherwise it runs COMMAND through a fresh copy of stalecheck (so that the peak RSS is not
stalecheck's own), with stdin, stdout and stderr passed through, measures it (wall time, user and system
CPU, peak RSS of the largest process and its floor) and records the run with the build identity
(binaries, the native library copies they link, source digests, git state, toolchain, environment) in
the ledger. The pre-run check of a build that did not change is answered from the verdict cache (as
check's; --no-cache turns it off); a stale build's refusal always comes from a full check.

With -c 'COMMAND LINE' given more than once (hyperfine's several commands), every command is checked
first and a stale build in any refuses them all; then each is warmed up and run in turn with the same
counts, and a relative summary says which was fastest and by how much, with the 95% interval of the ratio
of medians.

Exit status: COMMAND's own (128+N when signal N killed it); 125 refused (stale build) or run failed
before starting COMMAND; 126 COMMAND cannot be executed; 127 COMMAND not found.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !cmd.Flags().Changed("command") {
				return &ExitError{exitRefused, errors.New("run: no command given: stalecheck run [flags] -- COMMAND [ARGS...], or -c 'COMMAND LINE' once per command to compare")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.repeatSet = cmd.Flags().Changed("repeat")
			fl.budgetSet = cmd.Flags().Changed("time-budget")
			fl.counted = fl.budgetSet || cmd.Flags().Changed("min-runs") || cmd.Flags().Changed("max-runs")
			return runRun(st, args, fl)
		},
	}
	// Everything after the command's name belongs to the command.
	cmd.Flags().SetInterspersed(false)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &ExitError{exitRefused, err} })
	f := cmd.Flags()
	f.StringVar(&fl.ledger, "ledger", "", "the ledger: a SQLite file or a postgres:// URL (default $"+ledgerEnv+", else $XDG_STATE_HOME/stalecheck/ledger.db)")
	f.StringArrayVar(&fl.names, "name", nil, "the benchmark's name in the ledger (default: the program's base name; with -c, the command line); with several -c, once per command, in order")
	f.StringArrayVarP(&fl.commands, "command", "c", nil, "a shell command line to benchmark (repeatable, instead of COMMAND ARGS): each is checked, then run in turn, and a relative summary compares them")
	f.IntVar(&fl.repeat, "repeat", 1, "check once, then run and record N times, stopping at the first non-zero exit")
	f.BoolVar(&fl.allowStale, "allow-stale", false, "run a stale build anyway and mark the record stale with its findings")
	f.StringArrayVar(&fl.binaries, "binary", nil, "a binary that matters (repeatable); default: workspace binaries the command names (also inside argument strings and scripts), else the release binaries")
	f.StringVar(&fl.targetDir, "target-dir", "", "the target folder (as cargo --target-dir); default: as Cargo finds it")
	f.StringVar(&fl.buildDir, "build-dir", "", "the build folder (Cargo's build.build-dir); default: as Cargo finds it")
	f.StringVar(&fl.color, "color", "auto", "colour the refusal report: auto, always or never")
	f.BoolVar(&fl.noCache, "no-cache", false, "always run the full pre-run check (no verdict cache; also "+vcache.EnvMode+"=off)")
	f.BoolVarP(&fl.quiet, "quiet", "q", false, "print nothing on success (no summary line per run)")
	f.IntVar(&fl.warmup, "warmup", 0, "run the command N times first, untimed and unrecorded (warms caches)")
	f.StringVar(&fl.prepare, "prepare", "", "a shell command run before each run (warm-ups too), untimed (e.g. to drop caches)")
	f.StringVar(&fl.cleanup, "cleanup", "", "a shell command run once after each command's runs (also after a failed run), untimed (e.g. to remove what the runs wrote)")
	f.IntVar(&fl.minRuns, "min-runs", 0, "run at least N times, then until --time-budget is spent or --max-runs reached (instead of --repeat)")
	f.IntVar(&fl.maxRuns, "max-runs", 0, "run at most N times (with --min-runs or --time-budget)")
	f.DurationVar(&fl.budget, "time-budget", 0, "with --min-runs or --max-runs: keep running until this much time was spent (default 3s)")
	f.StringVar(&fl.output, "output", "inherit", "where the command's stdout and stderr go: inherit, null (discarded) or pipe (read and discarded by stalecheck)")
	f.StringVar(&fl.exportJSON, "export-json", "", "write this invocation's runs and their summary as JSON to FILE")
	f.StringVar(&fl.exportCSV, "export-csv", "", "write this invocation's runs as CSV to FILE")
	f.StringVar(&fl.exportMD, "export-markdown", "", "write this invocation's summary as a markdown table to FILE (for a PR comment)")
	return cmd
}

// ledgerDSN is the --ledger value, else $STALECHECK_LEDGER, else "" (the default SQLite file).
func ledgerDSN(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(ledgerEnv)
}

func runRun(st Streams, args []string, fl runFlags) error {
	tuneGC()
	if fl.repeat < 1 {
		return &ExitError{exitRefused, fmt.Errorf("--repeat %d: want 1 or more", fl.repeat)}
	}
	if err := checkRunFlags(fl, fl.repeatSet); err != nil {
		return &ExitError{exitRefused, err}
	}
	if err := checkColor(fl.color); err != nil {
		return &ExitError{exitRefused, err}
	}
	dsn := ledgerDSN(fl.ledger)
	// Fail before a long benchmark rather than after it: a URL of another database, or a ledger file
	// that is not a regular file (a FIFO would hang SQLite).
	if err := ledger.CheckDSN(dsn); err != nil {
		return &ExitError{exitRefused, err}
	}
	if dsn != "" && !ledger.IsPostgres(dsn) {
		// Fail before a long benchmark rather than after it: the SQLite file's folder must exist.
		if fi, err := os.Stat(filepath.Dir(dsn)); err != nil || !fi.IsDir() {
			return &ExitError{exitRefused, fmt.Errorf("--ledger %s: the folder %s does not exist", dsn, filepath.Dir(dsn))}
		}
	}
	ctx := context.Background()
	gpuCh := machine.GPUsAsync() // beside the pre-run check; taken before anything is timed
	// The exec helper starts now, so that its own start-up overlaps the pre-run check (runner.Exec); a
	// refusal or an error gives it back unused.
	stdio, closeOut, err := runOutput(fl.output, st)
	if err != nil {
		return &ExitError{exitRefused, err}
	}
	defer closeOut()
	cmds, err := benchCommands(args, fl)
	if err != nil {
		return &ExitError{exitRefused, err}
	}
	var helper *runner.Helper
	if wd, err := os.Getwd(); err == nil {
		helper = runner.StartHelper(wd, os.Environ(), stdio)
	}
	defer helper.Close()
	// Every command is checked before any is timed: a stale build anywhere refuses the whole call, so
	// no comparison is made against stale code.
	refused := false
	for i, b := range cmds {
		plan, err := runner.Prepare(ctx, runner.Config{Command: b.argv, Binaries: fl.binaries, TargetDir: fl.targetDir, BuildDir: fl.buildDir,
			VerdictCache: vcache.ModeFromEnv(fl.noCache), Version: Version, Trace: st.Err})
		if err != nil {
			var ee *runner.ExecError
			if errors.As(err, &ee) {
				return &ExitError{ee.Code, ee}
			}
			var ve *runner.VerifyError
			if errors.As(err, &ve) {
				return &ExitError{exitVerifyDiffers, ve}
			}
			return &ExitError{exitRefused, fmt.Errorf("run: %w", err)}
		}
		b.plan = plan
		defer plan.SaveCaches() // also after a refusal: the next check reuses the digests
		if i == 0 && helper != nil && plan.Dir == helper.Dir() && slices.Equal(plan.Environ, helper.Environ()) {
			plan.UseHelper(helper)
		}
		if lock, busy := plan.BuildRunning(); busy {
			if !fl.allowStale {
				fmt.Fprintf(st.Err, "stalecheck: refusing to run %s: a cargo build holds %s: it is replacing the binaries and their records, so what would run is not known\n", report.Escape(b.display), report.Escape(lock))
				fmt.Fprintln(st.Err, "stalecheck: run again when the build ends, or pass --allow-stale")
				refused = true
				continue
			}
			fmt.Fprintf(st.Err, "stalecheck: warning: a cargo build holds %s (--allow-stale): the binary may be replaced while it runs\n", report.Escape(lock))
		}
		if plan.Stale() {
			if !fl.allowStale {
				report.WriteText(st.Err, plan.Graph, plan.Blocking, report.TextOptions{Color: useColor(st.Err, fl.color)})
				fmt.Fprintf(st.Err, "stalecheck: refusing to run %s: %s\n", report.Escape(b.display), staleSentence(plan))
				fmt.Fprintln(st.Err, "stalecheck: rebuild, or pass --allow-stale to run it anyway and record the run as stale")
				refused = true
				continue
			}
			fmt.Fprintf(st.Err, "stalecheck: warning: running a stale build (--allow-stale): %s; the record is marked stale\n", staleSentence(plan))
		}
		for _, u := range plan.Unjudged {
			fmt.Fprintf(st.Err, "stalecheck: warning: %s\n", report.Escape(u))
		}
		if !fl.quiet {
			// What the build identity could not establish (an unreadable source, git or a tool that did
			// not answer in time): the record lacks it.
			for _, n := range plan.Notes {
				fmt.Fprintf(st.Err, "stalecheck: note: %s\n", report.Escape(n))
			}
		}
	}
	if refused {
		if len(cmds) > 1 {
			fmt.Fprintln(st.Err, "stalecheck: no command was run: a comparison with a stale build would measure the wrong code")
		}
		return &ExitError{Code: exitRefused}
	}

	rec := &recorder{st: st, dsn: dsn}
	defer rec.close()
	floorSaid := false
	var gpus []machine.GPU
	select {
	case gpus = <-gpuCh:
	case <-time.After(3 * time.Second):
	}
	status := 0
	for _, b := range cmds {
		for i := 0; i < fl.warmup; i++ {
			if err := prepareRun(fl.prepare, b.plan, st); err != nil {
				return &ExitError{exitRefused, err}
			}
			if _, err := b.plan.Exec(stdio); err != nil {
				var ee *runner.ExecError
				if errors.As(err, &ee) {
					return &ExitError{ee.Code, ee}
				}
				return &ExitError{exitRefused, err}
			}
		}
		began := time.Now()
		for i := 0; more(fl, i, began); i++ {
			if err := prepareRun(fl.prepare, b.plan, st); err != nil {
				return &ExitError{exitRefused, err}
			}
			probe := machine.Start()
			u, err := b.plan.Exec(stdio)
			if err != nil {
				var ee *runner.ExecError
				if errors.As(err, &ee) {
					return &ExitError{ee.Code, ee}
				}
				return &ExitError{exitRefused, err}
			}
			r := b.plan.Record(b.name, u)
			r.Machine = probe.Finish(u.WallNS, u.UserNS+u.SysNS)
			r.Machine.GPUs = gpus
			b.recorded = append(b.recorded, r)
			if rec.store(ctx, r) && !fl.quiet {
				fmt.Fprintf(st.Err, "stalecheck: run %d %s: %s\n", r.ID, report.Escape(b.name), runSummary(r, u.RSSFloorBytes))
				if !floorSaid && strings.HasSuffix(peakRSS(r.PeakRSSBytes, u.RSSFloorBytes), rssFloorMark) {
					floorSaid = true // once per invocation, not once per --repeat
					fmt.Fprintf(st.Err, "stalecheck: %s\n", floorNote(u.RSSFloorBytes, floorMeasured))
				}
			}
			status = u.ExitStatus
			if status != 0 {
				break
			}
			b.wall, b.user, b.sys, b.build = append(b.wall, r.WallNS), append(b.user, r.UserNS), append(b.sys, r.SysNS), runner.BuildKey(r.Identity)
		}
		if err := cleanupRun(fl.cleanup, b.plan, st); err != nil {
			return &ExitError{exitRefused, err}
		}
		if len(b.recorded) > 1 && len(b.wall) > 0 && !fl.quiet {
			writeRepeatSummary(st.Err, b.name, b.build, b.wall, b.user, b.sys)
			runAdvice(st.Err, fl, b.wall, b.recorded)
		}
		if status != 0 {
			break // as hyperfine: a failing command ends the call; what ran is still exported
		}
	}
	rel := relativeSummary(cmds)
	if !fl.quiet && status == 0 {
		writeRelative(st.Err, rel)
	}
	if err := exportRuns(fl, cmds, rel); err != nil {
		return &ExitError{exitRefused, err}
	}
	if status != 0 {
		return &ExitError{Code: status}
	}
	return nil
}

// staleSentence says which binaries are stale and which inputs changed since they were built.
func staleSentence(plan *runner.Plan) string {
	var bins []string
	touched := map[string]bool{}
	for _, f := range plan.Blocking {
		for _, r := range f.Roots {
			touched[r] = true
		}
	}
	for _, m := range plan.Matter {
		if touched[m] {
			bins = append(bins, report.Escape(plan.Display(m)))
		}
	}
	var rules []string
	for _, f := range plan.Blocking {
		if !slices.Contains(rules, f.Rule) {
			rules = append(rules, f.Rule)
		}
	}
	s := fmt.Sprintf("%s (%s) %s stale: %d error finding(s) (%s)", strings.Join(bins, ", "), plan.MatterHow,
		map[bool]string{true: "is", false: "are"}[len(bins) == 1], len(plan.Blocking), strings.Join(rules, ", "))
	var ins []string
	for _, in := range plan.StaleInputs() {
		ins = append(ins, report.Escape(plan.Display(in)))
	}
	if len(ins) > 0 {
		s += "; changed since the build: " + strings.Join(ins, ", ")
	}
	return s
}

// checkColor accepts the values of --color.
func checkColor(mode string) error {
	switch mode {
	case "auto", "always", "never":
		return nil
	}
	return fmt.Errorf("--color %q: want auto, always or never", mode)
}

// runSummary is the one-line description of a recorded run; floor is the peak RSS of the process that
// started the command (0: unknown).
func runSummary(r *ledger.Record, floor int64) string {
	s := fmt.Sprintf("wall %s, user %s, sys %s, peak RSS %s, exit %d, build %s",
		seconds(r.WallNS), seconds(r.UserNS), seconds(r.SysNS), peakRSS(r.PeakRSSBytes, floor), r.ExitStatus, runner.BuildKey(r.Identity))
	if r.Stale {
		s += " (stale)"
	}
	return s
}

// recorder opens the ledger at the first record (after the command ran, so that a slow or unreachable
// server never delays the command) and stores each record. A record it cannot store is printed on stderr
// as one line of JSON (the form `stalecheck runs --format json` uses), so the result is not lost.
type recorder struct {
	st      Streams
	dsn     string
	l       ledger.Ledger
	openErr error
	opened  bool
}

func (rc *recorder) store(ctx context.Context, r *ledger.Record) bool {
	if !rc.opened {
		rc.opened = true
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		rc.l, rc.openErr = ledger.Open(octx, rc.dsn)
		cancel()
	}
	err := rc.openErr
	if err == nil {
		ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = rc.l.Insert(ictx, r)
		cancel()
	}
	if err == nil {
		return true
	}
	fmt.Fprintf(rc.st.Err, "stalecheck: cannot record the run in the ledger %s: %s\n", report.Escape(ledger.Location(rc.dsn)), escapeErr(err.Error()))
	fmt.Fprintln(rc.st.Err, "stalecheck: the record follows as JSON, so the result is not lost:")
	b, jerr := json.Marshal(newRecordJSON(r))
	if jerr != nil {
		fmt.Fprintf(rc.st.Err, "stalecheck: cannot encode the record: %v\n", jerr)
		return false
	}
	fmt.Fprintf(rc.st.Err, "%s\n", b)
	return false
}

func (rc *recorder) close() {
	if rc.l != nil {
		rc.l.Close()
	}
}
