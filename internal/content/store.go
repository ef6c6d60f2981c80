package content

import (
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/kvfile"
)

// maxJSONEntries bounds a cache: past it, the entries this process did not use are dropped.
const maxJSONEntries = 20000

// loadJSON opens the cache file name (a ".kv" name) in dir as a kvfile.Cache ("" keeps it in memory
// only): a check decodes only the values it asks for (the baseline store holds every workspace's runs;
// a check uses its own). When that file does not exist, the JSON file of the same name that an earlier
// stalecheck wrote ("x.v1.json" for "x.v1.kv") is carried over.
func loadJSON[T any](dir, name string) *kvfile.Cache[T] {
	if dir == "" {
		return kvfile.Open[T]("", maxJSONEntries, "", nil)
	}
	path := filepath.Join(dir, name)
	return kvfile.Open[T](path, maxJSONEntries, strings.TrimSuffix(path, ".kv")+".json", kvfile.LegacyJSON)
}
