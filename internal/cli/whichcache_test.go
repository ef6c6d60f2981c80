package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/vcache"
)

// TestWhichVerdictCache: on a real cc build, the second `which` answers from the stored search (a hit)
// and prints what a --no-cache which prints; a debug build next to the untouched release binary adds
// a copy in another profile, so the stored search no longer holds: the answer read from it is dropped,
// the copies are searched again (a miss) and the new copy is among the candidates; verify agrees.
func TestWhichVerdictCache(t *testing.T) {
	runEnv(t)
	testutil.NeedDebianCrates(t)
	t.Setenv(vcache.EnvTrace, "1")
	t.Setenv(vcache.EnvMode, "")
	p := testutil.NewProject(t, fastmathFiles(t))
	p.Cargo("build", "--release")
	bin := p.Path("target/release/app")
	which := func(args ...string) (string, string) {
		t.Helper()
		out, stderr, code := runIn(t, p.Dir, append([]string{"which", "--format", "json", bin}, args...)...)
		if code != 0 {
			t.Fatalf("which: exit %d\n%s", code, stderr)
		}
		return out, stderr
	}
	time.Sleep(60 * time.Millisecond)
	first, stderr := which()
	if !strings.Contains(stderr, "verdict cache: stored:") {
		t.Fatalf("the first which stored nothing:\n%s", stderr)
	}
	second, stderr := which()
	if !strings.Contains(stderr, "verdict cache: hit:") || second != first {
		t.Fatalf("the second which: want a hit with the same answer:\n%s\n%s\n---\n%s", stderr, second, first)
	}
	if fresh, stderr := which("--no-cache"); fresh != first || strings.Contains(stderr, "verdict cache") {
		t.Fatalf("--no-cache differs or used the cache:\n%s\n%s", stderr, fresh)
	}

	p.Cargo("build")
	debugCopy := filepath.Join(testutil.OutDirOf(p.RunDirs("debug", "fastmath-sys")[0]), "libx.a")
	time.Sleep(60 * time.Millisecond)
	after, stderr := which()
	if !strings.Contains(stderr, "verdict cache: miss:") || !strings.Contains(after, debugCopy) {
		t.Fatalf("after a debug build: want a miss and the debug copy %s among the candidates:\n%s\n%s", debugCopy, stderr, after)
	}
	if fresh, _ := which("--no-cache"); fresh != after {
		t.Fatalf("the answer after the miss differs from --no-cache:\n%s\n---\n%s", after, fresh)
	}
	for i := 0; i < 5; i++ {
		if _, stderr = which(); strings.Contains(stderr, "verdict cache: hit:") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Setenv(vcache.EnvMode, "verify")
	if out, stderr := which(); out != after || !strings.Contains(stderr, "verdict cache: hit:") {
		t.Fatalf("verify: want a hit with the same answer:\n%s\n%s", stderr, out)
	}
}
