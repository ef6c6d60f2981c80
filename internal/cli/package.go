package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// forPackages keeps the findings about the named packages (`check -p NAME`, as Cargo's -p selects
// packages): a finding is about a package when one of the binaries it affects is built by one of its
// units, or one of its subjects lies in a folder of one of its units (a run or fingerprint folder, the
// package's own folder). An unknown name is an error that lists the packages the build has.
func forPackages(g *graph.Graph, fs []check.Finding, pkgs []string) ([]check.Finding, error) {
	if len(pkgs) == 0 {
		return fs, nil
	}
	known := map[string]bool{}
	roots := map[string]bool{}
	var dirs []string
	for _, s := range g.Steps {
		if s.Package == "" {
			continue
		}
		known[s.Package] = true
		if !slices.Contains(pkgs, s.Package) {
			continue
		}
		for _, d := range []string{s.Script().RunDir, s.RecordDir, s.PackageRoot} {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
		for _, r := range g.Roots {
			if r.Step == s {
				roots[r.File.Path] = true
			}
		}
	}
	for _, b := range g.BuildDirs { // a build-script compile's folder, or a run's, by the package it belongs to
		if slices.Contains(pkgs, b.Package) {
			dirs = append(dirs, b.Path)
		}
	}
	for _, p := range pkgs {
		if !known[p] {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("-p %s: no package of that name in this build (it has: %s)", p, strings.Join(names, ", "))
		}
	}
	var out []check.Finding
	for _, f := range fs {
		keep := slices.ContainsFunc(f.Roots, func(r string) bool { return roots[r] })
		for _, sub := range f.Subjects {
			keep = keep || slices.ContainsFunc(dirs, func(d string) bool {
				return sub == d || strings.HasPrefix(sub, d+string(filepath.Separator))
			})
		}
		if keep {
			out = append(out, f)
		}
	}
	return out, nil
}
