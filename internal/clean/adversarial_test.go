package clean_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/clean"
)

// orphanBuildDirs returns the fixture's orphaned build/ folders (relative to target/).
func orphanBuildDirs() []string {
	var out []string
	for _, o := range fixtureOrphans {
		if strings.Contains(o, "/build/") {
			out = append(out, o)
		}
	}
	return out
}

// orphanRunFolder is the fixture's orphaned build-script run folder (the one with an output record).
func orphanRunFolder(t *testing.T, target string) string {
	t.Helper()
	for _, d := range orphanBuildDirs() {
		if _, err := os.Stat(filepath.Join(target, d, "output")); err == nil {
			return filepath.Join(target, d)
		}
	}
	t.Fatal("no orphaned run folder in the fixture")
	return ""
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// Symlinks inside build/ that point outside: inside an orphaned run folder (to a folder and to a file),
// as a build/ entry named like a unit, and as a deps/ file named with an orphaned unit's hash. Only the
// links inside removed folders go (unlinked, never followed); the others are left alone; the targets
// are untouched.
func TestCleanSymlinksPointingOutside(t *testing.T) {
	s := newSentinel(t)
	p := s02(t)
	target := p.Path("target")
	run := orphanRunFolder(t, target)
	symlink(t, s.Dir, filepath.Join(run, "out", "escape-dir"))
	symlink(t, filepath.Join(s.Dir, "precious.txt"), filepath.Join(run, "out", "escape-file"))
	evil := filepath.Join(target, "release/build/evil-0123456789abcdef")
	symlink(t, s.Dir, evil)
	// (A symlink in .fingerprint/ in place of a unit's folder is an unreadable record: the profile is
	// left alone, TestCleanLeavesProfileWithOddFingerprintFolder.)
	// A deps/ entry carrying an orphaned lib's hash.
	var hash string
	for _, o := range fixtureOrphans {
		if strings.HasSuffix(o, ".rlib") {
			base := strings.TrimSuffix(filepath.Base(o), ".rlib")
			hash = base[strings.LastIndexByte(base, '-')+1:]
		}
	}
	depsEvil := filepath.Join(target, "release/deps/evil-"+hash+".so")
	symlink(t, filepath.Join(s.Dir, "precious.txt"), depsEvil)

	done := runClean(t, p, clean.Request{Yes: true})
	if _, err := os.Lstat(run); !os.IsNotExist(err) {
		t.Fatalf("the orphaned run folder is still there: %v", err)
	}
	for _, l := range []string{evil, depsEvil} {
		if st, err := os.Lstat(l); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: want the symlink left alone, got %v", l, err)
		}
	}
	found := false
	for _, it := range done.Items {
		if it.Path == depsEvil {
			found = true
			if it.Status != clean.Skipped || it.Reason != "a symlink (never followed or removed)" {
				t.Errorf("deps symlink: %s %q", it.Status, it.Reason)
			}
		}
	}
	if !found {
		t.Error("the deps/ symlink is not reported")
	}
	assertFresh(t, p, "build", "--release", "--features", "timing")
}

