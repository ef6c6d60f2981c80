package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/runner"
	"github.com/stalecheck/stalecheck/internal/safeio"
	"github.com/stalecheck/stalecheck/internal/stats"
)

// defaultBudget is --time-budget's default when --min-runs or --max-runs is given (hyperfine's 3 s).
const defaultBudget = 3 * time.Second

// checkRunFlags refuses contradictory or meaningless counts before anything runs.
func checkRunFlags(fl runFlags, repeatSet bool) error {
	switch {
	case fl.warmup < 0 || fl.minRuns < 0 || fl.maxRuns < 0 || fl.budget < 0:
		return fmt.Errorf("--warmup, --min-runs, --max-runs and --time-budget cannot be negative")
	case fl.maxRuns > 0 && fl.minRuns > fl.maxRuns:
		return fmt.Errorf("--min-runs %d is more than --max-runs %d", fl.minRuns, fl.maxRuns)
	case repeatSet && fl.counted:
		return fmt.Errorf("--repeat fixes the number of runs: give it or --min-runs/--max-runs/--time-budget, not both")
	}
	switch fl.output {
	case "inherit", "null", "pipe":
	default:
		return fmt.Errorf("--output %q: want inherit, null or pipe", fl.output)
	}
	// An export that cannot be written is refused before the runs, not after them.
	// Nor may one replace the ledger the runs are recorded in, or another export.
	keep := ledgerFiles(ledgerDSN(fl.ledger))
	for _, e := range []struct{ flag, path string }{{"--export-json", fl.exportJSON}, {"--export-csv", fl.exportCSV}, {"--export-markdown", fl.exportMD}} {
		if e.path == "" {
			continue
		}
		if err := checkOutputFile(e.flag, e.path, keep); err != nil {
			return err
		}
		abs, _ := filepath.Abs(e.path)
		keep = append(keep, keptFile{abs, e.flag + "'s file"})
	}
	return nil
}

// more says whether run i (0-based) should happen: --repeat's count, else at least --min-runs (1),
// then while the time budget lasts, never more than --max-runs.
func more(fl runFlags, i int, began time.Time) bool {
	if !fl.counted {
		return i < fl.repeat
	}
	if fl.maxRuns > 0 && i >= fl.maxRuns {
		return false
	}
	if i < max(fl.minRuns, 1) {
		return true
	}
	budget := fl.budget
	if !fl.budgetSet {
		budget = defaultBudget
	}
	return time.Since(began) < budget
}

// runOutput opens where the command's output goes: the terminal (inherit), /dev/null (null), or a pipe
// stalecheck reads and discards (pipe: what a command costs when its output is consumed).
func runOutput(mode string, st Streams) (runner.Stdio, func(), error) {
	switch mode {
	case "null":
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return runner.Stdio{}, func() {}, err
		}
		return runner.Stdio{Stdin: os.Stdin, Stdout: f, Stderr: f}, func() { f.Close() }, nil
	case "pipe":
		return runner.Stdio{Stdin: os.Stdin, Stdout: io.Discard, Stderr: io.Discard}, func() {}, nil
	}
	return runner.Stdio{Stdin: os.Stdin, Stdout: st.Out, Stderr: st.Err}, func() {}, nil
}

// prepareRun runs --prepare's shell command in the plan's folder and environment, its output on
// stderr; a failure stops the runs.
func prepareRun(cmdline string, plan *runner.Plan, st Streams) error {
	if cmdline == "" {
		return nil
	}
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Dir, cmd.Env = plan.Dir, plan.Environ
	cmd.Stdout, cmd.Stderr = st.Err, st.Err
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("--prepare %q: %v", cmdline, err)
	}
	return nil
}

// cleanupRun runs --cleanup's shell command as prepareRun runs --prepare's.
func cleanupRun(cmdline string, plan *runner.Plan, st Streams) error {
	if err := prepareRun(cmdline, plan, st); err != nil {
		return fmt.Errorf("--cleanup%s", strings.TrimPrefix(err.Error(), "--prepare"))
	}
	return nil
}

// runAdvice is hyperfine's advice after the summary: outliers (with a first run much slower than the
// rest, a cold cache: --warmup), and a machine that was loaded during some runs.
func runAdvice(w io.Writer, fl runFlags, wall []int64, recs []*ledger.Record) {
	s, err := stats.SummarizeNS(wall)
	if err != nil {
		return
	}
	if s.Outliers > 0 {
		msg := "statistical outliers were detected: run on a quiet machine, or with more runs"
		if fl.warmup == 0 && len(wall) > 2 && float64(wall[0]) > s.Median+10*s.MAD && s.MAD > 0 {
			msg = "the first run was much slower than the others (cold caches?): add --warmup 3, or --prepare to clear the caches each time"
		}
		fmt.Fprintf(w, "  warning: %s\n", msg)
	}
	loaded := 0
	example := ""
	for _, r := range recs {
		if l := r.Machine.Loaded(); l != "" {
			loaded++
			if example == "" {
				example = l
			}
		}
	}
	if loaded > 0 {
		fmt.Fprintf(w, "  warning: %d of %d runs ran on a loaded machine (%s): their times measure the machine too\n", loaded, len(recs), report.Escape(example))
	}
}

