package systems

import (
	"os"
	"path/filepath"

	"github.com/stalecheck/stalecheck/internal/install"
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

// InstalledFrom returns the build folder whose install records (internal/install) list prog as a copy
// it installed, looking at the folders directly under each of dirs and under each folder above prog,
// at most up folders up (a project's build/ beside its inst/), or "" when none does. A folder is read
// only when it holds a Make or Ninja build, so this costs a listing and a few stats per folder.
func InstalledFrom(prog string, dirs []string, up int) string {
	prog, err := filepath.Abs(prog)
	if err != nil {
		return ""
	}
	var look []string
	for d, i := filepath.Dir(prog), 0; i <= up; i++ {
		look = append(look, d)
		p := filepath.Dir(d)
		if p == d {
			break
		}
		d = p
	}
	look = append(look, dirs...)
	seen := map[string]bool{}
	for _, d := range look {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			sub := filepath.Join(d, e.Name())
			if !e.IsDir() || seen[sub] {
				continue
			}
			seen[sub] = true
			if !ninja.IsBuildFolder(sub) && !isFile(filepath.Join(sub, "Makefile")) {
				continue
			}
			_, copies := install.Records(sub)
			for _, c := range copies {
				if c.Installed == prog {
					return sub
				}
			}
		}
	}
	return ""
}
