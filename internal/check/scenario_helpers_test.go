package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// msgTime formats a file's mtime the way findings print it.
func msgTime(t *testing.T, path string) string {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime().UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
}

// one returns the single finding of a rule, failing the test otherwise.
func one(t *testing.T, fs []check.Finding, rule string) check.Finding {
	t.Helper()
	got := testutil.Rule(fs, rule)
	if len(got) != 1 {
		t.Fatalf("want exactly one %s finding, got %d:\n%s", rule, len(got), testutil.Dump(fs))
	}
	return got[0]
}

func none(t *testing.T, fs []check.Finding, rule string) {
	t.Helper()
	if got := testutil.Rule(fs, rule); len(got) != 0 {
		t.Fatalf("want no %s finding, got:\n%s", rule, testutil.Dump(got))
	}
}

func noErrors(t *testing.T, fs []check.Finding) {
	t.Helper()
	if errs := testutil.AtLeast(fs, check.Error); len(errs) != 0 {
		t.Fatalf("want no error findings, got:\n%s", testutil.Dump(errs))
	}
}

// runDirs returns the build-script run folders of a package in a profile (folders with an output file).
func runDirs(t *testing.T, p *testutil.Project, prof, pkg string) []string {
	t.Helper()
	return p.RunDirs(prof, pkg) // either layout
}

func fileContains(t *testing.T, path, s string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(data), s)
}

func evidenceHow(f check.Finding, kind string) string {
	for _, e := range f.Evidence {
		if e.Kind == kind {
			return e.How
		}
	}
	return ""
}

// mtimes snapshots every file mtime under a folder.
func mtimes(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out[p] = info.ModTime()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
