package trace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/stalecheck/stalecheck/internal/safeio"
	"golang.org/x/sys/unix"
)

// ErrNoStrace is wrapped by Run's error when strace is not installed.
var ErrNoStrace = errors.New("strace is not installed (Debian: apt-get install strace)")

// StraceArgs are the options Run gives strace 6.1 before `-o FIFO -- BUILD…`:
//
//	-f -q --seccomp-bpf -I 2     follow forks; keep the +++ exited +++ lines; stop only at traced calls;
//	                              let SIGTERM reach strace (to detach) except while it decodes a call
//	-e trace=%file,%process,fchdir  the calls that take a path, the process tree, fchdir
//	-e signal=none                no signal lines
//	-e verbose=execve,execveat,clone3  dereference only these (clone3's flags tell threads from processes;
//	                              stat buffers stay unprinted, which saves most of the output)
//	-e abbrev=!execve,execveat    print execve's whole environment
//	-s 4096                       argv and env strings up to 4096 bytes
//	--strings-in-hex=non-ascii-chars  escapes only for bytes outside printable ASCII (\xNN), so paths with
//	                              newlines or control characters stay on one line and parse exactly
//	--timestamps=unix,ns          wall-clock nanoseconds
var StraceArgs = []string{
	"-f", "-q", "--seccomp-bpf", "-I", "2",
	"-e", "trace=%file,%process,fchdir",
	"-e", "signal=none",
	"-e", "verbose=execve,execveat,clone3",
	"-e", "abbrev=!execve,execveat",
	"-s", "4096",
	"--strings-in-hex=non-ascii-chars",
	"--timestamps=unix,ns",
}

// Options configure Run.
type Options struct {
	Command  []string // the build: program and arguments
	Dir      string   // its working folder ("" = the current one)
	Env      []string // its environment (nil = os.Environ())
	StateDir string   // the state folder (the store goes in StateDir/traces)
	BuildDir string   // the key (see Path); "" = Dir
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	Strace   string // strace's path ("" = /usr/bin/strace, else PATH)
	// Grace is how long Run waits, after the build's first process exited, for the processes still
	// traced to end before detaching strace from them (default 300 ms).
	Grace time.Duration
}

// Result is what Run did.
type Result struct {
	ExitStatus int    // the build's status: its exit code, or 128+N when killed by signal N
	File       string // the store file written
	Lines      int64  // strace lines read
	Processes  int
	Accesses   int   // accesses stored (repeats of a (path, op, errno, mode) within a process are dropped)
	Bytes      int64 // the store file's size
	Detached   int   // processes still running when tracing stopped (left running, untraced)
	Skipped    int64 // strace lines not understood
	Elapsed    time.Duration
	// CPU is the user+system time of strace and the processes it reaped (the build tree, the
	// processes left running excepted); the parser's own time is the caller's.
	CPU time.Duration
}

// FindStrace returns strace's path: want if given, /usr/bin/strace, else the first on PATH.
func FindStrace(want string) (string, error) {
	if want != "" {
		if _, err := os.Stat(want); err != nil {
			return "", fmt.Errorf("%w: %v", ErrNoStrace, err)
		}
		return want, nil
	}
	if st, err := os.Stat("/usr/bin/strace"); err == nil && !st.IsDir() {
		return "/usr/bin/strace", nil
	}
	p, err := exec.LookPath("strace")
	if err != nil {
		return "", ErrNoStrace
	}
	return p, nil
}

