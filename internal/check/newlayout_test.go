package check_test

import (
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// The main rules' scenario tests again, every cargo command of them run in Cargo's new build-dir
// layout (`RUSTC_BOOTSTRAP=1 cargo -Zbuild-dir-new-layout`, docs/cargo-new-layout.md): the same
// findings, paths and fixes, read from `build/<pkg>/<hash>/{fingerprint,out,run}`. The whole suite can
// run in the new layout with STALECHECK_TEST_CARGO_LAYOUT=new.
func TestNewLayoutScenarios(t *testing.T) {
	need.RealBuild(t)
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"untracked-input-changed/S01", TestS01UntrackedEditedSource},
		{"untracked-input-changed/S04", TestS04UndeclaredHeader},
		{"untracked-input-changed/copied-workspace", TestCopiedWorkspaceDepfilePaths},
		{"duplicate-native-artifact/S02", TestS02TwoCopiesWhichIsLinked},
		{"orphaned-build-dir", TestOrphanedBuildDir},
		{"pending-rebuild/rust-source", TestPendingRebuildRustSource},
		{"pending-rebuild/failed-after-edit", TestFailedBuildAfterEditIsStale},
		{"last-build-failed", TestLastBuildFailed},
		{"out-dir-leftover/S06", TestS06OutDirLeftover},
		{"rerun-scan-disabled/S03", TestS03EnvOnlyDirective},
		{"registry/psm", TestCleanBuildDebianPsm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := testutil.NewLayoutRuns()
			testutil.InNewLayout(t, tc.f)
			if testutil.NewLayoutRuns() == before {
				t.Fatal("the scenario ran no cargo command in the new layout")
			}
		})
	}
}
