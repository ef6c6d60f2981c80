package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cmdargs"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/explain"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/systems"
	"github.com/stalecheck/stalecheck/internal/tracejoin"
)

type explainFlags struct {
	format, targetDir, buildDir, workspace string
	askCargo                               bool
}

// explainDoc is the JSON document of `stalecheck explain`.
type explainDoc struct {
	report.Envelope
	Workspace string                 `json:"workspace"`
	TargetDir string                 `json:"target_dir"`
	BuildDir  string                 `json:"build_dir"`
	Package   *explain.PackageReport `json:"package,omitempty"`
	Path      *explain.PathReport    `json:"path,omitempty"`
	// Trace is what stored traces (`stalecheck trace`) say about the PATH explained.
	Trace []tracejoin.FileTrace `json:"trace,omitempty"`
}

func newExplainCmd(st Streams) *cobra.Command {
	var fl explainFlags
	cmd := &cobra.Command{
		Use:   "explain PACKAGE[@VERSION] | PATH",
		Short: "Explain why a package has several build folders, or why a file did or did not cause a rebuild",
		Long: `explain PACKAGE compares the fingerprints of the package's units (features, profile settings,
rustflags, compile kind, rustc, dependencies' hashes), says which binaries (in which profile) use each,
and where Cargo takes the package from. PACKAGE@VERSION picks one version.

explain PATH lists every step that compiles or reads the file, whether the step declares it to Cargo,
the step's last run against the file's mtime, and the reason Cargo will or will not rerun it. Make,
Ninja and Go builds at or under --workspace are read too: their steps say whether make, ninja or go
watches the file and whether the next build redoes the step.

An argument is a PATH when it contains a slash, names an existing file or cannot be a package name
(main.c). The build read is that of the workspace at or above --workspace (default: the working folder).

Exit status: 0 answered, 2 usage or I/O error (no workspace, nothing built, no such package, no such
file).`,
		Args: exactArgs("PACKAGE or PATH"),
		RunE: func(cmd *cobra.Command, args []string) error { return runExplain(st, args[0], fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.format, "format", "text", "output format: text or json")
	f.StringVarP(&fl.workspace, "workspace", "w", ".", "the workspace (or a folder in it) whose build folder to read")
	f.StringVar(&fl.targetDir, "target-dir", "", "the target folder (as cargo --target-dir); default: as Cargo finds it")
	f.StringVar(&fl.buildDir, "build-dir", "", "the build folder (Cargo's build.build-dir); default: as Cargo finds it")
	f.BoolVar(&fl.askCargo, "ask-cargo", false, "also ask Cargo (cargo metadata, offline) where it takes the package from")
	return cmd
}

func runExplain(st Streams, arg string, fl explainFlags) error {
	if fl.format != "text" && fl.format != "json" {
		return &ExitError{2, fmt.Errorf("--format %q: want text or json", fl.format)}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return &ExitError{2, err}
	}
	var g *graph.Graph
	if explain.IsPath(arg, cwd) {
		if st, err := os.Stat(arg); err == nil && st.IsDir() {
			return &ExitError{2, fmt.Errorf("explain: %s is a folder: explain takes a file (a source, a header, an output) or a package name", arg)}
		}
		// A file: every build system at or under --workspace (Cargo's at or above it), joined; Cargo
		// alone is read exactly as below.
		g, _, err = systems.ReadAll(context.Background(), fl.workspace, nil, systems.Options{CargoTargetDir: fl.targetDir, CargoBuildDir: fl.buildDir, OnCargoLockWait: cargoLockNotice(st.Err)})
		if err != nil {
			return &ExitError{2, err}
		}
		cmdargs.Annotate(g) // the files commands name without declaring them, as check sees them
	} else {
		layout, err := cargo.Locate(fl.workspace, cargo.LocateOptions{TargetDir: fl.targetDir, BuildDir: fl.buildDir})
		if err != nil {
			return &ExitError{2, err}
		}
		if g, err = cargo.Read(layout, cargo.ReadOptions{OnLockWait: cargoLockNotice(st.Err)}); err != nil {
			return &ExitError{2, err}
		}
	}
	opt := explain.Options{AskCargo: fl.askCargo, Cwd: cwd}
	doc := &explainDoc{Envelope: report.Envelope{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "explain"},
		Workspace: g.Workspace, TargetDir: g.TargetDir, BuildDir: g.BuildDir}
	if explain.IsPath(arg, cwd) {
		doc.Path, err = explain.Path(g, arg, opt)
	} else {
		doc.Package, err = explain.Package(g, arg, opt)
	}
	if err != nil {
		return &ExitError{2, err}
	}
	if doc.Path != nil {
		stateDir, _ := digest.DefaultDir()
		if doc.Trace, err = tracejoin.Explain(stateDir, []string{g.BuildDir}, doc.Path.Path); err != nil {
			return &ExitError{2, err}
		}
	}
	switch {
	case fl.format == "json":
		err = report.WriteJSON(st.Out, doc)
	case doc.Path != nil:
		if err = explain.WritePathText(st.Out, g, doc.Path); err == nil {
			err = tracejoin.WriteText(st.Out, doc.Trace, report.Escape)
		}
	default:
		err = explain.WritePackageText(st.Out, g, doc.Package)
	}
	if err != nil {
		return &ExitError{2, err}
	}
	return nil
}