// Run runs the build under strace, records the trace as it streams in and stores it atomically (a failed
// build too, marked failed). It returns when the build's first process has exited: processes it left
// running (daemons, servers, a backgrounded `sleep &`) get Grace to end, then strace detaches from them
// and they go on untraced. Errors: ErrNoStrace; an *exec.Error-like error when the command is not found
// (the status is then 127); strace's own failure; writing the store.
func Run(ctx context.Context, opt Options) (*Result, error) {
	begin := time.Now()
	if len(opt.Command) == 0 {
		return nil, errors.New("trace: no build command given")
	}
	strace, err := FindStrace(opt.Strace)
	if err != nil {
		return nil, err
	}
	dir := opt.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	env := opt.Env
	if env == nil {
		env = os.Environ()
	}
	if p, err := lookPath(opt.Command[0], env, dir); err != nil {
		return &Result{ExitStatus: 127}, err
	} else if err := executable(p); err != nil {
		// As a shell says: found, but it cannot run. No trace is stored (the last one stays).
		return &Result{ExitStatus: 126}, fmt.Errorf("trace: %s: %w", opt.Command[0], err)
	}
	buildDir := opt.BuildDir
	if buildDir == "" {
		buildDir = dir
	}
	grace := opt.Grace
	if grace == 0 {
		grace = 300 * time.Millisecond
	}
	store := Dir(opt.StateDir)
	if err := os.MkdirAll(store, 0o755); err != nil {
		return nil, fmt.Errorf("trace store: %w", err)
	}
	tmpDir, err := os.MkdirTemp(store, ".fifo-")
	if err != nil {
		return nil, fmt.Errorf("trace store: %w", err)
	}
	defer os.RemoveAll(tmpDir)
	fifo := filepath.Join(tmpDir, "strace.out")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return nil, fmt.Errorf("trace: mkfifo %s: %w", fifo, err)
	}
	rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer rd.Close()
	// Our own write end keeps the reader from seeing end-of-file before strace opens the FIFO.
	keep, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer keep.Close()

	out, err := os.CreateTemp(store, ".trace-*")
	if err != nil {
		return nil, fmt.Errorf("trace store: %w", err)
	}
	defer func() {
		out.Close()
		os.Remove(out.Name())
	}()
	t := &Trace{BuildDir: filepath.Clean(buildDir), Cwd: dir, Command: opt.Command, Start: begin.UnixNano()}
	rec := NewRecorder(out, t)
	mainExit := make(chan int, 1)
	rec.OnMainExit = func(s int) { mainExit <- s }

	args := append(append([]string{}, StraceArgs...), "-o", fifo, "--")
	args = append(args, opt.Command...)
	cmd := exec.Command(strace, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opt.Stdin, opt.Stdout, opt.Stderr
	cmd.WaitDelay = time.Second // a daemon holding a pipe to our writers cannot keep us waiting
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("trace: starting %s: %w", strace, err)
	}
	parsed := make(chan error, 1)
	parser := NewParser(rd)
	go func() { parsed <- rec.Record(parser) }()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var straceErr error
	straceDone := false
	var graceC <-chan time.Time
	for !straceDone {
		select {
		case <-mainExit:
			graceC = time.After(grace)
		case <-graceC:
			// The build is done; what still runs is left behind by it. strace detaches on SIGTERM.
			_ = cmd.Process.Signal(syscall.SIGTERM)
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
		case straceErr = <-waited:
			straceDone = true
		}
	}
	// strace has exited: everything it wrote is in the FIFO. A tracee holding strace's log descriptor
	// would keep end-of-file from coming, so the drain has a deadline.
	keep.Close()
	_ = rd.SetReadDeadline(time.Now().Add(3 * time.Second))
	perr := <-parsed
	if perr != nil && !errors.Is(perr, os.ErrDeadlineExceeded) {
		return nil, fmt.Errorf("trace: reading strace's output: %w", perr)
	}
	t.SkippedLines = parser.Skipped
	if rec.main == nil {
		// The command was found and can run, so this is strace's failure (a strace that wrote nothing, or
		// wrote what it does not write): no trace is stored and the last one stays.
		how := "exited 0"
		if straceErr != nil {
			how = straceErr.Error()
		}
		msg := fmt.Sprintf("trace: %s wrote no trace of the build (it %s; %d lines read", strace, how, parser.Line())
		if parser.Skipped > 0 {
			msg += fmt.Sprintf(", %d not understood, the first %s", parser.Skipped, parser.FirstSkip)
		}
		if perr != nil {
			msg += "; reading them: " + perr.Error()
		}
		return nil, errors.New(msg + "): is it strace 6.1 or later?")
	}
	if !rec.MainExited() {
		// strace ended before the build's process did (killed, or -o lost): take strace's own status.
		var ee *exec.ExitError
		switch {
		case errors.As(straceErr, &ee):
			t.ExitStatus = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.ExitStatus = 128 + int(ws.Signal())
			}
		case straceErr != nil:
			t.ExitStatus = 1
		}
		// strace re-raises the signal that killed the build's process without printing its
		// "+++ killed by" line: the status is strace's own.
		if m := rec.main; !m.written {
			m.p.Exit, m.p.End = t.ExitStatus, time.Now().UnixNano()
			if t.ExitStatus > 128 {
				m.p.Signal = unix.SignalName(syscall.Signal(t.ExitStatus - 128))
			}
			rec.flush(m)
		}
	}
	left := map[*liveProc]bool{}
	for _, lp := range rec.live {
		if !lp.written {
			left[lp] = true
		}
	}
	end := time.Now().UnixNano()
	if err := rec.Finish(end); err != nil {
		return nil, err
	}
	if err := out.Sync(); err != nil {
		return nil, fmt.Errorf("trace store: %w", err)
	}
	if err := out.Close(); err != nil {
		return nil, fmt.Errorf("trace store: %w", err)
	}
	dst := Path(opt.StateDir, t.BuildDir)
	if err := os.Rename(out.Name(), dst); err != nil {
		return nil, fmt.Errorf("trace store: %w", err)
	}
	return &Result{
		ExitStatus: t.ExitStatus, File: dst, Lines: parser.Line(), Processes: t.nproc, Accesses: t.naccess,
		Bytes: rec.w.n, Detached: len(left), Skipped: parser.Skipped, Elapsed: time.Since(begin),
		CPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
	}, nil
}

// executable says why the file at p cannot be run, as execve would refuse it: not a regular file, or
// no permission to execute it.
func executable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("cannot execute %s: it is %s, not a program", p, safeio.Kind(st.Mode()))
	}
	if err := unix.Access(p, unix.X_OK); err != nil {
		return fmt.Errorf("cannot execute %s: %w", p, err)
	}
	return nil
}

// lookPath finds name the way execvp does with env's PATH (a name with a slash is taken as is, against
// dir when relative).
func lookPath(name string, env []string, dir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("trace: %s: %w", name, err)
		}
		return p, nil
	}
	path, _ := getenv(env, "PATH")
	for _, d := range strings.Split(path, ":") {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("trace: %s: command not found on PATH %q", name, path)
}
