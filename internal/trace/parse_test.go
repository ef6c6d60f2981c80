package trace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// record parses a strace stream (as strace 6.1 prints it with StraceArgs) into a stored trace and
// loads it back.
func record(t *testing.T, stream string, cwd string) *Trace {
	t.Helper()
	var buf bytes.Buffer
	tr := &Trace{BuildDir: cwd, Cwd: cwd, Command: []string{"build"}, Start: 1}
	rec := NewRecorder(&buf, tr)
	if err := rec.Record(NewParser(strings.NewReader(stream))); err != nil {
		t.Fatal(err)
	}
	if err := rec.Finish(2e18); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "x.trace")
	if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestParseJoinsUnfinishedPerPID(t *testing.T) {
	stream := `100 1796157027.000000001 execve("/usr/bin/sh", ["sh", "-c", "x"], ["PATH=/a:/usr/bin", "HOME=/root"]) = 0
100 1796157027.000000002 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD <unfinished ...>
101 1796157027.000000003 openat(AT_FDCWD, "rel/in.txt", O_RDONLY <unfinished ...>
100 1796157027.000000004 <... clone resumed>, child_tidptr=0x7f45b2d67a10) = 101
101 1796157027.000000005 <... openat resumed>) = 3
101 1796157027.000000006 openat(AT_FDCWD, "a\nb\"c\x01\\d", O_RDONLY) = 4
101 1796157027.000000007 openat(4, "inner", O_RDONLY|O_DIRECTORY) = -1 ENOTDIR (Not a directory)
101 1796157027.000000008 chdir("/tmp/sub") = 0
101 1796157027.000000009 newfstatat(AT_FDCWD, "x.h", 0x7ffd, 0) = -1 ENOENT (No such file or directory)
101 1796157027.000000010 newfstatat(3, "", 0x7ffd, AT_EMPTY_PATH) = 0
101 1796157027.000000011 openat(AT_FDCWD, "out.o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 5
101 1796157027.000000012 exit_group(0) = ?
99   1796157027.000000012 openat(AT_FDCWD, "/padded/pid", O_RDONLY) = 3
101 1796157027.000000013 +++ killed by SIGSEGV (core dumped) +++
100 1796157027.000000014 +++ exited with 3 +++
`
	tr := record(t, stream, "/w")
	// strace pads pids under five digits ("99   1796…"): pid 99 is a process of its own.
	if len(tr.Processes) != 3 || tr.Processes[2].PID != 99 || len(tr.AccessesOf(2)) != 1 || tr.AccessesOf(2)[0].Path != "/padded/pid" {
		t.Fatalf("processes: %+v", tr.Processes)
	}
	child := tr.Processes[1]
	if child.Parent != 0 || child.PID != 101 || child.Exit != 139 || child.Signal != "SIGSEGV" || !child.Core {
		t.Fatalf("child: %+v", child)
	}
	if tr.ExitStatus != 3 || !tr.Failed {
		t.Fatalf("status %d failed %v", tr.ExitStatus, tr.Failed)
	}
	want := map[string]string{
		"/w/rel/in.txt":           "openat  1",
		"/w/a\nb\"c\x01\\d":       "openat  1",
		"/w/a\nb\"c\x01\\d/inner": "openat ENOTDIR 17",
		"/tmp/sub/x.h":            "newfstatat ENOENT 0",
		"/tmp/sub/out.o":          "openat  14",
	}
	got := map[string]string{}
	for _, a := range tr.AccessesOf(1) {
		got[a.Path] = a.Op + " " + a.Errno + " " + strconv.Itoa(int(a.Mode))
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%q: got %q, want %q (all: %q)", p, got[p], w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("accesses %q, want %d", got, len(want))
	}
	reads := tr.ReadsOf(0)
	if len(reads) != 5 { // sh's execve, the opens for reading, the failed open and the stat (not out.o)
		t.Errorf("ReadsOf(0) = %d accesses, want 5", len(reads))
	}
	if v, _ := tr.Processes[0].Getenv("PATH"); v != "/a:/usr/bin" {
		t.Errorf("PATH %q", v)
	}
}

