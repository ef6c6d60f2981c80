package clean_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/clean"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// unitFolders lists target/<prof>/build/<pkg>/<hash> (new layout) relative to target/.
func unitFolders(target, prof string) map[string]bool {
	out := map[string]bool{}
	m, _ := filepath.Glob(filepath.Join(target, prof, "build", "*", "*"))
	for _, p := range m {
		if rel, err := filepath.Rel(target, p); err == nil {
			out[rel] = true
		}
	}
	return out
}

// S02 in Cargo's new build-dir layout: release without, then with the timing feature, plus debug and
// `cargo test --no-run`. The dry-run plan is exactly the unit folders of the release default
// configuration (build/<pkg>/<hash>: the build-script compile and run as build-dir items, the lib and
// bin units as unit-dir items), every item inside the validated build folder; --yes removes exactly
// those and every live configuration stays Fresh.
func TestCleanNewLayoutKeepsLiveConfigurationsFresh(t *testing.T) {
	newSentinel(t)
	var p *testutil.Project
	testutil.InNewLayout(t, func(t *testing.T) {
		p = testutil.NewProject(t, testutil.SysCrate("seed-sys", "groth16_cuda", map[string]string{"cuda/groth16.c": "int native_run(void) { return 1; }\n"},
			nil, []string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=cuda"}))
	})
	if !p.NewLayout {
		t.Fatal("the project does not build in the new layout")
	}
	p.Cargo("build", "--release")
	p.Cargo("build")
	p.Cargo("test", "--no-run")
	target := p.Path("target")
	first := unitFolders(target, "release")
	used := usedFolders(t, target, p.Cargo("build", "--release", "--features", "timing", "--message-format=json"))
	if _, err := os.Stat(filepath.Join(target, "release", ".fingerprint")); !os.IsNotExist(err) {
		t.Fatalf("the premise fails: the new layout has a .fingerprint folder (%v)", err)
	}
	// The release default configuration's folders that the timing build does not use (cc's lib unit
	// is the same in both).
	var want []string
	for rel := range first {
		if !used[rel] {
			want = append(want, rel)
		}
	}
	sort.Strings(want)
	if len(want) != 4 {
		t.Fatalf("the fixture orphans %d unit folders, want 4 (seed-sys's build-script compile, run and lib, app's bin): %v", len(want), want)
	}
	plan := runClean(t, p, clean.Request{})
	if got := strings.Join(rels(plan, clean.Planned), "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("planned:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	kinds := map[string]int{}
	for _, it := range plan.Items {
		kinds[it.Kind]++
		if !strings.HasPrefix(it.Path, plan.BuildDir+string(filepath.Separator)) || !filepath.IsLocal(it.Rel) {
			t.Errorf("item %s lies outside the build folder %s", it.Path, plan.BuildDir)
		}
		if _, err := os.Lstat(it.Path); err != nil {
			t.Fatalf("a dry run removed %s", it.Path)
		}
	}
	if kinds[clean.KindBuildDir] != 2 || kinds[clean.KindUnitDir] != 2 || kinds[clean.KindFingerprint] != 0 || kinds[clean.KindDepsFile] != 0 {
		t.Fatalf("item kinds %v, want 2 build-dir (the script's compile and run) and 2 unit-dir (seed-sys lib, app bin)", kinds)
	}
	if plan.Executed || plan.TotalBytes == 0 {
		t.Fatalf("executed %v, total %d", plan.Executed, plan.TotalBytes)
	}
	done := runClean(t, p, clean.Request{Yes: true})
	if got, planned := strings.Join(rels(done, clean.Removed), "\n"), strings.Join(rels(plan, clean.Planned), "\n"); got != planned {
		t.Fatalf("removed:\n%s\nplanned:\n%s", got, planned)
	}
	for _, rel := range rels(plan, clean.Planned) {
		if _, err := os.Lstat(filepath.Join(target, rel)); !os.IsNotExist(err) {
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

// usedFolders returns the unit folders (relative to target/) that a cargo --message-format=json
// build's messages name: the files of each compiler-artifact and the out_dir of each build-script run
// lie in build/<pkg>/<hash>/ in the new layout.
func usedFolders(t *testing.T, target, jsonLines string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	add := func(p string) {
		rel, err := filepath.Rel(target, p)
		parts := strings.Split(rel, string(filepath.Separator))
		if err != nil || len(parts) < 4 || parts[1] != "build" {
			return
		}
		out[filepath.Join(parts[:4]...)] = true
	}
	for _, line := range strings.Split(jsonLines, "\n") {
		var m struct {
			Reason    string   `json:"reason"`
			Filenames []string `json:"filenames"`
			OutDir    string   `json:"out_dir"`
		}
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		for _, f := range m.Filenames {
			add(f)
		}
		if m.OutDir != "" {
			add(m.OutDir)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no unit folder named by cargo's messages:\n%s", jsonLines)
	}
	return out
}
