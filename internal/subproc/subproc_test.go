package subproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary act as a parent that starts `sleep` and waits to be killed (a minute at most).
func TestMain(m *testing.M) {
	switch os.Getenv("SUBPROC_TEST_PARENT") {
	case "query", "plain":
		cmd := exec.Command("sleep", "60")
		if os.Getenv("SUBPROC_TEST_PARENT") == "query" {
			Query(cmd)
		}
		if err := cmd.Start(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		// Wait to be killed. Not `select {}`: with no other goroutine the runtime calls that a
		// deadlock and exits at once, and the child's death signal came from that exit, racing the
		// test's look at the child (it lost under load).
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startParent runs the test binary as a parent of `sleep 60` and returns it and the child's PID.
func startParent(t *testing.T, mode string) (*exec.Cmd, int) {
	t.Helper()
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), "SUBPROC_TEST_PARENT="+mode)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		parent.Process.Kill()
		parent.Wait()
		t.Fatalf("parent said %q (%v)", line, err)
	}
	return parent, pid
}

// running tells whether pid is a live process (a zombie waiting for its reaper is not).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestQueryChildDiesWithParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep")
	}
	// The premise: a child started without Query outlives its killed parent.
	plain, plainPID := startParent(t, "plain")
	plain.Process.Kill()
	plain.Wait()
	if !running(plainPID) {
		t.Fatalf("premise: a plain child %d died with its parent", plainPID)
	}
	syscall.Kill(plainPID, syscall.SIGKILL)

	parent, pid := startParent(t, "query")
	if !running(pid) {
		t.Fatalf("child %d is not running before its parent is killed", pid)
	}
	parent.Process.Kill() // SIGKILL: no deferred clean-up of the parent can run
	parent.Wait()
	for deadline := time.Now().Add(20 * time.Second); running(pid); {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d still runs 20 s after its parent was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
