package cli

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cinclude"
	"github.com/stalecheck/stalecheck/internal/content"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/vcache"
)

// TestPureCacheNames: the verdict cache leaves out of its recordings exactly the state files of the
// caches that only save work, by the names their packages write them under.
func TestPureCacheNames(t *testing.T) {
	want := []string{digest.CacheFile, cargo.NativeCacheFile, evidence.CacheFile, content.HoldsCacheFile, cinclude.StoreFile, content.CodeDigestsFile,
		// the JSON files earlier builds kept five of them in, read once to carry them over
		strings.TrimSuffix(content.HoldsCacheFile, ".kv") + ".json", strings.TrimSuffix(content.CodeDigestsFile, ".kv") + ".json", "read-cache.v1.json", "content-matches.v2.json", "include-parses.v1.json"}
	if len(vcache.PureCaches) != len(want) {
		t.Fatalf("vcache.PureCaches %v, want %v", vcache.PureCaches, want)
	}
	for _, n := range want {
		if !vcache.PureCaches[n] {
			t.Errorf("vcache.PureCaches lacks %s", n)
		}
	}
	if vcache.PureCaches[content.BaselinesFile] {
		t.Error("content baselines decide verdicts: they must be recorded")
	}
}
