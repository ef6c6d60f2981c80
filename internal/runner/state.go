package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// StateFile is the run cache in the state folder: tool versions keyed by executable (path, size, mtime)
// and native fingerprints keyed by the library file's digest.
const StateFile = "run-cache.v1.json"

// maxFingerprints bounds the fingerprint entries kept; beyond it only those used by this run are saved.
const maxFingerprints = 4096

type toolEntry struct {
	Size    int64  `json:"size"`
	MTimeNS int64  `json:"mtime_ns"`
	Version string `json:"version"`
}

type stateData struct {
	Tools        map[string]toolEntry `json:"tools"`
	Fingerprints map[string]string    `json:"fingerprints"` // file digest -> content fingerprint
}

// stateCache is the run cache. A nil *stateCache caches nothing. A missing or unreadable file is an empty
// cache, and so is anything that is not a regular file (a FIFO, a symlink to a device) or is larger than
// safeio.MaxCache: it is never waited on nor read without bound. save writes a temporary file and renames
// it over the old name (replacing whatever was there; a concurrent run may lose an entry, never the file).
type stateCache struct {
	dir   string
	mu    sync.Mutex
	d     stateData
	used  map[string]bool
	dirty bool
}

func openState(dir string) *stateCache {
	c := &stateCache{dir: dir, used: map[string]bool{}}
	if b, err := safeio.ReadFile(filepath.Join(dir, StateFile), safeio.MaxCache); err == nil {
		json.Unmarshal(b, &c.d) // a corrupt file is an empty cache
	}
	if c.d.Tools == nil {
		c.d.Tools = map[string]toolEntry{}
	}
	if c.d.Fingerprints == nil {
		c.d.Fingerprints = map[string]string{}
	}
	return c
}

func (c *stateCache) fingerprint(fileDigest string) (string, bool) {
	if c == nil || fileDigest == "" {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	fp, ok := c.d.Fingerprints[fileDigest]
	if ok {
		c.used[fileDigest] = true
	}
	return fp, ok
}

func (c *stateCache) setFingerprint(fileDigest, fp string) {
	if c == nil || fileDigest == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d.Fingerprints[fileDigest] = fp
	c.used[fileDigest] = true
	c.dirty = true
}

// tool returns the cached version of the executable at path when its size and mtime are unchanged.
func (c *stateCache) tool(path string, fi os.FileInfo) (string, bool) {
	if c == nil {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.d.Tools[path]
	if !ok || e.Size != fi.Size() || e.MTimeNS != fi.ModTime().UnixNano() {
		return "", false
	}
	return e.Version, true
}

func (c *stateCache) setTool(path string, fi os.FileInfo, version string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.d.Tools[path] = toolEntry{Size: fi.Size(), MTimeNS: fi.ModTime().UnixNano(), Version: version}
	c.dirty = true
}

func (c *stateCache) save() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	if len(c.d.Fingerprints) > maxFingerprints {
		for k := range c.d.Fingerprints {
			if !c.used[k] {
				delete(c.d.Fingerprints, k)
			}
		}
	}
	b, err := json.Marshal(&c.d)
	if err != nil {
		return err
	}
	if err := safeio.WriteBytesAtomic(filepath.Join(c.dir, StateFile), safeio.WriteOptions{Replace: true, Perm: 0o600, MkdirPerm: 0o700}, b); err != nil {
		return err
	}
	c.dirty = false
	return nil
}
