// Package analyze is stalecheck's one pipeline from build folders to findings, so that every command
// that gives a verdict gives the same one: `check`, `run`'s pre-run check, `which` and the tests.
//
// A verdict is made in four stages, always in this order:
//
//  1. read: each build system's adapter turns its records into the neutral graph (internal/systems
//     reads every system found and merges them; a caller that already chose what to read, such as
//     `run`'s scoped Cargo read, brings its own graph);
//  2. annotate: what no single adapter knows is added to that graph, the same way for every system:
//     a stored trace of the build joined (internal/tracejoin), header searches answered again
//     (internal/includes), the options objects say they were compiled with (internal/compileflags),
//     content evidence where copies compete (internal/evidence), content
//     judgements of files newer than what used them (internal/content);
//  3. rules: check.Run over the annotated graph;
//  4. render: left to the caller (text, JSON, SARIF, a refusal to time a binary).
//
// Annotate is stages 2 and 3 for a graph in hand; Analyze is stages 1 to 3.
package analyze

import (
	"context"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/cmaketree"
	"github.com/stalecheck/stalecheck/internal/cmdargs"
	"github.com/stalecheck/stalecheck/internal/compileflags"
	"github.com/stalecheck/stalecheck/internal/content"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/includes"
	"github.com/stalecheck/stalecheck/internal/systems"
	"github.com/stalecheck/stalecheck/internal/tracejoin"
)

// Options are what the stages share.
type Options struct {
	// StateDir is stalecheck's state folder (traces, content baselines, the evidence and digest caches);
	// "" keeps nothing between calls and joins no trace.
	StateDir string
	// NoNative is --no-native: archives and objects are not opened (no DWARF, archive-member or
	// holding evidence).
	NoNative bool
	// Digests is the digest cache to use; nil opens the one in StateDir.
	Digests *digest.Cache
	// Baselines, when not nil, is the content baseline store to use instead of StateDir's (tests keep
	// one in memory across checks).
	Baselines *content.Store
	// Getenv is the environment the next build runs in, for the trace's lookups (nil: os.Getenv).
	Getenv func(string) string
	// Systems limits the read to these build systems (Analyze only; empty: every one found).
	Systems []string
	// Read are the adapters' own options (Analyze only; StateDir and NoNative are filled from above).
	Read systems.Options
}

// Analyze reads every build system at or under path (Cargo's at or above it) and returns the annotated
// graph and its findings. An error is one no verdict can be given for (no build found, an unreadable
// record a rule depends on).
func Analyze(ctx context.Context, path string, opt Options) (*graph.Graph, []check.Finding, error) {
	ro := opt.Read
	ro.StateDir, ro.NoNative = opt.StateDir, opt.NoNative
	g, _, err := systems.ReadAll(ctx, path, opt.Systems, ro)
	if err != nil {
		return nil, nil, err
	}
	return g, Annotate(g, opt), nil
}

// Annotate runs the annotation stage and the rules over a graph the adapters read.
func Annotate(g *graph.Graph, opt Options) []check.Finding {
	// What a stored trace of the build (`stalecheck trace`) says: unwatched reads, PATH and include
	// lookups answered again now; steps that ran again since are left alone.
	tracejoin.Join(g, tracejoin.Options{StateDir: opt.StateDir, Getenv: opt.Getenv})
	// Header searches answered again from the steps' own records, and include scans of steps that
	// have none, for every build system.
	includes.Annotate(g)
	// The files each step's command line names and no record declares, for every build system.
	cmdargs.Annotate(g)
	// The sources a glob of the build description matches that nothing builds (CMake's file(GLOB)).
	cmaketree.AnnotateGlobs(g)
	if !opt.NoNative {
		// The options objects record they were compiled with, against their commands now.
		compileflags.Annotate(g)
		// Content evidence where copies compete (duplicates, shadowing), cached in the state folder.
		evidence.Annotate(g, opt.StateDir)
	}
	// Content judgements of files newer than what used them (holdings, baselines).
	content.Annotate(g, content.Options{StateDir: opt.StateDir, SkipNative: opt.NoNative, Digests: opt.Digests, Baselines: opt.Baselines, Getenv: opt.Getenv})
	return check.Run(g, check.Options{})
}
