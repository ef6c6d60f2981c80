package subproc

import (
	"os/exec"
	"syscall"
)

// setDeathSignal asks the kernel to kill the child when its parent dies. The kernel ties that to the
// thread that forked the child; Go's runtime keeps its threads (it only ends one whose goroutine
// exits while locked to it, which the callers never do).
func setDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
