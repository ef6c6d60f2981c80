package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Usage is what one run of the command took, as the kernel reports it when the command is reaped.
type Usage struct {
	Start  time.Time // just before the command was started
	WallNS int64     // elapsed time from start to reaping, monotonic clock
	// UserNS and SysNS are the CPU times of the command and of every descendant it waited for.
	UserNS, SysNS int64
	// PeakRSSBytes is ru_maxrss × 1024 as wait4 reports it: the peak resident set of the largest single
	// process of the command tree (the command or a descendant it waited for), not a sum. On Linux it is
	// never below the resident set of the process that started the command: the kernel folds the
	// high-water mark of the address space a process leaves at exec into its ru_maxrss, and Go starts
	// commands with vfork semantics, so that address space is the starter's (the exec helper's, see Exec).
	PeakRSSBytes int64
	// RSSFloorBytes is the peak resident set of the process that started the command (the exec helper, or
	// stalecheck itself without it), read once the command was reaped: the floor below which PeakRSSBytes
	// cannot go. A PeakRSSBytes at or below it says only that the command's own peak was at most that
	// much. 0 when unknown.
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
// The command is started by a fresh child of stalecheck, the exec helper (this same executable, run with
// helperArg; see ExecHelperHook), which times it, reaps it with wait4 and reports its Usage back through a
// pipe. Linux counts the resident set of the address space a process leaves at exec into the peak RSS
// (ru_maxrss) of the process that execs, and Go starts commands with vfork semantics, so a command started
// by stalecheck itself would inherit stalecheck's own resident set, which grows with every --repeat (the
// ledger, the digests): the helper's is that of a process that has done nothing yet, the same for every
// run, and is recorded as the floor (Usage.RSSFloorBytes). Without the hook (a program that does not call
// ExecHelperHook) the command is started directly, and the floor is stalecheck's own peak.
//
// The first Exec uses the helper UseHelper gave the plan, when there is one: started before the pre-run
// check (StartHelper), its own start-up (a Go executable of 30 MB: about 7 ms) overlaps the check instead
// of following it. Each later Exec starts a helper of its own.
//
// While the command runs, SIGINT and SIGQUIT sent to stalecheck are ignored: the terminal sends them to
// the whole foreground process group, so the command gets them itself and stalecheck stays to reap it and
// record the result. SIGTERM and SIGHUP are forwarded to the command (through the helper, which forwards
// them in turn). A signal stalecheck was started with ignored (nohup, a background job) stays ignored, and
// the command inherits that. The handlers are caught (not ignored) so that exec resets them to the default
// in the command.
//
// The error is an *ExecError (126 or 127) when the command cannot be started.
func (p *Plan) Exec(st Stdio) (Usage, error) {
	h := p.helper
	p.helper = nil
	if h == nil {
		h = StartHelper(p.Dir, p.Environ, st)
	}
	if h != nil {
		u, err, ok := h.run(p)
		if ok {
			return u, err
		}
	}
	cmd := &exec.Cmd{Path: p.Program, Args: p.Command, Dir: p.Dir, Env: p.Environ,
		Stdin: st.Stdin, Stdout: st.Stdout, Stderr: st.Stderr}
	return measure(cmd, SelfPeakRSS)
}

// UseHelper gives the plan an exec helper started ahead (StartHelper) for its next Exec. The helper must
// have been started in the plan's folder with its environment and the Stdio that Exec will be given.
func (p *Plan) UseHelper(h *Helper) { p.helper = h }

// measure starts cmd, forwards signals to it as Exec describes, reaps it and returns its Usage. floor,
// when not nil, is called once the command has been reaped and its answer recorded as
// Usage.RSSFloorBytes: the starting process's peak resident set then is at least what it was when the
// command was started (a high-water mark only grows), so the floor is never understated.
func measure(cmd *exec.Cmd, floor func() int64) (Usage, error) {
	return measureFrom(cmd, floor, nil)
}

// measureFrom is measure; when started is not nil, cmd was started already (at that time) and is only
// waited for.
func measureFrom(cmd *exec.Cmd, floor func() int64, started *time.Time) (Usage, error) {
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
	u.Start = time.Now()
	if started != nil {
		u.Start = *started
	} else if err := cmd.Start(); err != nil {
		stop()
		code := 126
		if errors.Is(err, fs.ErrNotExist) {
			code = 127 // e.g. a script whose interpreter does not exist, as execvp reports it
		}
		name := cmd.Path
		if len(cmd.Args) > 0 {
			name = cmd.Args[0]
		}
		return u, &ExecError{code, name, unwrapExec(err)}
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
	if floor != nil {
		u.RSSFloorBytes = floor()
	}

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

// helperArg, as the first argument, makes ExecHelperHook run the exec helper: stalecheck __exec-helper,
// which reads a helperSpec (JSON) from file descriptor 4 and writes its helperReport (JSON) to file
// descriptor 3. End of file on descriptor 4 before a whole spec makes it exit with status 0 without
// running anything: the pre-run check refused the command, or stalecheck ended.
const helperArg = "__exec-helper"

// helperEnabled says ExecHelperHook was called: this executable can run the exec helper.
var helperEnabled bool

// ExecHelperHook must be called first thing in main (and in TestMain of tests that run commands through
// Exec): when the process was started as the exec helper it runs the command, reports and exits;
// otherwise it enables Exec's use of the helper and returns.
func ExecHelperHook() {
	if len(os.Args) == 2 && os.Args[1] == helperArg {
		os.Exit(helperMain())
	}
	helperEnabled = true
}

// helperSpec is what stalecheck sends the helper once the pre-run check allows the run: the program
// (resolved) and its argument vector.
type helperSpec struct {
	Program string   `json:"program"`
	Argv    []string `json:"argv"`
}

// helperReport is what the helper writes to its parent: the Usage, or why the command could not start.
type helperReport struct {
	Usage    Usage  `json:"usage"`
	ExecCode int    `json:"exec_code,omitempty"` // 126 or 127 when the command could not be started
	ExecErr  string `json:"exec_err,omitempty"`
	Errno    int    `json:"errno,omitempty"` // the system error number of that failure, 0 when none
}

// helperMain is the exec helper: it sheds what it can of its resident set, waits for its helperSpec, runs
// the program in its own folder and environment (inherited from stalecheck), measures it, and writes a
// helperReport to file descriptor 3.
func helperMain() int {
	report, specIn := os.NewFile(3, "report"), os.NewFile(4, "spec")
	if report == nil || specIn == nil {
		return 125
	}
	syscall.CloseOnExec(3) // never passed on to the command
	syscall.CloseOnExec(4)
	shed()
	data, err := io.ReadAll(io.LimitReader(specIn, 16<<20))
	specIn.Close()
	var spec helperSpec
	if err != nil || len(data) == 0 || json.Unmarshal(data, &spec) != nil || spec.Program == "" || len(spec.Argv) == 0 {
		return 0 // not asked to run anything
	}
	cmd := &exec.Cmd{Path: spec.Program, Args: spec.Argv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	u, err := measure(cmd, SelfPeakRSS)
	rep := helperReport{Usage: u}
	var ee *ExecError
	switch {
	case errors.As(err, &ee):
		rep.ExecCode, rep.ExecErr = ee.Code, ee.Err.Error()
		var en syscall.Errno
		if errors.As(ee.Err, &en) {
			rep.Errno = int(en)
		}
	case err != nil:
		rep.ExecCode, rep.ExecErr = 126, err.Error()
	}
	if err := json.NewEncoder(report).Encode(rep); err != nil {
		return 125
	}
	return 0
}

// Helper is an exec helper that was started and waits for the command it is to run (Plan.UseHelper).
type Helper struct {
	dir     string
	environ []string
	exe     string
	cmd     *exec.Cmd
	started time.Time
	spec    *os.File // write end of the helper's descriptor 4
	data    []byte   // its report, once read is closed
	read    chan struct{}
	// copies move the bytes of standard streams that are not files (a test's buffers) through pipes of
	// the helper's own; run starts them, when the command is sent: until then stalecheck itself writes
	// to those streams (a refusal), and a copy running alongside would race it (bytes.Buffer.ReadFrom
	// drops what is written meanwhile). unused closes the pipes' ends when nothing ran.
	copies []func()
	feed   func() // stdin's copy: not waited for (a reader may never end)
	unused []*os.File
}

// StartHelper starts an exec helper in dir with environ and st as its standard streams (those of the
// command it will run), waiting for its command. It returns nil when this executable cannot run the
// helper (no ExecHelperHook) or the helper cannot be started; Exec then starts the command directly.
// An unused helper must be given back with Close.
func StartHelper(dir string, environ []string, st Stdio) *Helper {
	if !helperEnabled {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	h := &Helper{dir: dir, environ: environ, exe: exe, read: make(chan struct{})}
	var child []*os.File // the child's ends, closed here once it started
	fail := func() *Helper {
		for _, f := range append(child, h.unused...) {
			f.Close()
		}
		return nil
	}
	pipe := func() (r, w *os.File, ok bool) {
		r, w, err := os.Pipe()
		return r, w, err == nil
	}
	rr, rw, ok := pipe()
	if !ok {
		return fail()
	}
	child, h.unused = append(child, rw), append(h.unused, rr)
	sr, sw, ok := pipe()
	if !ok {
		return fail()
	}
	child, h.unused = append(child, sr), append(h.unused, sw)
	h.spec = sw

	var stdin, stdout, stderr *os.File
	switch in := st.Stdin.(type) {
	case nil:
	case *os.File:
		stdin = in
	default:
		r, w, ok := pipe()
		if !ok {
			return fail()
		}
		child, h.unused, stdin = append(child, r), append(h.unused, w), r
		h.feed = func() { io.Copy(w, in); w.Close() }
	}
	out := func(wr io.Writer) (*os.File, bool) {
		switch wr := wr.(type) {
		case nil:
			return nil, true
		case *os.File:
			return wr, true
		default:
			r, w, ok := pipe()
			if !ok {
				return nil, false
			}
			child, h.unused = append(child, w), append(h.unused, r)
			h.copies = append(h.copies, func() { io.Copy(wr, r); r.Close() })
			return w, true
		}
	}
	if stdout, ok = out(st.Stdout); !ok {
		return fail()
	}
	if sameWriter(st.Stdout, st.Stderr) {
		stderr = stdout // one pipe, as exec.Cmd does: the order of the two streams is kept
	} else if stderr, ok = out(st.Stderr); !ok {
		return fail()
	}
	h.cmd = &exec.Cmd{Path: exe, Args: []string{"stalecheck", helperArg}, Dir: dir, Env: environ,
		Stdin: stdin, Stdout: stdout, Stderr: stderr, ExtraFiles: []*os.File{rw, sr}}
	h.started = time.Now()
	if err := h.cmd.Start(); err != nil {
		return fail()
	}
	for _, f := range child {
		f.Close()
	}
	h.unused = slices.DeleteFunc(h.unused, func(f *os.File) bool { return f == rr })
	go func() {
		defer close(h.read)
		defer rr.Close()
		h.data, _ = io.ReadAll(io.LimitReader(rr, 1<<20))
	}()
	return h
}

// sameWriter reports whether a and b are one writer (false when they cannot be compared), as
// exec.Cmd decides whether stdout and stderr share a pipe.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a != nil && a == b
}

// Dir is the folder the helper was started in ("" for a nil Helper).
func (h *Helper) Dir() string {
	if h == nil {
		return ""
	}
	return h.dir
}

// Environ is the environment the helper was started with (nil for a nil Helper).
func (h *Helper) Environ() []string {
	if h == nil {
		return nil
	}
	return h.environ
}

// Close tells an unused helper that there is nothing to run and reaps it. A helper that ran its
// command was reaped already; Close is then a no-op. A nil Helper may be closed.
func (h *Helper) Close() {
	if h == nil || h.spec == nil {
		return
	}
	h.spec.Close()
	h.spec = nil
	h.cmd.Wait()
	<-h.read
	for _, f := range h.unused {
		f.Close()
	}
}

// run sends the helper the plan's command and waits for its report. ok is false when the helper could
// not take the command (it had ended; the caller then starts the command directly); a helper that ended
// without a report (killed) is an error.
func (h *Helper) run(p *Plan) (Usage, error, bool) {
	var copying sync.WaitGroup
	for _, c := range h.copies {
		copying.Go(c)
	}
	if h.feed != nil {
		go h.feed()
	}
	spec, _ := json.Marshal(helperSpec{Program: p.Program, Argv: p.Command})
	_, werr := h.spec.Write(spec)
	h.spec.Close()
	h.spec = nil
	hu, err := measureFrom(h.cmd, nil, &h.started)
	<-h.read
	copying.Wait() // the copies end at end of file: the helper and the command have closed their ends
	if werr != nil {
		return Usage{}, nil, false
	}
	if err != nil {
		return hu, err, true
	}
	var rep helperReport
	if jerr := json.Unmarshal(h.data, &rep); jerr != nil || len(h.data) == 0 {
		return hu, fmt.Errorf("the exec helper (%s) ended with status %d without reporting the command's usage", h.exe, hu.ExitStatus), true
	}
	if rep.ExecCode != 0 {
		cause := errors.New(rep.ExecErr)
		if rep.Errno != 0 {
			cause = syscall.Errno(rep.Errno)
		}
		return rep.Usage, &ExecError{rep.ExecCode, p.Command[0], cause}, true
	}
	return rep.Usage, nil, true
}

// SelfPeakRSS returns the high-water mark of this process's own resident set in bytes (VmHWM of
// /proc/self/status), 0 when it cannot be read. Read in the process that started a command, once the
// command was reaped, it bounds from above the floor of that command's peak RSS as wait4 reports it: at
// exec, Linux folds the high-water mark of the address space the command leaves (the starter's, shared
// until exec) into the command's ru_maxrss, and a high-water mark only grows. It is not
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
		PeakRSSBytes: u.PeakRSSBytes, RSSFloorBytes: u.RSSFloorBytes, ExitStatus: u.ExitStatus,
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

// shed drops the exec helper's clean file-backed pages from its resident set and resets its high-water
// mark (clear_refs 5), so that the floor the command inherits at exec is as small as a Go process can
// make it. Only mappings that cannot have been written are dropped: not writable, backed by a file, and
// without a single anonymous (copied-on-write) page, so every page is the file's and is read back from
// it on the next touch. Errors are ignored: the floor is measured afterwards either way.
func shed() {
	b, err := safeio.ReadFile("/proc/self/smaps", 64<<20)
	if err != nil {
		return
	}
	type mapping struct {
		lo, hi uint64
		ok     bool
	}
	var cands []mapping
	cur := mapping{}
	flush := func() {
		if cur.ok {
			cands = append(cands, cur)
		}
		cur = mapping{}
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if rng, ok := strings.CutSuffix(f[0], ":"); ok && !strings.Contains(rng, "-") {
			// A field line of the current mapping.
			if rng == "Anonymous" && len(f) >= 2 && f[1] != "0" {
				cur.ok = false
			}
			continue
		}
		flush()
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok || len(f) < 6 || (f[1] != "r-xp" && f[1] != "r--p") || !strings.HasPrefix(f[5], "/") {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		z, err2 := strconv.ParseUint(hi, 16, 64)
		cur = mapping{lo: a, hi: z, ok: err1 == nil && err2 == nil && z > a}
	}
	flush()
	for _, m := range cands {
		syscall.Syscall(syscall.SYS_MADVISE, uintptr(m.lo), uintptr(m.hi-m.lo), uintptr(syscall.MADV_DONTNEED))
	}
	if f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0); err == nil {
		f.Write([]byte("5"))
		f.Close()
	}
}
