// Package htmlreport writes the ledger as one self-contained HTML page (`stalecheck report`): per
// benchmark name, an inline SVG plot of the wall times in the order the runs started, each point
// coloured by its build identity (runner.BuildKey), dashed vertical markers where the build changed
// from one run to the next, stale runs (--allow-stale) drawn hollow with a red ring, failed runs
// (non-zero exit) as squares, and on each point an SVG <title> (the browser's hover tooltip) with the
// run's ID, build, times, peak RSS, exit status and build description; then a table of the builds with
// their statistics (internal/stats over the runs that exited 0, nanoseconds shown in one unit per plot).
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
	"sort"
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
	return template.Must(template.New("page.html.tmpl").ParseFS(files, "page.html.tmpl"))
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
	width, height          = 900.0, 300.0
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
	for _, g := range groups {
		desc[g.Key] = g.Description
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
			v.Markers = append(v.Markers, markerView{X: round2((x + xOf(k-1)) / 2),
				Title: fmt.Sprintf("build changed before run %d: %s → %s", r.ID, prev, key)})
		}
		prev = key
	}
	for t := 0; t <= 4; t++ {
		val := yMax * float64(t) / 4
		v.YTicks = append(v.YTicks, tickView{Y: round2(v.PlotB - plotH*float64(t)/4), Label: trimFloat(val) + " " + u.Name})
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

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.3g", f)
	return s
}