// exportDoc is --export-json's document: hyperfine's export, one result per command with the runs of
// this invocation (stalecheck's run IDs, build key and conditions) and the summary of those that exited
// 0, then the relative summary when several commands ran.
type exportDoc struct {
	report.Envelope
	Results  []exportResult `json:"results"`
	Relative []relativeRow  `json:"relative,omitempty"`
}

type exportResult struct {
	Name    string           `json:"name"`
	Command []string         `json:"command"`
	Build   string           `json:"build"`
	Summary *exportSummary   `json:"summary"`
	Runs    []*ledger.Record `json:"runs"`
}

type exportSummary struct {
	N          int     `json:"n"`
	MeanNS     float64 `json:"mean_ns"`
	StdDevNS   float64 `json:"stddev_ns"`
	MedianNS   float64 `json:"median_ns"`
	MinNS      float64 `json:"min_ns"`
	MaxNS      float64 `json:"max_ns"`
	UserMeanNS float64 `json:"user_mean_ns"`
	SysMeanNS  float64 `json:"sys_mean_ns"`
	Outliers   int     `json:"outliers"`
}

func summarize(b *benchCommand) *exportSummary {
	s, err := stats.SummarizeNS(b.wall)
	if err != nil {
		return nil
	}
	us, _ := stats.SummarizeNS(b.user)
	ss, _ := stats.SummarizeNS(b.sys)
	return &exportSummary{N: s.N, MeanNS: s.Mean, StdDevNS: s.StdDev, MedianNS: s.Median, MinNS: s.Min, MaxNS: s.Max,
		UserMeanNS: us.Mean, SysMeanNS: ss.Mean, Outliers: s.Outliers}
}

// exportRuns writes --export-json, --export-csv and --export-markdown (each atomically).
func exportRuns(fl runFlags, cmds []*benchCommand, rel []relativeRow) error {
	if fl.exportJSON == "" && fl.exportCSV == "" && fl.exportMD == "" {
		return nil
	}
	ratio := map[string]relativeRow{}
	for _, r := range rel {
		ratio[r.Name] = r
	}
	if fl.exportJSON != "" {
		doc := exportDoc{Envelope: report.Envelope{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "run"},
			Results: []exportResult{}, Relative: rel}
		for _, b := range cmds {
			r := exportResult{Name: b.name, Command: b.argv, Build: b.build, Summary: summarize(b), Runs: b.recorded}
			if r.Runs == nil {
				r.Runs = []*ledger.Record{}
			}
			doc.Results = append(doc.Results, r)
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		if err := writeExport(fl.exportJSON, append(b, '\n')); err != nil {
			return fmt.Errorf("--export-json: %w", err)
		}
	}
	if fl.exportCSV != "" {
		var b strings.Builder
		w := csv.NewWriter(&b)
		w.Write([]string{"id", "name", "start", "wall_ns", "user_ns", "sys_ns", "peak_rss_bytes", "exit_status", "stale", "build"})
		for _, c := range cmds {
			for _, r := range c.recorded {
				w.Write([]string{strconv.FormatInt(r.ID, 10), r.Name, r.Start.UTC().Format(time.RFC3339Nano), strconv.FormatInt(r.WallNS, 10),
					strconv.FormatInt(r.UserNS, 10), strconv.FormatInt(r.SysNS, 10), strconv.FormatInt(r.PeakRSSBytes, 10),
					strconv.Itoa(r.ExitStatus), strconv.FormatBool(r.Stale), runner.BuildKey(r.Identity)})
			}
		}
		w.Flush()
		if err := writeExport(fl.exportCSV, []byte(b.String())); err != nil {
			return fmt.Errorf("--export-csv: %w", err)
		}
	}
	if fl.exportMD != "" {
		var b strings.Builder
		b.WriteString("| Command | Build | Runs | Mean [ms] | Median [ms] | Min [ms] | Max [ms] | Relative |\n|:---|:---|---:|---:|---:|---:|---:|---:|\n")
		ms := func(ns float64) string { return strconv.FormatFloat(ns/1e6, 'f', 1, 64) }
		for _, c := range cmds {
			cmd := strings.ReplaceAll(c.line, "|", `\|`)
			sum := summarize(c)
			if sum == nil {
				fmt.Fprintf(&b, "| `%s` | %s | 0 | | | | | |\n", cmd, c.build)
				continue
			}
			relCell := ""
			if r, ok := ratio[c.name]; ok {
				relCell = strconv.FormatFloat(r.Ratio, 'f', 2, 64)
				if r.RatioLo > 0 {
					relCell += fmt.Sprintf(" (%.2f…%.2f)", r.RatioLo, r.RatioHi)
				}
			}
			fmt.Fprintf(&b, "| `%s` | %s | %d | %s ± %s | %s | %s | %s | %s |\n", cmd, c.build, sum.N, ms(sum.MeanNS), ms(sum.StdDevNS), ms(sum.MedianNS), ms(sum.MinNS), ms(sum.MaxNS), relCell)
		}
		if err := writeExport(fl.exportMD, []byte(b.String())); err != nil {
			return fmt.Errorf("--export-markdown: %w", err)
		}
	}
	return nil
}

// writeExport writes an export file atomically, synced: a report the user keeps.
func writeExport(path string, data []byte) error {
	return safeio.WriteFileAtomic(path, safeio.WriteOptions{Sync: true}, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
