package fsrec

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Memos carry a reader's work from one recording to the next one of the same invocation.
//
// A memo is what one computation found (a package folder walked for edited files, a dependency file
// parsed) together with its Scope: the file or folder under which lie all the paths it consulted. Its
// Name holds every other input it had (its parameters), so that the computation is a function of the
// answers to its look-ups under Scope. The verdict cache stores the memos a recording kept beside that
// recording's entries. The next recording of the same invocation starts from them (Adopt): the cache
// looks up every entry of the last recording again, and a memo none of whose paths at or under its
// scope changed is valid, since the computation would make the same look-ups, get the same answers and
// find the same thing. A reader asks Reuse before computing, and Keep after computing.
//
// A reused memo's entries (every entry of the last recording at or under its scope) are recorded as
// this recording's own, with the signatures they had (the same now), so the next verdict covers them
// as if the computation had run. A memo is only sound when its computation consults no path outside
// its scope, nothing the recording leaves out (the state folder, /proc), and no clock.

// Memo is one computation's result, kept for the next recording.
type Memo struct {
	// Name says what was computed, from what: its kind and every input that is not a path under Scope.
	Name string
	// Scope is the absolute path of the file or folder that holds every path the computation consulted.
	Scope string
	Value []byte
}

// Prior is what a recording takes over from the last one of the same invocation: the memos still valid,
// and the entries of the last recording that still answer alike.
type Prior struct {
	Memos   map[string]Memo
	Entries []PriorEntry
}

// PriorEntry is an entry of the last recording whose look-up answered alike at Since (the verdict
// cache looked every one up again). One at or under a valid memo's scope (Memo) is recorded at once:
// the memo stands for the look-ups that found it. Any other found or missing one answers this
// recording's Stat or Lstat of its path, as a first look-up would have, and is recorded when it does.
type PriorEntry struct {
	Entry
	Nlink uint64 // the link count the look-up saw (0: not known, not given as an answer)
	Memo  bool
}

type memos struct {
	// prior is set once, by Adopt before the reading starts, and only read after: looked up without
	// a lock (the readers' workers ask for a memo of every unit at once).
	prior    atomic.Pointer[map[string]Memo]
	kept     [memoShards]memoShard
	bytes    atomic.Int64 // of the kept memos' names, scopes and values
	full     atomic.Bool  // a memo did not fit in MemoBudget
	hasPrior atomic.Bool  // prior holds a memo
	reused   atomic.Int64
}

// memoShard is one of the locked parts of the kept memos, by a hash of the name, as seenShard is of
// the entries: one lock for all was the most waited-for lock of a check after a rebuild.
type memoShard struct {
	mu sync.Mutex
	m  map[string]Memo
}

const memoShards = 16

// MemoBudget bounds the bytes of the memos one recording keeps (names, scopes and values): a tree of
// tens of thousands of units would otherwise keep tens of megabytes, held in memory and written at
// the end. Past it, further memos are not kept (any subset is as sound as all of them); a 615-unit
// workspace keeps about 1.2 MB.
const MemoBudget = 2 << 20

// keep adds m to the kept memos when the budget allows. Two memos kept at once near the budget may
// both be refused where one would fit: any subset is as sound as all of them.
func (ms *memos) keep(m Memo) {
	sh := &ms.kept[maphash.String(seenSeed, m.Name)%memoShards]
	n := int64(len(m.Name) + len(m.Scope) + len(m.Value))
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var was int64
	if old, ok := sh.m[m.Name]; ok {
		was = int64(len(old.Name) + len(old.Scope) + len(old.Value))
	}
	if ms.bytes.Add(n-was) > MemoBudget {
		ms.bytes.Add(-n)
		delete(sh.m, m.Name)
		ms.full.Store(true)
		return
	}
	if sh.m == nil {
		sh.m = map[string]Memo{}
	}
	sh.m[m.Name] = m
}

