package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

const scopeKernel = "int native_run(void) { return 7; }\n"

// TestRunScopesTheCheckToTheBinariesProfiles: the pre-run check reads the profile folders of the
// binaries that matter, and decides as a check of the whole build folder does. The debug build is
// stale (its native source was edited after it, and build.rs declares only itself), the release build,
// made after the edit, is not.
func TestRunScopesTheCheckToTheBinariesProfiles(t *testing.T) {
	p := testutil.NewProject(t, testutil.SysCrate("prover-sys", "groth16", map[string]string{"native/k.c": scopeKernel}, nil,
		[]string{"cargo:rerun-if-changed=build.rs"}))
	p.Cargo("build")
	p.Edit("prover-sys/native/k.c", "return 7", "return 8")
	p.Cargo("build", "--release")
	rel, dbg := p.Path("target/release/app"), p.Path("target/debug/app")
	outside := filepath.Join(t.TempDir(), "app")
	if err := os.Link(rel, outside); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	prepare := func(cmd []string, bins ...string) *Plan {
		t.Helper()
		plan, err := Prepare(context.Background(), Config{Dir: p.Dir, Command: cmd, Binaries: bins, StateDir: state,
			Environ: append(os.Environ(), p.Env...)})
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	for _, c := range []struct {
		name     string
		cmd      []string
		bins     []string
		profiles []string // folders read, as the build folder names them
		matter   []string
		stale    bool
	}{
		{"release binaries by default", []string{"true"}, nil, []string{"release"}, []string{rel}, false},
		{"the debug binary named", []string{dbg, "--n", "3"}, nil, []string{"debug"}, []string{dbg}, true},
		{"the release binary named", []string{rel}, nil, []string{"release"}, []string{rel}, false},
		{"both given with --binary", []string{"true"}, []string{rel, dbg}, []string{"debug", "release"}, []string{rel, dbg}, true},
		{"a hard link outside the target folder: everything read", []string{outside}, nil, []string{"debug", "release"}, []string{rel}, false},
	} {
		plan := prepare(c.cmd, c.bins...)
		if !slices.Equal(plan.Graph.ProfileDirs, c.profiles) {
			t.Errorf("%s: read %v, want %v", c.name, plan.Graph.ProfileDirs, c.profiles)
		}
		if !slices.Equal(plan.Matter, c.matter) {
			t.Errorf("%s: matter %v (%s), want %v", c.name, plan.Matter, plan.MatterHow, c.matter)
		}
		if plan.Stale() != c.stale {
			t.Errorf("%s: stale %v, want %v (blocking %v)", c.name, plan.Stale(), c.stale, plan.Blocking)
		}
	}
	// A dependency's records removed (cargo clean -p): pending-rebuild judges it by what the other
	// profile's units of it record, so everything is read.
	p.Cargo("clean", "-p", "prover-sys", "--release")
	if plan := prepare([]string{rel}); !slices.Equal(plan.Graph.ProfileDirs, []string{"debug", "release"}) {
		t.Errorf("after clean -p: read %v, want both profiles", plan.Graph.ProfileDirs)
	}
	// Only the debug profile left: `true` falls back to its binaries, read from the whole folder.
	p.Cargo("clean", "--release")
	if plan := prepare([]string{"true"}); !slices.Equal(plan.Graph.ProfileDirs, []string{"debug"}) || !plan.Stale() || plan.MatterHow != "binaries" {
		t.Errorf("debug only: read %v, matter %v (%s), stale %v", plan.Graph.ProfileDirs, plan.Matter, plan.MatterHow, plan.Stale())
	}
}
