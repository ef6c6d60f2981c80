package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/hugeheap"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/vcache"
)

// VerifyError says that under STALECHECK_VERDICT_CACHE=verify the cached plan and the full pre-run
// check disagreed (cli: exit status 3).
type VerifyError struct{ Diff string }

func (e *VerifyError) Error() string {
	return "verdict cache (verify): the cached plan differs from the full check: " + e.Diff
}

// planSummary is what the verdict cache keeps of a plan that is not stale: everything Exec and Record
// use. A stale plan is never stored (its refusal needs the graph), so a refusal always comes from a
// full check. Git is not in it (gitIdentity asks every time).
type planSummary struct {
	Program   string          `json:"program"`
	Matter    []string        `json:"matter"`
	MatterHow string          `json:"matter_how"`
	Workspace string          `json:"workspace"`
	Identity  ledger.Identity `json:"identity"`
	Notes     []string        `json:"notes"`
	Unjudged  []string        `json:"unjudged"`
}

func summaryOf(p *Plan) []byte {
	s := planSummary{Program: p.Program, Matter: p.Matter, MatterHow: p.MatterHow, Workspace: p.workspace, Identity: p.Identity, Notes: p.Notes, Unjudged: p.Unjudged}
	s.Identity.Git = ledger.Git{}
	b, _ := json.Marshal(s)
	return b
}

// cachedPrepare is prepareFull through the verdict cache: the key is the run's command, --binary,
// --target-dir, --build-dir, working folder and environment (vcache.MakeKey adds the process's);
// the value a planSummary, valid while every path the full pre-run check consulted (resolving the
// program through PATH, the records, sources, binaries and libraries it digested) is unchanged.
func cachedPrepare(ctx context.Context, cfg Config) (*Plan, error) {
	stateDir := cfg.StateDir
	if stateDir == "" {
		stateDir, _ = digest.DefaultDir()
	}
	var vc *vcache.Cache
	var key vcache.Key
	if cfg.VerdictCache != vcache.Off {
		if vc = vcache.Open(stateDir, cfg.Trace); vc != nil {
			vc.OnMiss = hugeheap.Advise // under way while the look-ups after the first change go on
			inv := fmt.Sprintf("command=%q binaries=%q target-dir=%q build-dir=%q dir=%q state=%q environ=%q",
				cfg.Command, cfg.Binaries, cfg.TargetDir, cfg.BuildDir, cfg.Dir, stateDir, strings.Join(vcache.StableEnv(cfg.Environ), "\x00"))
			var err error
			if key, err = vcache.MakeKey("run", cfg.Version, []string{inv}); err != nil {
				vc = nil
			}
		}
	}
	if hit, ok := vc.Lookup(key); ok {
		var s planSummary
		if err := json.Unmarshal(hit.Extra, &s); err == nil {
			if cfg.VerdictCache == vcache.Verify {
				full, err := prepareFull(ctx, cfg)
				if err != nil {
					return nil, &VerifyError{fmt.Sprintf("the cache answered a plan, the full check failed: %v", err)}
				}
				if full.Stale() {
					return nil, &VerifyError{"the cache answered a build that is not stale, the full check finds it stale"}
				}
				if b := summaryOf(full); string(b) != string(hit.Extra) {
					return nil, &VerifyError{fmt.Sprintf("cached %s, now %s", clip(hit.Extra), clip(b))}
				}
			}
			return &Plan{Program: s.Program, Dir: cfg.Dir, Command: cfg.Command, Environ: cfg.Environ,
				Matter: s.Matter, MatterHow: s.MatterHow, Identity: s.Identity, Notes: s.Notes, Unjudged: s.Unjudged, workspace: s.Workspace}, nil
		}
	}
	// The full check's heap grows to tens of megabytes: huge pages spare it most of its page faults.
	hugeheap.Advise()
	rec := vc.Begin()
	p, err := prepareFull(ctx, cfg)
	if err == nil && cfg.VerdictCache == vcache.Verify && rec.Reused() > 0 {
		// The check reused memos of the last one (internal/vcache's memo.go): the same check with
		// none must plan the same.
		rec.End()
		full, ferr := prepareFull(ctx, cfg)
		if ferr != nil {
			return nil, &VerifyError{fmt.Sprintf("the check with memos planned, the full check failed: %v", ferr)}
		}
		if full.Stale() != p.Stale() || string(summaryOf(full)) != string(summaryOf(p)) {
			return nil, &VerifyError{fmt.Sprintf("with memos %s (stale %v), without %s (stale %v)", clip(summaryOf(p)), p.Stale(), clip(summaryOf(full)), full.Stale())}
		}
	}
	if err != nil || p.Stale() || vc == nil {
		rec.End()
		return p, err
	}
	// The digest and run caches are saved before the plan is stored, so that a check that rewrote one
	// (a digest computed for the first time) is not stored: its recording holds the old signature, and
	// the next check, which reads the new file, is. Saving them after the store left a stored plan
	// that the save itself invalidated. A baseline content.Annotate wrote does the same.
	p.SaveCaches()
	vc.Store(key, rec, &vcache.Result{Extra: summaryOf(p)})
	return p, nil
}

func clip(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}
