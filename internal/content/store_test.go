package content

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/kvfile"
)

// The store keeps the keepRuns newest runs of a step, survives a save and reopen, does not bring back
// what it dropped when merging the file on save, and treats a corrupt file as empty.
func TestStoreKeepsNewestRuns(t *testing.T) {
	dir := t.TempDir()
	st := OpenStore(dir)
	id := "release/x-0123456789abcdef/run-build-script-build-script-build"
	for i := 1; i <= keepRuns; i++ {
		st.c.Put(fmt.Sprintf("%s@%d", id, i), stepBaseline{RecordedNS: int64(i), Inputs: map[string]string{"a.c": "blake3:00"}})
	}
	st.Save()

	st2 := OpenStore(dir)
	if st2.c.Len() != keepRuns {
		t.Fatalf("reopened store has %d runs, want %d", st2.c.Len(), keepRuns)
	}
	newKey := fmt.Sprintf("%s@%d", id, keepRuns+1)
	st2.c.Put(newKey, stepBaseline{RecordedNS: 9, Inputs: map[string]string{"a.c": "blake3:01"}})
	st2.keepNewest(st2.runsByStep()[id], newKey, nil)
	st2.Save()

	st3 := OpenStore(dir)
	if st3.c.Has(id+"@1") || st3.c.Len() != keepRuns {
		t.Fatalf("after a new run: keys %v; want the oldest run dropped and %d kept", keys(st3), keepRuns)
	}
	if b, _ := st3.c.Peek(newKey); b.Inputs["a.c"] != "blake3:01" {
		t.Fatalf("new run's baseline = %+v", b)
	}

	if err := os.WriteFile(filepath.Join(dir, BaselinesFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st4 := OpenStore(dir); st4.c.Len() != 0 {
		t.Fatalf("a corrupt store should be empty, has %d", st4.c.Len())
	}
}

func keys(st *Store) []string {
	return st.c.Keys()
}

// The store keeps a build-script run's environment reads and flags strings, for after `cargo clean -p`;
// a value of megabytes is kept as its digest (and first bytes; a flags string's last), so the store does
// not grow by it for every run.
func TestBaselineKeepsLongEnvValueAsDigest(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	if err := os.WriteFile(out, []byte("cargo:rustc-link-lib=static=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(out)
	big := strings.Repeat("v", 4<<20)
	s := &graph.Step{ID: "release/x-1/run-build-script-build-script-build", Kind: graph.ScriptRun, Label: "build script run", PathPackage: true,
		Reference: graph.FileInfo{Path: out, MTimeNS: st.ModTime().Add(-time.Hour).UnixNano(), Exists: true}}
	s.OwnScript().EnvReads = []graph.EnvRead{{Name: "BIG", Value: big, Set: true}, {Name: "CC", Value: "gcc", Set: true}}
	s.OwnScript().FlagsSeen = []graph.FlagsSeen{{Var: "CFLAGS", Names: []string{"CFLAGS"}, Value: strings.Repeat("-DX ", 1<<20), Define: "-DCMAKE_C_FLAGS"}}
	s.Roots = []*graph.Root{{File: graph.FileInfo{Path: filepath.Join(dir, "app")}}}
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	store := OpenStore(state)
	Annotate(&graph.Graph{Workspace: dir, Steps: []*graph.Step{s}}, Options{Baselines: store})
	store.Save()
	fi, err := os.Stat(filepath.Join(state, BaselinesFile))
	if err != nil {
		t.Fatalf("the premise fails: no baseline was saved: %v", err)
	}
	if fi.Size() > 128<<10 {
		t.Errorf("%s is %d bytes for one run with a 4 MiB variable and flags string, want them kept cut, with digests", BaselinesFile, fi.Size())
	}
	b, ok := OpenStore(state).c.Get(baselineKey(s))
	if !ok || len(b.Env) != 2 {
		t.Fatalf("the run's baseline after reload: %+v, %v", b.Env, ok)
	}
	if !b.Env[0].Same(s.Script().EnvReads[0]) || b.Env[0].Same(graph.EnvRead{Name: "BIG", Value: big + "!", Set: true}) {
		t.Errorf("the kept value does not answer for the whole one")
	}
	if b.Env[1] != s.Script().EnvReads[1] {
		t.Errorf("a short value is kept whole: %+v", b.Env[1])
	}
}

// A cache file is read without decoding its values: a check decodes the ones it asks for, and writes
// the others back as the bytes it read (another process's entries, merged on save, too). The JSON file
// of an earlier stalecheck is carried over at the first save and removed; a value that does not decode
// is absent.
func TestCacheFileDecodesOnDemand(t *testing.T) {
	dir := t.TempDir()
	legacy := `{"version":1,"entries":{"a@1":{"recorded_ns":1,"inputs":{"a.c":"blake3:aa"}},"b@2":{"recorded_ns":2,"inputs":{"b.c":"blake3:bb"},"future_field":[1,2]},"bad@3":[1]}}`
	if err := os.WriteFile(filepath.Join(dir, "baselines.v1.json"), []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	st := OpenStore(dir)
	if b, ok := st.c.Get("a@1"); !ok || b.Inputs["a.c"] != "blake3:aa" {
		t.Fatalf("a@1 from the legacy file: %+v, %v", b, ok)
	}
	if _, ok := st.c.Get("bad@3"); ok {
		t.Fatal("a value that does not decode is there")
	}
	st.Save() // nothing put: written only to carry the legacy file over
	if _, err := os.Stat(filepath.Join(dir, "baselines.v1.json")); !os.IsNotExist(err) {
		t.Fatalf("the legacy file is still there after the save: %v", err)
	}
	raw, _, err := kvfile.Read(filepath.Join(dir, BaselinesFile), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	// b@2 was never decoded: its bytes are the legacy file's, with the field this stalecheck does not know.
	if got := string(raw["b@2"]); got != `{"recorded_ns":2,"inputs":{"b.c":"blake3:bb"},"future_field":[1,2]}` {
		t.Fatalf("b@2 written as %s", got)
	}
	if _, ok := raw["bad@3"]; ok {
		t.Fatal("the value that does not decode was written back")
	}

	// Another process adds c@4 after this one opened the file: the save keeps it, undecoded.
	st2 := OpenStore(dir)
	other := OpenStore(dir)
	other.c.Put("c@4", stepBaseline{RecordedNS: 4})
	other.Save()
	st2.c.Put("d@5", stepBaseline{RecordedNS: 5})
	st2.Save()
	st3 := OpenStore(dir)
	if got := keys(st3); len(got) != 4 {
		t.Fatalf("keys after two processes saved: %v, want a@1 b@2 c@4 d@5", got)
	}
	for k, ns := range map[string]int64{"a@1": 1, "b@2": 2, "c@4": 4, "d@5": 5} {
		if b, ok := st3.c.Peek(k); !ok || b.RecordedNS != ns {
			t.Errorf("%s: %+v, %v", k, b, ok)
		}
	}
}
