package truth

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// EvRow is one line of the event table: the judgements of one system and edit kind.
type EvRow struct {
	System, Kind string
	Judged       int
	Stale        int
	Count        map[string]int // outcome → judgements
	// Which: libraries with several copies whose copy inside a program which/verify were asked for;
	// wrong answers; "cannot tell".
	Which, WhichWrong, WhichCannot int
}

// Wrong counts the judgements that fail the corpus: false errors, misses, right binary for another
// reason, crashes, cannot tell, noise, and which/verify naming a copy that is not the one inside.
func (r EvRow) Wrong() int {
	return r.Count["false-error"] + r.Count["missed"] + r.Count["other"] + r.Count["crash"] + r.Count["cannot-tell"] + r.Count["noise"] + r.WhichWrong
}

// RecallByReason is the share of stale judgements named by an error for the edited file.
func (r EvRow) RecallByReason() float64 {
	if r.Stale == 0 {
		return 100
	}
	return 100 * float64(r.Count["right"]) / float64(r.Stale)
}

// Table sums the judgements per system and edit kind; the last row is the total.
func (res *EventResult) Table() []EvRow {
	by := map[string]*EvRow{}
	total := &EvRow{System: "all", Kind: "all", Count: map[string]int{}}
	for _, j := range res.Judgements {
		k := j.System + "\x00" + j.Kind
		r := by[k]
		if r == nil {
			r = &EvRow{System: j.System, Kind: j.Kind, Count: map[string]int{}}
			by[k] = r
		}
		for _, x := range []*EvRow{r, total} {
			x.Judged++
			if j.Stale {
				x.Stale++
			}
			x.Count[j.Outcome]++
			x.Which += j.Which
			x.WhichWrong += j.WhichWrong
			x.WhichCannot += j.WhichCannot
		}
	}
	var rows []EvRow
	for _, r := range by {
		rows = append(rows, *r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].System != rows[j].System {
			return rows[i].System < rows[j].System
		}
		return rows[i].Kind < rows[j].Kind
	})
	return append(rows, *total)
}

// Summary is the last line of an event run.
func (res *EventResult) Summary() string {
	t := res.Table()
	a := t[len(t)-1]
	ct := 0.0
	if a.Stale > 0 {
		ct = 100 * float64(a.Count["cannot-tell"]) / float64(a.Stale)
	}
	return fmt.Sprintf("events: %d events, %d judged, %d stale; %d false errors, %d missed, %d other reason, %d cannot tell (%.1f%% of stale), %d crashes, %d noise, %d conservative; recall by reason %.1f%%; which/verify: %d judged, %d wrong, %d cannot tell",
		res.Events, a.Judged, a.Stale, a.Count["false-error"], a.Count["missed"], a.Count["other"], a.Count["cannot-tell"], ct,
		a.Count["crash"], a.Count["noise"], a.Count["conservative"], a.RecallByReason(), a.Which, a.WhichWrong, a.WhichCannot)
}

// Write prints the table (Markdown), the skipped projects and the summary line.
func (res *EventResult) Write(w io.Writer) {
	fmt.Fprintln(w, "| system | edit | judged | stale | right | other reason | cannot tell | missed | crash | false errors | conservative | noise | recall by reason | which/verify judged / wrong / cannot tell |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range res.Table() {
		c := r.Count
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.1f%% | %d / %d / %d |\n", r.System, r.Kind, r.Judged, r.Stale,
			c["right"], c["other"], c["cannot-tell"], c["missed"], c["crash"], c["false-error"], c["conservative"], c["noise"], r.RecallByReason(),
			r.Which, r.WhichWrong, r.WhichCannot)
	}
	fmt.Fprintf(w, "\nseed %d, %s\n", res.Seed, res.Elapsed.Round(1e9))
	for _, s := range res.Skipped {
		fmt.Fprintln(w, "skipped:", s)
	}
	fmt.Fprintln(w, res.Summary())
}

// WriteWrong prints one block per wrong judgement.
func (res *EventResult) WriteWrong(w io.Writer) int {
	n := 0
	for _, j := range res.Judgements {
		for _, note := range j.WhichNotes {
			n++
			fmt.Fprintf(w, "== %s [%s] event %s, %s, %s: WHICH WRONG\n   %s\n", j.Project, j.System, j.Event, j.Phase, j.Root, note)
		}
		switch j.Outcome {
		case "right", "healthy", "conservative":
			continue
		}
		n++
		fmt.Fprintf(w, "== %s [%s] event %s, %s, %s: %s\n", j.Project, j.System, j.Event, j.Phase, j.Root, strings.ToUpper(j.Outcome))
		fmt.Fprintf(w, "   program prints: %q\n   fresh prints:   %q\n", j.BinaryOut, j.FreshOut)
		for _, f := range j.Findings {
			fmt.Fprintf(w, "   %s\n", f)
		}
	}
	return n
}
