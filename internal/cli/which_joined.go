package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/systems"
)

// joinedLookUp is how many folders above a binary `which` and `run` look for the build that made it.
const joinedLookUp = 4

// joinedRoot reads the joined graph (systems.ReadAll, every system found; Cargo builds a Go binary
// links from are pulled in) of the nearest folder at or up to joinedLookUp folders above the binary's
// that holds a Make, Ninja or Go build itself (systems.BuildAbove), and returns it with the root of
// another system than Cargo that is the binary (same path, or same device and inode). nil, nil when
// there is no such build or it has no such root; the error is the reader's.
func joinedRoot(ctx context.Context, binary string, opt systems.Options) (*graph.Graph, *graph.Root, error) {
	d := systems.BuildAbove(filepath.Dir(binary), joinedLookUp)
	if d == "" {
		return nil, nil, nil
	}
	g, _, err := systems.ReadAll(ctx, d, nil, opt)
	if err != nil {
		return nil, nil, err
	}
	if r := evidence.FindRoot(g, binary); r != nil && r.Step != nil && r.Step.System != unit.System {
		return g, r, nil
	}
	return nil, nil, nil
}

// joinedWhichLibraries answers `which` for a Go binary or a Make/Ninja program: the static libraries
// its link step links and every copy of each the joined graph knows (evidence.LinkedArchives). ok is
// false when no build of another system has the binary as a root (the caller then reports Cargo's
// error); with ok, err is the answer's own error (no static library, no readable copy).
func joinedWhichLibraries(binary string, fl whichFlags) (libs []evidence.Library, notes []string, ok bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g, root, _ := joinedRoot(ctx, binary, systems.Options{NoNative: true})
	if root == nil {
		return nil, nil, false, nil
	}
	libs = evidence.LinkedArchives(g, root, fl.lib)
	w := root.Step.Words()
	if len(libs) == 0 {
		if fl.lib != "" {
			return nil, nil, true, fmt.Errorf("%s (%s build) does not link lib%s.a; give --candidate", binary, w.Tool, evidence.LibName(fl.lib))
		}
		var shared []string
		for _, in := range root.Step.Inputs {
			if b := filepath.Base(in.File.Path); strings.Contains(b, ".so") {
				shared = append(shared, b)
			}
		}
		n := fmt.Sprintf("its %s link step (%s) links no static library", w.Tool, root.Step.Name)
		if len(shared) > 0 {
			n += ", only shared ones (" + strings.Join(shared, ", ") + ")"
		}
		return nil, []string{n}, true, nil
	}
	for _, n := range g.Notes {
		if strings.Contains(n, "read as well") {
			notes = append(notes, n)
		}
	}
	return libs, notes, true, nil
}

// within reports whether p lies in dir (or is dir); false for an empty dir.
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}
