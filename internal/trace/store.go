package trace

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// The store: one file per build folder, <state>/traces/<first 16 bytes of SHA-256(build folder), hex>.trace.
// Format (stalecheck's own, version 1): the magic line "stalecheck-trace v1\n", then records, each one
// type byte and unsigned/signed (zigzag) varints:
//
//	'H' header:   build folder, working folder, argc, argv…, start (ns since the epoch, signed varint)
//	'S' string:   length, bytes — defines the next string id (0, 1, …); later records refer to it
//	'A' access:   process id, time (ns after start, signed), op, path, errno ("" = success), open mode bits
//	'P' process:  id, pid, parent id+1 (0: none), start, end (ns after start; end 0 = still running),
//	              exit status, signal, flags (1 running, 2 core dumped), cwd, exec count, then per exec:
//	              time, path, cwd, argc, argv…, envc, env… ("K=V"), flags (1 argv or env cut by strace -s)
//	'T' trailer:  exit status, failed (0/1), end, processes, accesses, strings, skipped lines, then the
//	              CRC-32 (IEEE, 4 bytes little-endian) of every byte before it.
//
// A string field is a uvarint: id+1 for a defined string, or 0 followed by length and bytes (written
// inline once the table holds MaxStrings strings, so memory stays bounded on any trace).

const magic = "stalecheck-trace v1\n"

// MaxStrings is how many distinct strings (paths, argv elements, env entries) the writer keeps in its
// table; later new strings are written inline (no further memory per distinct string).
const MaxStrings = 1 << 20

// maxStringBytes bounds the bytes the table holds (with MaxStrings: about 64 MiB of strings at most).
const maxStringBytes = 48 << 20

// Dir is the folder of the trace store inside the state folder.
func Dir(stateDir string) string { return filepath.Join(stateDir, "traces") }

// Path is the store file of the trace of the build folder buildDir (an absolute path: the Cargo build
// folder, or the working folder of a build that is not Cargo's).
func Path(stateDir, buildDir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(buildDir)))
	return filepath.Join(Dir(stateDir), hex.EncodeToString(sum[:16])+".trace")
}

// ErrNoTrace is wrapped by Load's error when no trace was taken of the build folder.
var ErrNoTrace = errors.New("no trace taken")

// CorruptError names a damaged store file and where reading it failed.
type CorruptError struct {
	File   string
	Offset int64 // bytes read before the damage was noticed
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("trace store %s is damaged at byte %d: %s (run `stalecheck trace` again)", e.File, e.Offset, e.Reason)
}

// writer writes the store format to w (a temporary file renamed into place by Save).
type writer struct {
	bw      *bufio.Writer
	crc     hash.Hash32
	n       int64
	ids     map[string]uint64
	idBytes int
	rec     []byte
	start   int64
	nstr    int64
	err     error
}

func newWriter(w io.Writer) *writer {
	crc := crc32.NewIEEE()
	x := &writer{bw: bufio.NewWriterSize(io.MultiWriter(w, crc), 256<<10), crc: crc, ids: map[string]uint64{}}
	x.raw([]byte(magic))
	return x
}

func (w *writer) raw(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(b)
	w.n += int64(n)
	w.err = err
}

func (w *writer) uv(v uint64)  { w.rec = binary.AppendUvarint(w.rec, v) }
func (w *writer) sv(v int64)   { w.rec = binary.AppendVarint(w.rec, v) }
func (w *writer) begin(t byte) { w.rec = append(w.rec[:0], t) }
func (w *writer) end()         { w.raw(w.rec) }

// str appends a string field to the record being built, defining it first when it is new and the table
// has room. The definition goes out before the record (which is still in w.rec).
func (w *writer) str(s string) {
	if id, ok := w.ids[s]; ok {
		w.uv(id + 1)
		return
	}
	if len(w.ids) < MaxStrings && w.idBytes+len(s) <= maxStringBytes {
		def := binary.AppendUvarint([]byte{'S'}, uint64(len(s)))
		w.raw(def)
		w.raw([]byte(s))
		id := uint64(len(w.ids))
		w.ids[s] = id
		w.idBytes += len(s)
		w.nstr++
		w.uv(id + 1)
		return
	}
	w.uv(0)
	w.uv(uint64(len(s)))
	w.rec = append(w.rec, s...)
}

