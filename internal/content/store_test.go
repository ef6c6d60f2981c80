package content

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The store keeps the keepRuns newest runs of a step, survives a save and reopen, does not bring back
// what it dropped when merging the file on save, and treats a corrupt file as empty.
func TestStoreKeepsNewestRuns(t *testing.T) {
	dir := t.TempDir()
	st := OpenStore(dir)
	id := "release/x-0123456789abcdef/run-build-script-build-script-build"
	for i := 1; i <= keepRuns; i++ {
		st.c.put(fmt.Sprintf("%s@%d", id, i), stepBaseline{RecordedNS: int64(i), Inputs: map[string]string{"a.c": "blake3:00"}})
	}
	st.Save()

	st2 := OpenStore(dir)
	if len(st2.c.m) != keepRuns {
		t.Fatalf("reopened store has %d runs, want %d", len(st2.c.m), keepRuns)
	}
	newKey := fmt.Sprintf("%s@%d", id, keepRuns+1)
	st2.c.put(newKey, stepBaseline{RecordedNS: 9, Inputs: map[string]string{"a.c": "blake3:01"}})
	st2.keepNewest(st2.runsByStep()[id], newKey, nil)
	st2.Save()

	st3 := OpenStore(dir)
	if _, ok := st3.c.m[id+"@1"]; ok || len(st3.c.m) != keepRuns {
		t.Fatalf("after a new run: keys %v; want the oldest run dropped and %d kept", keys(st3.c.m), keepRuns)
	}
	if b := st3.c.m[newKey]; b.Inputs["a.c"] != "blake3:01" {
		t.Fatalf("new run's baseline = %+v", b)
	}

	if err := os.WriteFile(filepath.Join(dir, BaselinesFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st4 := OpenStore(dir); len(st4.c.m) != 0 {
		t.Fatalf("a corrupt store should be empty, has %d", len(st4.c.m))
	}
}

func keys(m map[string]stepBaseline) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
