// Package benchgroup groups ledger records by benchmark name and build identity (runner.BuildKey) and
// summarises each group's wall times with internal/stats; it also names a build on the command line
// (a BuildKey prefix) and describes a build identity in one line for people.
package benchgroup

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/runner"
	"github.com/stalecheck/stalecheck/internal/stats"
)

// Group is the records of one benchmark name run on one build identity.
type Group struct {
	Name string // the records' name
	Key  string // runner.BuildKey of their identity (12 hex digits)
	// Description is Describe of the newest record's identity.
	Description string
	// Records are all the group's records, oldest (lowest ID) first.
	Records []*ledger.Record
	// Timed are the records with exit status 0, oldest first: a failed run's time is not a time of the
	// benchmark, so only these enter Wall.
	Timed []*ledger.Record
	// Stale counts the records marked stale (--allow-stale); they are in Timed when they exited 0.
	Stale int
	// Wall summarises the wall times of Timed in ns; Wall.N is 0 when no record exited 0.
	Wall stats.Summary
}

// Newest is the group's newest record.
func (g *Group) Newest() *ledger.Record { return g.Records[len(g.Records)-1] }

// WallNS are the wall times of Timed, ns, oldest first.
func (g *Group) WallNS() []int64 {
	out := make([]int64, len(g.Timed))
	for i, r := range g.Timed {
		out[i] = r.WallNS
	}
	return out
}

// IDs are the record IDs of the group, oldest first.
func (g *Group) IDs() []int64 {
	out := make([]int64, len(g.Records))
	for i, r := range g.Records {
		out[i] = r.ID
	}
	return out
}

