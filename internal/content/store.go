package content

import (
	"encoding/json"
	"path/filepath"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// maxJSONEntries bounds a JSON cache: past it, the entries this process did not use are dropped.
const maxJSONEntries = 20000

// jsonCache is a small map kept as one JSON file in the state folder. A missing, unreadable or corrupt
// file (or a FIFO, a device, a file over safeio.MaxCache) is an empty cache; failures to save only cost
// speed next time.
type jsonCache[T any] struct {
	path  string
	m     map[string]T
	used  map[string]bool
	gone  map[string]bool // deleted by this process: not merged back from the file on save
	dirty bool
}

type jsonFile[T any] struct {
	Version int          `json:"version"`
	Entries map[string]T `json:"entries"`
}

func loadJSON[T any](dir, name string) *jsonCache[T] {
	c := &jsonCache[T]{m: map[string]T{}, used: map[string]bool{}, gone: map[string]bool{}}
	if dir == "" {
		return c
	}
	c.path = filepath.Join(dir, name)
	c.m = readJSON[T](c.path)
	return c
}

func readJSON[T any](path string) map[string]T {
	data, err := safeio.ReadFile(path, safeio.MaxCache)
	if err != nil {
		return map[string]T{}
	}
	var f jsonFile[T]
	if json.Unmarshal(data, &f) != nil || f.Version != 1 || f.Entries == nil {
		return map[string]T{}
	}
	return f.Entries
}

func (c *jsonCache[T]) get(k string) (T, bool) {
	v, ok := c.m[k]
	if ok {
		c.used[k] = true
	}
	return v, ok
}

func (c *jsonCache[T]) put(k string, v T) {
	c.m[k] = v
	c.used[k] = true
	c.dirty = true
}

func (c *jsonCache[T]) del(k string) {
	delete(c.m, k)
	c.gone[k] = true
	c.dirty = true
}

// save merges the entries another process saved meanwhile, bounds the size and writes a temporary file
// renamed over the old one (readers see the old or the new file, never a mix).
func (c *jsonCache[T]) save() {
	if c.path == "" || !c.dirty {
		return
	}
	for k, v := range readJSON[T](c.path) {
		if _, ok := c.m[k]; !ok && !c.gone[k] {
			c.m[k] = v
		}
	}
	if len(c.m) > maxJSONEntries {
		for k := range c.m {
			if !c.used[k] {
				delete(c.m, k)
			}
		}
	}
	data, err := json.Marshal(jsonFile[T]{Version: 1, Entries: c.m})
	if err != nil {
		return
	}
	if safeio.WriteBytesAtomic(c.path, safeio.WriteOptions{Replace: true, Perm: 0o600, MkdirPerm: 0o700}, data) != nil {
		return
	}
	c.dirty = false
}
