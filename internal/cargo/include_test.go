package cargo

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseIncludes(t *testing.T) {
	src := `#ifndef X_H
#define X_H
#include "a.h" // first
/* #include "commented.h" */
#  include <b.h>
/* a block
#include "inside-comment.h"
*/
#if defined(FAST)
#include "fast.h"
#else
#include "slow.h"
#endif
#include MACRO_HEADER
#endif
`
	var got []string
	for _, l := range parseIncludes([]byte(src)) {
		got = append(got, l.name+map[bool]string{true: "?", false: ""}[l.cond]+map[bool]string{true: "<>", false: ""}[l.angle])
	}
	want := []string{"a.h", "b.h<>", "fast.h?", "slow.h?"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("includes %v, want %v (the guard is not a condition; comments are skipped)", got, want)
	}
	// Not a guard: #ifndef followed by something other than its #define.
	ls := parseIncludes([]byte("#ifndef FOO\n#include \"a.h\"\n#endif\n"))
	if len(ls) != 1 || !ls[0].cond {
		t.Fatalf("an #ifndef that is not an include guard must make its include conditional: %+v", ls)
	}
}

// The search order of GCC: "…" beside the including file, then -iquote, then -I, -isystem, -idirafter;
// <…> skips the first two. Relative folders are taken against the command's working folder.
func TestResolveIncludeOrder(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"src/x.h", "q/x.h", "i/x.h", "i/y.h", "s/y.h", "s/z.h", "a/w.h"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte("\n"), 0o644)
	}
	cs := parseCompileWords(strings.Fields("cc -c -iquote q -I i -isystem s -idirafter a -o out.o src/m.c"), dir, "test")
	if len(cs) != 1 || cs[0].source != filepath.Join(dir, "src/m.c") {
		t.Fatalf("compiles %+v", cs)
	}
	c := cs[0]
	own := filepath.Join(dir, "src")
	for _, tc := range []struct {
		name  string
		angle bool
		want  string
	}{
		{"x.h", false, "src/x.h"}, {"x.h", true, "i/x.h"}, {"y.h", true, "i/y.h"}, {"z.h", false, "s/z.h"}, {"w.h", true, "a/w.h"}, {"none.h", false, ""},
	} {
		got, _, _ := c.resolve(includeLine{name: tc.name, angle: tc.angle}, own)
		if tc.want != "" {
			tc.want = filepath.Join(dir, tc.want)
		}
		if got != tc.want {
			t.Errorf("%s (angle %v): %q, want %q", tc.name, tc.angle, got, tc.want)
		}
	}
	if !IsSystemHeader("/usr/include/stdio.h") || !IsSystemHeader("/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h") ||
		!IsSystemHeader("/usr/local/cuda-12.2/include/cuda.h") || IsSystemHeader(filepath.Join(dir, "i/x.h")) {
		t.Error("IsSystemHeader misjudges a path")
	}
}

// The cmake crate's running: line: `cd "<build folder>" && VAR=… "cmake" …` compiles nothing; a cc-rs
// line runs in the package root.
func TestRunningCompilesWorkingFolder(t *testing.T) {
	bo := ParseBuildOutput([]byte(`running: cd "/ws/target/out/build" && CMAKE_PREFIX_PATH="" "cmake" "/ws/pkg/csrc" "-DCMAKE_C_FLAGS= -fPIC"
running: "cc" "-O3" "-I" "native/include" "-Iother" "-o" "/ws/target/out/native/x.o" "-c" "native/x.c"
`), "", "")
	cs := runningCompiles(bo.Commands, "/ws/pkg", "/ws/target/output")
	if len(cs) != 1 || cs[0].source != "/ws/pkg/native/x.c" || !reflect.DeepEqual(cs[0].dirs, []string{"/ws/pkg/native/include", "/ws/pkg/other"}) {
		t.Fatalf("compiles %+v", cs)
	}
}
