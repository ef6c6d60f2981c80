package runner

import (
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/zeebo/blake3"

	"github.com/stalecheck/stalecheck/internal/ledger"
)

// BuildKey is a short name for a build identity: 12 hex digits of a BLAKE3 hash over the binaries
// (path, digest), the native copies (library, path, fingerprint), the sources (path, digest), the
// toolchain and the environment. Git state is left out: a commit that changes no file the build uses
// does not change the build. Two records with the same key timed the same code.
func BuildKey(id ledger.Identity) string {
	if id.Key != "" {
		if k, ok := buildKeys.Load(id.Key); ok {
			return k.(string)
		}
		k := buildKey(id)
		buildKeys.Store(id.Key, k)
		return k
	}
	return buildKey(id)
}

// buildKeys memoizes BuildKey by the ledger's identity key (ledger.Identity.Key: equal keys, equal
// identities), so listing many runs of one build hashes its identity once.
var buildKeys sync.Map

func buildKey(id ledger.Identity) string {
	h := blake3.New()
	w := func(parts ...string) {
		for _, p := range parts {
			writeString(h, p)
		}
	}
	for _, b := range id.Binaries {
		w("binary", b.Path, b.Digest)
	}
	for _, n := range id.Natives {
		w("native", n.Library, n.Path, n.Fingerprint)
	}
	for _, s := range id.Sources {
		w("source", s.Path, s.Digest)
	}
	for _, k := range sortedKeys(id.Toolchain) {
		w("tool", k, id.Toolchain[k])
	}
	for _, k := range sortedKeys(id.Env) {
		w("env", k, id.Env[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Change is one difference between the builds of two records.
type Change struct {
	// Kind is "binary", "native", "source", "toolchain", "env" or "git".
	Kind string `json:"kind"`
	// Change is "changed", "added" (only in B) or "removed" (only in A).
	Change string `json:"change"`
	// Name is the path (binary, source), library file name (native), tool, variable, or "head"/"dirty" (git).
	Name string `json:"name"`
	// PathA and PathB are the paths in A and B (native copies: the copy each links).
	PathA string `json:"path_a,omitempty"`
	PathB string `json:"path_b,omitempty"`
	// A and B are the values compared: digest, fingerprint, version or variable value.
	A string `json:"a,omitempty"`
	B string `json:"b,omitempty"`
	// Detail says what changed in a sentence, paths shortened against the records' working folders.
	Detail string `json:"detail"`
}

// Delta is what differs between two records' builds.
type Delta struct {
	A, B    *ledger.Record
	KeyA    string
	KeyB    string
	Changes []Change
}

// SameBuild reports whether nothing the build identity holds differs (git state aside).
func (d *Delta) SameBuild() bool {
	for _, c := range d.Changes {
		if c.Kind != "git" {
			return false
		}
	}
	return true
}

// Count returns how many changes of a kind the delta has.
func (d *Delta) Count(kind string) int {
	n := 0
	for _, c := range d.Changes {
		if c.Kind == kind {
			n++
		}
	}
	return n
}

// Summary returns one line per kind of change, e.g. "libgroth16_cuda.a changed: copy in
// target/release/build/prover-sys-7e7a…/out → …, fingerprint …" or "3 sources changed: a.c, b.c, c.h".
func (d *Delta) Summary() []string {
	var out []string
	for _, kind := range []string{"binary", "native", "source", "toolchain", "env", "git"} {
		if kind == "source" {
			out = append(out, d.sourceSummary()...)
			continue
		}
		for _, c := range d.Changes {
			if c.Kind == kind {
				out = append(out, c.Detail)
			}
		}
	}
	return out
}

func (d *Delta) sourceSummary() []string {
	var out []string
	var changed, added, removed []string
	for _, c := range d.Changes {
		if c.Kind != "source" {
			continue
		}
		name := d.short(c.Name)
		if c.Change == "added" {
			name = d.shortB(c.Name)
		}
		switch c.Change {
		case "changed":
			changed = append(changed, name)
		case "added":
			added = append(added, name)
		case "removed":
			removed = append(removed, name)
		}
	}
	if len(changed) > 0 {
		out = append(out, fmt.Sprintf("%s changed: %s", plural(len(changed), "source"), listSome(changed)))
	}
	if len(added) > 0 {
		out = append(out, fmt.Sprintf("%s only in run %d: %s", plural(len(added), "source"), d.B.ID, listSome(added)))
	}
	if len(removed) > 0 {
		out = append(out, fmt.Sprintf("%s only in run %d: %s", plural(len(removed), "source"), d.A.ID, listSome(removed)))
	}
	return out
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func listSome(names []string) string {
	const max = 10
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(", … and %d more", len(names)-max)
}

// short displays a path relative to A's (else B's) working folder when inside it.
func (d *Delta) short(p string) string {
	return displayPath(p, d.A.WorkDir, d.B.WorkDir)
}

// shortB displays a path of B relative to B's (else A's) working folder when inside it.
func (d *Delta) shortB(p string) string {
	return displayPath(p, d.B.WorkDir, d.A.WorkDir)
}

// relKey is how a path of a record is matched with a path of another record: relative to the record's
// working folder when it lies inside it (so the same file in two copies of a workspace, each run from its
// own copy, is one file), else the absolute path (a registry source, a system tool).
func relKey(path, workDir string) string {
	if workDir == "" || workDir == "/" || !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(workDir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return "./" + rel
	}
	return path
}

// Diff compares the build identities of two records. Binaries and sources are matched by path: the same
// absolute path, else the same path relative to each record's working folder (runs of two copies of a
// workspace, each run from its own copy); native copies by library file name (and by path, the same way,
// among copies of one name); tools and variables by name.
func Diff(a, b *ledger.Record) *Delta {
	d := &Delta{A: a, B: b, KeyA: BuildKey(a.Identity), KeyB: BuildKey(b.Identity)}
	ia, ib := a.Identity, b.Identity

	// Binaries.
	pa, pb := make([]string, len(ia.Binaries)), make([]string, len(ib.Binaries))
	for i, x := range ia.Binaries {
		pa[i] = x.Path
	}
	for j, y := range ib.Binaries {
		pb[j] = y.Path
	}
	pair, usedB := d.pairPaths(pa, pb, nil)
	for i, x := range ia.Binaries {
		if pair[i] < 0 {
			d.add(Change{Kind: "binary", Change: "removed", Name: x.Path, PathA: x.Path, A: x.Digest,
				Detail: fmt.Sprintf("binary %s only in run %d", d.short(x.Path), a.ID)})
			continue
		}
		y := ib.Binaries[pair[i]]
		if x.Digest == y.Digest && x.Size == y.Size && x.BuildID == y.BuildID {
			continue
		}
		parts := []string{fmt.Sprintf("digest %s → %s", shortHash(x.Digest), shortHash(y.Digest))}
		if x.Size != y.Size {
			parts = append(parts, fmt.Sprintf("size %d → %d bytes", x.Size, y.Size))
		}
		if x.BuildID != y.BuildID {
			parts = append(parts, fmt.Sprintf("build-id %s → %s", orNone(shortHex(x.BuildID)), orNone(shortHex(y.BuildID))))
		}
		d.add(Change{Kind: "binary", Change: "changed", Name: x.Path, PathA: x.Path, PathB: y.Path, A: x.Digest, B: y.Digest,
			Detail: fmt.Sprintf("%s changed: %s", d.short(x.Path), strings.Join(parts, ", "))})
	}
	for j, y := range ib.Binaries {
		if !usedB[j] {
			d.add(Change{Kind: "binary", Change: "added", Name: y.Path, PathB: y.Path, B: y.Digest,
				Detail: fmt.Sprintf("binary %s only in run %d", d.shortB(y.Path), b.ID)})
		}
	}

	d.diffNatives(ia.Natives, ib.Natives)

	// Sources.
	pa, pb = make([]string, len(ia.Sources)), make([]string, len(ib.Sources))
	for i, x := range ia.Sources {
		pa[i] = x.Path
	}
	for j, y := range ib.Sources {
		pb[j] = y.Path
	}
	pair, usedB = d.pairPaths(pa, pb, nil)
	for i, s := range ia.Sources {
		if pair[i] < 0 {
			d.add(Change{Kind: "source", Change: "removed", Name: s.Path, PathA: s.Path, A: s.Digest,
				Detail: fmt.Sprintf("source %s only in run %d", d.short(s.Path), a.ID)})
			continue
		}
		if y := ib.Sources[pair[i]]; y.Digest != s.Digest {
			d.add(Change{Kind: "source", Change: "changed", Name: s.Path, PathA: s.Path, PathB: y.Path, A: s.Digest, B: y.Digest,
				Detail: fmt.Sprintf("%s changed: digest %s → %s", d.short(s.Path), shortHash(s.Digest), shortHash(y.Digest))})
		}
	}
	for j, s := range ib.Sources {
		if !usedB[j] {
			d.add(Change{Kind: "source", Change: "added", Name: s.Path, PathB: s.Path, B: s.Digest,
				Detail: fmt.Sprintf("source %s only in run %d", d.shortB(s.Path), b.ID)})
		}
	}

	d.diffMap("toolchain", ia.Toolchain, ib.Toolchain)
	d.diffMap("env", ia.Env, ib.Env)

	if ia.Git.Head != ib.Git.Head {
		d.add(Change{Kind: "git", Change: "changed", Name: "head", A: ia.Git.Head, B: ib.Git.Head,
			Detail: fmt.Sprintf("git HEAD %s → %s", orNone(shortHex(ia.Git.Head)), orNone(shortHex(ib.Git.Head)))})
	}
	if ia.Git.Dirty != ib.Git.Dirty {
		d.add(Change{Kind: "git", Change: "changed", Name: "dirty", A: fmt.Sprint(ia.Git.Dirty), B: fmt.Sprint(ib.Git.Dirty),
			Detail: fmt.Sprintf("git work tree %s → %s", dirtyWord(ia.Git.Dirty), dirtyWord(ib.Git.Dirty))})
	}
	return d
}

func (d *Delta) add(c Change) { d.Changes = append(d.Changes, c) }

// pairPaths pairs paths of A with paths of B: the same absolute path first, then the same path relative
// to each record's working folder (relKey). ok, when not nil, says whether A's i and B's j may pair at
// all. It returns B's index for each of A's (-1: none) and which of B's were paired.
func (d *Delta) pairPaths(pa, pb []string, ok func(i, j int) bool) (pair []int, usedB []bool) {
	pair, usedB = make([]int, len(pa)), make([]bool, len(pb))
	for i := range pair {
		pair[i] = -1
	}
	for _, key := range []func(p, workDir string) string{
		func(p, _ string) string { return p },
		relKey,
	} {
		idx := map[string][]int{}
		for j, p := range pb {
			if !usedB[j] {
				k := key(p, d.B.WorkDir)
				idx[k] = append(idx[k], j)
			}
		}
		for i, p := range pa {
			if pair[i] >= 0 {
				continue
			}
			for _, j := range idx[key(p, d.A.WorkDir)] {
				if !usedB[j] && (ok == nil || ok(i, j)) {
					pair[i], usedB[j] = j, true
					break
				}
			}
		}
	}
	return pair, usedB
}

// diffNatives pairs the copies of each library: the same path first (absolute, then relative to each
// record's working folder), then in order.
func (d *Delta) diffNatives(na, nb []ledger.Native) {
	pa, pb := make([]string, len(na)), make([]string, len(nb))
	for i, x := range na {
		pa[i] = x.Path
	}
	for j, y := range nb {
		pb[j] = y.Path
	}
	pair, usedB := d.pairPaths(pa, pb, func(i, j int) bool { return na[i].Library == nb[j].Library })
	same := func(x, y ledger.Native) bool {
		return x.Path == y.Path || relKey(x.Path, d.A.WorkDir) == relKey(y.Path, d.B.WorkDir)
	}
	for i, x := range na {
		if pair[i] >= 0 {
			continue
		}
		for j, y := range nb {
			if !usedB[j] && x.Library == y.Library {
				pair[i], usedB[j] = j, true
				break
			}
		}
	}
	for i, x := range na {
		if pair[i] < 0 {
			d.add(Change{Kind: "native", Change: "removed", Name: x.Library, PathA: x.Path, A: x.Fingerprint,
				Detail: fmt.Sprintf("%s only in run %d (copy in %s)", x.Library, d.A.ID, d.short(filepath.Dir(x.Path)))})
			continue
		}
		y := nb[pair[i]]
		if same(x, y) && x.Fingerprint == y.Fingerprint && slices.Equal(x.Config.Features, y.Config.Features) {
			continue
		}
		var parts []string
		if !same(x, y) {
			parts = append(parts, fmt.Sprintf("copy in %s → %s", d.short(filepath.Dir(x.Path)), d.shortB(filepath.Dir(y.Path))))
		} else {
			parts = append(parts, "copy in "+d.short(filepath.Dir(x.Path)))
		}
		if x.Fingerprint != y.Fingerprint {
			parts = append(parts, fmt.Sprintf("fingerprint %s → %s", shortHash(x.Fingerprint), shortHash(y.Fingerprint)))
		} else {
			parts = append(parts, "same content")
		}
		if !slices.Equal(x.Config.Features, y.Config.Features) {
			parts = append(parts, fmt.Sprintf("features %s → %s", featureList(x.Config.Features), featureList(y.Config.Features)))
		}
		d.add(Change{Kind: "native", Change: "changed", Name: x.Library, PathA: x.Path, PathB: y.Path, A: x.Fingerprint, B: y.Fingerprint,
			Detail: fmt.Sprintf("%s changed: %s", x.Library, strings.Join(parts, ", "))})
	}
	for j, y := range nb {
		if !usedB[j] {
			d.add(Change{Kind: "native", Change: "added", Name: y.Library, PathB: y.Path, B: y.Fingerprint,
				Detail: fmt.Sprintf("%s only in run %d (copy in %s)", y.Library, d.B.ID, d.shortB(filepath.Dir(y.Path)))})
		}
	}
}

func (d *Delta) diffMap(kind string, a, b map[string]string) {
	what := map[string]string{"toolchain": "", "env": "$"}[kind]
	for _, k := range sortedKeys(a) {
		y, ok := b[k]
		switch {
		case !ok:
			d.add(Change{Kind: kind, Change: "removed", Name: k, A: a[k],
				Detail: fmt.Sprintf("%s%s %q → unset", what, k, a[k])})
		case y != a[k]:
			d.add(Change{Kind: kind, Change: "changed", Name: k, A: a[k], B: y,
				Detail: fmt.Sprintf("%s%s %q → %q", what, k, a[k], y)})
		}
	}
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			d.add(Change{Kind: kind, Change: "added", Name: k, B: b[k],
				Detail: fmt.Sprintf("%s%s unset → %q", what, k, b[k])})
		}
	}
}

func featureList(f []string) string {
	q := make([]string, len(f))
	for i, x := range f {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// shortHash shortens "blake3:<64 hex>" or "sections:blake3:<64 hex>" to its prefix and 12 hex digits.
func shortHash(s string) string {
	if s == "" {
		return "(none)"
	}
	i := strings.LastIndexByte(s, ':')
	if i >= 0 && len(s)-i-1 > 12 {
		return s[:i+1+12] + "…"
	}
	return s
}

func shortHex(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func dirtyWord(d bool) string {
	if d {
		return "dirty"
	}
	return "clean"
}
