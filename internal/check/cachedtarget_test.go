package check_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// A CI job restores a cached target folder into a fresh checkout whose files carry commit-time mtimes,
// older than the cached build: a commit changed a source the build script declares, yet Cargo sees
// nothing newer than the run and keeps the old binary. The content baselines stalecheck kept inside the
// target folder travel with the cache, so the check after the restore sees the content change.
func TestRestoredTargetCacheWithCommitTimes(t *testing.T) {
	if testing.Short() {
		t.Skip("real cargo, cc and git builds")
	}
	need.Tools(t, "cc", "ar", "git")
	p := testutil.NewProject(t, map[string]string{
		".cargo/config.toml": testutil.DirectorySourceConfig(testutil.DebianRegistry),
		".gitignore":         "target/\n",
		"Cargo.toml":         "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[build-dependencies]\ncc = \"1.0\"\n",
		"build.rs":           "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    println!(\"cargo:rerun-if-changed=c/k.c\");\n    cc::Build::new().file(\"c/k.c\").compile(\"k\");\n}\n",
		"c/k.c":              "const char *k_name(void) { return \"v1\"; }\n",
		"src/main.rs": "extern \"C\" { fn k_name() -> *const std::os::raw::c_char; }\n" +
			"fn main() { println!(\"{}\", unsafe { std::ffi::CStr::from_ptr(k_name()) }.to_str().unwrap()); }\n",
	})
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=ci@stalecheck.invalid", "-c", "user.name=ci", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = p.Dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "one")
	// The cached job: build, check with the state folder inside the target folder.
	p.StateDir = p.Path("target/stalecheck-state")
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	built, err := os.Stat(p.Path("target/debug/app"))
	if err != nil {
		t.Fatal(err)
	}
	// A commit made before that job ran changes the declared source.
	p.Edit("c/k.c", "v1", "v2")
	git("commit", "-qam", "two")
	// The new job: a fresh checkout (every file rewritten), the files set to their commit times (older
	// than the cached build), the target folder restored from the cache.
	cache := filepath.Join(t.TempDir(), "target")
	if err := os.Rename(p.Path("target"), cache); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Cargo.toml", "build.rs", "c/k.c", "src/main.rs", ".gitignore", ".cargo/config.toml"} {
		os.Remove(p.Path(f))
	}
	git("checkout", "-q", "--", ".")
	commitTime := built.ModTime().Add(-time.Minute)
	for _, f := range []string{"Cargo.toml", "Cargo.lock", "build.rs", "c/k.c", "src/main.rs"} {
		if err := os.Chtimes(p.Path(f), commitTime, commitTime); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if err := os.Rename(cache, p.Path("target")); err != nil {
		t.Fatal(err)
	}
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh app") {
		t.Fatalf("the premise fails: cargo rebuilt after the restore:\n%s", out)
	}
	if out, err := exec.Command(p.Path("target/debug/app")).Output(); err != nil || strings.TrimSpace(string(out)) != "v1" {
		t.Fatalf("the premise fails: the program prints %q (%v), want the cached v1", out, err)
	}
	fs, _ = p.Check()
	wantErrorNaming(t, fs, p.Path("c/k.c"))
}
