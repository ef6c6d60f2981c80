// Package content judges native files and sources by their content where mtimes mislead, and records
// what it learns in the graph for the checks (which never read the disk themselves):
//
//   - holdings (holds.go): for a root older than a library it links (binary-older-than-input), whether
//     the root's bytes hold the library's current content (internal/evidence.Holds for a linked binary,
//     evidence.Bundles for an rlib or static library that bundles the archive's objects). A touched or
//     identically rebuilt archive is then not staleness.
//   - content baselines (baseline.go): the digest of each input of a live step of a path package,
//     recorded while the input was provably what the step used (its mtime and ctime not newer than the
//     step's reference), keyed by the step's identity and the reference's mtime. An input whose mtime
//     moved but whose digest equals the baseline only makes Cargo redo work; an input whose mtime did not
//     move past the reference but whose content differs from the baseline (its ctime did) was restored
//     with an older mtime (cp -p, rsync -t, tar), which Cargo cannot see.
//
// Both are kept in the state folder ($XDG_STATE_HOME/stalecheck): content-holds.v1.json caches holdings by
// device, inode, size, mtime and ctime of both files; baselines.v1.json holds the baselines; file digests
// go through internal/digest's cache.
package content

import (
	"os"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// Options configure Annotate.
type Options struct {
	// StateDir is the state folder; "" keeps nothing between calls (no cache, baselines only in memory).
	StateDir string
	// SkipNative is --no-native: archives and binaries are not opened, so holdings are all unknown.
	SkipNative bool
	// Digests is the digest cache to use; nil opens the one in StateDir (and saves it at the end).
	Digests *digest.Cache
	// Baselines, when not nil, is used instead of the store in StateDir (tests keep one across checks).
	Baselines *Store
	// Getenv is the environment the next build runs in (its PATH finds the programs commands name);
	// nil: os.Getenv.
	Getenv func(string) string
}

// Annotate fills g.Holdings and each judged input's Content (see the package comment). It reads files
// (stat, and hashes where a verdict needs a digest) but never fails: an unreadable file gives an unknown
// verdict saying why, and an unreadable archive or binary is also a graph problem.
func Annotate(g *graph.Graph, opt Options) {
	dig := opt.Digests
	if dig == nil && opt.StateDir != "" {
		dig, _ = digest.OpenCache(opt.StateDir)
		defer dig.Save()
	}
	annotateHoldings(g, opt, dig)
	st := opt.Baselines
	if st == nil {
		st = OpenStore(opt.StateDir)
		defer st.Save()
	}
	getenv := opt.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	annotateBaselines(g, st, dig, getenv("PATH"))
	annotateMemberRuns(g, st, dig)
	annotateRemovedDeps(g, st, dig)
	annotateGoneLibraries(g, st, dig) // gonelib.go
}
