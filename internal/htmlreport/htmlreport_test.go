package htmlreport

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/benchgroup"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/runner"
	"github.com/stalecheck/stalecheck/internal/testutil/browser"
)

// records makes runs of two benchmarks with awkward names: markup, quotes, a control character and
// invalid UTF-8; three builds, a stale run and a failed one.
func records() []ledger.Record {
	t0 := time.Unix(1_700_000_000, 0)
	id := func(feat string) ledger.Identity {
		return ledger.Identity{Binaries: []ledger.Binary{{Path: "/w/target/release/app", Digest: "blake3:" + strings.Repeat(feat[:1], 64)}},
			Natives: []ledger.Native{{Library: "libhot.a", Path: "/w/out/libhot.a", Fingerprint: "sections:blake3:" + feat, Config: ledger.NativeConfig{Features: []string{feat}}}}}
	}
	var out []ledger.Record
	add := func(name, feat string, wall int64, stale bool, exit int) {
		out = append(out, ledger.Record{ID: int64(len(out) + 1), Name: name, Start: t0.Add(time.Duration(len(out)) * time.Minute),
			WallNS: wall, UserNS: wall / 2, SysNS: wall / 10, PeakRSSBytes: 5 << 20, ExitStatus: exit, Stale: stale, Identity: id(feat)})
	}
	odd := `<script>alert("x")</script> & 'q'` + "\x1b[31m\xff"
	for i := range 4 {
		add(odd, "a<b>", 100e6+int64(i)*1e6, false, 0)
	}
	// Four runs a side at least: fewer can never be a significant change (stats.Change.Significant).
	for i := range 5 {
		add(odd, "timing", 119e6+int64(i)*1e6, i == 1, 0)
	}
	add(odd, "timing", 5e6, false, 1)
	add("plain", "a<b>", 2e9, false, 0)
	// Three builds: the comparison matrix.
	for _, b := range []struct {
		feat string
		wall int64
	}{{"a<b>", 50e6}, {"timing", 60e6}, {"fast", 40e6}} {
		for i := range 4 {
			add("three builds", b.feat, b.wall+int64(i)*1e5, false, 0)
		}
	}
	return out
}

