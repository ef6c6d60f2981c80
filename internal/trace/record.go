package trace

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// maxDedup bounds the (path, op, errno, mode) keys kept to drop repeated accesses of a live process;
// past it repeats are written again (more bytes, no more memory).
const maxDedup = 2 << 20

// Recorder turns parsed strace calls into the store, writing as it goes: it holds only the live
// processes (their working folder, environment, open directory fds and recent accesses), never the
// accesses themselves.
type Recorder struct {
	w    *writer
	t    *Trace            // header fields and counts; Processes/Accesses stay empty
	live map[int]*liveProc // pid or tid → process
	// exitedEarly holds the pids of adopted processes that exited before their parent's fork-like call
	// was seen to return.
	exitedEarly map[int]bool
	next        int
	main        *liveProc
	// OnMainExit is called once, when the build's first process has exited, with its status (the exit
	// code, or 128+N for signal N).
	OnMainExit func(status int)
	mainDone   bool
	dedup      int
	pend       *Parser
}

type liveProc struct {
	p       Process
	env     []string
	fds     map[int]string
	seen    map[accKey]struct{}
	threads int    // live tids other than the leader
	curCwd  string // the working folder now ("" unknown: an fchdir to an fd not seen opened)
	written bool
	// adopted: seen before its parent's fork-like call returned; forked: that return has been seen.
	adopted, forked bool
}

type accKey struct {
	path      string
	op, errno string
	mode      Mode
}

// NewRecorder starts a store in w for t's header fields (BuildDir, Cwd, Command, Start).
func NewRecorder(w io.Writer, t *Trace) *Recorder {
	r := &Recorder{w: newWriter(w), t: t, live: map[int]*liveProc{}}
	r.w.header(t)
	return r
}

func (r *Recorder) newProc(pid int, parent *liveProc, at int64) *liveProc {
	lp := &liveProc{p: Process{ID: r.next, PID: pid, Parent: -1, Start: at, Exit: -1}, fds: map[int]string{}, seen: map[accKey]struct{}{}}
	r.next++
	if parent != nil {
		lp.inherit(parent)
	} else {
		lp.p.Cwd = r.t.Cwd
		lp.curCwd = r.t.Cwd
	}
	r.live[pid] = lp
	r.t.nproc++
	return lp
}

func (lp *liveProc) inherit(parent *liveProc) {
	lp.p.Parent = parent.p.ID
	lp.p.Cwd = parent.cwd()
	lp.curCwd = lp.p.Cwd
	lp.env = parent.env
	for k, v := range parent.fds {
		lp.fds[k] = v
	}
}

func (lp *liveProc) cwd() string { return lp.curCwd }

// Add records one call. The first pid seen is the build's first process.
func (r *Recorder) Add(c *Call) error {
	lp := r.live[c.PID]
	if lp == nil {
		lp = r.adopt(c.PID, c.Time)
	}
	if c.Exit != nil {
		r.exit(c.PID, lp, c)
		return r.w.err
	}
	switch c.Name {
	case "clone", "clone3", "fork", "vfork":
		r.fork(lp, c)
	case "execve", "execveat":
		r.exec(lp, c)
	case "chdir":
		if c.Errno == "" && len(c.Args) >= 1 {
			if p, ok := r.path(lp, "AT_FDCWD", c.Args[0]); ok {
				lp.setCwd(p)
			}
		}
	case "fchdir":
		if c.Errno == "" && len(c.Args) >= 1 {
			fd, err := strconv.Atoi(string(c.Args[0]))
			if d, ok := lp.fds[fd]; ok && err == nil {
				lp.setCwd(d)
			} else {
				lp.setCwd("")
			}
		}
	default:
		r.file(lp, c)
	}
	return r.w.err
}

func (lp *liveProc) setCwd(p string) { lp.curCwd = p }

// adopt makes a process for a pid seen before its parent's fork returned: the parent is the process with
// an unfinished fork-like call (strace prints the child's first calls before `<... clone resumed>`).
func (r *Recorder) adopt(pid int, at int64) *liveProc {
	if r.main == nil {
		lp := r.newProc(pid, nil, at)
		r.main = lp
		return lp
	}
	if r.pend != nil {
		for ppid, pre := range r.pend.pending {
			if !isForkPrefix(pre) {
				continue
			}
			parent := r.live[ppid]
			if parent == nil {
				continue
			}
			if bytes.Contains(pre, []byte("CLONE_THREAD")) {
				parent.threads++
				r.live[pid] = parent
				return parent
			}
			lp := r.newProc(pid, parent, at)
			lp.adopted = true
			return lp
		}
	}
	lp := r.newProc(pid, nil, at)
	lp.adopted = true
	return lp
}

func isForkPrefix(b []byte) bool {
	return bytes.HasPrefix(b, []byte("clone(")) || bytes.HasPrefix(b, []byte("clone3(")) || bytes.HasPrefix(b, []byte("vfork(")) || bytes.HasPrefix(b, []byte("fork("))
}

