package content

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// annotateGoneLibraries judges a library a live step links that is gone (`cargo clean -p` of a
// staticlib a Go program links: the program keeps a copy nothing on disk can be compared with) by the
// sources its last build read: the content baselines the store keeps for the runs that made it (keyed by
// step ID, "<profile>/<package>-<hash>/<target>", which outlive the records), the newest run of each
// target before the consumer was linked. A source whose content differs now means the consumer holds
// old code (ContentDiffers, Changed naming them), and so does a header a folder searched before one it
// read holds now (the run's search order, stepBaseline.Search); all the same, with the environment the
// run read unchanged, is ContentSame: rebuilding the library makes what the consumer holds. No baseline,
// no recorded search order, or a variable with another value: ContentUnknown.
func annotateGoneLibraries(g *graph.Graph, st *Store, dig *digest.Cache) {
	var runs map[string][]string
	for _, s := range g.Steps {
		if !s.Live() || !s.Reference.Exists {
			continue
		}
		for _, in := range s.Inputs {
			if in.File.Exists || in.Content != nil || !graph.LinkedLibrary(in) {
				continue
			}
			if runs == nil {
				runs = st.runsByStep()
			}
			in.Content = goneLibrary(g, st, dig, runs, in.File.Path, s.Written())
		}
	}
}

func goneLibrary(g *graph.Graph, st *Store, dig *digest.Cache, runs map[string][]string, lib string, before int64) *graph.InputContent {
	ic := &graph.InputContent{Verdict: graph.ContentUnknown}
	crate := libName(filepath.Base(lib))
	folder := filepath.Dir(lib)
	// The newest run before the link of each target of the package that made the library (its profile
	// folder is the library's folder).
	newest := map[string]string{} // target -> key
	for id, keys := range runs {
		prof, rest, ok := strings.Cut(id, "/")
		for ok && strings.Count(rest, "/") > 1 { // a <triple>/<profile> folder
			var p2 string
			p2, rest, _ = strings.Cut(rest, "/")
			prof += "/" + p2
		}
		unitDir, target, ok2 := strings.Cut(rest, "/")
		i := strings.LastIndexByte(unitDir, '-')
		if !ok || !ok2 || i <= 0 || strings.ReplaceAll(unitDir[:i], "-", "_") != crate || !strings.HasSuffix(folder, string(filepath.Separator)+prof) {
			continue
		}
		for _, k := range keys {
			ns := keyNS(k)
			if ns > before {
				continue
			}
			if cur, seen := newest[target]; !seen || ns > keyNS(cur) {
				newest[target] = k
			}
		}
	}
	compared := map[string]bool{}
	searched := len(newest) > 0
	var envNow []string
	for _, k := range newest {
		b, _ := st.c.Get(k)
		searched = searched && b.Searched
		for _, e := range b.Env {
			if unit.SetForScripts(e.Name) {
				continue // Cargo's own, from the unit's configuration: not in this environment
			}
			if v, set := os.LookupEnv(e.Name); !(graph.EnvRead{Name: e.Name, Value: v, Set: set}).Same(e) && !slices.Contains(envNow, e.Name) {
				envNow = append(envNow, e.Name)
			}
		}
		for rel, base := range b.Inputs {
			p := rel
			if !filepath.IsAbs(p) {
				p = filepath.Join(g.Workspace, rel)
			}
			if compared[p] {
				continue
			}
			compared[p] = true
			ic.Through = append(ic.Through, p)
			d, err := dig.File(p)
			if err != nil || d.String() != base && !st.sameCode(p, base, d.String()) {
				ic.Changed = append(ic.Changed, p)
			} else if sh := shadowedBy(p, b.Search); sh != "" {
				ic.Changed = append(ic.Changed, sh) // found first now, in a folder searched before p's
			}
			ic.BaselineNS = max(ic.BaselineNS, b.RecordedNS)
		}
	}
	sort.Strings(ic.Through)
	sort.Strings(ic.Changed)
	sort.Strings(envNow)
	switch {
	case len(ic.Through) == 0:
		ic.Why = "no content baseline of the build that made it is kept (stalecheck had not checked that build before it was removed)"
	case len(ic.Changed) > 0:
		ic.Verdict = graph.ContentDiffers
		ic.Why = fmt.Sprintf("%d of the %d sources its last build read differ from the content recorded then, or a header found first now shadows one", len(ic.Changed), len(ic.Through))
	case len(envNow) > 0:
		ic.Why = fmt.Sprintf("the %d sources its last build read have the content recorded then, but %s, which its build read, has another value now", len(ic.Through), strings.Join(envNow, ", "))
	case !searched:
		ic.Why = fmt.Sprintf("the %d sources its last build read have the content recorded then; the header search order of that build was not recorded, so a header that shadows one now cannot be ruled out", len(ic.Through))
	default:
		ic.Verdict = graph.ContentSame
		ic.Why = fmt.Sprintf("the %d sources its last build read have the content recorded then, no folder searched before one of its headers holds a file of that name now, and the environment it read is the same", len(ic.Through))
	}
	return ic
}

// shadowedBy returns the file that a search in order (stepBaseline.Search) finds before p for p's name
// relative to the first folder of order that holds p ("" when none, or p lies in none of them).
func shadowedBy(p string, order []string) string {
	for i, d := range order {
		rel, ok := strings.CutPrefix(p, d+string(filepath.Separator))
		if !ok {
			continue
		}
		for _, e := range order[:i] {
			q := filepath.Join(e, rel)
			if fi, err := fsrec.Stat(q); err == nil && fi.Mode().IsRegular() {
				return q
			}
		}
		return ""
	}
	return ""
}

// libName is the link name of a library file: libfoo.a, libfoo.so, libfoo.so.1 -> foo.
func libName(base string) string {
	n := strings.TrimPrefix(base, "lib")
	if i := strings.Index(n, ".so"); i >= 0 {
		return n[:i]
	}
	return strings.TrimSuffix(n, filepath.Ext(n))
}
