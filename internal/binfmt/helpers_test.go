package binfmt

import (
	"bytes"
	"github.com/stalecheck/stalecheck/internal/testutil/fixtures"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureDir is the CUDA fixture folder (real nvcc 13.0 outputs, vendored in testdata/cuda); a missing
// folder fails the test.
func fixtureDir(t testing.TB) string {
	t.Helper()
	return fixtures.CUDA(t)
}

func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// sh runs a command in dir and returns its stdout; it fails the test on error.
func sh(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// C sources used by the archive, DWARF and ELF tests.
const (
	srcHeader = `#ifndef Q_H
#define Q_H
static inline int q_twice(int x) { return 2 * x; }
#define Q_GREETING "hello from q.h header"
#endif
`
	srcFoo = `#include <string.h>
#include "inc/q.h"
int foo_table[4] = {1, 2, 3, 4};
const char *foo_name(void) { return Q_GREETING; }
int foo(int x) { return q_twice(x) + (int)strlen("a literal in foo.c") + foo_table[x & 3]; }
`
	srcBar = `static const char bar_tag[] = "bar-tag-string";
const char *bar(void) { return bar_tag; }
long bar_counter;
`
	srcLong = `int a_function_in_a_file_with_a_very_long_name(void) { return 42; }
`
)

// buildCObjects compiles foo.c (including inc/q.h), bar.c and a long-named
// file with cc -g -c in dir and returns the object names.
func buildCObjects(t testing.TB, dir string, extra ...string) []string {
	t.Helper()
	need(t, "cc")
	writeFile(t, filepath.Join(dir, "inc", "q.h"), srcHeader)
	writeFile(t, filepath.Join(dir, "foo.c"), srcFoo)
	writeFile(t, filepath.Join(dir, "bar.c"), srcBar)
	writeFile(t, filepath.Join(dir, "this_is_a_long_member_name.c"), srcLong)
	objs := []string{"foo.o", "bar.o", "this_is_a_long_member_name.o"}
	for _, o := range objs {
		args := append([]string{"-g", "-O2", "-c"}, extra...)
		args = append(args, strings.TrimSuffix(o, ".o")+".c", "-o", o)
		sh(t, dir, nil, "cc", args...)
	}
	return objs
}
