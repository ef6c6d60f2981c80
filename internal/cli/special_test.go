package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/special"
)

var (
	ccOnce sync.Once
	ccDir  string
	ccErr  error
)

// ccToggled returns a private copy (cp -a) of the reproductions' workspace (testutil.CCSys, Debian's
// cc crate) built in release without and then with app/fast, in a git repository: two copies of libx.a,
// target/release/app linking the fast one. Built once per test binary.
func ccToggled(t *testing.T) string {
	t.Helper()
	ccOnce.Do(func() {
		if ccDir, ccErr = os.MkdirTemp("", "stalecheck-cc-"); ccErr != nil {
			return
		}
		p := testutil.ProjectAt(t, ccDir)
		for rel, c := range testutil.CCSys(t) {
			p.Write(rel, c)
		}
		p.Write(".gitignore", "target/\n")
		testutil.GitRepo(t, ccDir, nil)
		for _, args := range [][]string{{"build", "--release"}, {"build", "--release", "--features", "app/fast"}} {
			if out, err := p.CargoErr(args...); err != nil {
				ccErr = err
				t.Logf("cargo %v:\n%s", args, out)
				return
			}
		}
	})
	if ccErr != nil {
		t.Fatalf("building the cc workspace: %v", ccErr)
	}
	dst := filepath.Join(t.TempDir(), "ws")
	if out, err := exec.Command("cp", "-a", ccDir, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v\n%s", err, out)
	}
	return dst
}

// findingsAbout returns the rules of the check's JSON findings that name path among their subjects.
func findingsAbout(fs []map[string]any, path string) []string {
	var out []string
	for _, f := range fs {
		subs, _ := f["subjects"].([]any)
		for _, s := range subs {
			if s == path {
				out = append(out, f["rule"].(string))
			}
		}
	}
	return out
}

