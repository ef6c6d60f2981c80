package cinclude

import (
	"encoding/json"
	"path/filepath"
	"sync"
	"time"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// StoreFile is the file in the state folder that keeps each parsed file's #include lines, computed
// includes and header-naming macros between checks, keyed by the file's device, inode, size, mtime and
// ctime (digest.Key): a parse is a function of the file's bytes, and the key changes whenever they can
// have (the ctime moves on every write, even one that puts the mtime back). A file changed less than
// digest.RacyWindow before it was read is not kept (a second write within the same timestamp tick would
// keep its key). Reading the headers of every compile that has no depfile (cc-rs's compiles, CMake's
// Makefile generator) is most of what a check spends on C sources.
const StoreFile = "include-parses.v1.json"

// storeMax bounds the entries kept (the state folder is shared by every build); those this check did
// not use go first.
const storeMax = 50000

// storeClock is the clock of the racy rule; tests move it past the window of files they just wrote.
var storeClock = time.Now

// A Store is the parses of StoreFile, shared by the caches of one check (NewCacheIn). Safe for
// concurrent use.
type Store struct {
	path  string
	mu    sync.Mutex
	m     map[digest.Key]*storedParse
	dirty bool
}

// storedParse is one file's parse in StoreFile's JSON.
type storedParse struct {
	Key      digest.Key `json:"key"`
	Includes []Include  `json:"includes,omitempty"`
	Computed []Include  `json:"computed,omitempty"`
	Defines  []Define   `json:"defines,omitempty"`
	used     bool
}

// OpenStore loads the store of stateDir; nil (nothing kept) when stateDir is "". A missing or damaged
// file gives an empty store.
func OpenStore(stateDir string) *Store {
	if stateDir == "" {
		return nil
	}
	s := &Store{path: filepath.Join(stateDir, StoreFile), m: map[digest.Key]*storedParse{}}
	data, err := safeio.ReadFile(s.path, safeio.MaxRecord)
	if err != nil {
		return s
	}
	var all []*storedParse
	if json.Unmarshal(data, &all) != nil {
		return s
	}
	for _, e := range all {
		if e != nil {
			s.m[e.Key] = e
		}
	}
	return s
}

// NewCacheIn is NewCache whose parses come from, and go to, the store s (nil: NewCache).
func NewCacheIn(s *Store) *Cache {
	c := NewCache()
	c.store = s
	return c
}

// parse is parseAll(data of path, true) through the store.
func (s *Store) parse(path string) *parsed {
	k, ok, err := digest.StatKey(path)
	if err != nil || !ok {
		return readParse(path)
	}
	s.mu.Lock()
	e := s.m[k]
	if e != nil {
		e.used = true
	}
	s.mu.Unlock()
	if e != nil {
		return &parsed{includes: e.Includes, computed: e.Computed, defines: e.Defines}
	}
	p := readParse(path)
	// Kept only when the file is the one stat'ed before the read, and not racy.
	if k2, ok2, err2 := digest.StatKey(path); err2 == nil && ok2 && k2 == k && digest.Settled(k, storeClock()) {
		s.mu.Lock()
		s.m[k] = &storedParse{Key: k, Includes: p.includes, Computed: p.computed, Defines: p.defines, used: true}
		s.dirty = true
		s.mu.Unlock()
	}
	return p
}

// readParse reads and parses the file at path (empty when it cannot be read).
func readParse(path string) *parsed {
	p := &parsed{}
	if data, err := safeio.ReadFile(path, safeio.MaxRecord); err == nil {
		*p = parseAll(data, true)
	}
	return p
}

// Save writes the store when this check added to it: a temporary file renamed into place (a concurrent
// check's additions may be lost: they are parsed again next time). Errors are ignored: the store only
// saves work.
func (s *Store) Save() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirty {
		return
	}
	data, err := json.Marshal(digest.KeptEntries(s.m, func(e *storedParse) bool { return e.used }, storeMax))
	if err != nil {
		return
	}
	if safeio.WriteBytesAtomic(s.path, safeio.WriteOptions{Replace: true, Perm: 0o600, MkdirPerm: 0o700}, data) == nil {
		s.dirty = false
	}
}