func (w *writer) strs(ss []string) {
	w.uv(uint64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

func (w *writer) header(t *Trace) {
	w.start = t.Start
	w.begin('H')
	w.str(t.BuildDir)
	w.str(t.Cwd)
	w.strs(t.Command)
	w.sv(t.Start)
	w.end()
}

func (w *writer) access(a *Access) {
	w.begin('A')
	w.uv(uint64(a.Proc))
	w.sv(a.Time - w.start)
	w.str(a.Op)
	w.str(a.Path)
	w.str(a.Errno)
	w.uv(uint64(a.Mode))
	w.end()
}

func (w *writer) process(p *Process) {
	w.begin('P')
	w.uv(uint64(p.ID))
	w.uv(uint64(p.PID))
	w.uv(uint64(p.Parent + 1))
	w.sv(p.Start - w.start)
	if p.Running {
		w.sv(0)
	} else {
		w.sv(p.End - w.start)
	}
	w.sv(int64(p.Exit))
	w.str(p.Signal)
	var fl uint64
	if p.Running {
		fl |= 1
	}
	if p.Core {
		fl |= 2
	}
	w.uv(fl)
	w.str(p.Cwd)
	w.uv(uint64(len(p.Execs)))
	for _, e := range p.Execs {
		w.sv(e.Time - w.start)
		w.str(e.Path)
		w.str(e.Cwd)
		w.strs(e.Argv)
		w.strs(e.Env)
		if e.Truncated {
			w.uv(1)
		} else {
			w.uv(0)
		}
	}
	w.end()
}

func (w *writer) trailer(t *Trace) error {
	w.begin('T')
	w.sv(int64(t.ExitStatus))
	if t.Failed {
		w.uv(1)
	} else {
		w.uv(0)
	}
	w.sv(t.End - w.start)
	w.uv(uint64(t.nproc))
	w.uv(uint64(t.naccess))
	w.uv(uint64(w.nstr))
	w.uv(uint64(t.SkippedLines))
	w.end()
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	if w.err != nil {
		return w.err
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], w.crc.Sum32())
	w.raw(sum[:])
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

// Load reads the trace stored for buildDir in stateDir. Errors: one wrapping ErrNoTrace (and
// fs.ErrNotExist) when there is none; a *CorruptError naming the file for a truncated or damaged one;
// safeio's error for a store path that is not a regular file.
func Load(stateDir, buildDir string) (*Trace, error) {
	path := Path(stateDir, buildDir)
	t, err := LoadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w of %s (store %s): run `stalecheck trace -- cargo build …` first: %w", ErrNoTrace, buildDir, path, err)
	}
	if err != nil {
		return nil, err
	}
	if filepath.Clean(t.BuildDir) != filepath.Clean(buildDir) {
		return nil, &CorruptError{File: path, Reason: fmt.Sprintf("it holds the trace of %q, not of %q", t.BuildDir, buildDir)}
	}
	return t, nil
}

// LoadFile reads one store file (see the format above).
func LoadFile(path string) (*Trace, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < int64(len(magic))+4 {
		return nil, &CorruptError{File: path, Offset: st.Size(), Reason: fmt.Sprintf("only %d bytes: not a stalecheck trace, or truncated", st.Size())}
	}
	// The CRC covers every byte but the last four (the CRC itself).
	crc := crc32.NewIEEE()
	body := io.TeeReader(io.LimitReader(f, st.Size()-4), crc)
	r := &reader{br: bufio.NewReaderSize(body, 256<<10), file: path}
	t := &Trace{File: path}
	if err := r.read(t); err != nil {
		return nil, err
	}
	var sum [4]byte
	if _, err := f.ReadAt(sum[:], st.Size()-4); err != nil {
		return nil, &CorruptError{File: path, Offset: st.Size() - 4, Reason: "the checksum cannot be read: " + err.Error()}
	}
	if got, want := binary.LittleEndian.Uint32(sum[:]), crc.Sum32(); got != want {
		return nil, &CorruptError{File: path, Offset: st.Size() - 4, Reason: fmt.Sprintf("checksum %08x, the content sums to %08x", got, want)}
	}
	sort.Slice(t.Processes, func(i, j int) bool { return t.Processes[i].ID < t.Processes[j].ID })
	for i := range t.Processes {
		if t.Processes[i].ID != i {
			return nil, &CorruptError{File: path, Offset: r.n, Reason: fmt.Sprintf("process ids are not 0…%d", len(t.Processes)-1)}
		}
	}
	for _, a := range t.Accesses {
		if a.Proc >= len(t.Processes) {
			return nil, &CorruptError{File: path, Offset: r.n, Reason: fmt.Sprintf("an access names process %d of %d", a.Proc, len(t.Processes))}
		}
	}
	return t, nil
}

type reader struct {
	br   *bufio.Reader
	file string
	n    int64
	strs []string
}

type corrupt string

func (r *reader) fail(why string) { panic(corrupt(why)) }

func (r *reader) byte1() byte {
	b, err := r.br.ReadByte()
	if err != nil {
		r.fail("truncated (no trailer)")
	}
	r.n++
	return b
}

func (r *reader) uv() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift > 63 {
			r.fail("varint overflows 64 bits")
		}
		b := r.byte1()
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
}

