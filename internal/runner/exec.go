package runner

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
)

// Usage is what one run of the command took, as the kernel reports it when the command is reaped.
type Usage struct {
	Start  time.Time // just before the command was started
	WallNS int64     // elapsed time from start to reaping, monotonic clock
	// UserNS and SysNS are the CPU times of the command and of every descendant it waited for.
	UserNS, SysNS int64
	// PeakRSSBytes is ru_maxrss × 1024 as wait4 reports it: the peak resident set of the largest single
	// process of the command tree (the command or a descendant it waited for), not a sum. On Linux it is
	// never below stalecheck's own resident set when it starts the command (about 12 MiB): the kernel
	// folds the high-water mark of the address space a process leaves at exec into its ru_maxrss, and Go
	// starts commands with vfork semantics, so that address space is stalecheck's.
	PeakRSSBytes int64
	// RSSFloorBytes is stalecheck's own peak resident set just before it started the command: the floor
	// below which PeakRSSBytes cannot go (see PeakRSSBytes). A PeakRSSBytes at or below it says only that
	// the command's own peak was at most that much. 0 when unknown.
	RSSFloorBytes int64
	// ExitStatus is the command's exit status; 128+N when signal N killed it.
	ExitStatus int
	// Signal is the signal that killed the command, 0 when it exited.
	Signal syscall.Signal
}

// Stdio are the command's standard streams. *os.File values are handed to the command as they are (no
// copying); nil Stdin reads from the null device, nil Stdout and Stderr write to it.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Exec runs the plan's command once in its folder with its environment, and measures it.
//
// While the command runs, SIGINT and SIGQUIT sent to stalecheck are ignored: the terminal sends them to
// the whole foreground process group, so the command gets them itself and stalecheck stays to reap it and
// record the result. SIGTERM and SIGHUP are forwarded to the command. A signal stalecheck was started with
// ignored (nohup, a background job) stays ignored, and the command inherits that. The handlers are caught
// (not ignored) so that exec resets them to the default in the command.
//
// The error is an *ExecError (126 or 127) when the command cannot be started.
func (p *Plan) Exec(st Stdio) (Usage, error) {
	cmd := &exec.Cmd{Path: p.Program, Args: p.Command, Dir: p.Dir, Env: p.Environ,
		Stdin: st.Stdin, Stdout: st.Stdout, Stderr: st.Stderr}
	var catch []os.Signal
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			catch = append(catch, s)
		}
	}
	sigs := make(chan os.Signal, 8)
	if len(catch) > 0 {
		signal.Notify(sigs, catch...)
	}
	stop := func() {
		signal.Stop(sigs)
		close(sigs)
	}

	var u Usage
	u.RSSFloorBytes = SelfPeakRSS()
	u.Start = time.Now()
	if err := cmd.Start(); err != nil {
		stop()
		code := 126
		if errors.Is(err, fs.ErrNotExist) {
			code = 127 // e.g. a script whose interpreter does not exist, as execvp reports it
		}
		return u, &ExecError{code, p.Command[0], unwrapExec(err)}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := range sigs {
			if s == syscall.SIGTERM || s == syscall.SIGHUP {
				cmd.Process.Signal(s) // an error means it has already exited
			}
		}
	}()
	waitErr := cmd.Wait()
	u.WallNS = time.Since(u.Start).Nanoseconds()
	stop()
	<-done

	ps := cmd.ProcessState
	if ps == nil {
		return u, waitErr
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		u.UserNS = ru.Utime.Nano()
		u.SysNS = ru.Stime.Nano()
		u.PeakRSSBytes = int64(ru.Maxrss) * 1024
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		u.Signal = ws.Signal()
		u.ExitStatus = 128 + int(u.Signal)
	default:
		u.ExitStatus = ps.ExitCode()
	}
	return u, nil
}

// SelfPeakRSS returns the high-water mark of this process's own resident set in bytes (VmHWM of
// /proc/self/status), 0 when it cannot be read. Taken just before a command starts, it is the floor of
// that command's peak RSS as wait4 reports it: at exec, Linux folds the high-water mark of the address
// space the command leaves (stalecheck's, shared until exec) into the command's ru_maxrss. It is not
// getrusage(RUSAGE_SELF): that one also carries what stalecheck's own parent passed on the same way.
func SelfPeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

func unwrapExec(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Record returns the ledger record of one run of the plan: the measurements, the command, and the build
// identity; when the build is stale, Stale is set and Findings holds the blocking findings in the JSON
// form of `stalecheck check --format json`.
func (p *Plan) Record(name string, u Usage) *ledger.Record {
	r := &ledger.Record{
		Name: name, Start: u.Start, WallNS: u.WallNS, UserNS: u.UserNS, SysNS: u.SysNS,
		PeakRSSBytes: u.PeakRSSBytes, ExitStatus: u.ExitStatus,
		Command: append([]string{}, p.Command...), WorkDir: p.Dir, Identity: p.Identity,
	}
	if p.Stale() {
		r.Stale = true
		r.Findings = p.FindingsJSON()
	}
	return r
}

// FindingsJSON returns the blocking findings as a JSON list (the "findings" of check's JSON document).
func (p *Plan) FindingsJSON() json.RawMessage {
	doc := report.NewCheckDoc(report.Tool{}, p.Graph, p.Blocking)
	b, err := json.Marshal(doc.Findings)
	if err != nil {
		return nil
	}
	return b
}

// DefaultName is the record name when none is given: the base name of the program as typed.
func DefaultName(command []string) string {
	if len(command) == 0 {
		return ""
	}
	n := command[0]
	for i := len(n) - 1; i >= 0; i-- {
		if n[i] == '/' {
			return n[i+1:]
		}
	}
	return n
}
