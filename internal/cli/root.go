// Package cli holds stalecheck's commands, one file per command; cmd/stalecheck only wires them.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/stalecheck/stalecheck/internal/systems"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

// Version is stalecheck's version, printed by --version and written in every JSON envelope.
var Version = "0.1.0"

// ExitError carries a process exit status with an optional message for stderr.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Streams are the command's standard streams (tests substitute buffers).
type Streams struct {
	Out, Err io.Writer
}

// NewRoot builds the command tree. A bare `stalecheck` runs `check` on the working folder.
func NewRoot(st Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "stalecheck",
		Short: "Tell which code you are running: find stale native builds in Cargo target folders",
		Long: `stalecheck reads what Cargo left on disk (fingerprints, build-script runs, OUT_DIR contents, the
uplifted binaries) and reports native inputs that changed without a rebuild, duplicate copies of a
library and which one each binary links, failed builds and orphaned folders. It never runs Cargo.`,
		Example: `  stalecheck                                  # check the workspace at or above the working folder
  stalecheck check ~/src/prover --fail-on warning
  stalecheck check --format sarif -o stalecheck.sarif   # for code scanning
  stalecheck explain prover-sys
  stalecheck completion bash > ~/.local/share/bash-completion/completions/stalecheck`,
		Version:       buildVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
		// No Args: cobra's own check for the root command says "unknown command" with the
		// subcommands it is close to ("Did you mean this? check").
	}
	root.SetVersionTemplate("{{.Version}}")
	root.SetOut(st.Out)
	root.SetErr(st.Err)
	chk := newCheckCmd(st)
	root.AddCommand(chk)
	root.AddCommand(newRunCmd(st), newRunsCmd(st), newDiffCmd(st), newReportCmd(st))
	root.AddCommand(newWhichCmd(st))
	root.AddCommand(newVerifyCmd(st))
	root.AddCommand(newExplainCmd(st), newCleanCmd(st))
	root.AddCommand(newTraceCmd(st))
	addExamples(root)
	completeEnums(root, systems.Registered())
	wrapFlagUsages(root)
	// A bare `stalecheck` (with check's flags) behaves as `stalecheck check`.
	setFlagGroups(chk)
	root.Flags().AddFlagSet(chk.Flags())
	root.RunE = func(cmd *cobra.Command, args []string) error { return chk.RunE(cmd, args) }
	return root
}

// Main runs the command line and returns the process exit status.
func Main(args []string, st Streams) int {
	args = cargoSubcommandArgs(args)
	root := NewRoot(st)
	root.SetArgs(args[1:])
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			ee.Err = plainFlagValueError(ee.Err)
			fmt.Fprintln(st.Err, "stalecheck:", escapeErr(ee.Err.Error()))
			if tip := flagTip(cmd, ee.Err); tip != "" {
				fmt.Fprintln(st.Err, "  tip:", escapeErr(tip))
			}
		}
		return ee.Code
	}
	err = plainFlagValueError(err)
	if tip := flagTip(cmd, err); tip != "" {
		fmt.Fprintln(st.Err, "stalecheck:", escapeErr(err.Error()))
		fmt.Fprintln(st.Err, "  tip:", escapeErr(tip))
		return 2
	}
	// cobra's own errors: unknown flags or commands, an unknown one with the commands it is close to
	// (said as Cargo says it: "tip: a similar command exists").
	msg, similar, ok := strings.Cut(err.Error(), "\n\nDid you mean this?\n")
	fmt.Fprintln(st.Err, "stalecheck:", escapeErr(msg))
	if names := strings.Fields(similar); ok && len(names) > 0 {
		fmt.Fprintln(st.Err, "  tip: a similar command exists:", escapeErr(strings.Join(names, ", ")))
	}
	return 2
}

// cargoSubcommandArgs drops the "stalecheck" argument Cargo passes to an external subcommand:
// `cargo stalecheck check` runs `cargo-stalecheck stalecheck check`.
func cargoSubcommandArgs(args []string) []string {
	if len(args) >= 2 && args[1] == "stalecheck" {
		return append(args[:1:1], args[2:]...)
	}
	return args
}

func escapeErr(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f {
			fmt.Fprintf(&b, `\x%02x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// useColor: colour only on a terminal and never when NO_COLOR is set (https://no-color.org).
func useColor(w io.Writer, mode string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
