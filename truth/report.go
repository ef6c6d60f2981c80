package truth

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Row is one line of the table: the figures of one edit kind (or of all of them).
type Row struct {
	Kind                                   string
	States, Roots, Stale                   int
	FalseErrors, Missed, CargoAgree, Cargo int
	Which, WhichWrong, WhichCannot         int
}

// Recall is the share of stale roots stalecheck named with an error (100 when none was stale).
func (r Row) Recall() float64 {
	if r.Stale == 0 {
		return 100
	}
	return 100 * float64(r.Stale-r.Missed) / float64(r.Stale)
}

// Agreement is the share of judged roots whose pending-rebuild units equal Cargo's Dirty set.
func (r Row) Agreement() float64 {
	if r.Cargo == 0 {
		return 100
	}
	return 100 * float64(r.CargoAgree) / float64(r.Cargo)
}

// Table sums the verdicts per edit kind; the last row is the total.
func (res *Result) Table() []Row {
	by := map[string]*Row{}
	states := map[string]map[string]bool{}
	total := &Row{Kind: "all"}
	for _, v := range res.Verdicts {
		r := by[v.Kind]
		if r == nil {
			r = &Row{Kind: v.Kind}
			by[v.Kind] = r
			states[v.Kind] = map[string]bool{}
		}
		states[v.Kind][v.Shape+"/"+v.State] = true
		for _, x := range []*Row{r, total} {
			x.Roots++
			if v.Stale {
				x.Stale++
				if !v.Error {
					x.Missed++
				}
			} else if v.Error {
				x.FalseErrors++
			}
			x.Which += v.Which
			x.WhichWrong += v.WhichWrong
			x.WhichCannot += v.WhichCannot
			x.Cargo++
			if v.Agree {
				x.CargoAgree++
			}
		}
	}
	var rows []Row
	for k, r := range by {
		r.States = len(states[k])
		rows = append(rows, *r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Kind < rows[j].Kind })
	total.States = res.States
	return append(rows, *total)
}

// Summary is the last line of a run.
func (res *Result) Summary() string {
	t := res.Table()
	all := t[len(t)-1]
	return fmt.Sprintf("truth: %d states, %d false errors, %d missed, recall %.1f%%, cargo agreement %.1f%%; which: %d judged, %d wrong, %d cannot tell",
		all.States, all.FalseErrors, all.Missed, all.Recall(), all.Agreement(), all.Which, all.WhichWrong, all.WhichCannot)
}

// Write prints the table (Markdown), the skipped shapes and the summary line.
func (res *Result) Write(w io.Writer) {
	fmt.Fprintln(w, "| edit kind | states | roots judged | stale | false errors | missed | recall | cargo agreement | which judged / wrong / cannot tell |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range res.Table() {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %.1f%% | %.1f%% | %d / %d / %d |\n", r.Kind, r.States, r.Roots, r.Stale, r.FalseErrors, r.Missed, r.Recall(), r.Agreement(), r.Which, r.WhichWrong, r.WhichCannot)
	}
	shapes := map[string]bool{}
	for _, v := range res.Verdicts {
		shapes[v.Shape] = true
	}
	fmt.Fprintf(w, "\n%d shapes, %s\n", len(shapes), res.Elapsed.Round(1e9))
	for _, s := range res.Skipped {
		fmt.Fprintln(w, "skipped:", s)
	}
	for _, s := range res.CacheDisagreed {
		fmt.Fprintln(w, "verdict cache disagrees:", s)
	}
	for _, s := range res.ScopeDisagreed {
		fmt.Fprintln(w, "profile-scoped check disagrees:", s)
	}
	fmt.Fprintln(w, res.Summary())
}

// WriteWrong prints one block per wrong verdict: a false error, a miss or a disagreement with Cargo.
func (res *Result) WriteWrong(w io.Writer) int {
	n := 0
	for _, v := range res.Verdicts {
		var what []string
		if v.Stale && !v.Error {
			what = append(what, "MISSED")
		}
		if !v.Stale && v.Error {
			what = append(what, "FALSE ERROR")
		}
		if v.WhichWrong > 0 {
			what = append(what, "WHICH WRONG")
		}
		if !v.Agree {
			c := Cargo{}
			if v.Cargo != nil {
				c = *v.Cargo
			}
			what = append(what, fmt.Sprintf("CARGO DISAGREES (cargo dirty %v, rebuilt %v; pending-rebuild %v)", c.Own, c.Rebuilt, v.Pending))
		}
		if len(what) == 0 {
			continue
		}
		n++
		fmt.Fprintf(w, "== %s state %s (%s) %s: %s\n", v.Shape, v.State, v.Kind, v.Root, strings.Join(what, "; "))
		fmt.Fprintf(w, "   binary prints: %q\n   fresh prints:  %q\n", v.BinaryOut, v.FreshOut)
		for _, f := range v.Findings {
			fmt.Fprintf(w, "   %s\n", f)
		}
	}
	return n
}