func TestParseChildBeforeCloneReturns(t *testing.T) {
	// The child's first line comes before the parent's `<... clone resumed>`; a thread (clone3 with
	// CLONE_THREAD) is folded into its process.
	stream := `10 1.000000001 execve("/bin/b", ["b"], []) = 0
10 1.000000002 chdir("/d") = 0
10 1.000000003 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, exit_signal=0, stack=0x7f, stack_size=0x1000}, 88 <unfinished ...>
11 1.000000004 openat(AT_FDCWD, "t", O_RDONLY) = 3
10 1.000000005 <... clone3 resumed>) = 11
10 1.000000006 vfork( <unfinished ...>
12 1.000000007 execve("/x/cc", ["cc"], ["PATH=/x"]) = 0
10 1.000000008 <... vfork resumed>) = 12
12 1.000000009 +++ exited with 0 +++
11 1.000000010 +++ exited with 0 +++
10 1.000000011 +++ exited with 0 +++
`
	tr := record(t, stream, "/w")
	if len(tr.Processes) != 2 {
		t.Fatalf("want 2 processes (the thread folded in), got %+v", tr.Processes)
	}
	if a := tr.AccessesOf(0); len(a) != 2 || a[1].Path != "/d/t" {
		t.Errorf("thread access not in its process: %+v", a)
	}
	if p := tr.Processes[1]; p.Parent != 0 || p.Exe() != "/x/cc" || p.Cwd != "/d" {
		t.Errorf("vfork child: %+v", p)
	}
}

