// Package fsrec is the one layer through which the readers of `check` and `run` consult the file
// system (stat, lstat, open, list, walk, glob, symlink resolution), so that the verdict cache
// (internal/vcache) knows every path a verdict depends on, found or not, instead of guessing a superset.
//
// While a Recorder is active (Begin … End), every call records the path (made absolute against the
// working folder at Begin, never cleaned: "a/../b" is stat'ed again as given) with the kind of look-up
// (Stat follows symbolic links, Lstat does not) and the signature it saw: device, inode, size, mtime and
// ctime in nanoseconds and mode, or the error class (missing, not a folder, else the error number) for
// a failed look-up, since a file or tool that appears later changes verdicts too. A folder listed or walked is
// recorded by its own signature (entries added, removed or renamed change its mtime and ctime), each
// entry whose Info is asked by its lstat. A path looked up again the same way gets the first answer
// (see Begin); one seen twice with different signatures (an open's fstat after a stat) marks the
// recording changed. A process whose inputs are not enumerable (make -n, ninja -n,
// go list) is declared with Uncacheable. With no Recorder active every function is the os or filepath
// call it wraps, plus one atomic load.
//
// A recording can also carry a reader's work to the next one (memo.go): a computation over one file
// or folder keeps its result, and the next recording of the same invocation reuses it while nothing
// under that scope changed, adopting the last recording's entries there (Adopt, Reuse, Keep).
//
// Only one Recorder is active at a time in a process (Begin returns nil while another is): calls made
// by a concurrent, unrecorded invocation land in the active recording, which only makes it larger.
// Paths on kernel file systems (/proc, /sys, /dev but not /dev/shm: sysdirs.Volatile) are not recorded
// (they change on every look-up and are no build input).
package fsrec

import (
	"errors"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stalecheck/stalecheck/internal/sysdirs"
	"github.com/zeebo/blake3"
)

// Op is how a path was looked up.
type Op uint8

const (
	// OpStat: stat(2), following symbolic links (also opens and folder listings).
	OpStat Op = 1
	// OpLstat: lstat(2), the link itself.
	OpLstat Op = 2
	// OpContent: the bytes of a regular file read whole by a reader that uses nothing else of it (not
	// its mtime, size or inode: ReadContent). Its Sum is the BLAKE3-256 of the bytes read; a later
	// look-up with another signature still answers alike when the bytes are the same (Cargo rewrites
	// the uplifted `<bin>.d` with the same bytes on every no-op build).
	OpContent Op = 3
)

// Error classes of a failed look-up. Any other error number e is its own class, errnoBase+e (EACCES,
// ELOOP, ENXIO, ENAMETOOLONG… differ: a report quotes the error, so a path whose look-up fails another
// way must not keep a verdict); ErrOther is an error with no number, or one too large to be a class.
const (
	ErrNone     = 0
	ErrNotExist = 1 // ENOENT
	ErrNotDir   = 2 // ENOTDIR: a component is not a folder
	ErrOther    = 3
	errnoBase   = 4
)

// errnoClass is the class of a failed look-up's error number.
func errnoClass(e syscall.Errno) uint8 {
	switch {
	case e == syscall.ENOENT:
		return ErrNotExist
	case e == syscall.ENOTDIR:
		return ErrNotDir
	case e > 0 && uintptr(e) <= 255-errnoBase:
		return uint8(errnoBase + uintptr(e))
	}
	return ErrOther
}

// Sig is a path's signature: what a look-up saw. Times are nanoseconds since the epoch; Mode is the
// raw st_mode. For a failed look-up only Err is set.
type Sig struct {
	Err              uint8
	Dev, Ino         uint64
	Size             int64
	MtimeNS, CtimeNS int64
	Mode             uint32
}

// Entry is one recorded look-up.
type Entry struct {
	Path string
	Op   Op
	Sig  Sig
	// Sum is the BLAKE3-256 of the bytes read, for OpContent only (nil otherwise: a large tree's
	// hundreds of thousands of stat entries do not carry it).
	Sum *[32]byte
	// Recheck (OpContent only) says the bytes must be compared even when the signature is unchanged:
	// the file changed too close to the recording for its signature to tell a later change apart.
	Recheck bool
}

