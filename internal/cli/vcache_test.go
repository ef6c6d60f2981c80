package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/vcache"
)

// vcCheck runs check --format json in dir with the verdict cache's trace on and returns stdout, the
// cache's decisions (its stderr lines) and the exit status.
func vcCheck(t *testing.T, dir string, args ...string) (out, decisions string, code int) {
	t.Helper()
	out, stderr, code := runIn(t, dir, append([]string{"check", "--format", "json", "--fail-on", "warning"}, args...)...)
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "stalecheck: verdict cache: ") {
			decisions += strings.TrimPrefix(l, "stalecheck: verdict cache: ") + "\n"
		} else if l != "" {
			t.Fatalf("check printed on stderr: %s", stderr)
		}
	}
	return out, decisions, code
}

// vcWarm runs check until it answers from the cache (a check after a build may see files too new to
// tell a later change apart: it is not stored), and
// compares that answer with a --no-cache check; it returns the output. The --no-cache check is a full
// check: one that caches a digest or an archive's evidence for the first time (a file that has just
// aged past those caches' racy windows) rewrites the state file the stored verdict recorded, so the
// cache is warmed again after it, and that hit must print the same.
func vcWarm(t *testing.T, dir string) string {
	t.Helper()
	hit := func() string {
		for i := 0; ; i++ {
			out, dec, _ := vcCheck(t, dir)
			if strings.HasPrefix(dec, "hit:") {
				return out
			}
			if i == 4 {
				t.Fatalf("no hit after 5 checks; last decisions:\n%s", dec)
			}
			time.Sleep(60 * time.Millisecond)
		}
	}
	out := hit()
	fresh, _, _ := runIn(t, dir, "check", "--format", "json", "--fail-on", "warning", "--no-cache")
	if fresh != out {
		t.Fatalf("the hit differs from a --no-cache check:\n%s\n---\n%s", out, fresh)
	}
	if again := hit(); again != out {
		t.Fatalf("the hit after the --no-cache check differs:\n%s\n---\n%s", out, again)
	}
	return out
}

// vcMiss runs check, which must miss (and name want in the reason when want != ""), then the same
// check under verify mode after warming again; it returns the missed check's output.
func vcMiss(t *testing.T, dir, want string) string {
	t.Helper()
	out, dec, _ := vcCheck(t, dir)
	if !strings.HasPrefix(dec, "miss:") || want != "" && !strings.Contains(strings.SplitN(dec, "\n", 2)[0], want) {
		t.Fatalf("want a miss naming %q, decisions:\n%s", want, dec)
	}
	fresh, _, _ := runIn(t, dir, "check", "--format", "json", "--fail-on", "warning", "--no-cache")
	if fresh != out {
		t.Fatalf("the check after the miss differs from a --no-cache check:\n%s\n---\n%s", out, fresh)
	}
	return out
}

