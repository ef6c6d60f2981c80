package systems

import (
	"path/filepath"

	"github.com/stalecheck/stalecheck/internal/makefile"
	"github.com/stalecheck/stalecheck/internal/ninja"
)

// BuildAbove returns the nearest folder at or above dir, at most up folders up, that holds a Make, Ninja
// or Go build itself (a build.ninja, a makefile with built files beside it, a go.mod), or "" when none
// does. It looks at each folder alone, never below it, so a binary in a temporary or system folder
// costs a few stats, not a walk (which and run look for a binary's build this way, then ReadAll it).
func BuildAbove(dir string, up int) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for i := 0; i <= up; i++ {
		if ninja.IsBuildFolder(d) || isFile(filepath.Join(d, "go.mod")) {
			return d
		}
		if f, err := makefile.Detect(d); err == nil && f != nil {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			break
		}
		d = p
	}
	return ""
}