func TestWriteEscapes(t *testing.T) {
	var b bytes.Buffer
	recs := records()
	if err := Write(&b, recs, Options{Ledger: "/l.db", Tool: "stalecheck test"}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, bad := range []string{"<script", "\x1b", "\xff", "ZgotmplZ", "http://", "https://"} {
		if bad == "http://" && strings.Count(s, "http://") == strings.Count(s, `xmlns="http://www.w3.org/2000/svg"`) {
			continue // the SVG namespace name, not a request
		}
		if strings.Contains(s, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if !strings.Contains(s, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;q&#39;\\x1b[31m\\xff") {
		t.Errorf("the odd name is not shown escaped:\n%s", s[:min(len(s), 3000)])
	}
	if n := strings.Count(s, `class="run`); n != len(recs) {
		t.Errorf("%d points for %d runs", n, len(recs))
	}
}

// In headless Chromium: the page renders with no request beyond itself, one point per run, a <title>
// on every point naming its run and build, a marker per build change with its verdict and what changed,
// each build's median, the stale run in its build's colour with a red ring, the odd name shown as text,
// axis labels in plain numbers, and a plot that fits 700 and 1400 px windows (STALECHECK_SCREENSHOTS=DIR
// writes a screenshot of each there).
func TestRenderInChromium(t *testing.T) {
	ctx := browser.New(t, 90*time.Second)
	recs := records()
	file := filepath.Join(t.TempDir(), "report.html")
	var b bytes.Buffer
	if err := Write(&b, recs, Options{Ledger: "/l.db", Tool: "stalecheck test"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	browser.Open(t, ctx, "file://"+file, "table.builds")
	points := browser.Eval[int](t, ctx, `document.querySelectorAll('svg.plot .run').length`)
	markers := browser.Eval[int](t, ctx, `document.querySelectorAll('svg.plot .build-change').length`)
	plots := browser.Eval[int](t, ctx, `document.querySelectorAll('svg.plot').length`)
	resources := browser.Eval[int](t, ctx, `performance.getEntriesByType('resource').length`)
	scripts := browser.Eval[int](t, ctx, `document.scripts.length`)
	titles := browser.Eval[[]string](t, ctx, `[...document.querySelectorAll('svg.plot .run')].map(e => e.querySelector('title') ? e.querySelector('title').textContent : '')`)
	heading := browser.Eval[string](t, ctx, `document.querySelector('h2').firstChild.textContent`)
	staleFill := browser.Eval[string](t, ctx, `getComputedStyle(document.querySelector('.run.stale')).fill`)
	width := browser.Eval[float64](t, ctx, `document.querySelector('svg.plot').getBoundingClientRect().width`)
	if points != len(recs) || plots != 3 || markers != 3 || resources != 0 || scripts != 0 || width < 800 || width > 1240 {
		t.Errorf("points %d (want %d), plots %d, markers %d, resources %d, scripts %d, plot width %.0f", points, len(recs), plots, markers, resources, scripts, width)
	}
	for i, ti := range titles {
		if !strings.Contains(ti, "run ") || !strings.Contains(ti, " · build ") || !strings.Contains(ti, "wall ") {
			t.Errorf("point %d's hover title: %q", i, ti)
		}
	}
	if want := `<script>alert("x")</script> & 'q'\x1b[31m\xff `; heading != want {
		t.Errorf("heading %q, want %q", heading, want)
	}
	if staleFill != "rgb(255, 127, 14)" { // #ff7f0e: its build's colour, under a red ring
		t.Errorf("the stale point's fill is %q, want its build's colour", staleFill)
	}
	staleStroke := browser.Eval[string](t, ctx, `getComputedStyle(document.querySelector('.run.stale')).stroke`)
	if staleStroke != "rgb(214, 39, 40)" {
		t.Errorf("the stale point's ring is %q, want red", staleStroke)
	}
	// The build change: a verdict and what changed, on the marker and in the table under the plot.
	change := browser.Eval[string](t, ctx, `document.querySelector('table.changes tbody tr').textContent`)
	marker := browser.Eval[string](t, ctx, `document.querySelector('.build-change title').textContent`)
	for _, want := range []string{"(95% CI", "slower", "libhot.a changed"} {
		if !strings.Contains(change, want) || !strings.Contains(marker, want) {
			t.Errorf("the build change lacks %q: table row %q, marker %q", want, change, marker)
		}
	}
	medians := browser.Eval[int](t, ctx, `document.querySelectorAll('svg.plot .median').length`)
	if medians != 6 { // a<b> and timing in the first plot, a<b> in the second, three in the third
		t.Errorf("%d median lines, want 6", medians)
	}
	// Any two builds: the matrix of the three-build benchmark, a hidden panel per ordered pair, shown
	// when its cell is chosen (the :target rule).
	cells := browser.Eval[[]string](t, ctx, `[...document.querySelectorAll('table.matrix td a')].map(a => a.textContent + ' ' + a.parentElement.className)`)
	if len(cells) != 6 || !slices.Contains(cells, "-33.3% faster") || !slices.Contains(cells, "+49.8% slower") {
		t.Errorf("matrix cells %q: want 6 with fast against timing -33.3%% and timing against fast +49.8%%", cells)
	}
	shown := browser.Eval[int](t, ctx, `[...document.querySelectorAll('.pair')].filter(e => getComputedStyle(e).display != 'none').length`)
	browser.Eval[bool](t, ctx, `(location.hash = document.querySelectorAll('table.matrix td a')[1].getAttribute('href'), true)`)
	panel := browser.Eval[string](t, ctx, `[...document.querySelectorAll('.pair')].filter(e => getComputedStyle(e).display != 'none').map(e => e.textContent).join('|')`)
	if shown != 0 || !strings.Contains(panel, "(95% CI") || !strings.Contains(panel, "libhot.a changed") || strings.Contains(panel, "|") {
		t.Errorf("pair panels: %d shown before a choice; after choosing a cell: %q", shown, panel)
	}
	ticks := browser.Eval[[]string](t, ctx, `[...document.querySelectorAll('svg.plot text')].map(e => e.textContent)`)
	for _, tk := range ticks {
		if strings.Contains(tk, "e+") || strings.Contains(tk, "1000 ms") {
			t.Errorf("an axis label reads %q", tk)
		}
	}
	// Narrow and wide windows: the plot fits the width, nothing scrolls the page sideways.
	for _, w := range []int64{700, 1400} {
		browser.Viewport(t, ctx, w, 900)
		pw := browser.Eval[float64](t, ctx, `document.querySelector('svg.plot').getBoundingClientRect().width`)
		scroll := browser.Eval[float64](t, ctx, `document.documentElement.scrollWidth`)
		if pw > float64(w) || scroll > float64(w) || (w == 1400 && pw < 1000) || (w == 700 && pw < 600) {
			t.Errorf("window %d px: plot %.0f px wide, page %.0f px", w, pw, scroll)
		}
		if dir := os.Getenv("STALECHECK_SCREENSHOTS"); dir != "" {
			png := browser.FullScreenshot(t, ctx)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("report-%d.png", w)), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	keyStale := runner.BuildKey(recs[5].Identity)
	found := false
	for _, ti := range titles {
		if strings.Contains(ti, "run 6 · build "+keyStale) && strings.Contains(ti, "STALE") {
			found = true
		}
	}
	if !found {
		t.Errorf("no hover title says run 6 is stale: %q", titles)
	}
}

// TestBuildChangeFewRuns: two runs a side 2% apart are no significant change, though the bootstrap
// interval excludes 0 (the page called it "slower", as diff did).
func TestBuildChangeFewRuns(t *testing.T) {
	group := func(key string, walls ...int64) *benchgroup.Group {
		g := &benchgroup.Group{Key: key}
		for i, w := range walls {
			r := &ledger.Record{ID: int64(i + 1), WallNS: w}
			g.Records, g.Timed = append(g.Records, r), append(g.Timed, r)
		}
		return g
	}
	a, b := group("a", 100e6, 100.1e6), group("b", 102e6, 102.1e6)
	c := buildChange(a, b, a.Timed[1], b.Timed[0], 3)
	if c.Significant || !strings.Contains(c.Verdict, "no significant change") {
		t.Errorf("two runs a side: significant %v, verdict %q", c.Significant, c.Verdict)
	}
	a, b = group("a", 100e6, 100.1e6, 99.9e6, 100.2e6), group("b", 150e6, 150.1e6, 149.9e6, 150.2e6)
	if c := buildChange(a, b, a.Timed[3], b.Timed[0], 3); !c.Significant || !strings.Contains(c.Verdict, "slower") {
		t.Errorf("four runs a side, half as fast again: significant %v, verdict %q", c.Significant, c.Verdict)
	}
}
