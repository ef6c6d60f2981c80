package vcache

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stalecheck/stalecheck/internal/fsrec"
)

// Memos (fsrec's memo.go) make the first check after a change cheaper than a full one: the verdict
// file keeps, beside the entries, the memos its check kept (what a reader computed over one file or
// folder). When a look-up misses, Begin looks up every entry of that file again (the cost of a hit),
// and the next recording adopts each memo none of whose entries at or under its scope changed, with
// those entries. The reader then reuses the memo instead of reading and parsing again.

// keptMemos returns the memos whose scope is among the stored entries: a scope that was not recorded
// (or was dropped as a covered miss) cannot tell the next check whether it changed.
func keptMemos(ms []fsrec.Memo, ents []fsrec.Entry) []fsrec.Memo {
	if len(ms) == 0 {
		return nil
	}
	paths := make(map[string]bool, len(ents))
	for _, e := range ents {
		paths[e.Path] = true
	}
	out := ms[:0]
	for _, m := range ms {
		if paths[m.Scope] {
			out = append(out, m)
		}
	}
	return out
}

// prior returns the memos of f that are still valid (no entry at or under the scope is among changed,
// the paths whose look-up answers otherwise now), with the entries at or under their scopes.
func (c *Cache) prior(f *file, changed []string) *fsrec.Prior {
	t0 := time.Now()
	memos, err := f.memos()
	if err != nil {
		c.say("prior: %v", err)
		return nil
	}

	// Every changed path and each of its folders: a memo whose scope is among them is stale.
	touched := make(map[string]bool, len(changed)*4)
	for _, p := range changed {
		for {
			if touched[p] {
				break
			}
			touched[p] = true
			i := strings.LastIndexByte(p, '/')
			if i <= 0 {
				break
			}
			p = p[:i]
		}
	}
	p := &fsrec.Prior{Memos: make(map[string]fsrec.Memo, len(memos))}
	scopes := make(map[string]bool, len(memos))
	for _, m := range memos {
		if !touched[m.Scope] {
			p.Memos[m.Name] = m
			scopes[m.Scope] = true
		}
	}
	if len(p.Memos) == 0 {
		return nil
	}
	// covered reports whether the folder dir (no trailing "/") is a valid scope or lies in one.
	coveredDir := func(dir string) bool {
		for {
			if scopes[dir] {
				return true
			}
			i := strings.LastIndexByte(dir, '/')
			if i <= 0 {
				return false
			}
			dir = dir[:i]
		}
	}
	var buf []byte
	var lastDir []byte
	lastCovered := false
	for ci := range f.chunks {
		err := f.scan(ci, &buf, func(e *fsrec.Entry, pathz []byte) bool {
			path := pathz[:len(pathz)-1]
			dir := path
			if i := bytes.LastIndexByte(path, '/'); i > 0 {
				dir = path[:i]
			}
			if lastDir == nil || !bytes.Equal(dir, lastDir) {
				lastDir = append(lastDir[:0], dir...)
				lastCovered = coveredDir(string(dir))
			}
			if !lastCovered && !scopes[string(path)] {
				return true
			}
			x := *e
			x.Path = string(path)
			if x.Sum != nil {
				s := *x.Sum
				x.Sum = &s
				// Same bytes, perhaps another signature now: compare the bytes at the next look-up.
				x.Recheck = true
			}
			p.Entries = append(p.Entries, x)
			return true
		})
		if err != nil {
			return nil
		}
	}
	c.say("prior: %d of %d memos still valid, %d of %d paths changed, %d adopted (%.1f ms)",
		len(p.Memos), len(memos), len(changed), f.n, len(p.Entries), float64(time.Since(t0).Microseconds())/1000)
	return p
}

// allChanged looks up every entry of f again (on several cores) and returns the paths whose look-up
// answers otherwise now.
func (f *file) allChanged() ([]string, error) {
	workers := min(runtime.GOMAXPROCS(0), 4, len(f.chunks))
	if f.n < 512 {
		workers = 1
	}
	var next atomic.Int64
	var mu sync.Mutex
	var changed []string
	var ferr error
	work := func() {
		var buf []byte
		for {
			ci := int(next.Add(1) - 1)
			if ci >= len(f.chunks) {
				return
			}
			err := f.scan(ci, &buf, func(e *fsrec.Entry, pathz []byte) bool {
				if !sameZ(e, pathz) {
					mu.Lock()
					changed = append(changed, string(pathz[:len(pathz)-1]))
					mu.Unlock()
				}
				return true
			})
			if err != nil {
				mu.Lock()
				ferr = err
				mu.Unlock()
				return
			}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); work() }()
	}
	work()
	wg.Wait()
	return changed, ferr
}