func (r *Recorder) fork(lp *liveProc, c *Call) {
	child, err := strconv.Atoi(string(c.Ret))
	if err != nil || child <= 0 {
		return
	}
	thread := false
	for _, a := range c.Args {
		if bytes.Contains(a, []byte("CLONE_THREAD")) {
			thread = true
		}
	}
	if got := r.live[child]; got != nil {
		// Seen already (adopted): fix the parent if the guess was wrong.
		if !thread && got != lp && got.p.Parent != lp.p.ID {
			got.p.Parent = lp.p.ID
		}
		got.forked = true
		return
	}
	if r.exitedEarly[child] {
		// The child lived and exited before this return was printed (a loaded machine): it is recorded
		// already; a new process here would never exit (stored as still running, "detached").
		delete(r.exitedEarly, child)
		return
	}
	if thread {
		lp.threads++
		r.live[child] = lp
		return
	}
	np := r.newProc(child, lp, c.Time)
	np.p.Start = c.Time
}

func (r *Recorder) exec(lp *liveProc, c *Call) {
	pathArg, argvArg, envArg := 0, 1, 2
	dirfd := "AT_FDCWD"
	if c.Name == "execveat" {
		if len(c.Args) < 4 {
			return
		}
		dirfd = string(c.Args[0])
		pathArg, argvArg, envArg = 1, 2, 3
	}
	if len(c.Args) <= envArg {
		return
	}
	path, ok := r.path(lp, dirfd, c.Args[pathArg])
	if !ok {
		return
	}
	r.access(lp, c, c.Name, path, 0)
	if c.Errno != "" {
		return
	}
	e := Exec{Time: c.Time, Path: path, Cwd: lp.cwd()}
	if elems, cut, ok := Array(c.Args[argvArg]); ok {
		e.Truncated = cut
		for _, el := range elems {
			s, tr, err := Unquote(el)
			if err == nil {
				e.Argv = append(e.Argv, s)
				e.Truncated = e.Truncated || tr
			}
		}
	}
	if elems, cut, ok := Array(c.Args[envArg]); ok {
		e.Truncated = e.Truncated || cut
		for _, el := range elems {
			s, tr, err := Unquote(el)
			if err == nil {
				e.Env = append(e.Env, s)
				e.Truncated = e.Truncated || tr
			}
		}
		lp.env = e.Env
	} else {
		e.Env = lp.env // not printed (strace's abbreviation): assume the inherited one
	}
	lp.p.Execs = append(lp.p.Execs, e)
}

// path resolves a path argument against the dirfd (AT_FDCWD or a number) and the working folder.
func (r *Recorder) path(lp *liveProc, dirfd string, arg []byte) (string, bool) {
	s, _, err := Unquote(arg)
	if err != nil {
		return "", false
	}
	if filepath.IsAbs(s) {
		return filepath.Clean(s), true
	}
	if s == "" {
		return "", false // fstat through newfstatat(fd, "", …, AT_EMPTY_PATH) and the like
	}
	base := ""
	if dirfd == "AT_FDCWD" {
		base = lp.cwd()
	} else if fd, err := strconv.Atoi(dirfd); err == nil {
		base = lp.fds[fd]
	}
	if base == "" {
		return s, true // folder unknown: kept relative
	}
	return filepath.Join(base, s), true
}

// pathCalls: system call → (dirfd argument index or -1, path argument index) for the calls recorded
// by file().
var pathCalls = map[string][2]int{
	"open": {-1, 0}, "creat": {-1, 0}, "openat": {0, 1}, "openat2": {0, 1},
	"stat": {-1, 0}, "lstat": {-1, 0}, "stat64": {-1, 0}, "lstat64": {-1, 0}, "newfstatat": {0, 1}, "fstatat64": {0, 1}, "statx": {0, 1},
	"access": {-1, 0}, "faccessat": {0, 1}, "faccessat2": {0, 1}, "readlink": {-1, 0}, "readlinkat": {0, 1},
	"mkdir": {-1, 0}, "mkdirat": {0, 1}, "rmdir": {-1, 0}, "unlink": {-1, 0}, "unlinkat": {0, 1},
	"truncate": {-1, 0}, "chmod": {-1, 0}, "fchmodat": {0, 1}, "utimensat": {0, 1}, "mknod": {-1, 0}, "mknodat": {0, 1},
	"rename": {-1, 0}, "renameat": {0, 1}, "renameat2": {0, 1}, "link": {-1, 0}, "linkat": {0, 1},
	"symlink": {-1, 1}, "symlinkat": {1, 2},
}

// secondPath: the calls with a second path written (the new name).
var secondPath = map[string][2]int{"rename": {-1, 1}, "renameat": {2, 3}, "renameat2": {2, 3}, "link": {-1, 1}, "linkat": {2, 3}}

