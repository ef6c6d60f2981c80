package content

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// annotateRemovedDeps judges, for a live unit built against a dependency whose records `cargo clean -p`
// removed from its profile folder, the dependency's sources that another profile's units know and that
// changed after the unit was built (graph.Step.RemovedDepContent), and the others too (unchanged since,
// they show a removed unit that was stale already). The content the unit was built from
// is what the removed units' last runs before the unit's build used: their baselines are still in the
// store (keyed by step ID, which names the profile folder and the package). A file is judged only when
// the newest run before the build of each removed unit that recorded it agree on one digest.
func annotateRemovedDeps(g *graph.Graph, st *Store, dig *digest.Cache) {
	runs := st.runsByStep()
	for _, s := range g.Steps {
		if !s.Live() || !s.Reference.Exists || len(unit.Of(s).Removed().GoneDeps) == 0 {
			continue
		}
		u := unit.Of(s)
		for _, d := range u.Removed().GoneDeps {
			crate, _, _ := strings.Cut(d, " ")
			if !RemovedDependency(g, s, crate) {
				continue
			}
			keys := removedKeys(st, runs, s, crate)
			// Every source other profiles know, not only those modified since s was built: the removed
			// units may have been stale already (an unwatched header edited before s's build).
			for _, in := range NewerSources(g, crate, math.MinInt64) {
				p := in.File.Path
				if _, done := u.Removed().RemovedDepContent[p]; done {
					continue
				}
				ic := &graph.InputContent{Verdict: graph.ContentUnknown}
				base, at, why := removedBaseline(st, keys, s, crate, relTo(g.Workspace, p))
				ic.Baseline, ic.BaselineNS, ic.Why = base, at, why
				if base != "" {
					if dg, err := dig.File(p); err != nil {
						ic.Why = "it could not be hashed: " + err.Error()
					} else if ic.Digest = dg.String(); ic.Digest == base {
						ic.Verdict = graph.ContentSame
					} else {
						ic.Verdict = graph.ContentDiffers
					}
				}
				if u.Removed().RemovedDepContent == nil {
					u.OwnRemoved().RemovedDepContent = map[string]*graph.InputContent{}
				}
				u.Removed().RemovedDepContent[p] = ic
			}
			if !slices.ContainsFunc(u.Removed().RemovedDepRuns, func(r graph.RemovedRun) bool { return r.Dep == crate }) {
				u.OwnRemoved().RemovedDepRuns = append(u.OwnRemoved().RemovedDepRuns, removedRuns(g, st, runs, keys, crate, dig)...)
			}
		}
		// Today's values of what those runs read, for the variables no step on disk reads any more.
		for _, r := range u.Removed().RemovedDepRuns {
			names := []string{}
			for _, e := range r.EnvReads {
				names = append(names, e.Name)
			}
			for _, f := range r.FlagsSeen {
				names = append(names, f.Names...)
			}
			for _, n := range names {
				if _, ok := g.Env[n]; !ok {
					if g.Env == nil {
						g.Env = map[string]graph.EnvRead{}
					}
					v, set := os.LookupEnv(n)
					g.Env[n] = graph.EnvRead{Name: n, Value: v, Set: set}
				}
			}
		}
	}
}

// removedRuns returns the build-script runs among keys (removedKeys: the removed units of crate that s
// was built against) whose baselines the store keeps, with the environment reads recorded then
// and the duplicated archive members whose linked copy is older code (oldMembers). Runs whose records
// still exist are not among them (a run since, after s was built, is newer than s).
func removedRuns(g *graph.Graph, st *Store, runs map[string][]string, keys []string, crate string, dig *digest.Cache) []graph.RemovedRun {
	var out []graph.RemovedRun
	for _, best := range keys {
		id := best[:strings.LastIndexByte(best, '@')]
		if !strings.HasSuffix(id, "/run-build-script-build-script-build") {
			continue
		}
		bestNS := keyNS(best)
		b, _ := st.c.Get(best)
		old, now := oldMembers(g, st, runs[id], b, dig)
		if len(b.Env) > 0 || len(b.Flags) > 0 || len(old) > 0 || now {
			out = append(out, graph.RemovedRun{Dep: crate, StepID: id, RunNS: bestNS, RecordedNS: b.RecordedNS,
				EnvReads: b.Env, FlagsSeen: b.Flags, Archive: b.Archive, Record: b.Record, OldMembers: old, LinkedNow: now})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StepID < out[j].StepID })
	return out
}