func (r *reader) sv() int64 {
	u := r.uv()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *reader) small(max uint64, what string) int {
	v := r.uv()
	if v > max {
		r.fail(fmt.Sprintf("%s %d is out of range", what, v))
	}
	return int(v)
}

func (r *reader) bytesN(n int) string {
	if n > MaxLine {
		r.fail(fmt.Sprintf("a string of %d bytes", n))
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.br, b); err != nil {
		r.fail("truncated inside a string")
	}
	r.n += int64(n)
	return string(b)
}

func (r *reader) str() string {
	ref := r.uv()
	if ref == 0 {
		return r.bytesN(r.small(MaxLine, "string length"))
	}
	if ref-1 >= uint64(len(r.strs)) {
		r.fail(fmt.Sprintf("string %d is not defined (%d are)", ref-1, len(r.strs)))
	}
	return r.strs[ref-1]
}

func (r *reader) strList() []string {
	n := r.small(1<<24, "list length")
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *reader) read(t *Trace) (err error) {
	defer func() {
		if v := recover(); v != nil {
			c, ok := v.(corrupt)
			if !ok {
				panic(v)
			}
			err = &CorruptError{File: r.file, Offset: r.n, Reason: string(c)}
		}
	}()
	m := make([]byte, len(magic))
	if _, err := io.ReadFull(r.br, m); err != nil || string(m) != magic {
		return &CorruptError{File: r.file, Reason: fmt.Sprintf("not a stalecheck trace (it does not start with %q)", magic[:len(magic)-1])}
	}
	r.n = int64(len(magic))
	var start int64
	sawHeader := false
	for {
		typ := r.byte1()
		if typ != 'H' && typ != 'S' && !sawHeader {
			r.fail(fmt.Sprintf("record %q before the header", typ))
		}
		switch typ {
		case 'H':
			t.BuildDir = r.str()
			t.Cwd = r.str()
			t.Command = r.strList()
			start = r.sv()
			t.Start = start
			sawHeader = true
		case 'S':
			r.strs = append(r.strs, r.bytesN(r.small(MaxLine, "string length")))
		case 'A':
			var a Access
			a.Proc = r.small(1<<31, "process id")
			a.Time = start + r.sv()
			a.Op = r.str()
			a.Path = r.str()
			a.Errno = r.str()
			a.Mode = Mode(r.small(255, "open mode"))
			t.Accesses = append(t.Accesses, a)
		case 'P':
			var p Process
			p.ID = r.small(1<<31, "process id")
			p.PID = r.small(1<<31, "pid")
			p.Parent = r.small(1<<31, "parent id") - 1
			p.Start = start + r.sv()
			end := r.sv()
			p.Exit = int(r.sv())
			p.Signal = r.str()
			fl := r.uv()
			p.Running = fl&1 != 0
			p.Core = fl&2 != 0
			if !p.Running {
				p.End = start + end
			}
			p.Cwd = r.str()
			n := r.small(1<<20, "exec count")
			for range n {
				var e Exec
				e.Time = start + r.sv()
				e.Path = r.str()
				e.Cwd = r.str()
				e.Argv = r.strList()
				e.Env = r.strList()
				e.Truncated = r.uv()&1 != 0
				p.Execs = append(p.Execs, e)
			}
			t.Processes = append(t.Processes, p)
		case 'T':
			t.ExitStatus = int(r.sv())
			t.Failed = r.uv() == 1
			t.End = start + r.sv()
			np, na, ns := r.uv(), r.uv(), r.uv()
			t.SkippedLines = int64(r.uv())
			if np != uint64(len(t.Processes)) || na != uint64(len(t.Accesses)) || ns != uint64(len(r.strs)) {
				r.fail(fmt.Sprintf("the trailer counts %d processes, %d accesses, %d strings; the file holds %d, %d, %d", np, na, ns, len(t.Processes), len(t.Accesses), len(r.strs)))
			}
			if _, err := r.br.ReadByte(); err != io.EOF {
				r.fail("bytes after the trailer")
			}
			t.nproc, t.naccess = len(t.Processes), len(t.Accesses)
			return nil
		default:
			r.fail(fmt.Sprintf("unknown record type 0x%02x", typ))
		}
	}
}