// A folder mounted inside an orphaned run folder (a bind mount of a folder outside the target folder):
// os.Root never follows a symlink but does go down into a mount, so the run folder is never emptied; the
// dry run says so, and --yes leaves it and what is mounted there alone. Needs the right to mount (root).
func TestCleanNeverEmptiesMountPoint(t *testing.T) {
	s := newSentinel(t)
	p := s02(t)
	target := p.Path("target")
	run := orphanRunFolder(t, target)
	mnt := filepath.Join(run, "out", "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", s.Dir, mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount here (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	for _, yes := range []bool{false, true} {
		done := runClean(t, p, clean.Request{Yes: yes})
		found := false
		for _, it := range done.Items {
			if it.Path == run {
				found = true
				if it.Status != clean.Skipped || !strings.Contains(it.Reason, "mount point") {
					t.Errorf("yes=%v: the run folder holding a mount: %s %q", yes, it.Status, it.Reason)
				}
			}
		}
		if !found {
			t.Errorf("yes=%v: the run folder holding a mount is not reported", yes)
		}
	}
	if _, err := os.Stat(filepath.Join(mnt, "precious.txt")); err != nil {
		t.Errorf("what is mounted in the run folder was touched: %v", err)
	}
}

// A folder inside an orphaned run folder that cannot be read (chmod 000): --yes would empty the run
// folder part way and stop there, so the plan leaves it, saying why, in the dry run as with --yes.
// Root reads every folder: the test needs another user.
func TestCleanLeavesFolderItCannotRead(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a chmod 000 folder: run as another user")
	}
	p := s02(t)
	target := p.Path("target")
	run := orphanRunFolder(t, target)
	locked := filepath.Join(run, "out", "locked")
	if err := os.MkdirAll(filepath.Join(locked, "inner"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	for _, yes := range []bool{false, true} {
		done := runClean(t, p, clean.Request{Yes: yes})
		for _, it := range done.Items {
			if it.Path == run && (it.Status != clean.Skipped || !strings.Contains(it.Reason, "cannot read inside it")) {
				t.Errorf("yes=%v: the run folder holding an unreadable folder: %s %q", yes, it.Status, it.Reason)
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(run, "output")); err != nil {
		t.Errorf("the run folder was partly removed: %v", err)
	}
}

// A symlink swapped in between planning and deleting: (1) the plan file's folder replaced by a symlink
// before the plan runs; (2) the folder replaced after it passed its checks (the handle already open:
// its contents go, the symlink is left alone); (3) a folder on the path (build/) replaced by a symlink
// to a tree that mirrors the unit names: the items below it are skipped.
func TestCleanSymlinkSwappedIn(t *testing.T) {
	need.RealBuild(t) // the orphaned folders are those of the real build (s02)
	dirs := orphanBuildDirs()
	if len(dirs) != 2 {
		t.Fatalf("orphaned build folders %v", dirs)
	}
	var names []string
	for _, d := range dirs {
		names = append(names, filepath.Base(d))
	}
	s := newSentinel(t, names...)

	t.Run("before the plan runs", func(t *testing.T) {
		p := s02(t)
		plan := runClean(t, p, clean.Request{})
		data, _ := json.Marshal(plan)
		var fromFile clean.Plan
		json.Unmarshal(data, &fromFile)
		victim := p.Path(filepath.Join("target", dirs[0]))
		if err := os.Rename(victim, victim+".moved"); err != nil {
			t.Fatal(err)
		}
		symlink(t, filepath.Join(s.Dir, names[0]), victim)
		done := runClean(t, p, clean.Request{Plan: &fromFile, Yes: true})
		for _, it := range done.Items {
			if it.Path == victim && it.Status != clean.Skipped {
				t.Errorf("the swapped folder: %s %s", it.Status, it.Reason)
			}
		}
		if _, err := os.Stat(filepath.Join(victim+".moved", "output")); err != nil {
			t.Errorf("the moved folder was touched: %v", err)
		}
		if n := len(rels(done, clean.Removed)); n != 10 {
			t.Errorf("removed %d items, want the 10 others", n)
		}
	})

	t.Run("after its checks", func(t *testing.T) {
		p := s02(t)
		victim := p.Path(filepath.Join("target", dirs[0]))
		swapped := false
		done := runClean(t, p, clean.Request{Yes: true, Exec: clean.ExecOptions{BeforeRemove: func(it *clean.Item) {
			if it.Path != victim || swapped {
				return
			}
			swapped = true
			if err := os.Rename(victim, victim+".moved"); err != nil {
				t.Error(err)
			}
			symlink(t, filepath.Join(s.Dir, names[0]), victim)
		}}})
		if !swapped {
			t.Fatal("the hook never ran for the victim")
		}
		for _, it := range done.Items {
			if it.Path == victim && (it.Status != clean.Skipped || !strings.Contains(it.Reason, "its name now holds something else, left alone: a symlink now")) {
				t.Errorf("the swapped folder: %s %q", it.Status, it.Reason)
			}
		}
		if st, err := os.Lstat(victim); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the symlink was not left alone: %v", err)
		}
		if ents, err := os.ReadDir(victim + ".moved"); err != nil || len(ents) != 0 {
			t.Errorf("the opened folder was not emptied through its handle: %v %d", err, len(ents))
		}
	})

	t.Run("a folder on the path", func(t *testing.T) {
		p := s02(t)
		build := p.Path("target/release/build")
		fired := false
		done := runClean(t, p, clean.Request{Yes: true, Exec: clean.ExecOptions{BeforeRemove: func(it *clean.Item) {
			if fired || it.Kind != clean.KindBuildDir {
				return
			}
			fired = true
			if err := os.Rename(build, build+".real"); err != nil {
				t.Error(err)
			}
			symlink(t, s.Dir, build)
		}}})
		if !fired {
			t.Fatal("the hook never ran")
		}
		var skipped []string
		for _, it := range done.Items {
			if it.Kind == clean.KindBuildDir && it.Status == clean.Skipped {
				skipped = append(skipped, it.Reason)
			}
		}
		if len(skipped) != 1 || skipped[0] != `folder "build" on its path is a symlink now (never followed)` {
			t.Fatalf("skipped build folders: %q", skipped)
		}
		os.Remove(build)
		os.Rename(build+".real", build)
		assertFresh(t, p, "build", "--release", "--features", "timing")
	})
}

// Names with newlines, escape sequences and bytes that are not UTF-8: the text output escapes them,
// the JSON plan carries their exact bytes, and executing it removes exactly them.
func TestCleanStrangeNames(t *testing.T) {
	newSentinel(t)
	p := s02(t)
	odd := []string{"evil\nname\x1b[31mred\x1b[0m-0123456789abcdef", "bad\xffutf8\x07-fedcba9876543210"}
	for _, n := range odd {
		d := p.Path(filepath.Join("target/release/build", n))
		if err := os.MkdirAll(filepath.Join(d, "out"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "out", "x\nfile"), []byte("12345"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan := runClean(t, p, clean.Request{})
	var text bytes.Buffer
	if err := clean.WriteText(&text, plan); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if strings.ContainsAny(out, "\x1b\x07\xff") {
		t.Fatalf("raw control bytes reach the terminal:\n%q", out)
	}
	for _, want := range []string{`release/build/evil\nname\x1b[31mred\x1b[0m-0123456789abcdef/`, `release/build/bad\xffutf8\x07-fedcba9876543210/`} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %s:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n") != len(plan.Items)+2 {
		t.Errorf("a name broke a line: %d lines for %d items:\n%s", strings.Count(out, "\n"), len(plan.Items), out)
	}
	data, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile clean.Plan
	if err := json.Unmarshal(data, &fromFile); err != nil {
		t.Fatal(err)
	}
	done := runClean(t, p, clean.Request{Plan: &fromFile, Yes: true})
	removed := map[string]bool{}
	for _, r := range rels(done, clean.Removed) {
		removed[r] = true
	}
	for _, n := range odd {
		if !removed[filepath.Join("release/build", n)] {
			t.Errorf("%q was not removed", n)
		}
		if _, err := os.Lstat(p.Path(filepath.Join("target/release/build", n))); !os.IsNotExist(err) {
			t.Errorf("%q still exists", n)
		}
	}
	if len(removed) != 13 {
		t.Errorf("removed %d items, want 13", len(removed))
	}
}

// A cargo build loops (switching configurations, so each build orphans the other's folders) while
// clean runs again and again: every clean is done or refused (exit 3 in the CLI), every build
// succeeds, and the binary runs.
func TestCleanWhileCargoBuildsConcurrently(t *testing.T) {
	newSentinel(t)
	p := s02(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var buildErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(stop)
		for i := 0; i < 6; i++ {
			args := []string{"build", "--release"}
			if i%2 == 0 {
				args = append(args, "--features", "timing")
			}
			if out, err := p.CargoErr(args...); err != nil {
				buildErr = errors.New(strings.Join(args, " ") + ": " + err.Error() + "\n" + out)
				return
			}
		}
	}()
	var done, refused int
	l := layout(t, p)
loop:
	for {
		select {
		case <-stop:
			break loop
		default:
		}
		_, err := clean.Run(clean.Request{Layout: l, Yes: true})
		switch {
		case err == nil:
			done++
		case errors.Is(err, clean.ErrLocked):
			refused++
			time.Sleep(5 * time.Millisecond)
		default:
			t.Fatalf("clean: %v", err)
		}
	}
	wg.Wait()
	if buildErr != nil {
		t.Fatalf("a cargo build failed while clean ran: %v", buildErr)
	}
	t.Logf("%d cleans done, %d refused while cargo held the lock", done, refused)
	if done == 0 {
		t.Error("no clean ran between the builds")
	}
	if got := runBin(t, p.Path("target/release/app")); got != "1" {
		t.Fatalf("app prints %q", got)
	}
	runClean(t, p, clean.Request{Yes: true})
	assertFresh(t, p, "build", "--release")
}
