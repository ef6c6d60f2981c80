package vcache

import (
	"os"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Memos (fsrec's memo.go) make the first check after a change cheaper than a full one: the verdict
// file keeps, beside the entries, the memos its check kept (what a reader computed over one file or
// folder). The look-up of a verdict file with memos looks up every entry once (lookAll, the cost of a
// hit) and keeps each answer; after a miss the next recording adopts each memo none of whose entries
// at or under its scope changed, with those entries (candidates). The reader then reuses the memo
// instead of reading and parsing again.

// MemoSuffix ends the name of the memo file beside a verdict file.
const MemoSuffix = ".memos"

// maxPriorEntries bounds the verdicts whose memos are kept: after a miss every entry's answer is
// held, which pays on a workspace of hundreds of units (10,653 entries: the first check
// after a rebuild 0.8x the time and CPU) and not on the synthetic 28,905-unit tree (193,881 entries:
// the look-ups and the answers held cost more than the memos, which MemoBudget caps, save).
const maxPriorEntries = 50_000

// keptMemos returns the memos whose scope is among the stored entries: a scope that was not recorded
// (or was dropped as a covered miss) cannot tell the next check whether it changed.
func keptMemos(ms []fsrec.Memo, ents []fsrec.Entry) []fsrec.Memo {
	if len(ms) == 0 {
		return nil
	}
	recorded := make(map[string]bool, len(ms))
	for _, m := range ms {
		recorded[m.Scope] = false
	}
	for _, e := range ents {
		if _, ok := recorded[e.Path]; ok {
			recorded[e.Path] = true
		}
	}
	out := ms[:0]
	for _, m := range ms {
		if recorded[m.Scope] {
			out = append(out, m)
		}
	}
	return out
}

// lastMiss is what a look-up that missed learnt for the next recording: the memos of the verdict file,
// the paths that changed, and the entries at or under a memo's scope (candidates for adoption).
type lastMiss struct {
	memos   []fsrec.Memo
	changed []string
	cands   []fsrec.PriorEntry // every entry that answers alike, Memo set when under a memo's scope
	since   time.Time          // when the look-ups began
}

// lastMiss builds, from the memo file's bytes (read while lookAll went on) and what lookAll found,
// what the next recording starts from; nil when the memos do not read or decode, or nothing changed.
func (c *Cache) lastMiss(k Key, f *file, since time.Time, memo memoRead, state []uint64, changed []changedEntry) *lastMiss {
	if memo.err != nil {
		c.say("prior: %v", memo.err)
		return nil
	}
	memos, misses, err := parseMemos(memo.data, k, f.gen)
	if err != nil {
		c.say("prior: %s%s: %v", c.path(k), MemoSuffix, err)
		return nil
	}
	if len(memos) == 0 || len(changed) == 0 {
		return nil
	}
	scopes := make(map[string]bool, len(memos))
	for _, m := range memos {
		scopes[m.Scope] = true
	}
	cands, err := f.candidates(state, scopes, len(misses)) // room for the covered answers
	if err != nil {
		return nil
	}
	cands = append(cands, coveredAnswers(cands, misses)...)
	paths := make([]string, len(changed))
	for i, ch := range changed {
		paths[i] = ch.path
	}
	return &lastMiss{memos: memos, changed: paths, cands: cands, since: since}
}

// coveredAnswers returns the covered misses (the memo file's: look-ups that found nothing in a folder
// the last check recorded as a folder) whose folder is among cands, the entries that still answer
// alike, as a folder: the folder has its signature of then (an entry added, removed or renamed moves
// its mtime and ctime), so the name is still absent, and the next recording's look-up of it is
// answered without a system call. They are answers only (Memo false): recorded when a look-up asks.
func coveredAnswers(cands []fsrec.PriorEntry, misses []fsrec.Entry) []fsrec.PriorEntry {
	if len(misses) == 0 {
		return nil
	}
	dirs := make(map[string]bool, len(cands)/8)
	for i := range cands {
		if isFolder(&cands[i].Entry) {
			dirs[cands[i].Path] = true
		}
	}
	var out []fsrec.PriorEntry
	for _, m := range misses {
		if dir, _, ok := splitPath(m.Path); ok && dirs[dir] {
			out = append(out, fsrec.PriorEntry{Entry: m})
		}
	}
	return out
}

// memoRead is the memo file's bytes, or why they could not be read.
type memoRead struct {
	data []byte
	err  error
}

// underAny reports whether path is one of dirs or lies under one.
func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(path, d) && (len(path) == len(d) || path[len(d)] == '/') {
			return true
		}
	}
	return false
}

// covered reports whether the folder dir (no trailing "/") is one of scopes or lies in one.
func covered(scopes map[string]bool, dir string) bool {
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

// storeMemos writes memos as the memo file of the verdict of k that Store is writing, with the
// generation gen that verdict names, and reports whether it did; when there are none (or gen is nil,
// or the write failed) a stale memo file of k is removed, and the verdict must name no generation.
func (c *Cache) storeMemos(k Key, memos []fsrec.Memo, misses []fsrec.Entry, gen []byte, wo safeio.WriteOptions) bool {
	if len(memos) > 0 && gen != nil {
		if err := safeio.WriteBytesAtomic(c.path(k)+MemoSuffix, wo, encodeMemos(k, gen, memos, misses)); err == nil {
			return true
		}
	}
	os.Remove(c.path(k) + MemoSuffix)
	return false
}

// prior returns the memos of m that are still valid (no entry at or under the scope changed), with the
// entries at or under their scopes.
func (c *Cache) prior(m *lastMiss) *fsrec.Prior {
	t0 := time.Now()
	// Every changed path and each of its folders: a memo whose scope is among them is stale.
	touched := make(map[string]bool, len(m.changed)*4)
	for _, p := range m.changed {
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
	p := &fsrec.Prior{Memos: make(map[string]fsrec.Memo, len(m.memos))}
	scopes := make(map[string]bool, len(m.memos))
	var stale []string // the scopes of the memos that are not valid (a few)
	for _, x := range m.memos {
		if !touched[x.Scope] {
			p.Memos[x.Name] = x
			scopes[x.Scope] = true
		} else {
			stale = append(stale, x.Scope)
		}
	}
	p.Entries = m.cands
	adopted := 0
	for i := range p.Entries {
		e := &p.Entries[i]
		// Memo says the entry lies at or under some memo's scope: it stays so unless one of those is
		// stale, then only a valid one counts.
		if e.Memo && underAny(e.Path, stale) {
			e.Memo = covered(scopes, e.Path)
		}
		if e.Memo {
			adopted++
		}
	}
	c.say("prior: %d of %d memos still valid, %d paths changed, %d adopted, %d answers (%.1f ms)",
		len(p.Memos), len(m.memos), len(m.changed), adopted, len(p.Entries)-adopted, float64(time.Since(t0).Microseconds())/1000)
	return p
}