// ByBuild groups recs (any order) by name and build key. Groups are ordered by name, then by their
// first record (oldest first), so one benchmark's builds read in the order they were first run.
func ByBuild(recs []ledger.Record) []*Group {
	sorted := make([]*ledger.Record, len(recs))
	for i := range recs {
		sorted[i] = &recs[i]
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	type gk struct{ name, key string }
	idx := map[gk]*Group{}
	var groups []*Group
	for _, r := range sorted {
		k := gk{r.Name, runner.BuildKey(r.Identity)}
		g := idx[k]
		if g == nil {
			g = &Group{Name: k.name, Key: k.key}
			idx[k] = g
			groups = append(groups, g)
		}
		g.Records = append(g.Records, r)
		if r.ExitStatus == 0 {
			g.Timed = append(g.Timed, r)
		}
		if r.Stale {
			g.Stale++
		}
	}
	for _, g := range groups {
		g.Description = Describe(g.Newest())
		if len(g.Timed) > 0 {
			g.Wall, _ = stats.SummarizeNS(g.WallNS())
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		if groups[i].Name != groups[j].Name {
			return groups[i].Name < groups[j].Name
		}
		return groups[i].Records[0].ID < groups[j].Records[0].ID
	})
	return groups
}

// Describe is a one-line description of a record's build identity for people: the binaries' base
// names with the first 8 hex digits of their digests, each native copy's library with its features
// (and the package-build settings stalecheck recorded), the number of sources, the toolchain versions
// and the git state, e.g. `gpu-prover blake3:3f2a9c1b; libgroth16_cuda.a features ["timing"]; 0
// sources; rustc 1.95.0, cargo 1.95.0; git 1a2b3c4d5e+dirty`. Strings are not escaped: callers escape
// for their medium.
func Describe(r *ledger.Record) string {
	id := r.Identity
	var parts []string
	var bins []string
	for _, b := range id.Binaries {
		bins = append(bins, filepath.Base(b.Path)+" "+short8(b.Digest))
	}
	if len(bins) > 0 {
		parts = append(parts, strings.Join(bins, ", "))
	}
	for _, n := range id.Natives {
		s := n.Library + " features " + features(n.Config.Features)
		if p := n.Config.Settings["profile"]; p != "" {
			s += " profile " + p
		}
		parts = append(parts, s)
	}
	parts = append(parts, fmt.Sprintf("%d %s", len(id.Sources), map[bool]string{true: "source", false: "sources"}[len(id.Sources) == 1]))
	var tools []string
	for _, t := range []string{"rustc", "cargo", "cc", "nvcc"} {
		v := id.Toolchain[t]
		switch {
		case v == "":
		case t == "cc":
			// The C and C++ compilers the binary's bytes name ("GCC: (Debian 12.2.0-14) 12.2.0; clang
			// version 16.0.6"): each by its own name and version.
			seen := map[string]bool{}
			for _, c := range strings.Split(v, "; ") {
				name := "gcc"
				if strings.Contains(c, "clang") {
					name = "clang"
				}
				if s := toolVersion(name, c); !seen[s] {
					seen[s] = true
					tools = append(tools, s)
				}
			}
		default:
			tools = append(tools, toolVersion(t, v))
		}
	}
	if len(tools) > 0 {
		parts = append(parts, strings.Join(tools, ", "))
	}
	if id.Git.Head != "" {
		g := id.Git.Head
		if len(g) > 10 {
			g = g[:10]
		}
		if id.Git.Dirty {
			g += "+dirty"
		}
		parts = append(parts, "git "+g)
	}
	return strings.Join(parts, "; ")
}

func short8(d string) string {
	i := strings.LastIndexByte(d, ':')
	if i >= 0 && len(d)-i-1 > 8 {
		return d[:i+1+8]
	}
	return d
}

func features(f []string) string {
	q := make([]string, len(f))
	for i, x := range f {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

var versionNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+(\.\d+)?`) })

// toolVersion shortens a version line ("rustc 1.95.0 (abc 2026-01-01)", nvcc's several lines) to
// "rustc 1.95.0"; the line as it is when it holds no version number.
func toolVersion(tool, line string) string {
	if strings.Contains(line, "release ") { // nvcc: "Cuda compilation tools, release 11.8, V11.8.89"
		line = line[strings.LastIndex(line, "release "):]
	}
	if m := versionNumber().FindString(line); m != "" {
		return tool + " " + m
	}
	return tool + " " + strings.TrimSpace(strings.SplitN(line, "\n", 2)[0])
}

// BuildPrefix is the form `stalecheck diff` takes for a build identity: "build:" followed by 1 to 12
// hex digits, or 4 to 12 hex digits with at least one letter a–f (an argument of decimal digits only
// is a run ID; write "build:" before a key prefix made of digits only). It returns the lower-case
// prefix and whether arg names a build.
func BuildPrefix(arg string) (string, bool) {
	s := strings.ToLower(arg)
	forced := strings.HasPrefix(s, "build:")
	s = strings.TrimPrefix(s, "build:")
	if s == "" || len(s) > 12 || strings.Trim(s, "0123456789abcdef") != "" {
		return "", false
	}
	if forced {
		return s, true
	}
	if len(s) < 4 || strings.Trim(s, "0123456789") == "" {
		return "", false
	}
	return s, true
}

// Find returns the group among groups whose key starts with prefix. Errors: no group with that
// prefix; a prefix shared by several build keys (listing them); a build run under several names when
// name is "" (listing them: pass --name).
func Find(groups []*Group, prefix, name string) (*Group, error) {
	var match []*Group
	keys := map[string]bool{}
	for _, g := range groups {
		if strings.HasPrefix(g.Key, prefix) && (name == "" || g.Name == name) {
			match = append(match, g)
			keys[g.Key] = true
		}
	}
	switch {
	case len(match) == 0 && name != "":
		return nil, fmt.Errorf("no build %s among the runs named %q (stalecheck runs --group-by build lists the builds)", prefix, name)
	case len(match) == 0:
		return nil, fmt.Errorf("no build %s in the ledger (stalecheck runs --group-by build lists the builds)", prefix)
	case len(keys) > 1:
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return nil, fmt.Errorf("build %s is ambiguous: it starts %s; give more digits", prefix, strings.Join(ks, ", "))
	case len(match) > 1:
		var ns []string
		for _, g := range match {
			ns = append(ns, fmt.Sprintf("%q", g.Name))
		}
		return nil, fmt.Errorf("build %s was run under several names (%s): pick one with --name", prefix, strings.Join(ns, ", "))
	}
	return match[0], nil
}

// Of returns the group holding the record with this ID, nil when none does.
func Of(groups []*Group, id int64) *Group {
	for _, g := range groups {
		for _, r := range g.Records {
			if r.ID == id {
				return g
			}
		}
	}
	return nil
}

// Span is the time from the group's first to its last start.
func (g *Group) Span() (time.Time, time.Time) {
	return g.Records[0].Start, g.Newest().Start
}

// IDRanges writes run IDs (ascending) as ranges for people: "1-4, 9".
func IDRanges(ids []int64) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			parts = append(parts, fmt.Sprint(ids[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
