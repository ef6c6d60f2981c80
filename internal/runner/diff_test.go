package runner

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/ledger"
)

func TestDiffNamesWhatChanged(t *testing.T) {
	d64 := func(c string) string { return "blake3:" + strings.Repeat(c, 64) }
	a := &ledger.Record{ID: 3, WorkDir: "/ws", Identity: ledger.Identity{
		Binaries: []ledger.Binary{{Path: "/ws/target/release/prover", Size: 100, Digest: d64("a"), BuildID: "aaaa"}},
		Natives: []ledger.Native{{Library: "libgroth16_cuda.a", Path: "/ws/target/release/build/prover-sys-1ee5/out/libgroth16_cuda.a",
			Fingerprint: FingerprintPrefix + strings.Repeat("1", 64)}},
		Sources:   []ledger.Source{{Path: "/ws/a.cu", Digest: d64("1")}, {Path: "/ws/b.cu", Digest: d64("2")}, {Path: "/ws/gone.h", Digest: d64("3")}},
		Git:       ledger.Git{Head: "abc", Dirty: false},
		Toolchain: map[string]string{"rustc": "rustc 1.94.0", "nvcc": "Cuda compilation tools, release 12.8"},
		Env:       map[string]string{"RUSTFLAGS": "-C opt-level=3", "CUDA_VISIBLE_DEVICES": "0"},
	}}
	b := &ledger.Record{ID: 4, WorkDir: "/ws", Identity: ledger.Identity{
		Binaries: []ledger.Binary{{Path: "/ws/target/release/prover", Size: 120, Digest: d64("b"), BuildID: "bbbb"}},
		Natives: []ledger.Native{{Library: "libgroth16_cuda.a", Path: "/ws/target/release/build/prover-sys-77aa/out/libgroth16_cuda.a",
			Fingerprint: FingerprintPrefix + strings.Repeat("2", 64), Config: ledger.NativeConfig{Features: []string{"timing"}}}},
		Sources:   []ledger.Source{{Path: "/ws/a.cu", Digest: d64("9")}, {Path: "/ws/b.cu", Digest: d64("2")}, {Path: "/ws/new.h", Digest: d64("4")}},
		Git:       ledger.Git{Head: "abc", Dirty: true},
		Toolchain: map[string]string{"rustc": "rustc 1.95.0", "nvcc": "Cuda compilation tools, release 12.8"},
		Env:       map[string]string{"CUDA_VISIBLE_DEVICES": "1", "CUDA_ARCH": "sm_90"},
	}}
	d := Diff(a, b)
	if d.SameBuild() || d.KeyA == d.KeyB {
		t.Fatal("different builds reported as the same")
	}
	got := strings.Join(d.Summary(), "\n")
	want := strings.Join([]string{
		"target/release/prover changed: digest blake3:aaaaaaaaaaaa… → blake3:bbbbbbbbbbbb…, size 100 → 120 bytes, build-id aaaa → bbbb",
		`libgroth16_cuda.a changed: copy in target/release/build/prover-sys-1ee5/out → target/release/build/prover-sys-77aa/out, fingerprint sections:blake3:111111111111… → sections:blake3:222222222222…, features [] → ["timing"]`,
		"1 source changed: a.cu",
		"1 source only in run 4: new.h",
		"1 source only in run 3: gone.h",
		`rustc "rustc 1.94.0" → "rustc 1.95.0"`,
		`$CUDA_VISIBLE_DEVICES "0" → "1"`,
		`$RUSTFLAGS "-C opt-level=3" → unset`,
		`$CUDA_ARCH unset → "sm_90"`,
		"git work tree clean → dirty",
	}, "\n")
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
	if n := d.Count("source"); n != 3 {
		t.Errorf("%d source changes, want 3", n)
	}

	// The same identity: same build, same key, no change; git state alone does not make another build.
	c := *a
	c.ID = 5
	c.Identity.Git = ledger.Git{Head: "def"}
	d = Diff(a, &c)
	if !d.SameBuild() || d.KeyA != d.KeyB || len(d.Changes) != 1 || d.Changes[0].Kind != "git" {
		t.Errorf("same identity: %+v", d.Changes)
	}
}
