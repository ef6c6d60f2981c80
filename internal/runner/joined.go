package runner

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/systems"
)

// joinedGraph reads, for a program no Cargo workspace is found for, the joined graph of the first
// start folder (the first --binary's folder, the program's, the working folder) that holds a Make,
// Ninja or Go build itself (systems.BuildAbove with no folder up: Cargo builds a Go binary links from
// come along): `run` then checks a Go binary or a Make/Ninja program as `check` would and refuses it
// when stale. A program installed from such a build (CMake's or Meson's install records list it: an
// inst/bin/app beside the project's build/) is read with the build that installed it, and one in a folder
// of a build a few folders up whose binaries include it (build/Release/app) with that build. nil when no
// start folder has such a build; the error is the reader's.
func joinedGraph(ctx context.Context, starts []string, program, stateDir string) (*graph.Graph, error) {
	for _, s := range starts {
		d := systems.BuildAbove(s, 0)
		if d == "" {
			continue
		}
		g, _, err := systems.ReadAll(ctx, d, nil, systems.Options{StateDir: stateDir})
		if err != nil {
			return nil, err
		}
		return g, nil
	}
	// A build folder that puts its programs in folders of their own (CMake's Ninja Multi-Config:
	// build/Release/app): the nearest build a few folders above the program, when the program is one of
	// its binaries.
	if d := systems.BuildAbove(filepath.Dir(program), 2); d != "" {
		g, _, err := systems.ReadAll(ctx, d, nil, systems.Options{StateDir: stateDir})
		if err == nil && slices.ContainsFunc(g.Roots, func(r *graph.Root) bool { return r.File.Path == program }) {
			return g, nil
		}
	}
	if d := systems.InstalledFrom(program, starts[len(starts)-1:], 3); d != "" {
		g, _, err := systems.ReadAll(ctx, d, nil, systems.Options{StateDir: stateDir})
		return g, err
	}
	return nil, nil
}
