package check_test

import (
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

// Three copies of libx.a in one profile: the default one, a feature variant with other code, and a
// RUSTFLAGS variant made last with the default's code. Built back in the default configuration, the
// binary holds the default content, which is also the newest copy's: nothing is stale, and no
// linked-copy-not-newest is reported (the truth harness found it as a false error).
func TestLinkedCopyOfNewestContent(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	p.Cargo("build")
	p.Cargo("build", "--features", "app/fast")
	p.Env = append(p.Env, "RUSTFLAGS=--cfg truth_rf")
	p.Cargo("build")
	p.Env = p.Env[:len(p.Env)-1]
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	none(t, fs, "linked-copy-not-newest")
}