// Adopt takes p over: its entries are recorded or held as answers (PriorEntry), and its memos answer
// Reuse. A nil p or Recorder does nothing.
func (r *Recorder) Adopt(p *Prior) {
	if r == nil || p == nil {
		return
	}
	// Two goroutines take half the entries each (ten thousand map insertions on the real workspace's
	// first check after a rebuild, before the read can start); the shards have their own locks.
	// Maps sized for them at once (Begin made them so when told what to expect): no growth on the way.
	if per := len(p.Entries)/seenShards*5/4 + 64; per > r.perShard {
		for i := range r.seen {
			if sh := &r.seen[i]; len(sh.m) == 0 {
				sh.m = make(map[key]seenVal, per)
			}
		}
		r.perShard = per
	}
	half := len(p.Entries) / 2
	if len(p.Entries) < 2048 {
		half = 0
	}
	done := make(chan struct{})
	go func() {
		r.adoptEntries(p.Entries[:half])
		close(done)
	}()
	r.adoptEntries(p.Entries[half:])
	<-done
	r.memo.prior.Store(&p.Memos)
	r.memo.hasPrior.Store(len(p.Memos) > 0)
}

// adoptEntries is Adopt's work for some of the entries.
func (r *Recorder) adoptEntries(ents []PriorEntry) {
	for _, e := range ents {
		if e.Op == OpContent && (e.Sum == nil || !e.Memo) || skipped(e.Path) || r.fresh != nil && r.fresh(e.Path) ||
			r.exclude != nil && r.exclude(e.Path) {
			continue
		}
		v := seenVal{sig: e.Sig, sum: e.Sum, prior: !e.Memo}
		switch {
		case e.Op == OpContent:
		case e.Sig.Err == ErrNone && e.Nlink > 0:
			v.kept, v.mode, v.nlink = true, ModeOf(e.Sig.Mode), e.Nlink
		case e.Sig.Err == ErrNotExist || e.Sig.Err == ErrNotDir:
			v.kept = true
		}
		k := key{e.Path, e.Op}
		sh := &r.seen[maphash.String(seenSeed, e.Path)%seenShards]
		sh.mu.Lock()
		if _, ok := sh.m[k]; !ok {
			sh.m[k] = v
		}
		sh.mu.Unlock()
	}
}

// Memoizing reports whether a memo could be reused or kept now: a recording is active, and it either
// has memos of the last one or room left for more (MemoBudget). A reader that must build a memo's name
// or value asks first, so that a large tree past the budget pays nothing for them.
func Memoizing() bool {
	r := cur.Load()
	if r == nil {
		return false
	}
	return r.memo.hasPrior.Load() || !r.memo.full.Load()
}

// Reuse returns the value of the memo named name that the last recording kept and that is still valid;
// it is kept for the next recording too. ok is false when there is none (or no recording is active):
// then compute, and Keep the result.
func Reuse(name string) (value []byte, ok bool) {
	r := cur.Load()
	if r == nil {
		return nil, false
	}
	prior := r.memo.prior.Load()
	if prior == nil {
		return nil, false
	}
	m, ok := (*prior)[name]
	if !ok {
		return nil, false
	}
	r.memo.keep(m)
	r.memo.reused.Add(1)
	return m.Value, true
}

// Keep records a memo for the next recording (nothing when no recording is active): name says what was
// computed (with every input that is not a path under scope), scope is the file or folder under which
// lies every path the computation consulted, through this package, while the recording was active.
func Keep(name, scope string, value []byte) {
	r := cur.Load()
	if r == nil {
		return
	}
	r.memo.keep(Memo{Name: name, Scope: r.abs(scope), Value: value})
}

// KeptMemos reports whether this recording kept a memo (reused or computed).
func (r *Recorder) KeptMemos() bool { return r.memo.bytes.Load() > 0 }

// Memos returns the memos kept in this recording (reused or computed), in no set order.
func (r *Recorder) Memos() []Memo {
	var out []Memo
	for i := range r.memo.kept {
		sh := &r.memo.kept[i]
		sh.mu.Lock()
		for _, m := range sh.m {
			out = append(out, m)
		}
		sh.mu.Unlock()
	}
	return out
}

// Reused returns how many memos Reuse answered.
func (r *Recorder) Reused() int {
	if r == nil {
		return 0
	}
	return int(r.memo.reused.Load())
}