// seenVal is what a Recorder keeps of one look-up (sum: OpContent only, kept apart so that the many
// stat entries of a large tree do not carry it).
type seenVal struct {
	sig Sig
	sum *[32]byte
	// kept says the entry was recorded by a Stat or Lstat (or a folder look-up of a listing or walk)
	// whose answer is given again to the same look-up later in the recording: found (sig, with mode
	// and nlink, rebuilds the FileInfo, no copy of it is held: a large tree records 400,000 paths) or
	// missing. Entries recorded otherwise (an open's fstat, a failed open, content) are looked up
	// afresh.
	nlink uint64
	mode  fs.FileMode
	kept  bool
	// prior says the entry came from the last recording (Adopt) and no look-up of this one has met it
	// yet: it is no entry of this recording until one does. (Beside kept: no padding, 80 bytes.)
	prior bool
}

type key struct {
	path string
	op   Op
}

// Recorder collects the look-ups of one invocation.
type Recorder struct {
	// Start is when Begin was called; a signature newer than it (within the file system's timestamp
	// granularity) was possibly written during the recording (vcache's racy rule).
	Start time.Time
	cwd   string

	// seen is split by a hash of the path, each part under its own lock: the readers record from
	// several goroutines, tens of thousands of look-ups per check.
	seen     [seenShards]seenShard
	perShard int // the capacity each shard's map was made with
	exclude  func(abs string) bool
	fresh    func(abs string) bool

	mu          sync.Mutex // changed, uncacheable
	changed     []string
	uncacheable []string

	memo memos // memo.go
}

const seenShards = 16

type seenShard struct {
	mu sync.Mutex
	m  map[key]seenVal
	_  [40]byte // a shard per cache line: no false sharing between the goroutines that record
}

var seenSeed = maphash.MakeSeed()

var cur atomic.Pointer[Recorder]

// Options say which paths a recording treats apart.
type Options struct {
	// Exclude names absolute paths not to record (stalecheck's own pure caches, keyed by stat
	// signatures, whose content never changes a verdict).
	Exclude func(abs string) bool
	// Fresh names absolute paths looked up anew on every call, never answered from the recording:
	// files the recorded invocation writes itself (its state folder).
	Fresh func(abs string) bool
	// Since, when not zero and earlier than Begin, is the recording's Start: its look-ups began then
	// (the signatures a Prior brings were taken before Begin).
	Since time.Time
	// Expect is about how many look-ups the recording will hold (a Prior's entries): its maps are
	// made that large at once, not made small and again larger.
	Expect int
}

// Begin starts a recording. It returns nil when another recording is active or the working folder
// cannot be found; then nothing is recorded for this caller.
//
// While it runs, Stat and Lstat (and the folder and entry look-ups of ReadDir and WalkDir) of a path
// already looked up the same way give the first answer again instead of asking the kernel: one
// invocation sees one state of each path, and the readers that meet a path several times (a package's
// files stat'ed for its edits and for its build script's inputs, a header every compile includes)
// pay for one look-up. Listings are not kept: a large tree's would cost more memory than the
// second listing of a few folders costs time. A path that changes during the recording is found by the next one, whose
// look-up sees another signature (its ctime moved past Start).
func Begin(opt Options) *Recorder {
	cwd, err := os.Getwd()
	if err != nil {
		return nil
	}
	r := &Recorder{Start: time.Now(), cwd: cwd, exclude: opt.Exclude, fresh: opt.Fresh}
	if !opt.Since.IsZero() && opt.Since.Before(r.Start) {
		r.Start = opt.Since
	}
	r.perShard = max(512, opt.Expect/seenShards*5/4+64)
	for i := range r.seen {
		r.seen[i].m = make(map[key]seenVal, r.perShard)
	}
	if !cur.CompareAndSwap(nil, r) {
		return nil
	}
	return r
}

// End stops the recording (a nil Recorder is a no-op).
func (r *Recorder) End() {
	if r != nil {
		cur.CompareAndSwap(r, nil)
	}
}

// Active reports whether a recording is running.
func Active() bool { return cur.Load() != nil }

// Uncacheable declares that the verdict being recorded depends on something the recording cannot see
// (a child process's reads); reason names it ("ran make -n in /src").
func Uncacheable(reason string) {
	if r := cur.Load(); r != nil {
		r.mu.Lock()
		r.uncacheable = append(r.uncacheable, reason)
		r.mu.Unlock()
	}
}

