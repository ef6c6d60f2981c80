package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/analyze"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/systems"
	"github.com/stalecheck/stalecheck/internal/vcache"
)

type checkFlags struct {
	format, failOn, targetDir, buildDir, color, output string
	manifestPath, targetTriple                         string
	verbose, noNative, noCache, release, quiet, all    bool
	systems, profiles, packages                        []string
}

func newCheckCmd(st Streams) *cobra.Command {
	var fl checkFlags
	cmd := &cobra.Command{
		Use:   "check [PATH]",
		Short: "Check the builds at PATH (default: the working folder): Cargo, Make, Ninja (CMake, Meson)",
		Long: `check finds the Cargo workspace at or above PATH and its target and build folders the way Cargo
does, reads every profile folder without running Cargo, and runs every rule. Make folders (a makefile
with built files) and Ninja build folders (build.ninja; CMake and Meson write one) at or under PATH
are read too (make -n -p -q and ninja -n only: nothing is built), and joined by file path; --system
narrows which are read.

A warm check of an unchanged build answers from the verdict cache in the state folder
($XDG_STATE_HOME/stalecheck/verdicts): the report and exit status of the last full check of the same
command line, working folder, environment and stalecheck build, used only while every path that check
consulted (records, sources, headers, folders listed, look-ups that found nothing, its own state files)
has the same device, inode, size, mtime, ctime and mode. A check that ran make, ninja -n or go list is
not cached. --no-cache (or ` + vcache.EnvMode + `=off) turns it off;
` + vcache.EnvMode + `=verify also runs the full check on every hit and exits 3 naming the
difference when they disagree.

Exit status: 0 no finding at or above --fail-on, 1 findings at or above it, 2 usage or I/O error
(3: the verdict cache disagreed with the full check, under ` + vcache.EnvMode + `=verify).`,
		Args: maxArgs("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "."
			if len(args) == 1 {
				path = args[0]
			}
			if fl.manifestPath != "" {
				if len(args) == 1 {
					return &ExitError{2, fmt.Errorf("--manifest-path and PATH name the workspace twice: give one")}
				}
				p, err := manifestDir(fl.manifestPath)
				if err != nil {
					return &ExitError{2, err}
				}
				path = p
			}
			// Cargo's --release and --target name the profile folder, as --profile does.
			if fl.release || fl.targetTriple != "" {
				if len(fl.profiles) > 0 {
					given := "--release"
					if fl.targetTriple != "" && fl.release {
						given = "--release and --target"
					} else if fl.targetTriple != "" {
						given = "--target"
					}
					return &ExitError{2, fmt.Errorf("%s and --profile both name the profile folder: give one or the other", given)}
				}
				prof := "debug"
				if fl.release {
					prof = "release"
				}
				if fl.targetTriple != "" {
					prof = fl.targetTriple + "/" + prof
				}
				fl.profiles = []string{prof}
			}
			// Cargo's own colour setting, when --color is not given (as under `cargo stalecheck`).
			if v := os.Getenv("CARGO_TERM_COLOR"); !cmd.Flags().Changed("color") && (v == "auto" || v == "always" || v == "never") {
				fl.color = v
			}
			return runCheck(st, path, fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.format, "format", "text", "output format: text, json or sarif (SARIF 2.1.0, for code scanning)")
	f.StringVarP(&fl.output, "output", "o", "", "write the report to this file (atomically: a temporary file renamed into place) instead of stdout")
	f.StringVar(&fl.failOn, "fail-on", "error", "exit 1 when a finding is at least this severe: error, warning, info or none")
	f.StringVar(&fl.targetDir, "target-dir", "", "the target folder (as cargo --target-dir); default: as Cargo finds it")
	f.StringVar(&fl.buildDir, "build-dir", "", "the build folder (Cargo's build.build-dir); default: as Cargo finds it")
	f.StringVar(&fl.color, "color", "auto", "colour the text report: auto, always or never (NO_COLOR is honoured)")
	f.BoolVarP(&fl.verbose, "verbose", "v", false, "also list each finding's evidence, every root and how it was tied to its unit")
	f.StringSliceVar(&fl.systems, "system", nil, "read only these build systems (comma-separated: cargo, make, ninja, ...); default: every one found at or under PATH")
	f.StringArrayVar(&fl.profiles, "profile", nil, "read only this Cargo profile folder (repeatable: a profile name such as release or dev, or a folder such as x86_64-unknown-linux-gnu/release, which brings its host folder along); default: every one")
	f.BoolVar(&fl.noCache, "no-cache", false, "do not answer from, nor store into, the verdict cache (also "+vcache.EnvMode+"=off)")
	f.BoolVar(&fl.noNative, "no-native", false, "do not open archives and objects (skips DWARF and archive-member evidence)")
	f.StringArrayVarP(&fl.packages, "package", "p", nil, "report only the findings about this package (repeatable, as cargo -p): its binaries and the folders of its units")
	f.BoolVarP(&fl.release, "release", "r", false, "read only the release profile folder (as cargo --release; with --target, <triple>/release)")
	f.StringVar(&fl.targetTriple, "target", "", "read only the profile folder of this target triple (as cargo --target: <triple>/debug, or <triple>/release with --release)")
	f.BoolVar(&fl.all, "all", false, "report every finding on its own (by default findings of one rule and one fix are shown once, with a count and the other files' paths)")
	f.BoolVarP(&fl.quiet, "quiet", "q", false, "print no report when the exit status is 0 (no finding at or above --fail-on)")
	f.StringVar(&fl.manifestPath, "manifest-path", "", "the Cargo.toml of the workspace or package to check (as cargo --manifest-path), instead of PATH")
	return cmd
}

// manifestDir checks a --manifest-path as Cargo does (a Cargo.toml that is a file) and returns its folder.
func manifestDir(p string) (string, error) {
	if filepath.Base(p) != "Cargo.toml" {
		return "", fmt.Errorf("--manifest-path %s: the manifest-path must be a path to a Cargo.toml file", p)
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("--manifest-path: %w", err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("--manifest-path %s: not a regular file", p)
	}
	return filepath.Dir(p), nil
}

func runCheck(st Streams, path string, fl checkFlags) error {
	if fl.format != "text" && fl.format != "json" && fl.format != "sarif" {
		return &ExitError{2, fmt.Errorf("--format %q: want text, json or sarif", fl.format)}
	}
	if fl.color != "auto" && fl.color != "always" && fl.color != "never" {
		return &ExitError{2, fmt.Errorf("--color %q: want auto, always or never", fl.color)}
	}
	failOn, err := check.ParseSeverity(fl.failOn)
	if err != nil {
		return &ExitError{2, fmt.Errorf("--fail-on: %w", err)}
	}
	if fl.output != "" {
		if err := checkOutputFile("--output", fl.output, nil); err != nil {
			return &ExitError{2, err}
		}
	}
	tuneGC()
	stateDir, _ := digest.DefaultDir()
	color := fl.color == "always" || fl.color == "auto" && fl.output == "" && useColor(st.Out, "auto")
	// A warm check of an unchanged build answers from the verdict cache (checkcache.go).
	return cachedCheck(st, stateDir, fmt.Sprintf("%q %#v color=%v", path, fl, color), fl.noCache, fl.output, func() (*vcache.Result, error) {
		return fullCheck(path, fl, stateDir, color, failOn, cargoLockNotice(st.Err))
	})
}

// fullCheck reads the builds, runs the rules and renders the report; the result holds the report's bytes
// and the exit status (0 or 1). An error is exit status 2.
func fullCheck(path string, fl checkFlags, stateDir string, color bool, failOn check.Severity, onLockWait func(string)) (*vcache.Result, error) {
	// Every build system at or under PATH (Cargo's at or above it), read and merged; Cargo alone is
	// read exactly as before (systems.ReadAll). A status line on a terminal when it takes a while.
	where, _ := filepath.Abs(path)
	stop := startProgress(os.Stderr, "Checking "+where+" (reading the build records, then the binaries)")
	g, findings, err := analyze.Analyze(context.Background(), path, analyze.Options{StateDir: stateDir, NoNative: fl.noNative,
		Systems: fl.systems, Read: systems.Options{CargoTargetDir: fl.targetDir, CargoBuildDir: fl.buildDir, CargoProfiles: fl.profiles, OnCargoLockWait: onLockWait}})
	stop()
	if err != nil {
		return nil, &ExitError{2, err}
	}
	if findings, err = forPackages(g, findings, fl.packages); err != nil {
		return nil, &ExitError{2, err}
	}
	if !fl.all {
		// One rule, one fix: one finding with a count (20,000 undeclared sources are one fault).
		findings = check.Group(findings)
	}
	tool := report.Tool{Name: "stalecheck", Version: Version}
	var out bytes.Buffer
	switch fl.format {
	case "json":
		err = report.WriteJSON(&out, report.NewCheckDoc(tool, g, findings))
	case "sarif":
		err = report.WriteSarif(&out, report.NewSarifLog(report.NewCheckDoc(tool, g, findings), report.SarifOptions{}))
	default:
		err = report.WriteText(&out, g, findings, report.TextOptions{Color: color, Verbose: fl.verbose})
	}
	if err != nil {
		return nil, &ExitError{2, err}
	}
	res := &vcache.Result{Out: out.Bytes()}
	for _, f := range findings {
		if f.Severity >= failOn {
			res.Exit = 1
			break
		}
	}
	if fl.quiet && res.Exit == 0 && fl.format == "text" {
		res.Out = nil // -q: a passing check prints nothing, as cargo -q
	}
	return res, nil
}
