// Package htmlreport writes the ledger as one self-contained HTML page (`stalecheck report`): per
// benchmark name, an inline SVG plot of the wall times in the order the runs started, each point
// coloured by its build identity (runner.BuildKey), each build's median as a line across its runs over
// a band of their middle half,
// dashed vertical markers where the build changed from one run to the next (their titles and a table
// give the verdict, the change in median wall time with its 95% interval, and what changed in the
// build), stale runs (--allow-stale) in their build's colour with a red ring, failed runs
// (non-zero exit) as squares, and on each point an SVG <title> (the browser's hover tooltip) with the
// run's ID, build, times, peak RSS, exit status and build description; then a table of the builds with
// their statistics (internal/stats over the runs that exited 0, nanoseconds shown in one unit per plot).
// With three builds or more, a matrix compares any two of them; each cell links to a panel with the
// verdict and what changed, shown by the CSS :target rule (a choice without script).
//
// The page loads nothing: no script, no font, no image, no stylesheet from elsewhere; the SVG is drawn
// by Go. Every string from the ledger goes through report.Escape (control characters and invalid
// UTF-8 made visible) and then html/template's contextual escaping, so a benchmark named
// `<script>` is text. Element classes for tools and tests: `svg.plot` per benchmark (data-name),
// `.run` per plotted point (data-id, data-build), `.build-change` per marker, `table.builds`.
package htmlreport

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stalecheck/stalecheck/internal/benchgroup"
	"github.com/stalecheck/stalecheck/internal/humanize"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/runner"
	"github.com/stalecheck/stalecheck/internal/stats"
)

//go:embed page.html.tmpl
var files embed.FS

// page is parsed on first use, not at start-up: every stalecheck process (run's exec helper among them)
// would pay about 0.25 ms for it.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page.html.tmpl").Funcs(template.FuncMap{"hasPrefix": strings.HasPrefix, "sub": func(a, b float64) float64 { return round2(a - b) }}).ParseFS(files, "page.html.tmpl"))
})

// Options are the page's header facts.
type Options struct {
	Ledger    string    // the ledger's location as shown (ledger.Location)
	Name      string    // the --name filter, "" for all
	Tool      string    // "stalecheck 0.1.0"
	Generated time.Time // when the page was written
}

// Plot geometry, in SVG user units (pixels at 100 %).
const (
	width, height          = 900.0, 300.0 // the viewBox: the plot scales to the window's width
	left, right, top, bott = 70.0, 20.0, 16.0, 40.0
)

// palette colours builds in the order they first ran (cycled after 10; the build key is on every point).
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79"}

type pointView struct {
	ID            int64
	X, Y          float64
	Color, Build  string
	Stale, Failed bool
	Title         string
}

type markerView struct {
	X     float64
	Title string
}

// medianView is a build's median drawn across its consecutive runs, over the box of its middle half
// (the first to the third quartile of its runs that exited 0).
type medianView struct {
	X1, X2, Y  float64
	BoxY, BoxH float64
	Color      string
	Title      string
}

// changeView is one build change between consecutive runs: its verdict and what changed.
type changeView struct {
	ID          string // the element ID of a matrix pair's panel
	Before      int64  // the first run of the new build
	From, To    string
	FromColor   string
	ToColor     string
	Verdict     string // "+19.2% (95% CI +17.8…+20.5%), slower" or why there is none
	Significant bool
	What        []string
}

// matrixView compares any two of a benchmark's builds: a row per build compared from (A), a column
// per build compared to (B); each cell B's change in median wall time against A's, linking to a panel
// (shown by the CSS :target rule, so the page stays without script) with the verdict and all that
// changed between the newest run of each.
type matrixView struct {
	Keys  []keyView
	Rows  []matrixRow
	Pairs []changeView
	Note  string // builds left out, when there are more than maxMatrix
}

type keyView struct{ Key, Color string }

type matrixRow struct {
	keyView
	Cells []cellView
}

type cellView struct {
	Text, Class, Href, Title string
}

