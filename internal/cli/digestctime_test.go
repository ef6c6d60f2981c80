package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// Repro 06: a same-size in-place edit of an (older) header that keeps its mtime is recorded with its new
// digest by the next run (the digest cache key holds the ctime), and a cold-cache run of the same content
// records the same digest, so diff calls runs 2 and 3 the same build and runs 1 and 2 different. The
// edited build is stale (changed-with-older-mtime): run refuses it unless --allow-stale.
func TestRunDigestSeesSameSizeEditKeepingMtime(t *testing.T) {
	state := runEnv(t)
	const hdr = "#define BANNER \"banner v1\"\n"
	files := testutil.SysCrate("hot-sys", "hot", map[string]string{
		"csrc/hot.c": "#include \"hot.h\"\n#include <string.h>\nint native_run(void) { return (int)strlen(BANNER); }\n",
		"csrc/hot.h": hdr,
	}, nil, []string{"cargo:rerun-if-changed=build.rs"})
	p := testutil.NewProject(t, files)
	h := p.Path("hot-sys/csrc/hot.h")
	older := time.Now().Add(-10 * time.Minute) // not racy for the digest cache
	if err := os.Chtimes(h, older, older); err != nil {
		t.Fatal(err)
	}
	p.Cargo("build", "--release")
	db := filepath.Join(t.TempDir(), "l.db")
	runOK := func(extra ...string) {
		t.Helper()
		args := append(append([]string{"run", "--ledger", db, "-q"}, extra...), "--", "target/release/app")
		if out, stderr, code := runIn(t, p.Dir, args...); code != 0 {
			t.Fatalf("run: exit %d\n%s%s", code, out, stderr)
		}
	}
	runOK()
	st, err := os.Stat(h)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(h, []byte(strings.Replace(hdr, "v1", "v9", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(h, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	// The binary is stale now (the header the build compiled changed; its mtime says otherwise): run
	// refuses it, and with --allow-stale records the new digest.
	if _, stderr, code := runIn(t, p.Dir, "run", "--ledger", db, "-q", "--", "target/release/app"); code != 125 || !strings.Contains(stderr, "changed-with-older-mtime") {
		t.Fatalf("run of the stale binary: exit %d, want 125 naming changed-with-older-mtime:\n%s", code, stderr)
	}
	runOK("--allow-stale")
	if err := os.RemoveAll(filepath.Join(state, "stalecheck")); err != nil { // a cold cache
		t.Fatal(err)
	}
	runOK("--allow-stale")

	digestOf := func(r ledger.Record) string {
		for _, s := range r.Identity.Sources {
			if s.Path == h || strings.HasSuffix(s.Path, "csrc/hot.h") {
				return s.Digest
			}
		}
		t.Fatalf("record %d has no source hot.h: %+v", r.ID, r.Identity.Sources)
		return ""
	}
	byID := map[int64]string{}
	for _, r := range listRecords(t, db) {
		byID[r.ID] = digestOf(r)
	}
	if len(byID) != 3 || byID[1] == byID[2] || byID[2] != byID[3] {
		t.Fatalf("digests of hot.h by run: %v; want runs 1 and 2 to differ and 2 and 3 to agree", byID)
	}
	out, stderr, code := runIn(t, p.Dir, "diff", "--ledger", db, "2", "3")
	if code != 0 || !strings.Contains(out, "same build") {
		t.Fatalf("diff 2 3: exit %d, want \"same build\":\n%s%s", code, out, stderr)
	}
	out, _, _ = runIn(t, p.Dir, "diff", "--ledger", db, "1", "2")
	if !strings.Contains(out, "source changed: hot-sys/csrc/hot.h") {
		t.Fatalf("diff 1 2 should name the changed header:\n%s", out)
	}
}
