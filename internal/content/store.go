package content

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/kvfile"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// maxJSONEntries bounds a cache: past it, the entries this process did not use are dropped.
const maxJSONEntries = 20000

// jsonCache is a map kept in one internal/kvfile file in the state folder, each value JSON: a check
// decodes only the values it asks for (the baseline store holds every workspace's runs; a check uses
// its own), and writes the others back as the bytes it read. A missing, unreadable or corrupt file (or
// a FIFO, a device, a file over safeio.MaxCache) is an empty cache, and so is a value that does not
// decode; failures to save only cost speed next time.
type jsonCache[T any] struct {
	path    string
	decoded map[string]T      // asked for, or put
	raw     map[string][]byte // as read, not decoded: never both in decoded and raw
	used    map[string]bool
	gone    map[string]bool // deleted by this process: not merged back from the file on save
	// dirty: something was put or deleted; legacy: the values came from the JSON file of an earlier
	// stalecheck (written as a kvfile at the next save, which removes the JSON file).
	dirty, legacy bool
	read          string // the file's signature before it was read ("" none)
}

// statSig is the identity of the file at path (device, inode, size, mtime, ctime), "" when none.
func statSig(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return ""
	}
	sig := fsrec.SigOf(fi, nil)
	return fmt.Sprint(sig.Dev, sig.Ino, sig.Size, sig.MtimeNS, sig.CtimeNS)
}

// jsonFile is the JSON document an earlier stalecheck kept each cache in (read once, to carry its
// entries over).
type jsonFile struct {
	Version int                        `json:"version"`
	Entries map[string]json.RawMessage `json:"entries"`
}

// loadJSON opens the cache file name (a ".kv" name) in dir; "" keeps it in memory only. When that file
// does not exist, the JSON file of the same name that an earlier stalecheck wrote ("x.v1.json" for
// "x.v1.kv") is read instead.
func loadJSON[T any](dir, name string) *jsonCache[T] {
	c := &jsonCache[T]{decoded: map[string]T{}, raw: map[string][]byte{}, used: map[string]bool{}, gone: map[string]bool{}}
	if dir == "" {
		return c
	}
	c.path = filepath.Join(dir, name)
	// Stat before the read: a save finding the same file needs no merge (one replaced after this stat
	// has another signature, and is merged).
	c.read = statSig(c.path)
	raw, err := kvfile.Read(c.path, safeio.MaxCache)
	if errors.Is(err, fs.ErrNotExist) {
		raw = readLegacy(c.legacyPath())
		c.legacy = raw != nil
	}
	if raw != nil {
		c.raw = raw
	}
	return c
}

// legacyPath is the JSON file an earlier stalecheck kept this cache in.
func (c *jsonCache[T]) legacyPath() string { return strings.TrimSuffix(c.path, ".kv") + ".json" }

// readLegacy reads a cache file of an earlier stalecheck (nil when there is none or it does not decode).
func readLegacy(path string) map[string][]byte {
	data, err := safeio.ReadFile(path, safeio.MaxCache)
	if err != nil {
		return nil
	}
	var f jsonFile
	if json.Unmarshal(data, &f) != nil || f.Version != 1 || f.Entries == nil {
		return nil
	}
	out := make(map[string][]byte, len(f.Entries))
	for k, v := range f.Entries {
		out[k] = v
	}
	return out
}

// peek returns the value of k, decoding it on first use, without counting it as used.
func (c *jsonCache[T]) peek(k string) (T, bool) {
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
		// Not what this stalecheck writes: as if absent, and not written back.
		var zero T
		return zero, false
	}
	c.decoded[k] = v
	return v, true
}

func (c *jsonCache[T]) get(k string) (T, bool) {
	v, ok := c.peek(k)
	if ok {
		c.used[k] = true
	}
	return v, ok
}

// len is the number of entries, decoded or not.
func (c *jsonCache[T]) len() int { return len(c.decoded) + len(c.raw) }

func (c *jsonCache[T]) has(k string) bool {
	if _, ok := c.decoded[k]; ok {
		return true
	}
	_, ok := c.raw[k]
	return ok
}

// keys calls each with every key (decoded or not), in no set order.
func (c *jsonCache[T]) keys(each func(k string)) {
	for k := range c.decoded {
		each(k)
	}
	for k := range c.raw {
		each(k)
	}
}

func (c *jsonCache[T]) put(k string, v T) {
	delete(c.raw, k)
	c.decoded[k] = v
	c.used[k] = true
	c.dirty = true
}

func (c *jsonCache[T]) del(k string) {
	delete(c.decoded, k)
	delete(c.raw, k)
	c.gone[k] = true
	c.dirty = true
}

// save merges the entries another process saved meanwhile, bounds the size and writes a temporary file
// renamed over the old one (readers see the old or the new file, never a mix). The values this process
// decoded are encoded again (a caller may have changed what they hold); the others are written as read.
func (c *jsonCache[T]) save() {
	if c.path == "" || !c.dirty && !c.legacy {
		return
	}
	// Merge what another process saved since this one read the file (not when it is the same file).
	if c.read == "" || statSig(c.path) != c.read {
		if now, err := kvfile.Read(c.path, safeio.MaxCache); err == nil {
			for k, v := range now {
				if !c.has(k) && !c.gone[k] {
					c.raw[k] = v
				}
			}
		}
	}
	if len(c.decoded)+len(c.raw) > maxJSONEntries {
		for k := range c.decoded {
			if !c.used[k] {
				delete(c.decoded, k)
			}
		}
		clear(c.raw)
	}
	// The values this process decoded are encoded again; the others are copied as read.
	err := safeio.WriteFileAtomic(c.path, safeio.WriteOptions{Replace: true, Perm: 0o600, MkdirPerm: 0o700}, func(f io.Writer) error {
		w := kvfile.NewWriter(f)
		for k, v := range c.decoded {
			data, err := json.Marshal(v)
			if err != nil {
				return err
			}
			w.Add(k, data)
		}
		for k, v := range c.raw {
			w.Add(k, v)
		}
		return w.Close()
	})
	if err != nil {
		return
	}
	if c.legacy {
		os.Remove(c.legacyPath())
	}
	c.dirty, c.legacy = false, false
}