// removedBaseline returns the digest of rel that the runs keys name (removedKeys: the removed units of
// crate in s's profile folder that s was built against) used, with when it was recorded; "" and why when none recorded it or
// they disagree.
func removedBaseline(st *Store, keys []string, s *graph.Step, crate, rel string) (string, int64, string) {
	var digests []string
	var at int64
	for _, best := range keys {
		b, _ := st.c.Get(best)
		if dg, ok := b.Inputs[rel]; ok {
			digests = append(digests, dg)
			at = max(at, b.RecordedNS)
		}
	}
	sort.Strings(digests)
	switch {
	case len(digests) == 0:
		return "", 0, "no content baseline of " + crate + "'s removed units in " + s.ProfileDir + " records it (stalecheck had not checked that build before the records were removed)"
	case digests[0] != digests[len(digests)-1]:
		return "", 0, "the removed units of " + crate + " in " + s.ProfileDir + " used different contents of it, and the records cannot tell which one " + s.Package + " was built against"
	}
	return digests[0], at, ""
}

// removedKeys returns the baseline keys of the removed units of crate in s's profile folder that s
// was built against. When the store recorded fingerprint hashes (stepBaseline.Hash), they are exactly
// the runs whose hash one of s's dangling `deps` entries for crate names (the unit s linked), and those
// that the named runs' DepHashes reach among crate's runs (its build-script run and compile): other
// configurations of crate (feature or flag sets, each its own unit folder), whose baselines the store
// keeps too, are left out. Otherwise, for each of crate's steps, its last run before s was built
// (removedRunBefore).
func removedKeys(st *Store, runs map[string][]string, s *graph.Step, crate string) []string {
	var named []string
	for _, d := range unit.Of(s).Removed().GoneDeps {
		if n, h, ok := strings.Cut(d, " "); ok && n == crate {
			named = append(named, h)
		}
	}
	// fingerprint hash → for each of crate's steps, its last run before s with that hash (a build-script
	// run keeps its hash across reruns for undeclared edits: the last one is what the next unit used).
	byHash := map[string][]string{}
	var fallback []string
	for id, keys := range runs {
		best, _ := removedRunBefore(id, keys, s, crate)
		if best == "" {
			continue
		}
		fallback = append(fallback, best)
		last := map[string]string{}
		lastNS := map[string]int64{}
		for _, k := range keys {
			ns := keyNS(k)
			if b, ok := st.c.Get(k); ok && b.Hash != "" && ns <= s.Reference.MTimeNS {
				if _, seen := last[b.Hash]; !seen || ns > lastNS[b.Hash] {
					last[b.Hash], lastNS[b.Hash] = k, ns
				}
			}
		}
		for h, k := range last {
			byHash[h] = append(byHash[h], k)
		}
	}
	var out []string
	seen := map[string]bool{}
	todo := append([]string{}, named...)
	for len(todo) > 0 {
		h := todo[0]
		todo = todo[1:]
		for _, k := range byHash[h] {
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, k)
			b, _ := st.c.Get(k)
			todo = append(todo, b.DepHashes...)
		}
	}
	if len(out) == 0 {
		out = fallback
	}
	sort.Strings(out)
	return out
}

