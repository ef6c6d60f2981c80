package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/runner"
	"github.com/stalecheck/stalecheck/internal/stats"
)

// benchCommand is one command of a run call: what runs, under which name, its checked plan and what
// its runs measured.
type benchCommand struct {
	argv []string
	// display names the command in messages (its program, or the -c line); line is the whole command
	// line (the export's).
	display, line, name string
	plan                *runner.Plan
	recorded            []*ledger.Record
	wall, user          []int64 // of the runs that exited 0
	sys                 []int64
	build               string
}

// benchCommands turns the call's arguments into its commands: COMMAND ARGS as one argv, or each -c
// command line run by sh -c (so that the check still finds the binaries it names: runner's argument-
// string words). Names come from --name, once per command.
func benchCommands(args []string, fl runFlags) ([]*benchCommand, error) {
	var out []*benchCommand
	switch {
	case len(fl.commands) > 0 && len(args) > 0:
		return nil, fmt.Errorf("give the command as COMMAND ARGS or with -c, not both (got -c %q and %q)", fl.commands[0], strings.Join(args, " "))
	case len(fl.commands) > 0:
		for _, c := range fl.commands {
			if strings.TrimSpace(c) == "" {
				return nil, fmt.Errorf("-c %q: an empty command line", c)
			}
			out = append(out, &benchCommand{argv: []string{"sh", "-c", c}, display: c, line: c, name: c})
		}
	default:
		out = append(out, &benchCommand{argv: args, display: args[0], line: strings.Join(args, " "), name: runner.DefaultName(args)})
	}
	switch {
	case len(fl.names) == 1 && len(out) == 1, len(fl.names) == len(out):
		for i, n := range fl.names {
			out[i].name = n
		}
	case len(fl.names) > 0:
		return nil, fmt.Errorf("--name given %d times for %d commands: give it once per command, in order", len(fl.names), len(out))
	}
	for i, b := range out {
		for _, o := range out[:i] {
			if o.name == b.name {
				return nil, fmt.Errorf("two commands are named %q: their runs could not be told apart in the ledger (--name once per command)", b.name)
			}
		}
	}
	return out, nil
}

// relativeRow is one command against the fastest: how many times as long its median wall time is, with
// the 95% interval of that ratio (stats.MedianChangeCINS); the fastest has ratio 1.
type relativeRow struct {
	Name    string  `json:"name"`
	Ratio   float64 `json:"ratio"`
	RatioLo float64 `json:"ratio_low,omitempty"`
	RatioHi float64 `json:"ratio_high,omitempty"`
	Fastest bool    `json:"fastest,omitempty"`
	// Significant: the interval excludes 1 and the rank-sum test rejects one population (stats.Change.Significant).
	Significant bool `json:"significant"`
}

// relativeSummary compares the commands by median wall time of their runs that exited 0 (hyperfine's
// relative summary, with stalecheck's median interval). Nil with fewer than two commands with runs.
func relativeSummary(cmds []*benchCommand) []relativeRow {
	var timed []*benchCommand
	for _, b := range cmds {
		if len(b.wall) > 0 {
			timed = append(timed, b)
		}
	}
	if len(cmds) < 2 || len(timed) < 2 {
		return nil
	}
	med := map[*benchCommand]float64{}
	for _, b := range timed {
		s, _ := stats.SummarizeNS(b.wall)
		med[b] = s.Median
	}
	fastest := slices.MinFunc(timed, func(a, b *benchCommand) int { return cmp.Compare(med[a], med[b]) })
	rows := []relativeRow{{Name: fastest.name, Ratio: 1, Fastest: true}}
	for _, b := range timed {
		if b == fastest {
			continue
		}
		r := relativeRow{Name: b.name, Ratio: med[b] / med[fastest]}
		if c, err := stats.MedianChangeCINS(fastest.wall, b.wall, ciLevel); err == nil && c.RelOK {
			r.Ratio, r.RatioLo, r.RatioHi = 1+c.Rel, 1+c.RelLo, 1+c.RelHi
			r.Significant = c.Significant()
		}
		rows = append(rows, r)
	}
	return rows
}

// writeRelative prints the relative summary: the fastest command, then each other as a ratio of its
// median wall time, with the interval when both sides have runs enough for one.
func writeRelative(w io.Writer, rows []relativeRow) {
	if len(rows) < 2 {
		return
	}
	fmt.Fprintf(w, "stalecheck: summary (median wall time): %s ran\n", quoteName(rows[0].Name))
	for _, r := range rows[1:] {
		ci := ""
		switch {
		case r.RatioLo > 0 && r.Significant:
			ci = fmt.Sprintf(" (95%% CI %.2f…%.2f)", r.RatioLo, r.RatioHi)
		case r.RatioLo > 0:
			ci = fmt.Sprintf(" (95%% CI %.2f…%.2f: not significant)", r.RatioLo, r.RatioHi)
		default:
			ci = " (too few runs for an interval: --repeat 10)"
		}
		fmt.Fprintf(w, "  %6.2f times as fast as %s%s\n", r.Ratio, quoteName(r.Name), ci)
	}
}

func quoteName(n string) string { return "'" + report.Escape(n) + "'" }