// maxMatrix bounds the comparison matrix (its pairs grow with the square): the newest builds are kept.
const maxMatrix = 12

type tickView struct {
	Y     float64
	Label string
}

type xLabelView struct {
	X     float64
	Label string
}

type buildView struct {
	Color, Key, Description                     string
	Runs, N, Stale, Failed, Outliers            int
	Median, Mean, StdDev, Min, Max, First, Last string
	IDs                                         string // the runs' IDs, "1-4, 9"
}

type benchView struct {
	Anchor  string
	Name    string
	Runs    int
	W, H    float64
	PlotL   float64
	PlotR   float64
	PlotB   float64
	PlotT   float64
	Unit    string
	Points  []pointView
	Markers []markerView
	Medians []medianView
	Changes []changeView
	Matrix  *matrixView
	YTicks  []tickView
	XLabels []xLabelView
	Builds  []buildView
}

type pageView struct {
	Options
	GeneratedText string
	Benches       []benchView
	Records       int
}

// Write writes the page for recs (any order, as ledger.List returns them) to w. It errors only when
// w fails.
func Write(w io.Writer, recs []ledger.Record, opt Options) error {
	byName := map[string][]*ledger.Record{}
	var names []string
	for i := range recs {
		r := &recs[i]
		if _, ok := byName[r.Name]; !ok {
			names = append(names, r.Name)
		}
		byName[r.Name] = append(byName[r.Name], r)
	}
	sort.Strings(names)
	pv := pageView{Options: opt, Records: len(recs)}
	pv.Ledger, pv.Name = report.Escape(opt.Ledger), report.Escape(opt.Name)
	if !opt.Generated.IsZero() {
		pv.GeneratedText = report.FormatTime(opt.Generated)
	}
	for i, n := range names {
		pv.Benches = append(pv.Benches, bench(i, n, byName[n]))
	}
	return page().Execute(w, pv)
}

