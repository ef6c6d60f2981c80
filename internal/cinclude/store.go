package cinclude

import (
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/kvfile"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// StoreFile is the file in the state folder that keeps each parsed file's #include lines, computed
// includes and header-naming macros between checks, keyed by the file's device, inode, size, mtime and
// ctime (digest.Key): a parse is a function of the file's bytes, and the key changes whenever they can
// have (the ctime moves on every write, even one that puts the mtime back). A file changed less than
// digest.RacyWindow before it was read is not kept (a second write within the same timestamp tick would
// keep its key). Reading the headers of every compile that has no depfile (cc-rs's compiles, CMake's
// Makefile generator) is most of what a check spends on C sources.
//
// It is an internal/kvfile file (a record per parse, keyed by the file's digest.Key bytes, the value
// JSON) whose records a check decodes only when it asks for them: the state folder is shared by every
// build a user checks, up to storeMax parses.
const StoreFile = "include-parses.v2.kv"

// legacyStoreFile is the JSON file earlier builds kept the parses in: carried over once.
const legacyStoreFile = "include-parses.v1.json"

// storeMax bounds the entries kept (the state folder is shared by every build); those this check did
// not use go first.
const storeMax = 50000

// storeClock is the clock of the racy rule; tests move it past the window of files they just wrote.
var storeClock = time.Now

// A Store is the parses of StoreFile, shared by the caches of one check (NewCacheIn). Safe for
// concurrent use.
type Store struct {
	c *kvfile.Cache[storedParse]
}

// storedParse is one file's parse (the key is the record's).
type storedParse struct {
	Includes []Include `json:"includes,omitempty"`
	Computed []Include `json:"computed,omitempty"`
	Defines  []Define  `json:"defines,omitempty"`
}

// OpenStore loads the store of stateDir; nil (nothing kept) when stateDir is "". A missing or damaged
// file gives an empty store.
func OpenStore(stateDir string) *Store {
	if stateDir == "" {
		return nil
	}
	return &Store{c: kvfile.Open[storedParse](filepath.Join(stateDir, StoreFile), storeMax, filepath.Join(stateDir, legacyStoreFile), readLegacyStore)}
}

// readLegacyStore reads the JSON array earlier builds kept the parses in, as records.
func readLegacyStore(path string) map[string][]byte {
	data, err := safeio.ReadFile(path, safeio.MaxCache)
	if err != nil {
		return nil
	}
	var all []*struct {
		Key digest.Key `json:"key"`
		storedParse
	}
	if json.Unmarshal(data, &all) != nil {
		return nil
	}
	out := make(map[string][]byte, len(all))
	for _, e := range all {
		if e == nil {
			continue
		}
		if v, err := json.Marshal(e.storedParse); err == nil {
			out[string(e.Key.Bytes())] = v
		}
	}
	return out
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
	if e, ok := s.c.Get(string(k.Bytes())); ok {
		return &parsed{includes: e.Includes, computed: e.Computed, defines: e.Defines}
	}
	p := readParse(path)
	// Kept only when the file is the one stat'ed before the read, and not racy.
	if k2, ok2, err2 := digest.StatKey(path); err2 == nil && ok2 && k2 == k && digest.Settled(k, storeClock()) {
		s.c.Put(string(k.Bytes()), storedParse{Includes: p.includes, Computed: p.computed, Defines: p.defines})
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

// Save writes the store when this check added to it: a temporary file renamed into place; the
// records this check did not ask for are copied as read. Errors are ignored: the store only saves work.
func (s *Store) Save() {
	if s == nil {
		return
	}
	s.c.Save()
}
