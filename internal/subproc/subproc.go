// Package subproc prepares the programs stalecheck runs only to read their answer (`ninja -n`,
// `make -p`, `go list`, `cargo metadata`, git, a compiler's `--version`, nvidia-smi). Such a child
// must never outlive stalecheck: Go's os/exec kills it when the command's context ends, but not when
// stalecheck itself is killed (SIGKILL, an out-of-memory kill, a closed terminal), and a `ninja -n`
// blocked on a FIFO would then wait forever. On Linux the kernel sends the child SIGKILL when its
// parent dies (prctl PR_SET_PDEATHSIG, set between fork and exec). The user's own commands (`run`'s
// command, `trace`'s build) are not queries and are left alone.
package subproc

import "os/exec"

// Query marks cmd as a query and returns it; call it before cmd.Start (or Run, Output).
func Query(cmd *exec.Cmd) *exec.Cmd {
	setDeathSignal(cmd)
	return cmd
}
