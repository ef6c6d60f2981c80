package kvfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Cache is a map kept in one file of this format, each value JSON: a process decodes only the values it
// asks for and writes the others back as the bytes it read. A missing, unreadable or damaged file (or
// a FIFO, a device, a file over safeio.MaxCache) is an empty cache, and a value that does not decode
// is absent; failures to save only cost what the cache saves. Safe for concurrent use.
type Cache[T any] struct {
	path, legacy string
	max          int
	mu           sync.Mutex
	decoded      map[string]T      // asked for, or put
	raw          map[string][]byte // as read, not decoded: never both in decoded and raw
	orig         map[string][]byte // the bytes a decoded value was read as (Save appends it only when they differ)
	used         map[string]bool
	gone         map[string]bool // deleted by this process: not merged back from the file on save
	info         Info            // the file as read
	// dirty: something was put or deleted; fromLegacy: the entries came from legacy (written here at
	// the next save, which removes legacy).
	dirty, fromLegacy bool
	repair            bool   // the file did not read whole: the next save writes it whole
	read              string // the file's signature before it was read ("" none)
}

// Open reads the cache file at path ("" keeps the cache in memory only). When it does not exist and
// legacy is not "", the file an earlier stalecheck kept the cache in is read with readLegacy, which
// returns each entry's JSON (nil when there is none or it does not decode). Past max entries, Save
// drops those this process did not use.
func Open[T any](path string, max int, legacy string, readLegacy func(path string) map[string][]byte) *Cache[T] {
	c := &Cache[T]{path: path, legacy: legacy, max: max, decoded: map[string]T{}, raw: map[string][]byte{}, orig: map[string][]byte{}, used: map[string]bool{}, gone: map[string]bool{}}
	if path == "" {
		return c
	}
	// Stat before the read: a save finding the same file needs no merge (one replaced after this stat
	// has another signature, and is merged).
	c.read = Signature(path)
	raw, info, err := Read(path, safeio.MaxCache)
	c.info = info
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if legacy != "" && readLegacy != nil {
			raw = readLegacy(legacy)
			c.fromLegacy = raw != nil
		}
	case err != nil || info.TornAt > 0:
		// Damaged, too large, not a regular file, or with a torn tail: written whole at the next save
		// (a directory in its place stays: the rename fails).
		c.repair = true
	}
	if raw != nil {
		c.raw = raw
	}
	return c
}

// LegacyJSON reads the JSON document {"version":1,"entries":{key: value}} earlier stalecheck builds
// kept their caches in: a readLegacy for Open.
func LegacyJSON(path string) map[string][]byte {
	data, err := safeio.ReadFile(path, safeio.MaxCache)
	if err != nil {
		return nil
	}
	var f struct {
		Version int                        `json:"version"`
		Entries map[string]json.RawMessage `json:"entries"`
	}
	if json.Unmarshal(data, &f) != nil || f.Version != 1 || f.Entries == nil {
		return nil
	}
	out := make(map[string][]byte, len(f.Entries))
	for k, v := range f.Entries {
		out[k] = v
	}
	return out
}

// Signature is the identity of the file at path (device, inode, size, mtime, ctime), "" when none.
func Signature(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return ""
	}
	sig := fsrec.SigOf(fi, nil)
	return fmt.Sprint(sig.Dev, sig.Ino, sig.Size, sig.MtimeNS, sig.CtimeNS)
}

// Peek returns the value of k, decoding it on first use, without counting it as used.
func (c *Cache[T]) Peek(k string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peek(k)
}

func (c *Cache[T]) peek(k string) (T, bool) {
	if v, ok := c.decoded[k]; ok {
		return v, true
	}
	var v T
	data, ok := c.raw[k]
	if !ok {
		return v, false
	}
	delete(c.raw, k)
	if json.Unmarshal(data, &v) != nil {
		// Not what this stalecheck writes: as if absent, and not written back (a rewrite drops it; an
		// append deletes it).
		c.gone[k] = true
		var zero T
		return zero, false
	}
	c.decoded[k] = v
	c.orig[k] = data
	return v, true
}

// Get is Peek that counts k as used (kept when Save bounds the cache).
func (c *Cache[T]) Get(k string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.peek(k)
	if ok {
		c.used[k] = true
	}
	return v, ok
}

// Len is the number of entries, decoded or not.
func (c *Cache[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.decoded) + len(c.raw)
}

// Has reports whether k has an entry (not decoded).
func (c *Cache[T]) Has(k string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.has(k)
}

