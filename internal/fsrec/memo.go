package fsrec

import (
	"encoding/binary"
	"errors"
	"sync"
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

// Prior is what a recording takes over from the last one of the same invocation: the memos still valid
// and the entries at or under their scopes.
type Prior struct {
	Memos   map[string]Memo
	Entries []Entry
}

type memos struct {
	mu     sync.Mutex
	prior  map[string]Memo
	kept   map[string]Memo
	reused int
}

// Adopt takes p over: its entries are recorded (not as answers to give again: later look-ups ask the
// kernel and are compared with them) and its memos answer Reuse. A nil p or Recorder does nothing.
func (r *Recorder) Adopt(p *Prior) {
	if r == nil || p == nil {
		return
	}
	for _, e := range p.Entries {
		v := seenVal{sig: e.Sig, sum: e.Sum}
		if e.Op == OpContent && e.Sum == nil {
			continue
		}
		r.noteVal(e.Path, e.Op, v)
	}
	r.memo.mu.Lock()
	r.memo.prior = p.Memos
	r.memo.mu.Unlock()
}

// Reuse returns the value of the memo named name that the last recording kept and that is still valid;
// it is kept for the next recording too. ok is false when there is none (or no recording is active):
// then compute, and Keep the result.
func Reuse(name string) (value []byte, ok bool) {
	r := cur.Load()
	if r == nil {
		return nil, false
	}
	r.memo.mu.Lock()
	defer r.memo.mu.Unlock()
	m, ok := r.memo.prior[name]
	if !ok {
		return nil, false
	}
	if r.memo.kept == nil {
		r.memo.kept = map[string]Memo{}
	}
	r.memo.kept[name] = m
	r.memo.reused++
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
	m := Memo{Name: name, Scope: r.abs(scope), Value: value}
	r.memo.mu.Lock()
	if r.memo.kept == nil {
		r.memo.kept = map[string]Memo{}
	}
	r.memo.kept[name] = m
	r.memo.mu.Unlock()
}

// Memos returns the memos kept in this recording (reused or computed), in no set order.
func (r *Recorder) Memos() []Memo {
	r.memo.mu.Lock()
	defer r.memo.mu.Unlock()
	out := make([]Memo, 0, len(r.memo.kept))
	for _, m := range r.memo.kept {
		out = append(out, m)
	}
	return out
}

// Reused returns how many memos Reuse answered.
func (r *Recorder) Reused() int {
	if r == nil {
		return 0
	}
	r.memo.mu.Lock()
	defer r.memo.mu.Unlock()
	return r.memo.reused
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
