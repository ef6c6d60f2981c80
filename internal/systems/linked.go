package systems

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/gocgo"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// LinkedCargo is a Cargo target folder a Go binary links a library from (gocgo.CargoOrigin), found
// outside what Detect saw at or above PATH: a staticlib or cdylib of a sibling Rust workspace.
type LinkedCargo struct {
	// TargetDir is the Cargo target folder; Workspace the folder above it holding Cargo.toml ("" when
	// the target folder lies elsewhere, as with CARGO_TARGET_DIR: then the target folder is read bare).
	TargetDir, Workspace string
	// Libraries are the linked files inside it (absolute), and Binaries the Go binaries linking them,
	// both sorted.
	Libraries, Binaries []string
}

// linkedCargo lists the Cargo target folders the Go graphs' binaries link libraries from, less those in
// have (target folders already read), sorted by target folder.
func linkedCargo(gs []*graph.Graph, have map[string]bool) []LinkedCargo {
	by := map[string]*LinkedCargo{}
	libs := map[string]map[string]bool{}
	bins := map[string]map[string]bool{}
	add := func(o *gocgo.CargoOrigin, lib, bin string) {
		td := filepath.Clean(o.TargetDir)
		if by[td] == nil {
			by[td] = &LinkedCargo{TargetDir: td, Workspace: o.Workspace}
			libs[td], bins[td] = map[string]bool{}, map[string]bool{}
		}
		libs[td][lib] = true
		if bin != "" {
			bins[td][bin] = true
		}
	}
	for _, g := range gs {
		// Any system's step that links a library from a Cargo target folder (a Make or Ninja program
		// linking a staticlib by its path), the same way as Go's link reports below.
		if g.System != unit.System {
			for _, s := range g.Steps {
				for _, in := range s.Inputs {
					p := in.File.Path
					if !strings.HasSuffix(p, ".a") && !strings.HasSuffix(p, ".so") {
						continue
					}
					o := gocgo.CargoOriginOf(p)
					if o == nil || o.TargetDir == "" || have[filepath.Clean(o.TargetDir)] {
						continue
					}
					for _, r := range s.Roots {
						add(o, p, r.File.Path)
					}
					if len(s.Roots) == 0 {
						add(o, p, "")
					}
				}
			}
		}
		tree, _ := g.Origins[gocgo.System].(*gocgo.Tree)
		if tree == nil {
			continue
		}
		for _, rep := range tree.Reports {
			if rep == nil {
				continue
			}
			for _, lib := range rep.Link.Libraries {
				o := lib.Cargo
				if o == nil || o.TargetDir == "" || have[filepath.Clean(o.TargetDir)] {
					continue
				}
				td := filepath.Clean(o.TargetDir)
				if by[td] == nil {
					by[td] = &LinkedCargo{TargetDir: td, Workspace: o.Workspace}
					libs[td], bins[td] = map[string]bool{}, map[string]bool{}
				}
				libs[td][lib.Path] = true
				if rep.Link.Binary != nil {
					bins[td][rep.Link.Binary.Path] = true
				}
			}
		}
	}
	var out []LinkedCargo
	for td, lc := range by {
		lc.Libraries, lc.Binaries = sortedKeys(libs[td]), sortedKeys(bins[td])
		out = append(out, *lc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TargetDir < out[j].TargetDir })
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// readLinkedCargo reads one linked Cargo build: its workspace with the linked target folder (or the
// bare target folder), through cargo.Locate and cargo.Read as readCargo does. The note says what was
// pulled in and why.
func readLinkedCargo(_ context.Context, lc LinkedCargo, opt Options) (*graph.Graph, string, error) {
	at := lc.Workspace
	if at == "" {
		at = lc.TargetDir
	}
	layout, err := cargo.Locate(at, cargo.LocateOptions{TargetDir: lc.TargetDir})
	if err != nil {
		return nil, "", fmt.Errorf("the Cargo build at %s that %s link(s) from: %w", lc.TargetDir, joinShort(lc.Binaries), err)
	}
	g, err := cargo.Read(layout, cargo.ReadOptions{SkipNative: opt.NoNative, OnLockWait: opt.OnCargoLockWait})
	if err != nil {
		return nil, "", fmt.Errorf("the Cargo build at %s that %s link(s) from: %w", lc.TargetDir, joinShort(lc.Binaries), err)
	}
	note := fmt.Sprintf("%s build at %s read as well: %s link(s) %s from it", unit.System, lc.TargetDir, joinShort(lc.Binaries), joinShort(lc.Libraries))
	return g, note, nil
}

func joinShort(xs []string) string {
	switch len(xs) {
	case 0:
		return "(none)"
	case 1:
		return xs[0]
	case 2:
		return xs[0] + " and " + xs[1]
	}
	return fmt.Sprintf("%s, %s and %d more", xs[0], xs[1], len(xs)-2)
}

// pullLinkedCargo adds to gs the Cargo builds the Go graphs' binaries link libraries from that no graph
// in gs is (by target folder), Cargo's graphs kept first (Merge takes the workspace and folders from
// the first graph). A linked build that cannot be read is a problem naming its target folder; with
// --system leaving Cargo out, a note names what was not read.
func pullLinkedCargo(ctx context.Context, gs []*graph.Graph, notes []string, failed []graph.Problem, want map[string]bool, opt Options) ([]*graph.Graph, []string, []graph.Problem) {
	have := map[string]bool{}
	ncargo := 0
	for _, g := range gs {
		if g.System == unit.System {
			ncargo++
			if g.TargetDir != "" {
				have[filepath.Clean(g.TargetDir)] = true
			}
		}
	}
	for _, lc := range linkedCargo(gs, have) {
		if len(want) > 0 && !want[unit.System] {
			notes = append(notes, fmt.Sprintf("%s link(s) %s from the Cargo build at %s: not read (--system leaves cargo out)", joinShort(lc.Binaries), joinShort(lc.Libraries), lc.TargetDir))
			continue
		}
		g, note, err := readLinkedCargo(ctx, lc, opt)
		if err != nil {
			failed = append(failed, graph.Problem{Path: lc.TargetDir, Err: err.Error()})
			continue
		}
		notes = append(notes, note)
		gs = append(gs[:ncargo], append([]*graph.Graph{g}, gs[ncargo:]...)...)
		ncargo++
	}
	return gs, notes, failed
}