// bench lays out one benchmark's plot and build table.
func bench(i int, name string, rs []*ledger.Record) benchView {
	// In the order the runs started (ties by ID): the ledger's order of insertion need not be that.
	sort.SliceStable(rs, func(a, b int) bool {
		if !rs[a].Start.Equal(rs[b].Start) {
			return rs[a].Start.Before(rs[b].Start)
		}
		return rs[a].ID < rs[b].ID
	})
	flat := make([]ledger.Record, len(rs))
	for k, r := range rs {
		flat[k] = *r
	}
	groups := benchgroup.ByBuild(flat)
	color := map[string]string{}
	for k, g := range groups {
		color[g.Key] = palette[k%len(palette)]
	}
	maxNS := 0.0
	for _, r := range rs {
		maxNS = max(maxNS, float64(r.WallNS))
	}
	u := stats.PickUnit(maxNS)
	yMax := niceCeil(maxNS * 1.05 / u.NS)
	if yMax >= 1000 {
		// The axis's top would read "1000 ms": the next unit up reads "1 s".
		u = stats.PickUnit(yMax * u.NS)
		yMax = niceCeil(maxNS * 1.05 / u.NS)
	}
	if yMax <= 0 {
		yMax = 1
	}
	v := benchView{Anchor: fmt.Sprintf("bench-%d", i+1), Name: report.Escape(name), Runs: len(rs), W: width, H: height,
		PlotL: left, PlotR: width - right, PlotT: top, PlotB: height - bott, Unit: u.Name}
	plotW, plotH := v.PlotR-v.PlotL, v.PlotB-v.PlotT
	xOf := func(k int) float64 {
		if len(rs) == 1 {
			return v.PlotL + plotW/2
		}
		return v.PlotL + 10 + (plotW-20)*float64(k)/float64(len(rs)-1)
	}
	desc := map[string]string{}
	byKey := map[string]*benchgroup.Group{}
	for _, g := range groups {
		desc[g.Key] = g.Description
		byKey[g.Key] = g
	}
	prev := ""
	for k, r := range rs {
		key := runner.BuildKey(r.Identity)
		x := xOf(k)
		y := v.PlotB - plotH*float64(r.WallNS)/u.NS/yMax
		title := fmt.Sprintf("run %d · build %s\nwall %s · user %s · sys %s · peak RSS %s · exit %d%s\nstarted %s\n%s",
			r.ID, key, u.Format(float64(r.WallNS)), stats.PickUnit(float64(r.UserNS)).Format(float64(r.UserNS)),
			stats.PickUnit(float64(r.SysNS)).Format(float64(r.SysNS)), humanize.Bytes(r.PeakRSSBytes), r.ExitStatus,
			map[bool]string{true: " · STALE build (--allow-stale)", false: ""}[r.Stale], startText(r.Start), report.Escape(desc[key]))
		v.Points = append(v.Points, pointView{ID: r.ID, X: round2(x), Y: round2(y), Color: color[key], Build: key, Stale: r.Stale, Failed: r.ExitStatus != 0, Title: title})
		if k == 0 || key != prev {
			v.XLabels = append(v.XLabels, xLabelView{X: round2(x), Label: fmt.Sprintf("run %d", r.ID)})
		}
		if k > 0 && key != prev {
			c := buildChange(byKey[prev], byKey[key], rs[k-1], r, 4)
			c.FromColor, c.ToColor = color[prev], color[key]
			v.Changes = append(v.Changes, c)
			title := fmt.Sprintf("build changed before run %d: %s → %s\nmedian wall %s", r.ID, prev, key, c.Verdict)
			for _, w := range c.What {
				title += "\n" + w
			}
			v.Markers = append(v.Markers, markerView{X: round2((x + xOf(k-1)) / 2), Title: title})
		}
		prev = key
	}
	// Each build's median across each stretch of its consecutive runs.
	for k := 0; k < len(rs); {
		key := runner.BuildKey(rs[k].Identity)
		j := k
		for j+1 < len(rs) && runner.BuildKey(rs[j+1].Identity) == key {
			j++
		}
		if g := byKey[key]; g != nil && g.Wall.N > 0 {
			yOf := func(ns float64) float64 { return v.PlotB - plotH*ns/u.NS/yMax }
			q1, q3 := stats.QuartilesNS(g.WallNS())
			v.Medians = append(v.Medians, medianView{X1: round2(xOf(k) - 8), X2: round2(xOf(j) + 8), Y: round2(yOf(g.Wall.Median)),
				BoxY: round2(yOf(q3)), BoxH: round2(max(yOf(q1)-yOf(q3), 1)), Color: color[key],
				Title: fmt.Sprintf("build %s: median %s, middle half %s … %s, n %d", key, u.Format(g.Wall.Median), u.Format(q1), u.Format(q3), g.Wall.N)})
		}
		k = j + 1
	}
	for t := 0; t <= 4; t++ {
		val := yMax * float64(t) / 4
		v.YTicks = append(v.YTicks, tickView{Y: round2(v.PlotB - plotH*float64(t)/4), Label: trimFloat(val) + " " + u.Name})
	}
	if len(groups) >= 3 {
		v.Matrix = matrix(v.Anchor, groups, color)
	}
	for _, g := range groups {
		bv := buildView{Color: color[g.Key], Key: g.Key, Description: report.Escape(g.Description), Runs: len(g.Records), N: g.Wall.N,
			Stale: g.Stale, Failed: len(g.Records) - len(g.Timed), Outliers: g.Wall.Outliers}
		first, last := g.Span()
		bv.First, bv.Last = startText(first), startText(last)
		bv.IDs = benchgroup.IDRanges(g.IDs())
		if g.Wall.N > 0 {
			gu := stats.PickUnit(g.Wall.Mean)
			bv.Median, bv.Mean, bv.StdDev, bv.Min, bv.Max = gu.Format(g.Wall.Median), gu.Format(g.Wall.Mean), gu.Format(g.Wall.StdDev), gu.Format(g.Wall.Min), gu.Format(g.Wall.Max)
		}
		v.Builds = append(v.Builds, bv)
	}
	return v
}