// TestVerdictCacheOnRealBuild: a warm check of an unchanged cc build is a hit that prints what the full
// check prints; each change misses: a source edited with its mtime put back (only the ctime tells), a
// header appearing earlier on the include path (a look-up that found nothing), CFLAGS, a new file in a
// build folder, cargo build after an edit; verify mode agrees on hits and catches a tampered verdict.
func TestVerdictCacheOnRealBuild(t *testing.T) {
	state := runEnv(t)
	testutil.NeedDebianCrates(t)
	t.Setenv(vcache.EnvTrace, "1")
	t.Setenv(vcache.EnvMode, "")
	t.Setenv("CFLAGS", "")
	p := testutil.NewProject(t, testutil.CcIncludeWorkspace())
	p.Cargo("build", "--release")
	time.Sleep(60 * time.Millisecond)
	base := vcWarm(t, p.Dir)

	// Verify mode: the hit is checked against the full check and agrees.
	t.Setenv(vcache.EnvMode, "verify")
	if out, dec, code := vcCheck(t, p.Dir); !strings.HasPrefix(dec, "hit:") || out != base || code != 0 {
		t.Fatalf("verify on an unchanged build: exit %d, decisions %q", code, dec)
	}
	// --no-cache: neither looked up nor stored.
	if out, dec, _ := vcCheck(t, p.Dir, "--no-cache"); dec != "" || out != base {
		t.Fatalf("--no-cache: decisions %q", dec)
	}
	// A cargo build that finds nothing to do may rewrite the programs' uplifted dep-info
	// (target/release/app.d): the check reads it only when a manifest is newer than the program, so the
	// next check still hits.
	ds, _ := filepath.Glob(p.Path("target/release/*.d"))
	if len(ds) == 0 {
		t.Fatal("premise: no uplifted dep-info in target/release")
	}
	for _, d := range ds {
		now := time.Now()
		os.Chtimes(d, now, now)
	}
	if _, dec, _ := vcCheck(t, p.Dir); !strings.HasPrefix(dec, "hit:") {
		t.Fatalf("after the uplifted dep-info was rewritten: decisions %q", dec)
	}

	// --output inside the workspace (a folder the scan under PATH lists): a report file that already
	// holds the report is left alone, so the checks after it hit.
	report := p.Path("report.json")
	hit := false
	for i := 0; i < 5 && !hit; i++ {
		_, dec, _ := vcCheck(t, p.Dir, "-o", report)
		hit = strings.HasPrefix(dec, "hit:")
		time.Sleep(60 * time.Millisecond)
	}
	if b, err := os.ReadFile(report); !hit || err != nil || string(b) != base {
		t.Fatalf("check -o %s: a hit %v, the file holds the report: %v (%v)", report, hit, string(b) == base, err)
	}
	os.Remove(report)
	time.Sleep(60 * time.Millisecond)
	vcWarm(t, p.Dir)

	// The stored verdict knows the negative look-up: x.c's #include "x.h" is searched in x.c's own
	// folder before -I native/include. It is recorded as the failed look-up, or covered by the
	// signature of that folder, recorded as a folder (an entry added to it moves its mtime and ctime).
	shadow := p.Path("fastmath-sys/native/x.h")
	verdicts := verdictFiles(state)
	found := false
	for _, v := range verdicts {
		_, _, ents, err := vcache.ReadEntry(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Path == shadow && e.Sig.Err == fsrec.ErrNotExist ||
				e.Path == filepath.Dir(shadow) && e.Sig.Err == fsrec.ErrNone && e.Sig.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("no verdict in %v records the failed look-up of %s", verdicts, shadow)
	}

	// 1. A source edited in place with its size and mtime put back (touch -d back): the ctime moved.
	src := p.Path("fastmath-sys/native/x.c")
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	p.Edit("fastmath-sys/native/x.c", "v * X_SCALE + X_CFG - 1", "v * X_SCALE + X_CFG + 1")
	if err := os.Chtimes(src, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	vcMiss(t, p.Dir, src)
	vcWarm(t, p.Dir)
	// Put it back (content and mtime) for the next steps.
	p.Edit("fastmath-sys/native/x.c", "v * X_SCALE + X_CFG + 1", "v * X_SCALE + X_CFG - 1")
	os.Chtimes(src, fi.ModTime(), fi.ModTime())
	vcMiss(t, p.Dir, src)
	vcWarm(t, p.Dir)

	// 2. A header appearing where a look-up found nothing: the scan now resolves "x.h" to it.
	if err := os.WriteFile(shadow, []byte("#define X_SHADOW 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := vcMiss(t, p.Dir, "")
	if !strings.Contains(out, shadow) {
		t.Fatalf("the full check after the header appeared does not name %s:\n%s", shadow, out)
	}
	vcWarm(t, p.Dir)
	os.Remove(shadow)
	vcMiss(t, p.Dir, "")
	vcWarm(t, p.Dir)

	// 3. The environment: CFLAGS (cc-rs reads it) is part of the key.
	t.Setenv("CFLAGS", "-O3")
	vcMiss(t, p.Dir, "nothing stored")
	t.Setenv("CFLAGS", "")
	if _, dec, _ := vcCheck(t, p.Dir); !strings.HasPrefix(dec, "hit:") {
		t.Fatalf("back to the first environment: want its stored verdict, decisions %q", dec)
	}

	// 4. A new file in a build folder (OUT_DIR).
	runs := p.RunDirs("release", "fastmath-sys")
	if len(runs) != 1 {
		t.Fatalf("want one run folder of fastmath-sys, got %v", runs)
	}
	out2 := testutil.OutDirOf(runs[0])
	if err := os.WriteFile(filepath.Join(out2, "stray.o"), []byte("not an object"), 0o644); err != nil {
		t.Fatal(err)
	}
	vcMiss(t, p.Dir, out2)
	vcWarm(t, p.Dir)

	// 5. cargo build after an edit.
	p.Edit("fastmath-sys/native/include/x.h", "banner v1", "banner v2")
	p.Cargo("build", "--release")
	time.Sleep(60 * time.Millisecond)
	vcMiss(t, p.Dir, "")
	vcWarm(t, p.Dir)
	// The first check after an edit and a rebuild is itself stored (the content baselines and caches it
	// writes are kept as it left them), so the second is a hit, and it prints what a full check prints.
	p.Edit("fastmath-sys/native/include/x.h", "banner v2", "banner v3")
	p.Cargo("build", "--release")
	time.Sleep(60 * time.Millisecond)
	first, dec, _ := vcCheck(t, p.Dir)
	if !strings.HasPrefix(dec, "miss:") || !strings.Contains(dec, "stored:") {
		t.Fatalf("the first check after a rebuild: want a miss that is stored, decisions:\n%s", dec)
	}
	// It reused the memos of the units the rebuild left alone (and, under verify, agreed with the same
	// check without them).
	if m := regexp.MustCompile(`prior: (\d+) of (\d+) memos still valid`).FindStringSubmatch(dec); m == nil || m[1] == "0" || m[1] == m[2] {
		t.Fatalf("the first check after a rebuild: want some memos still valid and some not, decisions:\n%s", dec)
	}
	second, dec, _ := vcCheck(t, p.Dir)
	if !strings.HasPrefix(dec, "hit:") || second != first {
		t.Fatalf("the second check after a rebuild: want a hit printing the first's output, decisions:\n%s", dec)
	}
	if fresh, _, _ := runIn(t, p.Dir, "check", "--format", "json", "--fail-on", "warning", "--no-cache"); fresh != second {
		t.Fatalf("the hit differs from a --no-cache check:\n%s\n---\n%s", second, fresh)
	}

	// Verify mode catches a verdict that does not match the full check (a tampered file).
	verdicts = verdictFiles(state)
	tampered := 0
	for _, v := range verdicts {
		k, res, ents, err := vcache.ReadEntry(v)
		if err != nil {
			t.Fatal(err)
		}
		res.Out = append([]byte(`{"tampered": true}`+"\n"), res.Out...)
		if err := vcache.WriteEntry(v, k, res, ents); err != nil {
			t.Fatal(err)
		}
		tampered++
	}
	if tampered == 0 {
		t.Fatal("no verdict file to tamper with")
	}
	_, stderr, code := runIn(t, p.Dir, "check", "--format", "json", "--fail-on", "warning")
	if code != exitVerifyDiffers || !strings.Contains(stderr, "differs from the full check") || !strings.Contains(stderr, "tampered") {
		t.Fatalf("verify on a tampered verdict: exit %d (want %d), stderr:\n%s", code, exitVerifyDiffers, stderr)
	}
}

// verdictFiles returns the verdict files in the state folder (not their memo files).
func verdictFiles(state string) []string {
	all, _ := filepath.Glob(filepath.Join(state, "stalecheck", vcache.Folder, "*"))
	var out []string
	for _, f := range all {
		if !strings.HasSuffix(f, vcache.MemoSuffix) {
			out = append(out, f)
		}
	}
	return out
}

// TestVerdictCacheRun: run's pre-run check of an unchanged build is a hit whose record has the same
// build identity as the full one; after an edit the build is refused by a full check (a stale plan is
// never stored), and under verify mode the hit agrees.
func TestVerdictCacheRun(t *testing.T) {
	runEnv(t)
	testutil.NeedDebianCrates(t)
	t.Setenv(vcache.EnvTrace, "1")
	t.Setenv(vcache.EnvMode, "")
	p := testutil.NewProject(t, testutil.CcIncludeWorkspace())
	p.Cargo("build", "--release")
	time.Sleep(60 * time.Millisecond)
	db := filepath.Join(t.TempDir(), "l.db")
	runOnce := func() (string, string) {
		t.Helper()
		_, stderr, code := runIn(t, p.Dir, "run", "--ledger", db, "--", "./target/release/app")
		if code != 0 {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
		build := ""
		if i := strings.Index(stderr, ", build "); i >= 0 {
			build = strings.Fields(stderr[i+len(", build "):])[0]
		}
		return stderr, build
	}
	var builds []string
	stored := false
	lastErr := ""
	// A run that caches a digest for the first time rewrites the digest cache its recording holds, so
	// its plan is not stored: the files of a fresh build age past the digest cache's racy window
	// (digest.RacyWindow) one after another, for as long as the build took.
	for i := 0; i < 20 && !stored; i++ {
		stderr, b := runOnce()
		lastErr = stderr
		builds = append(builds, b)
		stored = strings.Contains(stderr, "stalecheck: verdict cache: stored:")
		time.Sleep(200 * time.Millisecond)
	}
	if !stored {
		t.Fatalf("no plan stored after 20 runs; last:\n%s", lastErr)
	}
	stderr, b := runOnce()
	if !strings.Contains(stderr, "verdict cache: hit:") || b == "" || b != builds[0] {
		t.Fatalf("run on an unchanged build: want a hit with build %s, got build %s:\n%s", builds[0], b, stderr)
	}
	t.Setenv(vcache.EnvMode, "verify")
	if stderr, b := runOnce(); !strings.Contains(stderr, "verdict cache: hit:") || b != builds[0] {
		t.Fatalf("verify: %s", stderr)
	}
	t.Setenv(vcache.EnvMode, "")
	p.Edit("fastmath-sys/native/include/x.h", "banner v1", "banner v2")
	p.Cargo("build", "--release")
	_, stderr, code := runIn(t, p.Dir, "run", "--ledger", db, "--", "./target/release/app")
	if code != 125 || !strings.Contains(stderr, "verdict cache: miss:") || strings.Contains(stderr, "stalecheck: verdict cache: stored") {
		t.Fatalf("run after an unwatched header edit: exit %d (want 125, a miss, nothing stored):\n%s", code, stderr)
	}
}

// TestVerdictCacheInDevShm: a workspace in /dev/shm (an in-memory file system where CI jobs and users
// put scratch builds) is recorded like any other: a source edited after a cached clean verdict is a
// miss and an error, never the stored clean answer. (Its look-ups were once dropped with /dev's device
// nodes, so every later check was a hit.)
func TestVerdictCacheInDevShm(t *testing.T) {
	runEnv(t)
	testutil.NeedDebianCrates(t)
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() {
		t.Skip("no /dev/shm here")
	}
	t.Setenv(vcache.EnvTrace, "1")
	t.Setenv(vcache.EnvMode, "")
	t.Setenv("CFLAGS", "")
	dir, err := os.MkdirTemp("/dev/shm", "stalecheck-vcache-test-")
	if err != nil {
		t.Skipf("/dev/shm is not writable: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := testutil.NewProjectIn(t, dir, testutil.CcIncludeWorkspace())
	p.Cargo("build", "--release")
	time.Sleep(60 * time.Millisecond)
	vcWarm(t, p.Dir)
	src := p.Path("fastmath-sys/native/x.c")
	p.Edit("fastmath-sys/native/x.c", "v * X_SCALE + X_CFG - 1", "v * X_SCALE + X_CFG + 1")
	future := time.Now().Add(time.Minute)
	if err := os.Chtimes(src, future, future); err != nil {
		t.Fatal(err)
	}
	out := vcMiss(t, p.Dir, src)
	if !strings.Contains(out, `"severity": "error"`) || !strings.Contains(out, src) {
		t.Errorf("the check after the edit does not report %s as an error:\n%s", src, out)
	}
}
