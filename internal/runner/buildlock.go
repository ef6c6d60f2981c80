package runner

import (
	"path/filepath"

	"github.com/stalecheck/stalecheck/internal/cargo"
)

// BuildRunning reports a Cargo build in progress over the binaries that matter: Cargo holds the
// `.cargo-lock` of a profile folder (beside the binaries it uplifts there) for the whole build, while it
// rewrites fingerprints and replaces the binaries, so a check then can call the old binary fresh and the
// command may start the old or the new one. It returns the first lock held. The lock is only probed
// (a shared flock taken and dropped at once, never created), so Cargo is not held up.
func (p *Plan) BuildRunning() (lock string, running bool) {
	seen := map[string]bool{}
	for _, m := range p.Matter {
		lp := filepath.Join(filepath.Dir(m), ".cargo-lock")
		if seen[lp] {
			continue
		}
		seen[lp] = true
		if cargo.BuildRunning(lp) {
			return lp, true
		}
	}
	return "", false
}
