package check

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// setChange names, for each finding, the file the user changes to settle it (Finding.Change): the
// first of its subjects, then of its evidence, that is a file (or folder) of the sources rather than something the
// build made; where every one is a build output (two copies of a library, an orphaned folder), the build
// description of the step that made the first subject: its package's manifest, else the file that
// defines its command (a makefile), else its build script; failing all, the workspace's manifest.
// Code scanning shows this file's lines for the alert (report.NewSarifLog).
func setChange(g *graph.Graph, fs []Finding) {
	if g == nil {
		return
	}
	built := map[string]bool{}
	for _, s := range g.Steps {
		for _, o := range s.Outputs {
			built[o.Path] = true
		}
	}
	for _, r := range g.Roots {
		built[r.File.Path] = true
	}
	generated := func(p string) bool {
		if built[p] {
			return true
		}
		for _, d := range []string{g.TargetDir, g.BuildDir} {
			if d != "" && (p == d || strings.HasPrefix(p, d+string(filepath.Separator))) {
				return true
			}
		}
		return false
	}
	source := func(p string) bool {
		if p == "" || !filepath.IsAbs(p) || generated(p) {
			return false
		}
		st, err := os.Stat(p)
		return err == nil && (st.Mode().IsRegular() || st.IsDir()) // a declared source folder too
	}
	for i := range fs {
		f := &fs[i]
		if f.Change != "" {
			continue
		}
		for _, s := range f.Subjects {
			if source(s) {
				f.Change = s
				break
			}
		}
		for _, e := range f.Evidence {
			if f.Change == "" && source(e.Path) {
				f.Change = e.Path
			}
		}
		if f.Change == "" && len(f.Subjects) > 0 {
			if s := ownerStep(g, f.Subjects[0]); s != nil {
				for _, c := range []string{manifestOf(s), s.CommandFrom, s.Script.ScriptSource} {
					if source(c) {
						f.Change = c
						break
					}
				}
			}
		}
		if f.Change == "" && g.Workspace != "" && source(filepath.Join(g.Workspace, "Cargo.toml")) {
			f.Change = filepath.Join(g.Workspace, "Cargo.toml")
		}
	}
}

func manifestOf(s *graph.Step) string {
	if s.PackageRoot == "" {
		return ""
	}
	return filepath.Join(s.PackageRoot, "Cargo.toml")
}

// ownerStep is the step that made p: one whose output it is, or whose run, output or record folder
// holds it.
func ownerStep(g *graph.Graph, p string) *graph.Step {
	in := func(dir string) bool {
		return dir != "" && (p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)))
	}
	for _, s := range g.Steps {
		for _, o := range s.Outputs {
			if o.Path == p {
				return s
			}
		}
	}
	for _, s := range g.Steps {
		if in(s.Script.RunDir) || in(s.Script.OutDir) || in(s.RecordDir) {
			return s
		}
	}
	return nil
}