func TestUnquote(t *testing.T) {
	for in, want := range map[string]string{
		`"plain"`:            "plain",
		`"\x2f\x74\x6d\x70"`: "/tmp",
		`"a\nb\tc\\d\"e"`:    "a\nb\tc\\d\"e",
		`"\1\02\003x"`:       "\x01\x02\x03x",
	} {
		got, _, err := Unquote([]byte(in))
		if err != nil || got != want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if s, cut, err := Unquote([]byte(`"abc"...`)); err != nil || !cut || s != "abc" {
		t.Errorf("truncated: %q %v %v", s, cut, err)
	}
	for _, bad := range []string{`NULL`, `"abc`, `"\x4"`, `"ab\"`} {
		if _, _, err := Unquote([]byte(bad)); err == nil {
			t.Errorf("Unquote(%s): no error", bad)
		}
	}
}

// synth is a synthetic strace stream of n lines shaped like a big build: processes that fork and exec
// with a 60-variable environment, each making opens, stats (half through unfinished/resumed pairs, as
// when processes run side by side) over a pool of distinct paths, then exiting.
type synth struct {
	n, done int
	buf     []byte
	pid     int
	inProc  int
	env     string
}

func newSynth(n int) *synth {
	var env []string
	for i := range 60 {
		env = append(env, `"VAR_`+strconv.Itoa(i)+`=/some/value/of/a/typical/length/`+strconv.Itoa(i)+`"`)
	}
	env = append(env, `"PATH=/usr/local/bin:/usr/bin:/bin"`)
	return &synth{n: n, pid: 1000, env: "[" + strings.Join(env, ", ") + "]"}
}

func (s *synth) Read(p []byte) (int, error) {
	for len(s.buf) < len(p) && s.done < s.n {
		s.line()
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

func (s *synth) emit(pid int, rest string) {
	s.done++
	ts := 1796157027000000000 + int64(s.done)*1000
	s.buf = strconv.AppendInt(s.buf, int64(pid), 10)
	s.buf = append(s.buf, ' ')
	s.buf = strconv.AppendInt(s.buf, ts/1e9, 10)
	s.buf = append(s.buf, '.')
	s.buf = append(s.buf, strconv.FormatInt(1e9+ts%1e9, 10)[1:]...)
	s.buf = append(s.buf, ' ')
	s.buf = append(s.buf, rest...)
	s.buf = append(s.buf, '\n')
}

func (s *synth) line() {
	if s.inProc == 0 {
		s.pid++
		s.emit(1000, `clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = `+strconv.Itoa(s.pid))
		s.emit(s.pid, `execve("/usr/bin/cc", ["cc", "-c", "x.c"], `+s.env+`) = 0`)
	}
	s.inProc++
	k := (s.done * 7919) % 200000 // 200,000 distinct files
	path := `"/src/dir` + strconv.Itoa(k%500) + `/file` + strconv.Itoa(k) + `.h"`
	switch s.inProc % 4 {
	case 0:
		s.emit(s.pid, `openat(AT_FDCWD, `+path+`, O_RDONLY|O_CLOEXEC) = 3`)
	case 1:
		s.emit(s.pid, `newfstatat(AT_FDCWD, `+path+`, 0x7ffd8b238720, 0) = -1 ENOENT (No such file or directory)`)
	case 2:
		s.emit(s.pid, `openat(AT_FDCWD, `+path+`, O_RDONLY <unfinished ...>`)
	case 3:
		s.emit(s.pid, `<... openat resumed>) = 4`)
	}
	if s.inProc == 2000 {
		s.emit(s.pid, `exit_group(0) = ?`)
		s.emit(s.pid, `+++ exited with 0 +++`)
		s.inProc = 0
	}
}

// TestStreamMemory streams a synthetic trace through the parser and recorder into a store file and
// samples the heap: it must stay under 200 MB. 1 million lines by default; STALECHECK_TRACE_LINES=10000000
// runs the 10-million-line case (about a minute on 2 cores).
func TestStreamMemory(t *testing.T) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("STALECHECK_TRACE_LINES")); err == nil && v > 0 {
		n = v
	}
	runtime.GC()
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var max uint64
		var ms runtime.MemStats
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > max {
				max = ms.HeapInuse
			}
			select {
			case <-stop:
				peak <- max
				return
			case <-tk.C:
			}
		}
	}()
	f, err := os.Create(filepath.Join(t.TempDir(), "big.trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	begin := time.Now()
	tr := &Trace{BuildDir: "/w", Cwd: "/w", Command: []string{"synthetic"}, Start: 1796157027000000000}
	rec := NewRecorder(f, tr)
	p := NewParser(newSynth(n))
	if err := rec.Record(p); err != nil {
		t.Fatal(err)
	}
	if err := rec.Finish(1796157037000000000); err != nil {
		t.Fatal(err)
	}
	close(stop)
	max := <-peak
	st, _ := f.Stat()
	t.Logf("%d lines (%d skipped) in %v: %d processes, %d accesses, store %d bytes, peak heap in use %.1f MB",
		p.Line(), p.Skipped, time.Since(begin).Round(time.Millisecond), tr.nproc, tr.naccess, st.Size(), float64(max)/1e6)
	if p.Line() < int64(n) || p.Skipped != 0 || tr.naccess == 0 {
		t.Fatalf("lines %d skipped %d accesses %d", p.Line(), p.Skipped, tr.naccess)
	}
	if max > 200e6 {
		t.Errorf("peak heap %d bytes, over 200 MB", max)
	}
}

func TestLoadDamaged(t *testing.T) {
	tr := record(t, "1 1.000000001 execve(\"/bin/x\", [\"x\"], []) = 0\n1 1.000000002 openat(AT_FDCWD, \"/a\", O_RDONLY) = 3\n1 1.000000003 +++ exited with 0 +++\n", "/w")
	data, err := os.ReadFile(tr.File)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := map[string][]byte{
		"truncated": data[:len(data)-9],
		"flipped":   append(append([]byte{}, data[:30]...), append([]byte{data[30] ^ 0xff}, data[31:]...)...),
		"empty":     nil,
		"not-trace": []byte("{\"json\": true}\n......"),
		"crc-gone":  data[:len(data)-4],
	}
	for name, b := range cases {
		p := filepath.Join(dir, name+".trace")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadFile(p)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.File != p || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: got %v, want a CorruptError naming %s", name, err, p)
		}
	}
	// A FIFO where the store belongs: an error, not a hang.
	fifo := filepath.Join(dir, "fifo.trace")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(fifo); err == nil || !strings.Contains(err.Error(), fifo) {
		t.Errorf("FIFO: %v", err)
	}
	// No trace of that build folder.
	if _, err := Load(t.TempDir(), "/nowhere"); !errors.Is(err, ErrNoTrace) {
		t.Errorf("missing: %v", err)
	}
}

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }

// TestParseChildExitsBeforeCloneReturns: on a loaded machine a short child's whole life, its exit
// included, is printed before its parent's `<... clone resumed> = PID`: it is one process that exited,
// not a second one that never did (stored as still running: "detached").
func TestParseChildExitsBeforeCloneReturns(t *testing.T) {
	stream := `10 1.000000001 execve("/bin/sh", ["sh"], []) = 0
10 1.000000002 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD <unfinished ...>
11 1.000000003 execve("/bin/true", ["true"], []) = 0
11 1.000000004 +++ exited with 0 +++
10 1.000000005 <... clone resumed>, child_tidptr=0x7f) = 11
10 1.000000006 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=11, si_uid=0, si_status=0} ---
10 1.000000007 +++ exited with 0 +++
`
	tr := record(t, stream, "/w")
	if len(tr.Processes) != 2 {
		t.Fatalf("want 2 processes, got %d: %+v", len(tr.Processes), tr.Processes)
	}
	for _, p := range tr.Processes {
		if p.Running || p.Exit != 0 {
			t.Errorf("process %+v: want exited with 0", p)
		}
	}
	if p := tr.Processes[1]; p.Parent != 0 || p.Exe() != "/bin/true" {
		t.Errorf("child: %+v", p)
	}
}