func (r *Recorder) file(lp *liveProc, c *Call) {
	pos, ok := pathCalls[c.Name]
	if !ok || len(c.Args) <= pos[1] {
		return
	}
	dirfd := "AT_FDCWD"
	if pos[0] >= 0 {
		dirfd = string(c.Args[pos[0]])
	}
	p, ok := r.path(lp, dirfd, c.Args[pos[1]])
	if !ok {
		return
	}
	var mode Mode
	switch c.Name {
	case "open", "openat", "openat2", "creat":
		fi := 1
		if c.Name != "open" && c.Name != "creat" {
			fi = 2
		}
		if c.Name == "creat" {
			mode = ModeWrite | ModeCreate | ModeTrunc
		} else if len(c.Args) > fi {
			mode = openMode(c.Args[fi])
		}
		if c.Errno == "" {
			if fd, err := strconv.Atoi(string(c.Ret)); err == nil && fd >= 0 && fd < 1<<20 {
				lp.fds[fd] = p
			}
		}
	}
	r.access(lp, c, c.Name, p, mode)
	if sp, ok := secondPath[c.Name]; ok && len(c.Args) > sp[1] {
		dirfd := "AT_FDCWD"
		if sp[0] >= 0 {
			dirfd = string(c.Args[sp[0]])
		}
		if p2, ok := r.path(lp, dirfd, c.Args[sp[1]]); ok {
			r.access(lp, c, c.Name, p2, ModeCreate)
		}
	}
}

func openMode(flags []byte) Mode {
	var m Mode
	switch {
	case bytes.Contains(flags, []byte("O_RDWR")):
		m = ModeRead | ModeWrite
	case bytes.Contains(flags, []byte("O_WRONLY")):
		m = ModeWrite
	default:
		m = ModeRead
	}
	if bytes.Contains(flags, []byte("O_CREAT")) {
		m |= ModeCreate
	}
	if bytes.Contains(flags, []byte("O_TRUNC")) {
		m |= ModeTrunc
	}
	if bytes.Contains(flags, []byte("O_DIRECTORY")) {
		m |= ModeDirectory
	}
	return m
}

func (r *Recorder) access(lp *liveProc, c *Call, op, path string, mode Mode) {
	k := accKey{path: path, op: op, errno: c.Errno, mode: mode}
	if _, dup := lp.seen[k]; dup {
		return
	}
	if r.dedup < maxDedup {
		lp.seen[k] = struct{}{}
		r.dedup++
	}
	a := Access{Proc: lp.p.ID, Time: c.Time, Op: op, Path: path, Errno: c.Errno, Mode: mode}
	r.w.access(&a)
	r.t.naccess++
}

func (r *Recorder) exit(pid int, lp *liveProc, c *Call) {
	if pid != lp.p.PID {
		// A thread ended; the process goes on.
		delete(r.live, pid)
		lp.threads--
		return
	}
	delete(r.live, pid)
	if lp.adopted && !lp.forked {
		if r.exitedEarly == nil {
			r.exitedEarly = map[int]bool{}
		}
		r.exitedEarly[pid] = true
	}
	lp.p.End = c.Time
	if c.Exit.Signal != "" {
		lp.p.Signal = c.Exit.Signal
		lp.p.Core = c.Exit.Core
		lp.p.Exit = 128 + int(unix.SignalNum(c.Exit.Signal))
	} else {
		lp.p.Exit = c.Exit.Code
	}
	r.flush(lp)
	if lp == r.main && !r.mainDone {
		r.mainDone = true
		r.t.ExitStatus = lp.p.Exit
		if r.OnMainExit != nil {
			r.OnMainExit(lp.p.Exit)
		}
	}
}

func (r *Recorder) flush(lp *liveProc) {
	if lp.written {
		return
	}
	lp.written = true
	r.dedup -= len(lp.seen)
	lp.seen = nil
	r.w.process(&lp.p)
}

// MainExited tells whether the build's first process has exited (and ExitStatus is known).
func (r *Recorder) MainExited() bool { return r.mainDone }

// Finish writes the processes still live (marked Running) and the trailer. t.ExitStatus must be set
// (it is, from the stream, when MainExited); Failed is derived from it.
func (r *Recorder) Finish(end int64) error {
	done := map[*liveProc]bool{}
	// In ID order, for a stable file.
	var rest []*liveProc
	for _, lp := range r.live {
		if !done[lp] && !lp.written {
			done[lp] = true
			rest = append(rest, lp)
		}
	}
	sortLive(rest)
	for _, lp := range rest {
		lp.p.Running = true
		r.flush(lp)
	}
	r.live = map[int]*liveProc{}
	r.t.End = end
	r.t.Failed = r.t.ExitStatus != 0
	if err := r.w.trailer(r.t); err != nil {
		return fmt.Errorf("writing the trace: %w", err)
	}
	return nil
}

func sortLive(ps []*liveProc) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].p.ID < ps[j-1].p.ID; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// Record reads a whole strace stream from p into the recorder (until EOF), then returns the parser's
// error if any other than EOF.
func (r *Recorder) Record(p *Parser) error {
	r.pend = p
	for {
		c, err := p.Next()
		if err == io.EOF {
			r.t.SkippedLines = p.Skipped
			return nil
		}
		if err != nil {
			r.t.SkippedLines = p.Skipped
			return err
		}
		if err := r.Add(c); err != nil {
			return err
		}
	}
}