// AppendStrings appends ss to b in the form Strings reads (a count, then each string's length and
// bytes, as uvarints): memo values made of paths.
func AppendStrings(b []byte, ss ...string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

var errMemo = errors.New("damaged memo value")

// Strings reads what AppendStrings wrote at the start of b and returns the rest of b.
func Strings(b []byte) ([]string, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, errMemo
	}
	b = b[k:]
	out := make([]string, 0, n)
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, nil, errMemo
		}
		out = append(out, string(b[k:k+int(l)]))
		b = b[k+int(l):]
	}
	return out, b, nil
}

// ReadDirKept is ReadDir for a folder whose listing (names and types) the next recording may take from
// its memo while nothing at or under the folder changed: the readers list thousands of small record
// folders (Cargo's fingerprint folder of each unit) that a rebuild of a few units leaves alone.
func ReadDirKept(dir string) ([]fs.DirEntry, error) {
	if !Memoizing() {
		return ReadDir(dir)
	}
	name := "fsrec.list\x00" + dir
	if b, ok := Reuse(name); ok {
		if ents, err := decodeListing(dir, b); err == nil {
			return ents, nil
		}
	}
	ents, err := ReadDir(dir)
	if err == nil {
		Keep(name, dir, encodeListing(ents))
	}
	return ents, err
}

func encodeListing(ents []fs.DirEntry) []byte {
	b := binary.AppendUvarint(nil, uint64(len(ents)))
	for _, e := range ents {
		b = binary.AppendUvarint(b, uint64(len(e.Name())))
		b = append(b, e.Name()...)
		b = binary.AppendUvarint(b, uint64(e.Type()))
	}
	return b
}

func decodeListing(dir string, b []byte) ([]fs.DirEntry, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errMemo
	}
	b = b[k:]
	out := make([]fs.DirEntry, 0, n)
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, errMemo
		}
		name := string(b[k : k+int(l)])
		b = b[k+int(l):]
		t, k2 := binary.Uvarint(b)
		if k2 <= 0 || t > uint64(^uint32(0)) {
			return nil, errMemo
		}
		b = b[k2:]
		out = append(out, keptEntry{name: name, typ: fs.FileMode(t), path: filepath.Join(dir, name)})
	}
	if len(b) != 0 {
		return nil, errMemo
	}
	return out, nil
}

// keptEntry is a listed entry given again from a memo; its Info is a recorded lstat.
type keptEntry struct {
	name string
	typ  fs.FileMode
	path string
}

func (e keptEntry) Name() string               { return e.name }
func (e keptEntry) IsDir() bool                { return e.typ.IsDir() }
func (e keptEntry) Type() fs.FileMode          { return e.typ }
func (e keptEntry) Info() (fs.FileInfo, error) { return lookup(e.path, OpLstat) }

// WalkDirKept is WalkDir whose folder listings are ReadDirKept's: a folder that nothing at or under
// changed is listed from its memo. The root and every folder are looked up by their lstat first, as
// WalkDir does; fn sees the same paths in the same order.
func WalkDirKept(root string, fn fs.WalkDirFunc) error {
	if !Memoizing() {
		return WalkDir(root, fn)
	}
	info, err := lookup(root, OpLstat)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = walkKept(root, fs.FileInfoToDirEntry(info), fn)
	}
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

// walkKept is filepath.WalkDir's walk of path (whose entry is d, a folder's lstat already recorded).
func walkKept(path string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == filepath.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	ents, err := listKept(path)
	if err != nil {
		if err = fn(path, d, err); err != nil {
			if err == filepath.SkipDir && d.IsDir() {
				err = nil
			}
			return err
		}
	}
	for _, e := range ents {
		p := filepath.Join(path, e.Name())
		if e.IsDir() {
			lookup(p, OpLstat)
		}
		if err := walkKept(p, e, fn); err != nil {
			if err == filepath.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// listKept lists dir (its look-up already recorded) through its memo when it still holds.
func listKept(dir string) ([]fs.DirEntry, error) {
	name := "fsrec.list\x00" + dir
	if b, ok := Reuse(name); ok {
		if ents, err := decodeListing(dir, b); err == nil {
			return ents, nil
		}
	}
	ents, err := listDir(dir)
	ents = wrapEntries(dir, ents)
	if err == nil {
		Keep(name, dir, encodeListing(ents))
	}
	return ents, err
}
