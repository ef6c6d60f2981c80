package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/stalecheck/stalecheck/internal/sysdirs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/humanize"
	"github.com/stalecheck/stalecheck/internal/trace"
)

type traceFlags struct {
	stateDir, buildDir, targetDir string
	show                          bool
}

func newTraceCmd(st Streams) *cobra.Command {
	var fl traceFlags
	cmd := &cobra.Command{
		Use:   "trace [--] BUILD [ARGS…]",
		Short: "Run a build under strace and keep what its processes read, looked up and ran",
		Long: `trace runs BUILD under strace (Debian's strace 6.1, --seccomp-bpf: apt-get install strace) and
stores, per process, every open/stat/access/readlink/execve with its result (failed lookups too), the
process tree, the working folders and each exec's argv and environment, in the state folder
($XDG_STATE_HOME/stalecheck/traces), keyed by the build folder: Cargo's build folder found from the
working folder as check finds it, else the working folder. A failed build is stored too, marked failed.

trace returns when BUILD's own process exits: processes it left running (a server, a backgrounded
job) get 300 ms, then strace detaches from them and they go on untraced.

--show prints what the stored trace of the working folder's build says instead (build-script runs,
the files each read outside the build folder, and PATH lookups that found nothing).

Exit status: BUILD's (128+N when a signal N ended it); 127 BUILD not found; 126 BUILD cannot be executed; 2 usage or I/O error,
strace missing.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runTrace(st, args, fl) },
	}
	cmd.Flags().SetInterspersed(false) // `trace cargo build --release`: flags after BUILD are BUILD's
	f := cmd.Flags()
	f.StringVar(&fl.stateDir, "state-dir", "", "the state folder (default $XDG_STATE_HOME/stalecheck)")
	f.StringVar(&fl.targetDir, "target-dir", "", "the Cargo target folder (as cargo --target-dir), for the store key")
	f.StringVar(&fl.buildDir, "build-dir", "", "the build folder the trace is kept for (default: Cargo's, else the working folder)")
	f.BoolVar(&fl.show, "show", false, "print the stored trace of this build instead of running one")
	return cmd
}

func runTrace(st Streams, args []string, fl traceFlags) error {
	cwd, err := os.Getwd()
	if err != nil {
		return &ExitError{2, err}
	}
	stateDir := fl.stateDir
	if stateDir == "" {
		if stateDir, err = digest.DefaultDir(); err != nil {
			return &ExitError{2, err}
		}
	}
	key := fl.buildDir
	if key == "" {
		key = cwd
		if l, err := cargo.Locate(cwd, cargo.LocateOptions{TargetDir: fl.targetDir}); err == nil && l.BuildDir != "" {
			key = l.BuildDir
		}
	}
	if key, err = filepath.Abs(key); err != nil {
		return &ExitError{2, err}
	}
	if fl.show {
		t, err := trace.Load(stateDir, key)
		if err != nil {
			return &ExitError{2, err}
		}
		showTrace(st, t)
		return nil
	}
	if len(args) == 0 {
		return &ExitError{2, errors.New("trace: give the build command: stalecheck trace -- cargo build")}
	}
	res, err := trace.Run(context.Background(), trace.Options{
		Command: args, Dir: cwd, StateDir: stateDir, BuildDir: key,
		Stdin: os.Stdin, Stdout: st.Out, Stderr: st.Err,
	})
	if err != nil {
		code := 2
		if res != nil && (res.ExitStatus == 127 || res.ExitStatus == 126) {
			code = res.ExitStatus // not found, cannot execute: as a shell says
		}
		return &ExitError{code, err}
	}
	state := "ok"
	if res.ExitStatus != 0 {
		state = fmt.Sprintf("failed, exit status %d", res.ExitStatus)
	}
	fmt.Fprintf(st.Err, "stalecheck trace: %s: %d processes, %d file accesses from %d strace lines; stored in %s (%s)",
		state, res.Processes, res.Accesses, res.Lines, res.File, humanize.Bytes(res.Bytes))
	if res.Detached > 0 {
		fmt.Fprintf(st.Err, "; %d processes left running were detached", res.Detached)
	}
	fmt.Fprintln(st.Err)
	if res.ExitStatus != 0 {
		return &ExitError{Code: res.ExitStatus}
	}
	return nil
}

func showTrace(st Streams, t *trace.Trace) {
	status := "ok"
	if t.Failed {
		status = fmt.Sprintf("failed (exit status %d)", t.ExitStatus)
	}
	fmt.Fprintf(st.Out, "trace of %s: %s, %s\n", escapeErr(t.BuildDir), escapeErr(strings.Join(t.Command, " ")), status)
	fmt.Fprintf(st.Out, "  %d processes, %d accesses, started %d ns, ended %d ns, store %s\n", len(t.Processes), len(t.Accesses), t.Start, t.End, escapeErr(t.File))
	for _, run := range t.BuildScriptRuns() {
		fmt.Fprintf(st.Out, "build script %s (pid %d, %d–%d ns)\n", escapeErr(run.Unit), run.Proc.PID, run.Proc.Start, run.Proc.End)
		for _, a := range t.ReadsOf(run.Proc.ID) {
			if a.Errno != "" || strings.HasPrefix(a.Path, run.BuildDir+"/") || sysdirs.System(a.Path, t.Cwd, t.BuildDir, run.Proc.Cwd) {
				continue
			}
			// A file read is a file opened: a stat, an access check or a folder opened to list it is a
			// look-up (the toolchain's folders, the profile folder), not a read of its content.
			if !a.Opened() || a.Mode&trace.ModeDirectory != 0 {
				continue
			}
			fmt.Fprintf(st.Out, "  read %s (%s by pid %d at %d ns)\n", escapeErr(a.Path), a.Op, t.Processes[a.Proc].PID, a.Time)
		}
	}
	for _, l := range t.PathLookups(-1) {
		if l.Found != "" {
			continue
		}
		fmt.Fprintf(st.Out, "not found on PATH: %s (pid %d, %d folders tried, at %d ns)\n", escapeErr(l.Name), t.Processes[l.Proc].PID, len(l.Tried), l.Time)
	}
}
