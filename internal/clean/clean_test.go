package clean_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/clean"
)

// S02: the release default configuration is orphaned by the timing build. The plan is exactly its
// units (run and compile folders, the four .fingerprint folders, the deps/ files of the lib and the
// bin); after --yes every configuration that was live (release timing, debug, the debug test
// binaries) is still Fresh, and the binary runs.
func TestCleanS02KeepsLiveConfigurationsFresh(t *testing.T) {
	newSentinel(t)
	p := s02(t)
	plan := runClean(t, p, clean.Request{})
	if got, want := strings.Join(rels(plan, clean.Planned), "\n"), strings.Join(fixtureOrphans, "\n"); got != want {
		t.Fatalf("planned:\n%s\nwant the release default configuration's entries:\n%s", got, want)
	}
	if len(fixtureOrphans) != 11 {
		t.Fatalf("the fixture orphans %d entries, want 11 (2 build folders, 4 fingerprints, 5 deps files): %v", len(fixtureOrphans), fixtureOrphans)
	}
	if plan.Executed || strings.Join(plan.Profiles, ",") != "debug,release" || len(plan.Locks) != 2 {
		t.Fatalf("profiles %v locks %v executed %v", plan.Profiles, plan.Locks, plan.Executed)
	}
	var total int64
	for _, it := range plan.Items {
		st, err := os.Lstat(it.Path)
		if err != nil {
			t.Fatalf("a dry run removed %s", it.Path)
		}
		if !st.IsDir() && it.Bytes != st.Size() {
			t.Errorf("%s: %d bytes, want %d", it.Rel, it.Bytes, st.Size())
		}
		total += it.Bytes
	}
	if total != plan.TotalBytes || total == 0 {
		t.Fatalf("total %d, sum %d", plan.TotalBytes, total)
	}

	done := runClean(t, p, clean.Request{Yes: true})
	if got := strings.Join(rels(done, clean.Removed), "\n"); got != strings.Join(fixtureOrphans, "\n") {
		t.Fatalf("removed:\n%s", got)
	}
	if done.FreedBytes != plan.TotalBytes {
		t.Errorf("freed %d, planned %d", done.FreedBytes, plan.TotalBytes)
	}
	for _, rel := range fixtureOrphans {
		if _, err := os.Lstat(p.Path(filepath.Join("target", rel))); !os.IsNotExist(err) {
			t.Errorf("%s still exists", rel)
		}
	}
	assertFresh(t, p, "build", "--release", "--features", "timing")
	assertFresh(t, p, "build")
	assertFresh(t, p, "test", "--no-run")
	if got := runBin(t, p.Path("target/release/app")); got != "1" {
		t.Fatalf("app prints %q", got)
	}
	if again := runClean(t, p, clean.Request{}); len(again.Items) != 0 {
		t.Fatalf("a second plan is not empty: %v", rels(again, clean.Planned))
	}
}

// A plan written as JSON and executed later is checked again: items that became live since (the user
// built the default configuration again) are skipped and reported; rels outside the build folder or
// naming live folders are refused.
func TestCleanPlanFileIsRechecked(t *testing.T) {
	s := newSentinel(t)
	p := s02(t)
	plan := runClean(t, p, clean.Request{})
	data, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile clean.Plan
	if err := json.Unmarshal(data, &fromFile); err != nil {
		t.Fatal(err)
	}
	// Tampered items: a path outside the build folder, and a live folder.
	escape := fromFile.Items[0]
	rel, _ := filepath.Rel(p.Path("target"), s.Dir)
	escape.Rel, escape.RelBytes = rel, ""
	live := fromFile.Items[0]
	live.Rel, live.RelBytes = "release/deps", ""
	fromFile.Items = append(fromFile.Items, escape, live)

	// The default configuration is built again: its units are live now, the timing ones orphaned.
	p.Cargo("build", "--release")
	done := runClean(t, p, clean.Request{Plan: &fromFile, Yes: true})
	if got := rels(done, clean.Removed); len(got) != 0 {
		t.Fatalf("removed %v, want nothing (every planned item is live now)", got)
	}
	for _, it := range done.Items {
		r, _ := it.RelPath()
		switch {
		case r == rel:
			if it.Reason != "not inside the build folder" {
				t.Errorf("escape: %q", it.Reason)
			}
		case r == "release/deps":
			if !strings.HasPrefix(it.Reason, "no longer planned") {
				t.Errorf("live folder: %q", it.Reason)
			}
		case it.Kind == clean.KindBuildDir || it.Kind == clean.KindFingerprint:
			if !strings.Contains(it.Reason, "it is live now: ") || !strings.Contains(it.Reason, "is reached by "+p.Path("target/release/")) {
				t.Errorf("%s: %q", r, it.Reason)
			}
		}
		if it.Status != clean.Skipped {
			t.Errorf("%s: status %s", r, it.Status)
		}
	}
	assertFresh(t, p, "build", "--release")
	// A fresh plan now names the timing configuration instead.
	fresh := runClean(t, p, clean.Request{Yes: true})
	if n := len(rels(fresh, clean.Removed)); n != 11 {
		t.Fatalf("removed %d items of the timing configuration, want 11", n)
	}
	runs := 0
	for _, it := range fresh.Items {
		if strings.Contains(it.What, "build-script run of seed-sys") {
			runs++
			if !strings.Contains(it.What, `build-script run of seed-sys (features ["timing"])`) {
				t.Errorf("%s: %q does not name the run's configuration", it.Rel, it.What)
			}
		}
	}
	if runs != 2 {
		t.Errorf("%d items describe the timing run (its folder and fingerprint), want 2", runs)
	}
	assertFresh(t, p, "build", "--release")
}

