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

// Runs of two copies of one workspace (each run from its own copy): the same relative path is one
// binary, one source, one copy of a library; only what differs in content is reported.
func TestDiffTwoCopiesByRelativePath(t *testing.T) {
	d64 := func(c string) string { return "blake3:" + strings.Repeat(c, 64) }
	fp := FingerprintPrefix + strings.Repeat("1", 64)
	rec := func(id int64, ws string, mainDigest string) *ledger.Record {
		return &ledger.Record{ID: id, WorkDir: ws, Identity: ledger.Identity{
			Binaries: []ledger.Binary{{Path: ws + "/target/release/gpu-prover", Size: 100, Digest: d64("a"), BuildID: "aaaa"}},
			Natives: []ledger.Native{{Library: "libgroth16_cuda.a", Path: ws + "/target/release/build/prover-sys-1ee5/out/libgroth16_cuda.a",
				Fingerprint: fp}},
			Sources: []ledger.Source{{Path: ws + "/a.cu", Digest: d64("1")}, {Path: ws + "/b.cu", Digest: d64("2")},
				{Path: ws + "/src/main.rs", Digest: mainDigest}, {Path: "/home/u/.cargo/registry/src/cc-1.0/src/lib.rs", Digest: d64("5")}},
			Toolchain: map[string]string{"rustc": "rustc 1.94.0"},
		}}
	}
	a := rec(1, "/tmp/copy-one/ws", d64("3"))
	b := rec(2, "/tmp/copy-two/ws", d64("3"))
	d := Diff(a, b)
	if !d.SameBuild() || len(d.Changes) != 0 {
		t.Errorf("two identical copies: changes %+v", d.Changes)
	}
	if d.KeyA == d.KeyB {
		t.Errorf("build keys of two folders are equal (%s); the text relies on them holding absolute paths", d.KeyA)
	}

	b = rec(2, "/tmp/copy-two/ws", d64("4"))
	b.Identity.Binaries[0].Digest = d64("b")
	d = Diff(a, b)
	got := strings.Join(d.Summary(), "\n")
	want := "target/release/gpu-prover changed: digest blake3:aaaaaaaaaaaa… → blake3:bbbbbbbbbbbb…\n" +
		"1 source changed: src/main.rs"
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
	for _, c := range d.Changes {
		if c.Change != "changed" {
			t.Errorf("a change %q (%s): want only changed", c.Change, c.Detail)
		}
		if c.Kind == "source" && (c.PathA != "/tmp/copy-one/ws/src/main.rs" || c.PathB != "/tmp/copy-two/ws/src/main.rs") {
			t.Errorf("source paths %s, %s", c.PathA, c.PathB)
		}
	}

	// One workspace, run from two folders: the absolute paths match, whatever the working folders.
	b = rec(2, "/tmp/copy-one/ws", d64("3"))
	b.WorkDir = "/tmp/copy-one/ws/gpu-prover"
	if d := Diff(a, b); !d.SameBuild() || len(d.Changes) != 0 || d.KeyA != d.KeyB {
		t.Errorf("one workspace, two working folders: %+v", d.Changes)
	}

	// A file outside the working folders is compared by its absolute path.
	b = rec(2, "/tmp/copy-two/ws", d64("3"))
	b.Identity.Sources[3].Path = "/home/u/.cargo/registry/src/cc-1.1/src/lib.rs"
	got = strings.Join(Diff(a, b).Summary(), "\n")
	want = "1 source only in run 2: /home/u/.cargo/registry/src/cc-1.1/src/lib.rs\n" +
		"1 source only in run 1: /home/u/.cargo/registry/src/cc-1.0/src/lib.rs"
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
}