// Repro 14: a member's Cargo.toml that is a FIFO or a symlink to /dev/zero. check, explain, which and
// run answer at once (they used to block on the FIFO, or read /dev/zero until memory ran out); check
// names the manifest in an unreadable-record finding.
func TestMemberManifestSpecial(t *testing.T) {
	ws := ccToggled(t)
	manifest := filepath.Join(ws, "fastmath-sys", "Cargo.toml")
	saved, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	runEnv(t)
	for _, kind := range special.Kinds {
		special.Plant(t, manifest, kind)
		out, stderr, code := runWithin(t, 30*time.Second, "check", "--format", "json", "--fail-on", "none", ws)
		var doc struct{ Findings []map[string]any }
		if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
			t.Fatalf("check with a %s manifest: exit %d\n%s%s", kind, code, out, stderr)
		}
		if rules := findingsAbout(doc.Findings, manifest); len(rules) != 1 || rules[0] != "unreadable-record" {
			t.Errorf("check with a %s manifest: findings about it %v, want one unreadable-record", kind, rules)
		}
		if _, stderr, code := runWithin(t, 30*time.Second, "explain", "fastmath-sys", "-w", ws); code != 0 {
			t.Errorf("explain with a %s manifest: exit %d %s", kind, code, stderr)
		}
		if _, stderr, code := runWithin(t, 30*time.Second, "which", filepath.Join(ws, "target/release/app")); code != 0 {
			t.Errorf("which with a %s manifest: exit %d %s", kind, code, stderr)
		}
		t.Chdir(ws)
		if _, stderr, code := runWithin(t, 30*time.Second, "run", "--ledger", filepath.Join(t.TempDir(), "l.db"), "--", "true"); code != 0 {
			t.Errorf("run with a %s manifest: exit %d %s", kind, code, stderr)
		}
	}
	os.Remove(manifest)
	if err := os.WriteFile(manifest, saved, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A FIFO at .git/HEAD: run does not wait for git (which would block opening it until the deadline);
// it runs the command at once and says the git state is not recorded, naming the file.
func TestRunGitHeadFIFO(t *testing.T) {
	ws := ccToggled(t)
	head := filepath.Join(ws, ".git", "HEAD")
	special.Plant(t, head, "fifo")
	runEnv(t)
	t.Chdir(ws)
	start := time.Now()
	_, stderr, code := runWithin(t, 30*time.Second, "run", "--ledger", filepath.Join(t.TempDir(), "l.db"), "--", "true")
	if code != 0 || !strings.Contains(stderr, "git state not recorded") || !strings.Contains(stderr, head) {
		t.Fatalf("run with a FIFO at .git/HEAD: exit %d\n%s", code, stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("run took %v: it waited for git", d)
	}
}

// Repro 12: the linked OUT_DIR archive (the fast configuration's libx.a, which target/release/app
// links) replaced by a FIFO or a /dev/zero symlink. check names it in unreadable-record and still
// reports the duplicate (the file is there); which names the candidate it could not read and answers
// among the others.
func TestLinkedArchiveSpecial(t *testing.T) {
	ws := ccToggled(t)
	archive := fastArchive(t, ws)
	runEnv(t)
	for _, kind := range special.Kinds {
		special.Plant(t, archive, kind)
		out, stderr, code := runWithin(t, 30*time.Second, "check", "--format", "json", "--fail-on", "none", ws)
		var doc struct{ Findings []map[string]any }
		if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
			t.Fatalf("check with a %s archive: exit %d\n%s%s", kind, code, out, stderr)
		}
		rules := strings.Join(findingsAbout(doc.Findings, archive), ",")
		if !strings.Contains(rules, "unreadable-record") || !strings.Contains(rules, "duplicate-native-artifact") ||
			strings.Contains(rules, "binary-older-than-input") {
			t.Errorf("check with a %s archive: findings about it [%s], want unreadable-record and duplicate-native-artifact", kind, rules)
		}
		out, stderr, code = runWithin(t, 30*time.Second, "which", "--format", "json", filepath.Join(ws, "target/release/app"))
		var w struct {
			Libraries []struct {
				Outcome    string
				Notes      []string
				Candidates []struct {
					Path    string
					Matched bool
				}
			}
		}
		if code != 0 || json.Unmarshal([]byte(out), &w) != nil || len(w.Libraries) != 1 {
			t.Fatalf("which with a %s archive: exit %d\n%s%s", kind, code, out, stderr)
		}
		lib := w.Libraries[0]
		named := false
		for _, n := range lib.Notes {
			named = named || strings.Contains(n, archive) && strings.Contains(n, "not a regular file")
		}
		matched := false
		for _, c := range lib.Candidates {
			if c.Path == archive {
				t.Errorf("which lists the unreadable %s as a candidate", archive)
			}
			// The fast rlib bundles the archive's objects: it is the copy inside.
			matched = matched || c.Matched && strings.HasSuffix(c.Path, ".rlib")
		}
		if !named || !matched || lib.Outcome != "matched" {
			t.Errorf("which with a %s archive: outcome %s, notes %q, candidates %+v", kind, lib.Outcome, lib.Notes, lib.Candidates)
		}
	}
}

// The linked archive truncated (corrupt content, a regular file): which names it as a copy it could
// not parse and answers among the others, as for a FIFO (a newcomer's attack got exit 2).
func TestWhichCorruptBuildFolderCopy(t *testing.T) {
	ws := ccToggled(t)
	archive := fastArchive(t, ws)
	runEnv(t)
	if err := os.Truncate(archive, 100); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runWithin(t, 30*time.Second, "which", filepath.Join(ws, "target/release/app"))
	if code != 0 || !strings.Contains(out, "could not parse the candidate "+archive) || !strings.Contains(out, "matched") {
		t.Fatalf("which with a truncated archive: exit %d\n%s%s", code, out, stderr)
	}
}

// A copy of libx.a damaged after the link (truncated, or made a FIFO): verify --matches of it cannot tell
// (it said "holds … certain" of the copy not inside, taking the first copy read for the one asked
// about), and of the intact copy inside cannot prove "holds" either (the damaged one may share what
// tells it apart); it still says "does not hold" of a copy whose content is absent. which answers among
// the copies read, as likely, not certain.
func TestVerifyDamagedCopy(t *testing.T) {
	ws := ccToggled(t)
	app := filepath.Join(ws, "target/release/app")
	fast := fastArchive(t, ws)
	var slow string
	for _, o := range (&testutil.Project{T: t, Dir: ws}).RunDirs("release", "fastmath-sys") {
		if a := filepath.Join(testutil.OutDirOf(o), "libx.a"); a != fast {
			slow = a
		}
	}
	runEnv(t)
	if _, _, code := runWithin(t, 30*time.Second, "verify", app, "--matches", fast); code != 0 {
		t.Fatalf("the premise fails: verify --matches of the fast copy, intact: exit %d, want 0", code)
	}
	if _, _, code := runWithin(t, 30*time.Second, "verify", app, "--matches", slow); code != 1 {
		t.Fatalf("the premise fails: verify --matches of the other copy, intact: exit %d, want 1", code)
	}
	saved, err := os.ReadFile(slow)
	if err != nil {
		t.Fatal(err)
	}
	for _, damage := range []string{"truncated", "fifo"} {
		os.Remove(slow)
		if damage == "fifo" {
			if err := syscall.Mkfifo(slow, 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(slow, saved[:len(saved)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runWithin(t, 30*time.Second, "verify", app, "--matches", slow)
		if code != 2 || !strings.Contains(stderr, "cannot tell") || !strings.Contains(stderr, slow) {
			t.Errorf("verify --matches of the %s copy not inside: exit %d, want 2 (cannot tell) naming it\n%s%s", damage, code, stdout, stderr)
		}
		stdout, stderr, code = runWithin(t, 30*time.Second, "verify", app, "--matches", fast)
		if code != 2 || !strings.Contains(stderr, "may be the copy inside") {
			t.Errorf("verify --matches of the intact copy inside, the other %s: exit %d, want 2 (cannot prove it)\n%s%s", damage, code, stdout, stderr)
		}
		stdout, stderr, code = runWithin(t, 30*time.Second, "which", app, "--format", "json")
		var doc struct {
			Libraries []struct {
				Name, Outcome, Confidence string
			}
		}
		if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil {
			t.Fatalf("which with the %s copy: exit %d\n%s%s", damage, code, stdout, stderr)
		}
		seen := false
		for _, l := range doc.Libraries {
			if l.Name == "x" {
				seen = true
				if l.Confidence == "certain" {
					t.Errorf("which with the %s copy left out: %s %s, want it likely at most", damage, l.Outcome, l.Confidence)
				}
			}
		}
		if !seen {
			t.Errorf("which with the %s copy: no answer for libx.a in %s", damage, stdout)
		}
	}
	os.Remove(slow)
	if err := os.WriteFile(slow, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Truncate(fast, 3000)
	stdout, stderr, code := runWithin(t, 30*time.Second, "verify", app, "--matches", fast)
	if code != 2 || !strings.Contains(stderr, "cannot tell") {
		t.Errorf("verify --matches of the copy inside, truncated: exit %d, want 2\n%s%s", code, stdout, stderr)
	}
}

// The live build-script run's output, which names the libraries the binary links, made a FIFO: which
// cannot tell, and says so naming the record (it said "its build scripts link no native library" and
// exited 0: a newcomer's attack).
func TestWhichUnreadableRunOutputCannotTell(t *testing.T) {
	ws := ccToggled(t)
	out := testutil.StdoutFile(fastRun(t, ws))
	runEnv(t)
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(out, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runWithin(t, 30*time.Second, "which", filepath.Join(ws, "target/release/app"))
	if code == 0 || !strings.Contains(stderr, "cannot tell which native libraries") || !strings.Contains(stderr, out) {
		t.Fatalf("which with the run's output a FIFO: exit %d\n%s%s", code, stdout, stderr)
	}
}

// The live build-script run's output made a FIFO, a symbolic link to /dev/zero or a folder: check says
// the record is unreadable, once, naming it, and nothing else about it: the special file's mtime is not
// the run's (a link to /dev/zero gave last-build-failed with the device's mtime, a fresh FIFO
// pending-rebuild).
func TestCheckSpecialRunOutput(t *testing.T) {
	ws := ccToggled(t)
	runEnv(t)
	checkSpecialRecord(t, ws, testutil.StdoutFile(fastRun(t, ws)))
	// The run folder's invoked.timestamp and root-output (Cargo's regular files) made FIFOs: the
	// FIFO's own time is not when the run started (it gave last-build-failed and pending-rebuild), and
	// an unreadable root-output is said (it was silently skipped).
	run := fastRun(t, ws)
	for _, name := range []string{"invoked.timestamp", "root-output"} {
		rec := filepath.Join(run, name)
		saved, err := os.ReadFile(rec)
		if err != nil {
			t.Fatal(err)
		}
		st := mtimeOf(t, rec)
		special.Plant(t, rec, "fifo")
		stdout, stderr, code := runWithin(t, 30*time.Second, "check", "--format", "json", "--fail-on", "none", ws)
		var doc struct{ Findings []map[string]any }
		if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil {
			t.Fatalf("check with %s a FIFO: exit %d\n%s%s", name, code, stdout, stderr)
		}
		if rules := findingsAbout(doc.Findings, rec); len(rules) != 1 || rules[0] != "unreadable-record" {
			t.Errorf("check with %s a FIFO: findings about it %v, want one unreadable-record", name, rules)
		}
		for _, f := range doc.Findings {
			if f["severity"] == "error" || f["rule"] == "last-build-failed" {
				t.Errorf("check with %s a FIFO: %v %v: %v", name, f["severity"], f["rule"], f["message"])
			}
		}
		os.Remove(rec)
		if err := os.WriteFile(rec, saved, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(rec, st, st); err != nil {
			t.Fatal(err)
		}
	}
	// The same for a compile unit's dep-info record (the reference of the lib unit's build time).
	depInfo, _ := filepath.Glob(filepath.Join(ws, "target/release/.fingerprint/fastmath-sys-*/dep-lib-fastmath_sys"))
	if len(depInfo) == 0 {
		t.Fatal("the premise fails: no dep-info record of fastmath-sys's lib unit")
	}
	// The fast configuration's unit, built last, is the one target/release/app links: the other is not
	// read (no root reaches it).
	sort.Slice(depInfo, func(i, j int) bool { return mtimeOf(t, depInfo[i]).Before(mtimeOf(t, depInfo[j])) })
	checkSpecialRecord(t, ws, depInfo[len(depInfo)-1])
}

func mtimeOf(t *testing.T, path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime()
}

// checkSpecialRecord makes the record out a FIFO, a link to /dev/zero, a folder, a symbolic link loop and
// a link to nothing in turn: check names it in one unreadable-record, and no error (a link that cannot
// be followed was a missing record: last-build-failed).
func checkSpecialRecord(t *testing.T, ws, out string) {
	t.Helper()
	saved, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range append(special.Kinds, "folder", "link loop", "link to nothing") {
		var err error
		switch kind {
		case "folder":
			err = os.Mkdir(out, 0o755)
		case "link loop":
			err = os.Symlink(filepath.Base(out), out)
		case "link to nothing":
			err = os.Symlink(filepath.Join(t.TempDir(), "gone"), out)
		default:
			special.Plant(t, out, kind)
		}
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runWithin(t, 30*time.Second, "check", "--format", "json", "--fail-on", "warning", ws)
		var doc struct{ Findings []map[string]any }
		if code != 1 || json.Unmarshal([]byte(stdout), &doc) != nil {
			t.Fatalf("check with %s a %s: exit %d, want 1 (a warning)\n%s%s", out, kind, code, stdout, stderr)
		}
		if rules := findingsAbout(doc.Findings, out); len(rules) != 1 || rules[0] != "unreadable-record" {
			t.Errorf("check with %s a %s: findings about it %v, want one unreadable-record", out, kind, rules)
		}
		for _, f := range doc.Findings {
			if sev := f["severity"]; sev == "error" || f["rule"] == "last-build-failed" {
				t.Errorf("check with %s a %s: %v %v: %v", out, kind, sev, f["rule"], f["message"])
			}
			if f["rule"] == "unreadable-record" && strings.Count(f["message"].(string), filepath.Base(filepath.Dir(out))+"/") != 1 {
				t.Errorf("the message names the record more than once: %v", f["message"])
			}
		}
		os.RemoveAll(out)
	}
	// Back with its bytes and mtime: a newer record would be a rebuild to the next check.
	if err := os.WriteFile(out, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(out, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// The fingerprint JSON of the -sys lib unit the binary links made unreadable: its deps (the build-script
// run that names the library) cannot be followed, so which cannot tell (it said "its build scripts link
// no native library", exit 0).
func TestDamagedLibFingerprintCannotTell(t *testing.T) {
	ws := ccToggled(t)
	jsons, _ := filepath.Glob(filepath.Join(ws, "target/release/.fingerprint/fastmath-sys-*/lib-fastmath_sys.json"))
	if len(jsons) == 0 {
		t.Fatal("the premise fails: no lib-fastmath_sys.json")
	}
	sort.Slice(jsons, func(i, j int) bool { return mtimeOf(t, jsons[i]).Before(mtimeOf(t, jsons[j])) })
	jf := jsons[len(jsons)-1] // the fast configuration's, built last: the one app links
	runEnv(t)
	if err := os.WriteFile(jf, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runWithin(t, 30*time.Second, "which", filepath.Join(ws, "target/release/app"))
	if code != 2 || !strings.Contains(stderr, "cannot tell which native libraries") || !strings.Contains(stderr, jf) {
		t.Fatalf("which with the lib unit's fingerprint damaged: exit %d\n%s%s", code, stdout, stderr)
	}
	// run times it (nothing says it is stale) and says that whether it is current cannot be told, naming
	// the record (it said nothing).
	t.Chdir(ws)
	stdout, stderr, code = runWithin(t, 30*time.Second, "run", "--ledger", filepath.Join(t.TempDir(), "l.db"), "--", "target/release/app")
	if code != 0 || !strings.Contains(stderr, "cannot tell whether") || !strings.Contains(stderr, filepath.Base(filepath.Dir(jf))) {
		t.Errorf("run with the lib unit's fingerprint damaged: exit %d\n%s%s", code, stdout, stderr)
	}
}

// fastArchive returns the release libx.a the fast configuration's build-script run made in ws.
func fastArchive(t *testing.T, ws string) string {
	t.Helper()
	return filepath.Join(testutil.OutDirOf(fastRun(t, ws)), "libx.a")
}

// fastRun returns the run folder of the fast configuration's release build-script run in ws.
func fastRun(t *testing.T, ws string) string {
	t.Helper()
	outputs := (&testutil.Project{T: t, Dir: ws}).RunDirs("release", "fastmath-sys") // either layout
	for _, o := range outputs {
		if data, err := os.ReadFile(testutil.StdoutFile(o)); err == nil && strings.Contains(string(data), "FASTMATH_FAST") {
			return o
		}
	}
	t.Fatalf("no run of the fast configuration among %v", outputs)
	return ""
}
