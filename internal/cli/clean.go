package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/clean"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

type cleanFlags struct {
	format, targetDir, buildDir, profile, plan string
	incremental, yes                           bool
}

func newCleanCmd(st Streams) *cobra.Command {
	var fl cleanFlags
	cmd := &cobra.Command{
		Use:   "clean [PATH]",
		Short: "Remove the build folders, fingerprints and deps/ files no current binary needs",
		Long: `clean plans the removal of everything no current binary reaches (orphaned build-script run and
compile folders, their .fingerprint folders, deps/ files of orphaned units), prints each item with its
bytes and the total, and removes them only with --yes. --format json writes the plan; clean --plan FILE
--yes executes it exactly, after checking each item again (same device and inode, not a symlink, still
not live in a freshly read graph, still inside the build folder); other items are skipped and reported.

It holds every profile folder's .cargo-lock it reads or touches while it works, and refuses (exit 3)
while a cargo process holds one. It refuses a folder that is not a Cargo target folder. Paths are
resolved through a root anchored at the build folder and symlinks are never followed.

Exit status: 0 planned or done, 2 usage or I/O error (not a Cargo target folder), 3 refused (cargo holds
a lock).`,
		Args: maxArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "."
			if len(args) == 1 {
				path = args[0]
			}
			return runClean(st, path, fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.format, "format", "text", "output format: text or json (the JSON is a plan --plan executes)")
	f.StringVar(&fl.targetDir, "target-dir", "", "the target folder (as cargo --target-dir); default: as Cargo finds it")
	f.StringVar(&fl.buildDir, "build-dir", "", "the build folder (Cargo's build.build-dir); default: as Cargo finds it")
	f.StringVar(&fl.profile, "profile", "", "clean only this profile folder (a profile name such as release or dev, or a folder such as x86_64-unknown-linux-gnu/release)")
	f.BoolVar(&fl.incremental, "incremental", false, "also remove the incremental caches of the profile folders cleaned")
	f.BoolVar(&fl.yes, "yes", false, "remove the items (without it, clean only plans)")
	f.StringVar(&fl.plan, "plan", "", "execute this plan (written by clean --format json) instead of planning afresh")
	return cmd
}

func runClean(st Streams, path string, fl cleanFlags) error {
	if fl.format != "text" && fl.format != "json" {
		return &ExitError{2, fmt.Errorf("--format %q: want text or json", fl.format)}
	}
	req := clean.Request{Yes: fl.yes, Options: clean.Options{Profile: fl.profile, Incremental: fl.incremental},
		Tool: report.Tool{Name: "stalecheck", Version: Version}}
	if fl.plan != "" {
		if fl.profile != "" || fl.incremental || fl.targetDir != "" || fl.buildDir != "" {
			return &ExitError{2, errors.New("--plan takes the folders, --profile and --incremental from the plan; do not pass them")}
		}
		// A plan is small JSON: a FIFO, a device (/dev/zero) or a huge file is refused, naming it.
		data, err := safeio.ReadFile(fl.plan, safeio.MaxCache)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = fmt.Errorf("%s: %w", pe.Path, pe.Err)
			}
			return &ExitError{2, fmt.Errorf("--plan %w", err)}
		}
		var p clean.Plan
		if err := json.Unmarshal(data, &p); err != nil {
			return &ExitError{2, fmt.Errorf("%s is not a clean plan: %w", fl.plan, err)}
		}
		if p.Command != "clean" || p.SchemaVersion != report.SchemaVersion || p.BuildDir == "" || p.TargetDir == "" {
			return &ExitError{2, fmt.Errorf("%s is not a clean plan of schema version %d (written by stalecheck clean --format json)", fl.plan, report.SchemaVersion)}
		}
		req.Plan = &p
		req.Layout = &cargo.Layout{Workspace: p.Workspace, TargetDir: p.TargetDir, BuildDir: p.BuildDir}
	} else {
		l, err := cargo.Locate(path, cargo.LocateOptions{TargetDir: fl.targetDir, BuildDir: fl.buildDir})
		if err != nil {
			return &ExitError{2, cleanNotCargo(path, err)}
		}
		req.Layout = l
	}
	plan, err := clean.Run(req)
	switch {
	case errors.Is(err, clean.ErrLocked):
		return &ExitError{3, fmt.Errorf("refused: %w", err)}
	case err != nil:
		return &ExitError{2, err}
	}
	if fl.format == "json" {
		// Every list of the document is a JSON list, [] when empty (never null).
		for _, l := range []*[]string{&plan.Profiles, &plan.Locks, &plan.Notes} {
			if *l == nil {
				*l = []string{}
			}
		}
		if plan.Items == nil {
			plan.Items = []clean.Item{}
		}
		err = report.WriteJSON(st.Out, plan)
	} else {
		err = clean.WriteText(st.Out, plan)
	}
	if err != nil {
		return &ExitError{2, err}
	}
	return nil
}
