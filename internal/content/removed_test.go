package content

import (
	"slices"
	"testing"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// TestRemovedKeysByHash: after `cargo clean -p`, the baselines that judge the removed dependency are
// those of the unit the dependent's dangling deps entry names (by fingerprint hash) and of its
// build-script run (the lib's DepHashes), the last run of each before the dependent was built. Another
// configuration's later run, and the same unit's earlier run (a build-script run keeps its hash when an
// undeclared source changes), are left out: the truth harness's bindings-gen state 24 (seed
// 20261203) missed a stale binary because their digests of bg.c disagreed.
func TestRemovedKeysByHash(t *testing.T) {
	st := OpenStore("")
	lib, run := "debug/bg-sys-b2b054fc8513e1f8/lib-bg_sys", "debug/bg-sys-6d0a720bc6556810/run-build-script-build-script-build"
	otherLib, otherRun := "debug/bg-sys-70436333a59823e7/lib-bg_sys", "debug/bg-sys-989b50bcb0d4db38/run-build-script-build-script-build"
	put := func(k string, hash string, deps []string, bgc string) {
		b := stepBaseline{RecordedNS: 1, Hash: hash, DepHashes: deps, Inputs: map[string]string{}}
		if bgc != "" {
			b.Inputs["bg-sys/native/bg.c"] = bgc
		}
		st.c.Put(k, b)
	}
	put(run+"@90", "af3dc8f2ee04e4e6", nil, "blake3:a")
	put(run+"@140", "af3dc8f2ee04e4e6", nil, "blake3:b")
	put(lib+"@100", "8f99ffd8aca81883", []string{"af3dc8f2ee04e4e6"}, "")
	put(lib+"@150", "8f99ffd8aca81883", []string{"af3dc8f2ee04e4e6"}, "")
	put(otherRun+"@180", "3554f60c34fc4c15", nil, "blake3:c")
	put(otherLib+"@185", "0cdf2de05645c91a", []string{"3554f60c34fc4c15"}, "")
	put(run+"@250", "af3dc8f2ee04e4e6", nil, "blake3:d") // after the app: not what it used
	app := &graph.Step{ID: "debug/app-d2defff11876493f/bin-app", ProfileDir: "debug", Package: "app",
		Reference: graph.FileInfo{Exists: true, MTimeNS: 200},
		Origin:    &unit.Unit{Records: graph.Records{RemovedData: &graph.RemovedDeps{GoneDeps: []string{"bg_sys 8f99ffd8aca81883"}}}}}
	runs := st.runsByStep()
	if got, want := removedKeys(st, runs, app, "bg_sys"), []string{run + "@140", lib + "@150"}; !slices.Equal(got, want) {
		t.Fatalf("removedKeys = %v, want %v", got, want)
	}
	if d, _, why := removedBaseline(st, removedKeys(st, runs, app, "bg_sys"), app, "bg_sys", "bg-sys/native/bg.c"); d != "blake3:b" {
		t.Fatalf("baseline of bg.c = %q (%s), want the named run's last before the app", d, why)
	}

	// A store of an older stalecheck (no hashes): each step's last run before the app, all of them.
	old := OpenStore("")
	for _, k := range st.c.Keys() {
		b, _ := st.c.Peek(k)
		b.Hash, b.DepHashes = "", nil
		old.c.Put(k, b)
	}
	if d, _, why := removedBaseline(old, removedKeys(old, old.runsByStep(), app, "bg_sys"), app, "bg_sys", "bg-sys/native/bg.c"); d != "" || why == "" {
		t.Fatalf("without hashes: baseline %q, want none (two configurations disagree): %s", d, why)
	}
}