func (c *Cache[T]) has(k string) bool {
	if _, ok := c.decoded[k]; ok {
		return true
	}
	_, ok := c.raw[k]
	return ok
}

// Keys returns every key (decoded or not), in no set order.
func (c *Cache[T]) Keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.decoded)+len(c.raw))
	for k := range c.decoded {
		out = append(out, k)
	}
	for k := range c.raw {
		out = append(out, k)
	}
	return out
}

// Put sets k (used).
func (c *Cache[T]) Put(k string, v T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.raw, k)
	c.decoded[k] = v
	c.used[k] = true
	c.dirty = true
}

// Del removes k; a save does not bring it back from the file.
func (c *Cache[T]) Del(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.decoded, k)
	delete(c.raw, k)
	c.gone[k] = true
	c.dirty = true
}

// Save writes the cache when something was put or deleted (or it came from the legacy file). When the
// file is the one this process read, it appends one block with the records that changed: each decoded
// value encoded again (a caller may have changed what it holds) and written when its bytes differ from
// those read, and the deletions. Otherwise, or when the appended blocks would pass half the file's
// last whole write (64 KiB at least), it writes the whole file again (a temporary file renamed over
// the old one, so readers see the old or the new file, never a mix): merging the entries another
// process saved since this one read the file, bounding the size, and copying the values this process
// did not decode as read.
func (c *Cache[T]) Save() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" || !c.dirty && !c.fromLegacy && !c.repair {
		return
	}
	// One saver at a time (another check's save between this one's merge and its rename, or an append
	// to the file this one replaces, would be lost): an advisory lock beside the file, given up after 5 s.
	unlock := digest.LockPath(c.path + ".lock")
	defer unlock()
	same := c.read != "" && Signature(c.path) == c.read
	// Appended to only when it was read whole (a damaged file is written again, never appended to).
	if same && c.info.Blocks > 0 && !c.fromLegacy && !c.repair && len(c.decoded)+len(c.raw) <= c.max && c.appendChanges() {
		return
	}
	if !same {
		if now, _, err := Read(c.path, safeio.MaxCache); err == nil {
			for k, v := range now {
				if !c.has(k) && !c.gone[k] {
					c.raw[k] = v
				}
			}
		}
	}
	if len(c.decoded)+len(c.raw) > c.max {
		for k := range c.decoded {
			if !c.used[k] {
				delete(c.decoded, k)
			}
		}
		clear(c.raw)
	}
	encoded := make(map[string][]byte, len(c.decoded))
	size := 0
	for k, v := range c.decoded {
		data, err := json.Marshal(v)
		if err != nil {
			return
		}
		encoded[k] = data
		size += RecordSize(k, data, false)
	}
	for k, v := range c.raw {
		size += RecordSize(k, v, false)
	}
	err := safeio.WriteFileAtomic(c.path, safeio.WriteOptions{Replace: true, Perm: 0o600, MkdirPerm: 0o700}, func(f io.Writer) error {
		w := NewWriter(f, size)
		for k, v := range encoded {
			w.Add(k, v)
		}
		for k, v := range c.raw {
			w.Add(k, v)
		}
		return w.Close()
	})
	if err != nil {
		return
	}
	if c.fromLegacy {
		os.Remove(c.legacy)
	}
	c.orig = encoded
	c.info = Info{Blocks: 1, First: size}
	c.read = Signature(c.path)
	clear(c.gone)
	c.dirty, c.fromLegacy, c.repair = false, false, false
}

// appendChanges appends the records that changed as one block (c.mu held); false when the block
// would make the appended part too large, or the append failed: then the file is written whole.
func (c *Cache[T]) appendChanges() bool {
	var b Block
	var encoded map[string][]byte
	// Deletions first, and none of a key put again after it was deleted: it is there.
	for k := range c.gone {
		if !c.has(k) {
			b.Delete(k)
		}
	}
	for k, v := range c.decoded {
		data, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if o, ok := c.orig[k]; ok && bytes.Equal(o, data) {
			continue
		}
		if encoded == nil {
			encoded = map[string][]byte{}
		}
		encoded[k] = data
		b.Add(k, data)
	}
	if b.Len() == 0 {
		c.dirty = false
		return true
	}
	if c.info.Appended+b.Len() > max(c.info.First/2, 64<<10) {
		return false
	}
	if Append(c.path, &b) != nil {
		return false
	}
	for k, v := range encoded {
		c.orig[k] = v
	}
	c.info.Blocks++
	c.info.Appended += b.Len()
	c.read = Signature(c.path)
	clear(c.gone)
	c.dirty = false
	return true
}