// buildChange judges the change from build a to build b (their runs that exited 0) and lists what
// changed between the last run of a and the first of b.
func buildChange(a, b *benchgroup.Group, ra, rb *ledger.Record, maxWhat int) changeView {
	c := changeView{Before: rb.ID, From: runner.BuildKey(ra.Identity), To: runner.BuildKey(rb.Identity)}
	if a != nil && b != nil {
		ch, err := stats.MedianChangeCINS(a.WallNS(), b.WallNS(), 0.95)
		switch {
		case err != nil:
			c.Verdict = fmt.Sprintf("not judged: %d and %d run(s) that exited 0 (2 each needed)", len(a.Timed), len(b.Timed))
		case !ch.RelOK:
			c.Verdict = "not judged: a median is 0"
		default:
			c.Significant = ch.Significant()
			word := "no significant change"
			if c.Significant && ch.Rel > 0 {
				word = "slower"
			} else if c.Significant {
				word = "faster"
			}
			c.Verdict = fmt.Sprintf("%+.1f%% (95%% CI %+.1f…%+.1f%%), %s", 100*ch.Rel, 100*ch.RelLo, 100*ch.RelHi, word)
		}
	}
	what := runner.Diff(ra, rb).Summary()
	for i, w := range what {
		if i == maxWhat {
			c.What = append(c.What, fmt.Sprintf("and %d more", len(what)-maxWhat))
			break
		}
		c.What = append(c.What, report.Escape(w))
	}
	return c
}

// matrix compares every ordered pair of the benchmark's builds (the newest maxMatrix of them, in the
// order they first ran). With three builds or more, consecutive changes no longer answer "is C faster
// than A?"; the matrix does, without re-running anything.
func matrix(anchor string, groups []*benchgroup.Group, color map[string]string) *matrixView {
	m := &matrixView{}
	gs := groups
	if len(gs) > maxMatrix {
		newest := slices.Clone(gs)
		sort.SliceStable(newest, func(i, j int) bool { return newest[i].Newest().Start.After(newest[j].Newest().Start) })
		keep := map[*benchgroup.Group]bool{}
		for _, g := range newest[:maxMatrix] {
			keep[g] = true
		}
		gs = slices.DeleteFunc(slices.Clone(gs), func(g *benchgroup.Group) bool { return !keep[g] })
		m.Note = fmt.Sprintf("the %d builds run most recently of %d", maxMatrix, len(groups))
	}
	for _, g := range gs {
		m.Keys = append(m.Keys, keyView{Key: g.Key, Color: color[g.Key]})
	}
	for i, a := range gs {
		row := matrixRow{keyView: m.Keys[i]}
		for j, b := range gs {
			if i == j {
				row.Cells = append(row.Cells, cellView{Text: "–", Class: "self"})
				continue
			}
			c := buildChange(a, b, a.Newest(), b.Newest(), 1<<30)
			c.ID = fmt.Sprintf("%s-cmp-%d-%d", anchor, i+1, j+1)
			c.FromColor, c.ToColor = color[a.Key], color[b.Key]
			m.Pairs = append(m.Pairs, c)
			cell := cellView{Href: c.ID, Title: fmt.Sprintf("%s → %s: %s", a.Key, b.Key, c.Verdict)}
			text, _, _ := strings.Cut(c.Verdict, " ")
			switch {
			case strings.HasPrefix(c.Verdict, "not judged"):
				cell.Text = "n/a"
			case c.Significant && strings.HasPrefix(text, "+"):
				cell.Text, cell.Class = text, "slower"
			case c.Significant:
				cell.Text, cell.Class = text, "faster"
			default:
				cell.Text, cell.Class = text, "same"
			}
			row.Cells = append(row.Cells, cell)
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

func startText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return report.FormatTime(t)
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// niceCeil rounds v up to 1, 2 or 5 times a power of ten, so that the axis ticks read well.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for p > v {
		p /= 10
	}
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// trimFloat writes an axis value in plain decimals ("0.25", "250", never "1e+03").
func trimFloat(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}