// Entries returns the recorded look-ups, in no set order.
func (r *Recorder) Entries() []Entry {
	n := 0
	for i := range r.seen {
		sh := &r.seen[i]
		sh.mu.Lock()
		n += len(sh.m)
		sh.mu.Unlock()
	}
	out := make([]Entry, 0, n)
	for i := range r.seen {
		sh := &r.seen[i]
		sh.mu.Lock()
		for k, v := range sh.m {
			if v.prior {
				continue
			}
			e := Entry{Path: k.path, Op: k.op, Sig: v.sig}
			if k.op == OpContent {
				e.Sum = v.sum
			}
			out = append(out, e)
		}
		sh.mu.Unlock()
	}
	return out
}

// Changed returns the paths seen with two different signatures during the recording.
func (r *Recorder) Changed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.changed...)
}

// UncacheableReasons returns what Uncacheable was told.
func (r *Recorder) UncacheableReasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.uncacheable...)
}

func (r *Recorder) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if p == "" || p == "." {
		return r.cwd
	}
	return r.cwd + string(filepath.Separator) + p
}

func skipped(abs string) bool { return sysdirs.Volatile(abs) }

// note records one look-up of path with its result.
func (r *Recorder) note(path string, op Op, fi fs.FileInfo, err error) {
	r.noteVal(path, op, seenVal{sig: SigOf(fi, err)})
}

// noteLookup records a Stat or Lstat of path with its result, kept to answer the same look-up again
// (a failed one by its error class; an error with no number is not kept).
func (r *Recorder) noteLookup(path string, op Op, fi fs.FileInfo, err error) {
	v := seenVal{sig: SigOf(fi, err)}
	if err == nil && v.sig.Err == ErrNone {
		v.mode = fi.Mode()
		v.nlink, v.kept = keepable(fi)
	} else {
		v.kept = v.sig.Err == ErrNotExist || v.sig.Err == ErrNotDir
	}
	r.noteVal(path, op, v)
}

// answer returns the kept result of an earlier Stat (op OpStat) or Lstat of path in this recording.
// notLink says the caller knows path is no symbolic link (a listing's entry type): then a Stat's
// answer is an Lstat's too. A Stat is answered by an Lstat that found no link, and recorded as such.
func (r *Recorder) answer(path string, op Op, notLink bool) (fs.FileInfo, error, bool) {
	abs := r.abs(path)
	if r.fresh != nil && r.fresh(abs) {
		return nil, nil, false
	}
	sh := &r.seen[maphash.String(seenSeed, abs)%seenShards]
	sh.mu.Lock()
	v, ok := sh.m[key{abs, op}]
	if !ok {
		// The other look-up of a path that is no link gives the same answer.
		other := OpLstat
		if op == OpLstat {
			other = OpStat
		}
		if o, found := sh.m[key{abs, other}]; found && o.kept && o.sig.Err == ErrNone && o.mode&fs.ModeSymlink == 0 && (op == OpStat || notLink) {
			if o.prior {
				o.prior = false
				sh.m[key{abs, other}] = o
			}
			v, ok = o, true
			sh.m[key{abs, op}] = o
		}
	} else if v.prior && v.kept {
		v.prior = false
		sh.m[key{abs, op}] = v
	}
	sh.mu.Unlock()
	switch {
	case !ok || !v.kept:
		return nil, nil, false
	case v.sig.Err == ErrNone:
		return &keptInfo{name: filepath.Base(path), v: v}, nil, true
	case v.sig.Err == ErrNotExist || v.sig.Err == ErrNotDir:
		// Only the classes that name their error number exactly: the error is made again for
		// this spelling of the path, as os.Stat and os.Lstat would make it.
		e := syscall.ENOENT
		if v.sig.Err == ErrNotDir {
			e = syscall.ENOTDIR
		}
		name := "stat"
		if op == OpLstat {
			name = "lstat"
		}
		return nil, &fs.PathError{Op: name, Path: path, Err: e}, true
	}
	return nil, nil, false
}

// keptInfo is a found look-up given again: what os.Stat's FileInfo tells, rebuilt from the kept
// signature, mode and link count (Sys, per platform).
type keptInfo struct {
	name string
	v    seenVal
}

func (k *keptInfo) Name() string       { return k.name }
func (k *keptInfo) Size() int64        { return k.v.sig.Size }
func (k *keptInfo) Mode() fs.FileMode  { return k.v.mode }
func (k *keptInfo) ModTime() time.Time { return time.Unix(0, k.v.sig.MtimeNS) }
func (k *keptInfo) IsDir() bool        { return k.v.mode.IsDir() }

