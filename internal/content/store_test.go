package content

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/graph"
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
	b, ok := OpenStore(state).c.get(baselineKey(s))
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
