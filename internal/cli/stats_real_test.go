package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/stats"
	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/browser"
	"github.com/stalecheck/stalecheck/internal/testutil/pgtest"
)

// The seed's story with statistics: the example built without and with its `timing` feature, four
// `run --repeat 4` records of each build in each ledger (SQLite, and PostgreSQL when
// STALECHECK_TEST_PG_DSN is set); `runs --group-by build` gives each build's n and statistics as
// computed from the records; `diff` across the two builds gives the change in median with its 95% CI
// beside the build differences; `report` writes a page that headless Chromium renders with one point per
// run. With STALECHECK_UPDATE_SCREENSHOT=1 the plot is saved as docs/report.png.
func TestStatsAndReportTwoBuilds(t *testing.T) {
	root := repoRoot(t) // before runIn changes the working folder
	runEnv(t)
	p := testutil.Example(t, "seed-two-copies")
	t.Setenv("STALECHECK_DEMO_NO_NVCC", "1")
	ledgers := map[string]string{"sqlite": filepath.Join(t.TempDir(), "l.db")}
	if os.Getenv(pgtest.Env) != "" || os.Getenv("CI") != "" {
		ledgers["postgres"] = pgtest.DSN(t)
	}
	repeat := func(db string) string {
		t.Helper()
		out, stderr, code := runIn(t, p.Dir, "run", "--ledger", db, "--repeat", "4", "--", "target/release/gpu-prover", "1000")
		if code != 0 {
			t.Fatalf("run --repeat 4: exit %d\n%s%s", code, out, stderr)
		}
		return stderr
	}
	p.Cargo("build", "--release")
	summary := map[string]string{}
	for k, db := range ledgers {
		summary[k] = repeat(db)
	}
	p.Cargo("build", "--release", "--features", "timing")
	for _, db := range ledgers {
		repeat(db)
	}
	summaryRE := regexp.MustCompile(`(?m)^stalecheck: gpu-prover, build [0-9a-f]{12}: 4 runs that exited 0\n  Time \(mean ± σ\): +\S+ \S+ ± \S+ \S+    \[User: .*, System: .*\]\n  Time \(median\): +\S+ \S+\n  Range \(min … max\): +\S+ \S+ … \S+ \S+    (no outliers|\d+ outliers?)`)
	if !summaryRE.MatchString(summary["sqlite"]) {
		t.Errorf("run --repeat 4 lacks the summary:\n%s", summary["sqlite"])
	}

	for backend, db := range ledgers {
		t.Run(backend, func(t *testing.T) {
			recs := listRecords(t, db)
			if len(recs) != 8 {
				t.Fatalf("%d records, want 8", len(recs))
			}
			js, stderr, code := runIn(t, p.Dir, "runs", "--ledger", db, "--group-by", "build", "--format", "json")
			var doc RunsGroupsDoc
			if err := json.Unmarshal([]byte(js), &doc); code != 0 || err != nil {
				t.Fatalf("runs --group-by build --format json: exit %d, %v\n%s%s", code, err, js, stderr)
			}
			if len(doc.Builds) != 2 || doc.GroupBy != "build" {
				t.Fatalf("builds: %s", js)
			}
			for i, b := range doc.Builds {
				// Recompute from the records themselves.
				var walls []int64
				for _, r := range recs {
					for _, id := range b.RunIDs {
						if r.ID == id {
							walls = append(walls, r.WallNS)
						}
					}
				}
				s, _ := stats.SummarizeNS(walls)
				if b.N != 4 || b.Runs != 4 || len(walls) != 4 || *b.MedianNS != int64(s.Median+0.5) || *b.MinNS != int64(s.Min) || *b.MaxNS != int64(s.Max) ||
					*b.MeanNS != int64(s.Mean+0.5) || *b.StddevNS != int64(s.StdDev+0.5) || b.Name != "gpu-prover" {
					t.Errorf("build %d: %+v, want the statistics of %v: %+v", i, b, walls, s)
				}
			}
			if !strings.Contains(doc.Builds[0].Description, `libgroth16_cuda.a features []`) || !strings.Contains(doc.Builds[1].Description, `libgroth16_cuda.a features ["timing"]`) {
				t.Errorf("descriptions: %q, %q", doc.Builds[0].Description, doc.Builds[1].Description)
			}
			keyA, keyB := doc.Builds[0].Build, doc.Builds[1].Build
			text, _, _ := runIn(t, p.Dir, "runs", "--ledger", db, "--group-by", "build")
			if !strings.Contains(text, "gpu-prover  build "+keyA+"  4 run(s)  runs 1-4\n") || !strings.Contains(text, "gpu-prover  build "+keyB+"  4 run(s)  runs 5-8\n") ||
				!regexp.MustCompile(`(?m)^  n 4  median \S+ \S+  mean \S+ \S+ ± \S+ \S+  min .* max .* outliers \d+$`).MatchString(text) {
				t.Errorf("runs --group-by build:\n%s", text)
			}

			// diff across the builds (8-digit prefixes, as a user would type them; a prefix with no
			// letter a–f reads as a run ID, so it takes the build: form, as `diff --help` says).
			name := func(key string) string {
				if strings.Trim(key[:8], "0123456789") == "" {
					return "build:" + key[:8]
				}
				return key[:8]
			}
			out, stderr, code := runIn(t, p.Dir, "diff", "--ledger", db, name(keyA), name(keyB))
			if code != 0 {
				t.Fatalf("diff builds: exit %d: %s", code, stderr)
			}
			ciRE := regexp.MustCompile(`(?m)^median [+-]\d+\.\d% \(95% CI [+-]\d+\.\d…[+-]\d+\.\d%\), \S+ \S+ → \S+ \S+, n 4 and 4 runs$`)
			if !ciRE.MatchString(out) || !strings.Contains(out, "  libgroth16_cuda.a changed: copy in ") || !strings.Contains(out, `features [] → ["timing"]`) ||
				!strings.Contains(out, "build "+keyA+"  gpu-prover  4 run(s) that exited 0 of 4 (runs 1-4)") {
				t.Errorf("diff %s %s:\n%s", keyA[:8], keyB[:8], out)
			}
			js, _, _ = runIn(t, p.Dir, "diff", "--ledger", db, "--format", "json", keyA, keyB)
			var dd DiffDoc
			if err := json.Unmarshal([]byte(js), &dd); err != nil {
				t.Fatal(err)
			}
			mc := dd.MedianChange
			if mc == nil || dd.ABy != "build" || dd.A.ID != 4 || dd.B.ID != 8 || mc.NA != 4 || mc.NB != 4 || mc.MedianANS != *doc.Builds[0].MedianNS ||
				mc.ChangeNS != mc.MedianBNS-mc.MedianANS || !(mc.ChangeLoNS <= mc.ChangeNS && mc.ChangeNS <= mc.ChangeHiNS) || mc.Rel == nil || mc.Resamples < 2000 {
				t.Errorf("diff JSON across builds: a_by %s, ids %d %d, median_change %+v, build A median %d\n%s", dd.ABy, dd.A.ID, dd.B.ID, mc, *doc.Builds[0].MedianNS, js)
			}
			// Two run IDs: their builds' line too; same interval (the same samples, a fixed seed).
			out2, _, _ := runIn(t, p.Dir, "diff", "--ledger", db, "1", "5")
			if m := ciRE.FindString(out); m == "" || !strings.Contains(out2, m) {
				t.Errorf("diff 1 5 lacks %q:\n%s", m, out2)
			}
			if _, stderr, code := runIn(t, p.Dir, "diff", "--ledger", db, "ffffffff", keyB); code != 2 || !strings.Contains(stderr, "no build ffffffff") {
				t.Errorf("unknown build: exit %d %q", code, stderr)
			}

			// The report.
			html := filepath.Join(t.TempDir(), "report.html")
			if _, stderr, code := runIn(t, p.Dir, "report", "--ledger", db, "-o", html); code != 0 {
				t.Fatalf("report: exit %d: %s", code, stderr)
			}
			ctx := browser.New(t, 90*time.Second)
			browser.Open(t, ctx, "file://"+html, "table.builds")
			if n := browser.Eval[int](t, ctx, `document.querySelectorAll('svg.plot .run').length`); n != len(recs) {
				t.Errorf("%d points plotted for %d runs", n, len(recs))
			}
			if n := browser.Eval[int](t, ctx, `[...document.querySelectorAll('svg.plot .run')].filter(e => /^run \d+ · build [0-9a-f]{12}\nwall /.test(e.querySelector('title').textContent)).length`); n != len(recs) {
				t.Errorf("%d points with a hover title, want %d", n, len(recs))
			}
			if n := browser.Eval[int](t, ctx, `document.querySelectorAll('svg.plot .build-change').length`); n != 1 {
				t.Errorf("%d build-change markers, want 1", n)
			}
			if n := browser.Eval[int](t, ctx, `document.querySelectorAll('table.builds tbody tr').length`); n != 2 {
				t.Errorf("%d build rows, want 2", n)
			}
			if backend == "sqlite" && os.Getenv("STALECHECK_UPDATE_SCREENSHOT") == "1" {
				png := browser.Screenshot(t, ctx, "section")
				if err := os.WriteFile(filepath.Join(root, "docs", "report.png"), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd() // the package folder, where go test starts
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	t.Fatal("no go.mod above " + wd)
	return ""
}