// lookup is os.Stat (op OpStat) or os.Lstat, answered from the active recording when it has seen the
// same look-up, else asked and recorded.
func lookup(path string, op Op) (fs.FileInfo, error) {
	r := cur.Load()
	if r != nil {
		if fi, err, ok := r.answer(path, op, false); ok {
			return fi, err
		}
	}
	fi, err := statOp(path, op)
	if r != nil {
		r.noteLookup(path, op, fi, err)
	}
	return fi, err
}

func (r *Recorder) noteVal(path string, op Op, v seenVal) {
	abs := r.abs(path)
	if skipped(abs) || (r.exclude != nil && r.exclude(abs)) {
		return
	}
	k := key{abs, op}
	sh := &r.seen[maphash.String(seenSeed, abs)%seenShards]
	sh.mu.Lock()
	old, ok := sh.m[k]
	switch {
	case !ok || !old.kept && v.kept && old.sig == v.sig:
		// An entry adopted from the last recording (memo.go) becomes an answer to give again once a
		// look-up of this one has seen it alike.
		sh.m[k] = v
	case old.prior:
		// An adopted entry met by a look-up that is not answered from the recording (an open's fstat,
		// content): it is this recording's entry now, compared below like any other.
		old.prior = false
		sh.m[k] = old
	}
	sh.mu.Unlock()
	// Two reads of the same bytes agree whatever their signatures.
	if ok && (op == OpContent && *old.sum != *v.sum || op != OpContent && old.sig != v.sig) {
		r.mu.Lock()
		r.changed = append(r.changed, abs)
		r.mu.Unlock()
	}
}

// NoteContent records the whole content data of the regular file at path, opened with the
// signature of fi (its fstat), for a reader that uses nothing but the bytes (OpContent).
func NoteContent(path string, fi fs.FileInfo, data []byte) {
	if r := cur.Load(); r != nil {
		sum := blake3.Sum256(data)
		r.noteVal(path, OpContent, seenVal{sig: SigOf(fi, nil), sum: &sum})
	}
}

// SumOf is the checksum OpContent entries carry: BLAKE3-256 of data.
func SumOf(data []byte) [32]byte { return blake3.Sum256(data) }

func record(path string, op Op, fi fs.FileInfo, err error) {
	if r := cur.Load(); r != nil {
		r.note(path, op, fi, err)
	}
}

// SigOf is the signature of a look-up's result.
func SigOf(fi fs.FileInfo, err error) Sig {
	if err != nil || fi == nil {
		return Sig{Err: errClass(err)}
	}
	return sigOfInfo(fi)
}

func errClass(err error) uint8 {
	var errno syscall.Errno
	switch {
	case err == nil:
		return ErrOther
	case errors.As(err, &errno):
		return errnoClass(errno)
	case errors.Is(err, fs.ErrNotExist):
		return ErrNotExist
	}
	return ErrOther
}

// Now looks path up again the way op does and returns its signature.
func Now(path string, op Op) Sig {
	return SigOf(statOp(path, op))
}

// Stat is os.Stat, recorded (see Begin for a path looked up twice).
func Stat(path string) (fs.FileInfo, error) { return lookup(path, OpStat) }

// Lstat is os.Lstat, recorded (see Begin for a path looked up twice).
func Lstat(path string) (fs.FileInfo, error) { return lookup(path, OpLstat) }

// NoteOpen records a file opened for reading at path: f's fstat (nil f: the open failed with err).
func NoteOpen(path string, f *os.File, err error) {
	r := cur.Load()
	if r == nil {
		return
	}
	if err != nil || f == nil {
		r.note(path, OpStat, nil, err)
		return
	}
	fi, serr := f.Stat()
	r.note(path, OpStat, fi, serr)
}

// NoteInfo records a look-up of path (following links) that found fi.
func NoteInfo(path string, fi fs.FileInfo) { record(path, OpStat, fi, nil) }

// Open is os.Open, recorded (a folder opened to be listed counts as listed).
func Open(path string) (*os.File, error) {
	if cur.Load() == nil {
		return os.Open(path)
	}
	f, err := os.Open(path)
	NoteOpen(path, f, err)
	return f, err
}

// ReadFile is os.ReadFile, recorded. Prefer internal/safeio for files stalecheck finds.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// entry wraps a listed folder entry so that its Info (an lstat) is recorded.
type entry struct {
	fs.DirEntry
	path string
}

