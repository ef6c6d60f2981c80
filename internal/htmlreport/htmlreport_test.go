package htmlreport

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	for i := range 3 {
		add(odd, "timing", 119e6+int64(i)*1e6, i == 1, 0)
	}
	add(odd, "timing", 5e6, false, 1)
	add("plain", "a<b>", 2e9, false, 0)
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
// on every point naming its run and build, a marker per build change, the stale run hollow, and the odd
// name shown as text.
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
	if points != len(recs) || plots != 2 || markers != 1 || resources != 0 || scripts != 0 || width < 800 {
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
	if staleFill != "rgb(255, 255, 255)" {
		t.Errorf("the stale point's fill is %q, want hollow (white)", staleFill)
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