// RemovedDependency reports whether s's profile folder holds no successful record of crate any more (an
// extern name of one of s's deps entries: the package name with '-' as '_'; build_script_* for s's own
// build-script compile): `cargo clean -p` removed its records, and a unit of it built since, if any,
// failed before writing its reference (dep-info, run output) or is not the kind the entry names.
func RemovedDependency(g *graph.Graph, s *graph.Step, crate string) bool {
	for _, x := range g.Steps {
		if x == s || x.ProfileDir != s.ProfileDir || !x.Reference.Exists {
			continue
		}
		if strings.HasPrefix(crate, "build_script_") && x.Package == s.Package && x.Kind == graph.ScriptCompile {
			return false
		}
		// A compile unit's deps entry of another crate names that crate's compile unit: its build-script
		// units, rebuilt by a build that then failed at the compile, are not it.
		if strings.ReplaceAll(x.Package, "-", "_") == crate && (s.Kind != graph.Compile || x.Kind == graph.Compile) {
			return false
		}
	}
	return true
}

// NewerSources returns the sources of path package crate (inputs under its package folder, as any of
// its units records them) modified after ns, newest first, each once.
func NewerSources(g *graph.Graph, crate string, ns int64) []*graph.Input {
	var out []*graph.Input
	seen := map[string]bool{}
	for _, x := range g.Steps {
		if !x.PathPackage || x.PackageRoot == "" || strings.ReplaceAll(x.Package, "-", "_") != crate {
			continue
		}
		for _, in := range x.Inputs {
			if in.File.Exists && in.File.MTimeNS > ns && strings.HasPrefix(in.File.Path, x.PackageRoot+"/") && !seen[in.File.Path] {
				seen[in.File.Path] = true
				out = append(out, in)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].File.MTimeNS > out[j].File.MTimeNS })
	return out
}

// removedRunBefore returns, when step ID id is a unit of crate in s's profile folder, the store key of
// its newest run at or before s was built and that run's reference mtime ("" when none).
func removedRunBefore(id string, keys []string, s *graph.Step, crate string) (string, int64) {
	rest, ok := strings.CutPrefix(id, s.ProfileDir+"/")
	if !ok {
		return "", 0
	}
	dir, _, _ := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(dir, '-'); i <= 0 || strings.ReplaceAll(dir[:i], "-", "_") != crate {
		return "", 0
	}
	best, bestNS := "", int64(-1)
	for _, k := range keys {
		var ns int64
		fmt.Sscan(k[strings.LastIndexByte(k, '@')+1:], &ns)
		if ns <= s.Reference.MTimeNS && ns > bestNS {
			best, bestNS = k, ns
		}
	}
	return best, bestNS
}

// oldMembers returns, for a removed run's baseline b, a sentence per duplicated archive member whose copy
// the linker took (b.Linked) is not the run's own: units linked after the run hold that older copy. A
// member is left out when a kept run of the step (keys) that wrote the linked copy used the content the
// files have now (then the binary holds what they compile to); now reports whether every linked copy is
// such a one.
func oldMembers(g *graph.Graph, st *Store, keys []string, b stepBaseline, dig *digest.Cache) (out []string, now bool) {
	now = len(b.Linked) > 0
	for mk, linked := range b.Linked {
		own := b.Members[mk]
		from := "an earlier run whose baseline the store no longer keeps"
		here := false
		for _, k := range keys {
			rb, ok := st.c.Peek(k)
			if !ok || rb.Members[mk] != linked {
				continue
			}
			from = "the run at " + time.Unix(0, keyNS(k)).UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
			if baselineMatchesNow(g, rb, dig) {
				here = true
				break
			}
		}
		if here {
			continue
		}
		now = false
		out = append(out, fmt.Sprintf("%s: linked copy %s, written by %s; the run's own %s", mk, linked, from, own))
	}
	sort.Strings(out)
	return out, now
}

// baselineMatchesNow reports whether every input b recorded has that digest now (paths relative to the
// workspace, or absolute); false when b records none.
func baselineMatchesNow(g *graph.Graph, b stepBaseline, dig *digest.Cache) bool {
	if len(b.Inputs) == 0 {
		return false
	}
	for key, want := range b.Inputs {
		rel := pathOfKey(key)
		p := rel
		if !filepath.IsAbs(p) {
			p = filepath.Join(g.Workspace, rel)
		}
		d, err := dig.File(p)
		if err != nil || d.String() != want {
			return false
		}
	}
	return true
}