// A planned file written again in place after the plan was made (same inode: what ext4 gives a file made
// anew after the planned one was removed, too) is not the file planned: --yes with that plan leaves it,
// saying so (it removed the new file and reported the old size).
func TestCleanPlanFileRewrittenInPlace(t *testing.T) {
	p := s02(t)
	plan := runClean(t, p, clean.Request{})
	var file *clean.Item
	for i := range plan.Items {
		if it := &plan.Items[i]; it.Status == clean.Planned && !it.Dir && file == nil {
			file = it
		}
	}
	if file == nil {
		t.Fatal("the premise fails: no planned file")
	}
	time.Sleep(20 * time.Millisecond) // past a coarse ctime tick
	if err := os.WriteFile(file.Path, []byte("user data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := runClean(t, p, clean.Request{Plan: plan, Yes: true})
	for _, it := range done.Items {
		if it.Path == file.Path && (it.Status != clean.Skipped || !strings.Contains(it.Reason, "made anew")) {
			t.Errorf("%s, rewritten after the plan: %s %q", it.Rel, it.Status, it.Reason)
		}
	}
	if data, err := os.ReadFile(file.Path); err != nil || string(data) != "user data\n" {
		t.Errorf("the rewritten file: %q, %v", data, err)
	}
}

// --profile limits the plan to one profile folder; --incremental adds its incremental caches.
func TestCleanProfileAndIncremental(t *testing.T) {
	newSentinel(t)
	p := s02(t)
	p.Cargo("build", "--features", "timing") // orphans the debug default configuration too
	debug := runClean(t, p, clean.Request{Options: clean.Options{Profile: "dev"}})
	if strings.Join(debug.Profiles, ",") != "debug" || len(debug.Items) == 0 {
		t.Fatalf("profiles %v items %d", debug.Profiles, len(debug.Items))
	}
	for _, it := range debug.Items {
		if it.Profile != "debug" || !strings.HasPrefix(it.Rel, "debug/") {
			t.Errorf("--profile dev planned %s", it.Rel)
		}
		if it.Kind == clean.KindIncremental {
			t.Errorf("incremental item without --incremental: %s", it.Rel)
		}
	}
	inc := runClean(t, p, clean.Request{Options: clean.Options{Profile: "debug", Incremental: true}, Yes: true})
	n := 0
	for _, it := range inc.Items {
		if it.Kind == clean.KindIncremental {
			n++
			if it.Status != clean.Removed || !strings.HasPrefix(it.Rel, "debug/incremental/") {
				t.Errorf("%s: %s %s", it.Rel, it.Status, it.Reason)
			}
		}
	}
	if n == 0 {
		t.Fatal("no incremental cache planned")
	}
	if ents, _ := os.ReadDir(p.Path("target/debug/incremental")); len(ents) != 0 {
		t.Fatalf("incremental caches left: %d", len(ents))
	}
	// The release folder is untouched: its orphans are still there.
	for _, rel := range fixtureOrphans {
		if _, err := os.Lstat(p.Path(filepath.Join("target", rel))); err != nil {
			t.Errorf("--profile debug removed %s", rel)
		}
	}
	assertFresh(t, p, "build", "--features", "timing")
	if _, err := clean.Run(clean.Request{Layout: layout(t, p), Options: clean.Options{Profile: "nosuch"}}); err == nil || !strings.Contains(err.Error(), `no profile folder "nosuch"`) {
		t.Fatalf("--profile nosuch: %v", err)
	}
}

// A folder that is not a Cargo target folder is refused, and so is a symlink to one; a held
// .cargo-lock refuses the clean and nothing is removed.
func TestCleanRefuses(t *testing.T) {
	newSentinel(t)
	fake := t.TempDir()
	os.MkdirAll(filepath.Join(fake, "release", ".fingerprint"), 0o755)
	_, err := clean.Run(clean.Request{Layout: &cargo.Layout{TargetDir: fake, BuildDir: fake}})
	if !errors.Is(err, clean.ErrNotTarget) {
		t.Fatalf("a folder without Cargo's marks: %v", err)
	}
	p := s02(t)
	link := filepath.Join(t.TempDir(), "target-link")
	if err := os.Symlink(p.Path("target"), link); err != nil {
		t.Fatal(err)
	}
	_, err = clean.Run(clean.Request{Layout: &cargo.Layout{TargetDir: link, BuildDir: link}, Yes: true})
	if !errors.Is(err, clean.ErrNotTarget) {
		t.Fatalf("a symlink to the target folder: %v", err)
	}
	// Hold the release lock as cargo does.
	f, err := os.OpenFile(p.Path("target/release/.cargo-lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	_, err = clean.Run(clean.Request{Layout: layout(t, p), Yes: true})
	if !errors.Is(err, clean.ErrLocked) || !strings.Contains(err.Error(), p.Path("target/release/.cargo-lock")) {
		t.Fatalf("with the lock held: %v", err)
	}
	for _, rel := range fixtureOrphans {
		if _, err := os.Lstat(p.Path(filepath.Join("target", rel))); err != nil {
			t.Errorf("a refused clean removed %s", rel)
		}
	}
	// --profile debug does not need the release lock.
	if _, err := clean.Run(clean.Request{Layout: layout(t, p), Options: clean.Options{Profile: "debug"}}); err != nil {
		t.Fatalf("--profile debug with the release lock held: %v", err)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	runClean(t, p, clean.Request{Yes: true})
}
