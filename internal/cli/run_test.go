package cli

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"github.com/stalecheck/stalecheck/internal/testutil/pgtest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/runner"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// The PostgreSQL half of the run tests uses the database this variable names, exactly like
// internal/ledger's tests: skipped when unset, unless CI is set (then a missing DSN fails).
const pgDSNEnv = pgtest.Env

// runEnv gives the test a private state folder (digest cache, run cache, default ledger) and no
// inherited ledger setting.
func runEnv(t *testing.T) string {
	t.Helper()
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv(ledgerEnv, "")
	return state
}

// runIn runs the CLI in-process with dir as the working folder.
func runIn(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	t.Chdir(dir)
	return run(t, args...)
}

const hotV1 = "#include <stdio.h>\nint native_run(void) { int s = 0; for (int i = 0; i < 1000; i++) s += i; return s > 0; }\n"

// hotProject is the S14 workspace: a bin `app` that links libhot.a, which hot-sys's build script compiles
// from csrc/hot.c while declaring only build.rs (and one environment variable), and bench.sh, which runs
// target/release/app if it exists, else builds it (and leaves a marker, so a test can tell it started).
func hotProject(t *testing.T) *testutil.Project {
	t.Helper()
	files := testutil.SysCrate("hot-sys", "hot", map[string]string{"csrc/hot.c": hotV1}, nil,
		[]string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-env-changed=PROVER_WINDOW"})
	files["bench.sh"] = "#!/bin/sh\n# S14: run the benchmark if it exists, else build it.\nset -e\ncd \"$(dirname \"$0\")\"\n" +
		"[ -x target/release/app ] || cargo build --release\n: > bench-started\nexec target/release/app\n"
	p := testutil.NewProject(t, files)
	if err := os.Chmod(p.Path("bench.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.Cargo("build", "--release")
	return p
}

func openTestLedger(t *testing.T, dsn string) ledger.Ledger {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := ledger.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open ledger: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func listRecords(t *testing.T, dsn string) []ledger.Record {
	t.Helper()
	recs, err := openTestLedger(t, dsn).List(context.Background(), ledger.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func findingRules(t *testing.T, raw json.RawMessage) map[string][]string {
	t.Helper()
	var fs []struct {
		Rule     string   `json:"rule"`
		Severity string   `json:"severity"`
		Subjects []string `json:"subjects"`
	}
	if err := json.Unmarshal(raw, &fs); err != nil {
		t.Fatalf("findings %s: %v", raw, err)
	}
	out := map[string][]string{}
	for _, f := range fs {
		if f.Severity != "error" {
			t.Errorf("a stale record carries a %s finding %s; want only the blocking errors", f.Severity, f.Rule)
		}
		out[f.Rule] = append(out[f.Rule], f.Subjects[0])
	}
	return out
}

// S14: a script runs target/release/app if it exists. After an edit of the hot loop (Rust, then the native
// source Cargo does not watch) `stalecheck run -- ./bench.sh` refuses with 125, names the sources newer
// than the binary and does not start the script; with --allow-stale it runs and the record is stale.
func TestRunS14RefusesStaleBench(t *testing.T) {
	runEnv(t)
	p := hotProject(t)
	db := filepath.Join(t.TempDir(), "ledger.db")
	marker := p.Path("bench-started")

	// Fresh: it runs and is recorded, not stale.
	out, stderr, code := runIn(t, p.Dir, "run", "--ledger", db, "--", "./bench.sh")
	if code != 0 || strings.TrimSpace(out) != "1" {
		t.Fatalf("fresh build: exit %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
	if recs := listRecords(t, db); len(recs) != 1 || recs[0].Stale || recs[0].Findings != nil || recs[0].Name != "bench.sh" {
		t.Fatalf("fresh build: records %+v", recs)
	}
	os.Remove(marker)

	for _, edit := range []struct {
		name, file, old, new, rule string
	}{
		{"rust hot loop", "app/src/main.rs", `println!("{}", hot_sys::run());`,
			`let mut s = 0u64; for i in 0..1000u64 { s += i * hot_sys::run() as u64; } println!("{}", s);`, "pending-rebuild"},
		{"native hot loop", "hot-sys/csrc/hot.c", "s += i;", "s += 2 * i;", "untracked-input-changed"},
	} {
		t.Run(edit.name, func(t *testing.T) {
			before := len(listRecords(t, db))
			p.Edit(edit.file, edit.old, edit.new)
			src := p.Path(edit.file)
			out, stderr, code := runIn(t, p.Dir, "run", "--ledger", db, "--", "./bench.sh")
			if code != 125 {
				t.Fatalf("stale build: exit %d (want 125), stdout %q, stderr:\n%s", code, out, stderr)
			}
			if _, err := os.Stat(marker); err == nil || out != "" {
				t.Fatalf("the command was started although the build is stale (stdout %q)", out)
			}
			wantLine := "stalecheck: refusing to run ./bench.sh: target/release/app (named in the script bench.sh) is stale: 1 error finding(s) (" + edit.rule + "); changed since the build: " + edit.file + "\n"
			if !strings.Contains(stderr, wantLine) {
				t.Errorf("stderr lacks %q:\n%s", wantLine, stderr)
			}
			if !strings.Contains(stderr, "error["+edit.rule+"]") || !strings.Contains(stderr, "--allow-stale") {
				t.Errorf("stderr lacks the finding or the way out:\n%s", stderr)
			}
			if n := len(listRecords(t, db)); n != before {
				t.Fatalf("a refused run was recorded (%d records, had %d)", n, before)
			}

			// --allow-stale: it runs, and the record is stale with the finding naming the source.
			out, stderr, code = runIn(t, p.Dir, "run", "--ledger", db, "--allow-stale", "--", "./bench.sh")
			if code != 0 || out == "" {
				t.Fatalf("--allow-stale: exit %d, stdout %q, stderr:\n%s", code, out, stderr)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatal("--allow-stale did not start the command")
			}
			os.Remove(marker)
			if !strings.Contains(stderr, "running a stale build (--allow-stale)") || !strings.Contains(stderr, "(stale)") {
				t.Errorf("stderr does not say the run is stale:\n%s", stderr)
			}
			recs := listRecords(t, db)
			if len(recs) != before+1 || !recs[0].Stale {
				t.Fatalf("want one more record, stale; got %d records, newest %+v", len(recs), recs[0])
			}
			rules := findingRules(t, recs[0].Findings)
			if len(rules) != 1 || len(rules[edit.rule]) != 1 || rules[edit.rule][0] != src {
				t.Errorf("stale record findings %v, want one %s naming %s", rules, edit.rule, src)
			}
			// runs --format json: a list of records, each with a boolean "stale".
			out, _, code = runIn(t, p.Dir, "runs", "--ledger", db, "--format", "json")
			var doc struct {
				SchemaVersion int    `json:"schema_version"`
				Command       string `json:"command"`
				Records       []struct {
					ID    int64 `json:"id"`
					Stale *bool `json:"stale"`
				} `json:"records"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
				t.Fatalf("runs --format json: exit %d, %v\n%s", code, err, out)
			}
			if doc.SchemaVersion != RunsSchemaVersion || doc.Command != "runs" || len(doc.Records) != before+1 || doc.Records[0].Stale == nil || !*doc.Records[0].Stale || *doc.Records[len(doc.Records)-1].Stale {
				t.Errorf("runs JSON: %s", out)
			}

			// Rebuild: fresh again (the native edit needs the script rerun: touch build.rs, as the fix says).
			p.Write("hot-sys/build.rs", readFile(t, p.Path("hot-sys/build.rs")))
			p.Cargo("build", "--release")
			if _, stderr, code := runIn(t, p.Dir, "run", "--ledger", db, "-q", "--", "./bench.sh"); code != 0 || stderr != "" {
				t.Fatalf("after the rebuild: exit %d, stderr:\n%s", code, stderr)
			}
			os.Remove(marker)
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A fresh build is recorded with its whole identity, in the default SQLite ledger and in PostgreSQL.
func TestRunRecordsIdentity(t *testing.T) {
	p := hotProject(t)
	// The run below has PROVER_WINDOW=7, which hot-sys's script declares: built in that environment (a
	// binary built with another value is stale there: pending-rebuild).
	p.Env = append(p.Env, "PROVER_WINDOW=7")
	p.Cargo("build", "--release")
	ws := p.Dir
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("/target\n"), 0o644)
	git("add", "-A")
	git("commit", "-q", "-m", "bench")
	head := git("rev-parse", "HEAD")

	app := p.Path("target/release/app")
	lib := oneOf(t, p.OutFiles("release", "hot-sys", "libhot.a"))
	appDigest, _ := digest.HashFile(app)
	appInfo, _ := os.Stat(app)
	ef, err := binfmt.OpenELF(app)
	if err != nil {
		t.Fatal(err)
	}
	bid, _ := ef.BuildID()
	ef.Close()
	if len(bid) == 0 {
		t.Fatal("the premise fails: the binary has no build-id")
	}
	fp, err := runner.Fingerprint(lib)
	if err != nil {
		t.Fatal(err)
	}
	var wantSources []ledger.Source
	for _, rel := range []string{"app/src/main.rs", "hot-sys/build.rs", "hot-sys/csrc/hot.c", "hot-sys/src/lib.rs"} {
		d, _ := digest.HashFile(p.Path(rel))
		wantSources = append(wantSources, ledger.Source{Path: p.Path(rel), Digest: d.String()})
	}
	rustcV, _ := exec.Command("rustc", "-vV").Output()
	cargoV, _ := exec.Command("cargo", "--version").Output()

	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			state := runEnv(t)
			t.Setenv("PROVER_WINDOW", "7")
			t.Setenv("CUDA_VISIBLE_DEVICES", "3")
			args := []string{"run", "--name", "msm-2^20"}
			dsn := filepath.Join(state, "stalecheck", "ledger.db") // the default ledger
			if backend == "postgres" {
				dsn = pgtest.DSN(t)
				args = append(args, "--ledger", dsn)
			}
			args = append(args, "--", "target/release/app")
			out, stderr, code := runIn(t, ws, args...)
			if code != 0 || strings.TrimSpace(out) != "1" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, stderr)
			}
			recs := listRecords(t, dsn)
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			r := recs[0]
			if r.Name != "msm-2^20" || r.ExitStatus != 0 || r.Stale || r.Findings != nil || r.WorkDir != ws ||
				strings.Join(r.Command, " ") != "target/release/app" || r.WallNS <= 0 || r.PeakRSSBytes <= 0 || r.Start.IsZero() {
				t.Errorf("record: %+v", r)
			}
			if !strings.Contains(stderr, "stalecheck: run 1 msm-2^20: wall ") {
				t.Errorf("no summary line on stderr: %q", stderr)
			}
			id := r.Identity
			wantBin := ledger.Binary{Path: app, Size: appInfo.Size(), Digest: appDigest.String(), BuildID: hex.EncodeToString(bid)}
			if len(id.Binaries) != 1 || id.Binaries[0] != wantBin {
				t.Errorf("binaries %+v, want [%+v]", id.Binaries, wantBin)
			}
			if len(id.Natives) != 1 || id.Natives[0].Library != "libhot.a" || id.Natives[0].Path != lib || id.Natives[0].Fingerprint != fp ||
				len(id.Natives[0].Config.Features) != 0 || id.Natives[0].Config.Settings["profile"] != "release" {
				t.Errorf("natives %+v, want libhot.a at %s with %s", id.Natives, lib, fp)
			}
			if len(id.Sources) != len(wantSources) {
				t.Fatalf("sources %+v, want %+v", id.Sources, wantSources)
			}
			for i := range wantSources {
				if id.Sources[i] != wantSources[i] {
					t.Errorf("source %d: %+v, want %+v", i, id.Sources[i], wantSources[i])
				}
			}
			if id.Git.Head != head || id.Git.Dirty {
				t.Errorf("git %+v, want HEAD %s clean", id.Git, head)
			}
			if want := strings.SplitN(string(rustcV), "\n", 2)[0]; id.Toolchain["rustc"] != want {
				t.Errorf("rustc %q, want %q", id.Toolchain["rustc"], want)
			}
			if want := strings.TrimSpace(string(cargoV)); id.Toolchain["cargo"] != want {
				t.Errorf("cargo %q, want %q", id.Toolchain["cargo"], want)
			}
			if id.Env["PROVER_WINDOW"] != "7" || id.Env["CUDA_VISIBLE_DEVICES"] != "3" {
				t.Errorf("env %v lacks the declared PROVER_WINDOW=7 or CUDA_VISIBLE_DEVICES=3", id.Env)
			}
			for _, k := range []string{"PATH", "HOME", "XDG_STATE_HOME"} {
				if _, ok := id.Env[k]; ok {
					t.Errorf("env records %s", k)
				}
			}
			// runs, text and JSON.
			var rargs []string
			if backend == "postgres" {
				rargs = []string{"--ledger", dsn}
			}
			out, _, code = runIn(t, ws, append([]string{"runs"}, rargs...)...)
			if code != 0 || !strings.Contains(out, "msm-2^20") || !strings.Contains(out, runner.BuildKey(id)) || !strings.Contains(out, head[:10]) {
				t.Errorf("runs: exit %d\n%s", code, out)
			}
			out, _, code = runIn(t, ws, append([]string{"runs", "--format", "json"}, rargs...)...)
			var doc RunsDoc
			err := json.Unmarshal([]byte(out), &doc)
			if err == nil {
				err = doc.resolve()
			}
			if err != nil || code != 0 || len(doc.Records) != 1 || doc.Records[0].Build != runner.BuildKey(id) ||
				doc.Records[0].Record.Identity.Natives[0].Fingerprint != fp || doc.Tool.Name != "stalecheck" {
				t.Errorf("runs --format json: exit %d, %v\n%s", code, err, out)
			}
		})
	}
	// An edit of a tracked file outside the build makes the work tree dirty, not the build stale.
	runEnv(t)
	os.WriteFile(filepath.Join(ws, "NOTES"), []byte("x"), 0o644)
	git("add", "NOTES")
	db := filepath.Join(t.TempDir(), "l.db")
	if _, stderr, code := runIn(t, ws, "run", "--ledger", db, "--", "target/release/app"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r := listRecords(t, db)[0]; !r.Identity.Git.Dirty || r.Identity.Git.Head != head {
		t.Errorf("git %+v, want dirty at %s", r.Identity.Git, head)
	}
}

// The command's exit status passes through (each run recorded), --repeat stops at the first failure,
// 126 and 127 follow env, and run's own failures are 125; nothing is recorded for a command that never ran.
func TestRunExitStatuses(t *testing.T) {
	runEnv(t)
	ws := builtProject(t)
	db := filepath.Join(t.TempDir(), "l.db")
	count := func() int { return len(listRecords(t, db)) }

	if _, _, code := runIn(t, ws, "run", "--ledger", db, "--", "sh", "-c", "exit 7"); code != 7 {
		t.Fatalf("exit 7 passed through as %d", code)
	}
	if r := listRecords(t, db); len(r) != 1 || r[0].ExitStatus != 7 || r[0].Name != "sh" {
		t.Fatalf("records %+v", r)
	}
	if _, _, code := runIn(t, ws, "run", "--ledger", db, "--", "sh", "-c", "kill -TERM $$"); code != 128+15 {
		t.Fatalf("killed by SIGTERM: exit %d, want 143", code)
	}
	// --repeat: three runs recorded; stopping at the first non-zero exit.
	n0 := count()
	if _, _, code := runIn(t, ws, "run", "--ledger", db, "--repeat", "3", "-q", "--", "sh", "-c", "echo x >> runs.txt"); code != 0 || count() != n0+3 {
		t.Fatalf("--repeat 3: exit %d, %d new records", code, count()-n0)
	}
	if _, _, code := runIn(t, ws, "run", "--ledger", db, "--repeat", "5", "--", "sh", "-c", `echo x >> fails.txt; [ $(wc -l < fails.txt) -lt 2 ]`); code != 1 || count() != n0+5 {
		t.Fatalf("--repeat 5 failing at the 2nd: exit %d, %d new records (want 1 and 2)", code, count()-n0-3)
	}
	if got := readFile(t, filepath.Join(ws, "fails.txt")); got != "x\nx\n" {
		t.Errorf("the command ran %d times, want 2", strings.Count(got, "x"))
	}
	// 127 not found, 126 not executable; nothing recorded.
	n1 := count()
	os.WriteFile(filepath.Join(ws, "noexec.sh"), []byte("#!/bin/sh\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"stalecheck-no-such-command"}, 127, "stalecheck-no-such-command: command not found"},
		{[]string{"./missing-bench"}, 127, "./missing-bench: command not found"},
		{[]string{"./noexec.sh"}, 126, "./noexec.sh: cannot execute"},
	} {
		_, stderr, code := runIn(t, ws, append([]string{"run", "--ledger", db, "--"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	// run's own errors: 125.
	for _, args := range [][]string{
		{"run"},
		{"run", "--repeat", "0", "--", "true"},
		{"run", "--bogus", "--", "true"},
		{"run", "--ledger", filepath.Join(t.TempDir(), "no", "such", "folder", "l.db"), "--", "true"},
	} {
		if _, stderr, code := runIn(t, ws, args...); code != 125 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 125 and a message", args, code, stderr)
		}
	}
	// Outside any workspace: 125, naming the folder.
	empty := t.TempDir()
	if _, stderr, code := runIn(t, empty, "run", "--ledger", db, "--", "true"); code != 125 || !strings.Contains(stderr, "no Cargo workspace") || !strings.Contains(stderr, empty) {
		t.Errorf("outside a workspace: exit %d, stderr %q", code, stderr)
	}
	if count() != n1 {
		t.Errorf("commands that never ran were recorded")
	}
	// Flags after the command belong to the command.
	if out, _, code := runIn(t, ws, "run", "--ledger", db, "-q", "echo", "--repeat", "3"); code != 0 || out != "--repeat 3\n" {
		t.Errorf("flags after the command: exit %d, stdout %q", code, out)
	}
}

// diff names what changed between two builds of examples/seed-two-copies: a feature toggle links the
// other copy of libgroth16_cuda.a; an edit and a rebuild change a source digest and the copy's content.
func TestDiffSeedTwoCopies(t *testing.T) {
	runEnv(t)
	p := testutil.Example(t, "seed-two-copies") // the C stand-in, with or without nvcc
	t.Setenv("STALECHECK_DEMO_NO_NVCC", "1")    // the same environment for the runs
	db := filepath.Join(t.TempDir(), "l.db")
	runOK := func() {
		t.Helper()
		if out, stderr, code := runIn(t, p.Dir, "run", "--ledger", db, "-q", "--", "target/release/gpu-prover", "1000"); code != 0 {
			t.Fatalf("run: exit %d\n%s%s", code, out, stderr)
		}
	}
	diff := func(a, b string) string {
		t.Helper()
		out, stderr, code := runIn(t, p.Dir, "diff", "--ledger", db, a, b)
		if code != 0 {
			t.Fatalf("diff %s %s: exit %d: %s", a, b, code, stderr)
		}
		return out
	}
	copies := func() []string {
		return p.OutFiles("release", "prover-sys", "libgroth16_cuda.a")
	}
	short := func(fp string) string { return fp[:len(runner.FingerprintPrefix)+12] + "…" }
	rel := func(path string) string { r, _ := filepath.Rel(p.Dir, path); return r }

	p.Cargo("build", "--release")
	plain := copies()
	if len(plain) != 1 {
		t.Fatalf("copies %v", plain)
	}
	runOK() // run 1: features []
	p.Cargo("build", "--release", "--features", "timing")
	var timing string
	for _, c := range copies() {
		if c != plain[0] {
			timing = c
		}
	}
	if timing == "" {
		t.Fatal("the premise fails: no second copy of libgroth16_cuda.a")
	}
	runOK() // run 2: features ["timing"]
	fpPlain, _ := runner.Fingerprint(plain[0])
	fpTiming, _ := runner.Fingerprint(timing)
	out := diff("1", "2")
	wantNative := "  libgroth16_cuda.a changed: copy in " + rel(filepath.Dir(plain[0])) + " → " + rel(filepath.Dir(timing)) +
		", fingerprint " + short(fpPlain) + " → " + short(fpTiming) + `, features [] → ["timing"]` + "\n"
	if !strings.Contains(out, wantNative) || !strings.Contains(out, "  target/release/gpu-prover changed: digest blake3:") ||
		!strings.Contains(out, "build differences:") || strings.Contains(out, "source") {
		t.Errorf("diff 1 2 lacks %q (or names sources):\n%s", wantNative, out)
	}
	// One run a side: no verdict, and diff opens by saying why.
	if !strings.HasPrefix(out, "note: no verdict: build ") || !strings.Contains(out, "\nrun 1  gpu-prover  ") || !strings.Contains(out, "\nrun 2  gpu-prover  ") || !strings.Contains(out, "timing: wall ") {
		t.Errorf("diff 1 2 lacks the runs and their timings:\n%s", out)
	}
	js, _, code := runIn(t, p.Dir, "diff", "--ledger", db, "--format", "json", "1", "2")
	var doc DiffDoc
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != 0 {
		t.Fatalf("diff --format json: %v\n%s", err, js)
	}
	var nat *runner.Change
	for i, c := range doc.Changes {
		if c.Kind == "native" {
			nat = &doc.Changes[i]
		}
	}
	if doc.Command != "diff" || doc.SameBuild || doc.A.ID != 1 || doc.B.ID != 2 || nat == nil || nat.PathA != plain[0] || nat.PathB != timing ||
		nat.A != fpPlain || nat.B != fpTiming || doc.Timing["wall_ns"] != doc.B.WallNS-doc.A.WallNS {
		t.Errorf("diff JSON: %s", js)
	}

	// Edit the native source as the story did, rerun the build script, rebuild.
	p.Edit("prover-sys/cuda/groth16_cuda.c", "#ifdef CUZK_TIMING\n", "#ifdef CUZK_TIMING\n    fprintf(stderr, \"TIMING_V2 msm phase split\\n\");\n")
	p.Write("prover-sys/build.rs", readFile(t, p.Path("prover-sys/build.rs")))
	p.Cargo("build", "--release", "--features", "timing")
	runOK() // run 3
	fpEdited, _ := runner.Fingerprint(timing)
	out = diff("2", "3")
	for _, want := range []string{
		"  libgroth16_cuda.a changed: copy in " + rel(filepath.Dir(timing)) + ", fingerprint " + short(fpTiming) + " → " + short(fpEdited) + "\n",
		"  1 source changed: prover-sys/cuda/groth16_cuda.c\n",
		"  target/release/gpu-prover changed: digest ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff 2 3 lacks %q:\n%s", want, out)
		}
	}
	// Back to the plain configuration (its script reruns: build.rs changed), then to timing again: Cargo
	// relinks the older timing copy. The bytes prove it, and they agree with the records (it is the timing
	// configuration's own copy): linked-copy-not-newest is info, so run times it, not stale.
	p.Cargo("build", "--release")
	runOK() // run 4
	p.Cargo("build", "--release", "--features", "timing")
	if _, stderr, code := runIn(t, p.Dir, "run", "--ledger", db, "--", "target/release/gpu-prover", "1000"); code != 0 {
		t.Fatalf("the timing configuration's own copy: exit %d, stderr:\n%s", code, stderr)
	}
	out = diff("4", "5")
	if want := "  libgroth16_cuda.a changed: copy in " + rel(filepath.Dir(plain[0])) + " → " + rel(filepath.Dir(timing)); !strings.Contains(out, want) ||
		!strings.Contains(out, "\nrun 5  gpu-prover  ") || strings.Contains(out, "(stale build)") {
		t.Errorf("diff 4 5 lacks %q, or marks a stale build:\n%s", want, out)
	}
	if out := diff("3", "3"); !strings.Contains(out, "same build: binaries, linked copies, sources, toolchain and environment are identical") {
		t.Errorf("diff 3 3:\n%s", out)
	}
	if _, stderr, code := runIn(t, p.Dir, "diff", "--ledger", db, "1", "99"); code != 2 || !strings.Contains(stderr, "no run 99") {
		t.Errorf("diff with a missing run: exit %d, %q", code, stderr)
	}
}

// An unreachable PostgreSQL: the command still runs, its status passes through, the error names the
// server (never the password), and the record is printed on stderr as JSON.
func TestRunUnreachablePostgresKeepsRecord(t *testing.T) {
	runEnv(t)
	ws := builtProject(t)
	dsn := "postgres://stalecheck:hunter2@127.0.0.1:1/stalecheck_test?sslmode=disable&connect_timeout=2"
	out, stderr, code := runIn(t, ws, "run", "--ledger", dsn, "--", "sh", "-c", "echo timed; exit 3")
	if code != 3 || out != "timed\n" {
		t.Fatalf("exit %d (want 3), stdout %q, stderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "cannot record the run in the ledger postgres://stalecheck@127.0.0.1:1/stalecheck_test") ||
		strings.Contains(stderr, "hunter2") {
		t.Errorf("stderr:\n%s", stderr)
	}
	var rec recordJSON
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "{") {
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("record line %q: %v", line, err)
			}
		}
	}
	if rec.ExitStatus != 3 || strings.Join(rec.Command, " ") != "sh -c echo timed; exit 3" || rec.WallNS <= 0 ||
		len(rec.Identity.Binaries) != 2 || rec.Identity.Binaries[1].Path != filepath.Join(ws, "target/release/app") || rec.Build == "" {
		t.Errorf("record on stderr: %+v", rec)
	}
	// The declared folder (rerun-if-changed=cuda) stands for its files: each source has a digest.
	var paths []string
	for _, s := range rec.Identity.Sources {
		paths = append(paths, strings.TrimPrefix(s.Path, ws+"/"))
		if s.Digest == "" {
			t.Errorf("source %s has no digest", s.Path)
		}
	}
	if got := strings.Join(paths, " "); got != "app/src/main.rs seed-sys/build.rs seed-sys/cuda/groth16.c seed-sys/src/lib.rs" {
		t.Errorf("sources %s", got)
	}
}

// stalecheckBinary builds the real binary, for tests that need separate processes.
func stalecheckBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "stalecheck")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/stalecheck").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// Ledger reliability at the CLI: a run killed with SIGKILL inside the insert leaves a consistent ledger,
// 8 concurrent runs lose no record, and a ledger of a newer schema is a clear error (the record is kept
// on stderr).
func TestRunLedgerReliability(t *testing.T) {
	state := runEnv(t)
	ws := builtProject(t)
	bin := stalecheckBinary(t)
	db := filepath.Join(t.TempDir(), "l.db")
	env := append(withoutTargetDirs(os.Environ()), "XDG_STATE_HOME="+state)
	command := func(extra []string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Dir = ws
		cmd.Env = append(append([]string{}, env...), extra...)
		return cmd
	}

	// Killed in the middle of the insert.
	marker := filepath.Join(t.TempDir(), "at-failpoint")
	cmd := command([]string{"STALECHECK_FAILPOINT=ledger-insert-mid", "STALECHECK_FAILPOINT_MARKER=" + marker}, "run", "--ledger", db, "--", "true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the run never reached the failpoint")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if recs := listRecords(t, db); len(recs) != 0 {
		t.Fatalf("a killed insert left %d records", len(recs))
	}

	// 8 concurrent runs.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	outs := make([][]byte, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			outs[i], errs[i] = command(nil, "run", "--ledger", db, "--name", "c"+string(rune('0'+i)), "--", "true").CombinedOutput()
		}(i)
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil {
			t.Errorf("run %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	recs := listRecords(t, db)
	names := map[string]bool{}
	for _, r := range recs {
		names[r.Name] = true
	}
	if len(recs) != 8 || len(names) != 8 {
		t.Fatalf("8 concurrent runs left %d records (%d names)", len(recs), len(names))
	}

	// A newer schema: runs and diff refuse with a clear error; run keeps the record on stderr.
	sdb, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.Exec(`INSERT INTO schema_version (version, applied_ns) VALUES (99, 0)`); err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	for _, args := range [][]string{{"runs", "--ledger", db}, {"diff", "--ledger", db, "1", "2"}} {
		if _, stderr, code := runIn(t, ws, args...); code != 2 || !strings.Contains(stderr, "schema version 99") || !strings.Contains(stderr, "upgrade stalecheck") {
			t.Errorf("%v on a newer ledger: exit %d, stderr %q", args, code, stderr)
		}
	}
	_, stderr, code := runIn(t, ws, "run", "--ledger", db, "--", "true")
	if code != 0 || !strings.Contains(stderr, "schema version 99") || !strings.Contains(stderr, `"command":["true"]`) {
		t.Errorf("run on a newer ledger: exit %d, stderr %q", code, stderr)
	}
}

// The binaries that matter: --binary, else workspace binaries named in the command line (a deps/ hard
// link counts), else the release binaries. Only an error finding that touches one of them refuses.
func TestRunBinariesThatMatter(t *testing.T) {
	runEnv(t)
	ws := builtProject(t)
	db := filepath.Join(t.TempDir(), "l.db")
	deps := one(t, filepath.Join(ws, "target/release/deps/app-????????????????"))
	// A watched native source edited after the build: pending-rebuild touches target/release/app.
	time.Sleep(20 * time.Millisecond)
	os.WriteFile(filepath.Join(ws, "seed-sys/cuda/groth16.c"), []byte("int native_run(void) { return 2; }\n"), 0o644)

	for _, tc := range []struct {
		args []string
		code int
		how  string
	}{
		{[]string{"--", "sh", "-c", "exit 0"}, 125, "target/release/app (release binaries) is stale"},
		{[]string{"--binary", "target/release/app", "--", "true"}, 125, "target/release/app (--binary) is stale"},
		{[]string{"--", deps}, 125, "target/release/app (named in the command line) is stale"},
		{[]string{"--", "env", "X=1", "target/release/app"}, 125, "target/release/app (named in the command line) is stale"},
		{[]string{"--binary", "/bin/sh", "--", "sh", "-c", "exit 0"}, 0, ""},
	} {
		_, stderr, code := runIn(t, ws, append([]string{"run", "--ledger", db, "-q"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.how) {
			t.Errorf("%v: exit %d (want %d), stderr lacks %q:\n%s", tc.args, code, tc.code, tc.how, stderr)
		}
	}
	recs := listRecords(t, db)
	if len(recs) != 1 || recs[0].Stale {
		t.Fatalf("records %+v", recs)
	}
	// Only what matters is described: /bin/sh, no workspace copies or sources.
	sh, _ := filepath.EvalSymlinks("/bin/sh")
	if id := recs[0].Identity; len(id.Binaries) != 1 || (id.Binaries[0].Path != "/bin/sh" && id.Binaries[0].Path != sh) || len(id.Natives) != 0 || len(id.Sources) != 0 {
		t.Errorf("identity %+v", id)
	}
	if _, stderr, code := runIn(t, ws, "run", "--ledger", db, "--binary", "target/release/nope", "--", "true"); code != 125 || !strings.Contains(stderr, "--binary target/release/nope") {
		t.Errorf("missing --binary: exit %d, %q", code, stderr)
	}
}
