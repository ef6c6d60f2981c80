package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestCheckProfile: --profile reads one profile folder (by profile name or folder), the report says
// which, and a name the build folder lacks is exit 2 naming the folders it has. The release build is
// stale (hot.c edited after it, build.rs declares only itself), the debug build, made after, is not.
func TestCheckProfile(t *testing.T) {
	runEnv(t)
	p := hotProject(t) // built --release
	p.Edit("hot-sys/csrc/hot.c", "i < 1000", "i < 2000")
	p.Cargo("build", "--release") // Fresh: the edit is not watched
	p.Cargo("build")
	type report struct {
		Profiles []string `json:"profiles"`
		Findings []struct {
			Severity string   `json:"severity"`
			Roots    []string `json:"roots"`
		} `json:"findings"`
	}
	errRoots := func(args ...string) ([]string, []string) {
		t.Helper()
		out, errs, code := runIn(t, p.Dir, append([]string{"check", "--format", "json", "--fail-on", "none"}, args...)...)
		if code != 0 {
			t.Fatalf("check %v: exit %d: %s", args, code, errs)
		}
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("check %v: %v", args, err)
		}
		var roots []string
		for _, f := range r.Findings {
			if f.Severity == "error" {
				roots = append(roots, f.Roots...)
			}
		}
		return r.Profiles, roots
	}
	_, all := errRoots()
	if slices.Contains(all, p.Path("target/debug/app")) || !slices.Contains(all, p.Path("target/release/app")) {
		t.Fatalf("the premise fails: error roots of the whole check %v", all)
	}
	for _, c := range []struct {
		flag, folder string
		stale        bool
	}{{"dev", "debug", false}, {"debug", "debug", false}, {"release", "release", true}, {"bench", "release", true}} {
		profs, roots := errRoots("--profile", c.flag)
		if !slices.Equal(profs, []string{c.folder}) {
			t.Errorf("--profile %s read %v", c.flag, profs)
		}
		if got := slices.Contains(roots, p.Path("target/"+c.folder+"/app")); got != c.stale {
			t.Errorf("--profile %s: error roots %v, want the app's %v", c.flag, roots, c.stale)
		}
	}
	_, errs, code := runIn(t, p.Dir, "check", "--profile", "nightly")
	if code != 2 || !strings.Contains(errs, `no profile folder "nightly"`) || !strings.Contains(errs, "debug, release") {
		t.Errorf("--profile nightly: exit %d: %s", code, errs)
	}
}