func (e entry) Info() (fs.FileInfo, error) {
	r := cur.Load()
	if r == nil {
		return e.DirEntry.Info()
	}
	if fi, err, ok := r.answer(e.path, OpLstat, e.Type()&fs.ModeSymlink == 0); ok {
		return fi, err
	}
	fi, err := e.DirEntry.Info()
	r.noteLookup(e.path, OpLstat, fi, err)
	return fi, err
}

// ReadDir is os.ReadDir (through listDir), recorded: the folder by its signature (stat'ed before the listing, so an
// entry added during it is seen at the end), each entry's Info by its lstat.
func ReadDir(path string) ([]fs.DirEntry, error) {
	r := cur.Load()
	if r == nil {
		return listDir(path)
	}
	if _, err := lookup(path, OpStat); err != nil {
		return nil, err
	}
	ents, err := listDir(path)
	return wrapEntries(path, ents), err
}

// ListOpened records the folder f (opened at path with Open) as listed and wraps the entries its
// ReadDir returned.
func ListOpened(path string, ents []fs.DirEntry) []fs.DirEntry {
	if cur.Load() == nil {
		return ents
	}
	return wrapEntries(path, ents)
}

func wrapEntries(dir string, ents []fs.DirEntry) []fs.DirEntry {
	for i, e := range ents {
		ents[i] = entry{e, filepath.Join(dir, e.Name())}
	}
	return ents
}

// WalkDir is filepath.WalkDir, recorded: the root and every folder it lists by their lstat (taken
// before the listing), every entry whose Info fn asks for by its lstat.
// It walks as filepath.WalkDir does (same calls of fn, in the same order), with listDir's listings.
func WalkDir(root string, fn fs.WalkDirFunc) error {
	r := cur.Load()
	info, err := os.Lstat(root)
	if err != nil {
		if r != nil {
			r.note(root, OpLstat, nil, err)
		}
		err = fn(root, nil, err)
	} else {
		err = walkListed(root, fs.FileInfoToDirEntry(info), fn, r)
	}
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

// walkListed is filepath.WalkDir's walk of path, whose entry is d; r, when recording, records every
// folder by its lstat before it is listed and hands fn entries whose Info is recorded.
func walkListed(path string, d fs.DirEntry, fn fs.WalkDirFunc, r *Recorder) error {
	if r != nil {
		if d.IsDir() {
			lookup(path, OpLstat)
		} else {
			d = entry{d, path}
		}
	}
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == filepath.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	ents, err := listDir(path)
	if err != nil {
		if err = fn(path, d, err); err != nil {
			if err == filepath.SkipDir && d.IsDir() {
				err = nil
			}
			return err
		}
	}
	for _, e := range ents {
		if err := walkListed(filepath.Join(path, e.Name()), e, fn, r); err != nil {
			if err == filepath.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// Glob is filepath.Glob, recorded: the folder of the pattern as listed (a pattern with meta
// characters before its last element makes the recording uncacheable), each match by its lstat.
func Glob(pattern string) ([]string, error) {
	r := cur.Load()
	if r == nil {
		return filepath.Glob(pattern)
	}
	dir := filepath.Dir(pattern)
	if strings.ContainsAny(dir, `*?[\`) {
		Uncacheable("glob " + pattern)
	} else {
		fi, err := os.Stat(dir)
		r.note(dir, OpStat, fi, err)
	}
	m, err := filepath.Glob(pattern)
	for _, p := range m {
		fi, lerr := os.Lstat(p)
		r.note(p, OpLstat, fi, lerr)
	}
	return m, err
}

// LookPath is exec.LookPath, recorded: the stat of the name in every PATH folder up to the one that
// has it (a tool that appears earlier on PATH later changes the answer).
func LookPath(name string) (string, error) {
	if r := cur.Load(); r != nil && !strings.ContainsRune(name, '/') {
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			if d == "" {
				d = "."
			}
			p := filepath.Join(d, name)
			fi, err := os.Stat(p)
			r.note(p, OpStat, fi, err)
			if err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				break
			}
		}
	}
	return exec.LookPath(name)
}

// EvalSymlinks is filepath.EvalSymlinks, recorded: the lstat of every prefix of the path.
func EvalSymlinks(path string) (string, error) {
	r := cur.Load()
	if r == nil {
		return filepath.EvalSymlinks(path)
	}
	abs := r.abs(path)
	for i := 1; i <= len(abs); i++ {
		if i == len(abs) || abs[i] == '/' {
			fi, err := os.Lstat(abs[:i])
			r.note(abs[:i], OpLstat, fi, err)
		}
	}
	return filepath.EvalSymlinks(path)
}
