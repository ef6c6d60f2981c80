package cli

import (
	"github.com/stalecheck/stalecheck/internal/testutil/need"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/stalecheck/stalecheck", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abcd"},
			{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := versionText(bi, true)
	want := "stalecheck " + Version + "\nmodule github.com/stalecheck/stalecheck v1.2.3\n" +
		"git revision 0123abcd, committed 2026-12-01T10:00:00Z, modified (uncommitted changes)\nbuilt with go1.26.0\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	got = versionText(&debug.BuildInfo{Main: debug.Module{Path: "github.com/stalecheck/stalecheck", Version: "(devel)"}}, true)
	if !strings.Contains(got, "module github.com/stalecheck/stalecheck (devel)\n") || !strings.Contains(got, "no revision recorded") {
		t.Fatalf("devel: %q", got)
	}
	if got := versionText(nil, false); !strings.Contains(got, "not recorded") {
		t.Fatalf("no build info: %q", got)
	}
}

// The real binary: built from a git checkout it prints that checkout's revision, commit time and
// modified state; built with -buildvcs=false it prints (devel) and no revision. The module's source
// (non-test Go files, go.mod, go.sum) is copied into a fresh repository, since Go records VCS facts
// only where .git is a folder (not in a `git worktree`).
func TestVersionFlagRealBuild(t *testing.T) {
	need.RealBuild(t)
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: %v", tool, err)
		}
	}
	src, _ := filepath.Abs("../..")
	repo := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(repo, f), data, 0o644)
	}
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(src, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "fixtures") {
				return filepath.SkipDir
			}
			// The package sources and the files they embed (templates); no tests.
			if d.IsDir() || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(src, p)
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			os.MkdirAll(filepath.Join(repo, filepath.Dir(rel)), 0o755)
			return os.WriteFile(filepath.Join(repo, rel), data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@invalid",
		"GIT_AUTHOR_DATE=2026-12-01T10:00:00Z", "GIT_COMMITTER_DATE=2026-12-01T10:00:00Z", "GOFLAGS=", "GOWORK=off", "GOPROXY=off")
	sh := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	sh("git", "init", "-q")
	sh("git", "add", "-A")
	sh("git", "commit", "-qm", "snapshot")
	rev := sh("git", "rev-parse", "HEAD")
	exe := filepath.Join(t.TempDir(), "stalecheck")
	sh("go", "build", "-buildvcs=true", "-o", exe, "./cmd/stalecheck")
	out := sh(exe, "--version")
	want := "git revision " + rev + ", committed 2026-12-01T10:00:00Z, unmodified"
	if !strings.Contains(out, want) || !strings.HasPrefix(out, "stalecheck "+Version+"\n") {
		t.Fatalf("--version:\n%s\nwant a line %q", out, want)
	}
	// An uncommitted change is said so.
	os.WriteFile(filepath.Join(repo, "cmd/stalecheck/extra.go"), []byte("package main\n"), 0o644)
	sh("go", "build", "-buildvcs=true", "-o", exe, "./cmd/stalecheck")
	if out := sh(exe, "--version"); !strings.Contains(out, "revision "+rev+", committed 2026-12-01T10:00:00Z, modified (uncommitted changes)") {
		t.Fatalf("--version of a modified tree:\n%s", out)
	}
	sh("go", "build", "-buildvcs=false", "-o", exe, "./cmd/stalecheck")
	if out := sh(exe, "--version"); !strings.Contains(out, "module github.com/stalecheck/stalecheck (devel)\n") || strings.Contains(out, "git revision") {
		t.Fatalf("--version without VCS info:\n%s", out)
	}
}
