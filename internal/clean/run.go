package clean

import (
	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/report"
)

// Request is one clean.
type Request struct {
	Layout *cargo.Layout
	Options
	// Yes removes the items; without it nothing is removed.
	Yes bool
	// Plan, when set, is a plan read from a file: its items are executed (after the checks) instead of
	// a fresh plan's. Its profile and incremental options are used.
	Plan *Plan
	Exec ExecOptions
	// CargoHome is passed to the graph reader ("" means $CARGO_HOME).
	CargoHome string
	Tool      report.Tool
}

// Run validates the folder, takes the locks, reads the graph, plans, and (with Yes) removes. Errors
// wrap ErrNotTarget (a folder that is not a Cargo target folder) or ErrLocked (a cargo process holds
// a lock); the caller maps them to exit statuses 2 and 3.
func Run(req Request) (*Plan, error) {
	l := req.Layout
	if req.Plan != nil {
		req.Options = Options{Profile: req.Plan.Profile, Incremental: req.Plan.Incremental}
	}
	if err := Validate(l); err != nil {
		return nil, err
	}
	all, err := ProfileDirs(l.BuildDir)
	if err != nil {
		return nil, err
	}
	_, lockProfs, err := SelectProfiles(all, req.Profile)
	if err != nil {
		return nil, err
	}
	bases := []string{l.BuildDir}
	if l.TargetDir != l.BuildDir {
		bases = append(bases, l.TargetDir)
	}
	locks, err := Lock(bases, lockProfs)
	if err != nil {
		return nil, err
	}
	defer locks.Unlock()
	g, err := cargo.Read(l, cargo.ReadOptions{SkipNative: true, LivenessOnly: true, CargoHome: req.CargoHome, NoLock: true})
	if err != nil {
		return nil, err
	}
	fresh, err := MakePlan(g, req.Options)
	if err != nil {
		return nil, err
	}
	plan := fresh
	if req.Plan != nil {
		plan = req.Plan
		plan.Profiles = fresh.Profiles
		plan.Notes = fresh.Notes
	}
	plan.Envelope = report.Envelope{SchemaVersion: report.SchemaVersion, Tool: req.Tool, Command: "clean"}
	plan.Locks = locks.Paths
	if plan.Locks == nil {
		plan.Locks = []string{}
	}
	if req.Yes {
		err = Execute(plan, fresh, g, req.Exec)
	} else {
		// A dry run checks every item as a removal would (what is there now, mount points), so that
		// what it lists is what --yes removes.
		ex := req.Exec
		ex.DryRun = true
		err = Execute(plan, fresh, g, ex)
	}
	if err != nil {
		return nil, err
	}
	plan.TotalBytes = 0
	for _, it := range plan.Items {
		if it.Status == Planned || it.Status == Removed {
			plan.TotalBytes += it.Bytes
		}
	}
	return plan, nil
}
