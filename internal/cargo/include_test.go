package cargo

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/cinclude"
)

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
		got, _, _ := c.Resolve(cinclude.Include{Name: tc.name, Angle: tc.angle}, own, true)
		if tc.want != "" {
			tc.want = filepath.Join(dir, tc.want)
		}
		if got != tc.want {
			t.Errorf("%s (angle %v): %q, want %q", tc.name, tc.angle, got, tc.want)
		}
	}
	if !cinclude.IsSystemHeader("/usr/include/stdio.h") || !cinclude.IsSystemHeader("/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h") ||
		!cinclude.IsSystemHeader("/usr/local/cuda-12.2/include/cuda.h") || cinclude.IsSystemHeader(filepath.Join(dir, "i/x.h")) {
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
	if len(cs) != 1 || cs[0].source != "/ws/pkg/native/x.c" || !reflect.DeepEqual(cs[0].Dirs, []string{"/ws/pkg/native/include", "/ws/pkg/other"}) {
		t.Fatalf("compiles %+v", cs)
	}
}

// CMake's Makefile generator leaves flags.make (C_INCLUDES) and build.make (object: source) for each
// target: read from a real cmake configure, they give the compile with its -I folder.
func TestCmakeMakeCompiles(t *testing.T) {
	if _, err := exec.LookPath("cmake"); err != nil {
		t.Fatalf("cmake is required (CI installs it): %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(filepath.Join(src, "include"), 0o755)
	os.WriteFile(filepath.Join(src, "CMakeLists.txt"), []byte("cmake_minimum_required(VERSION 3.10)\nproject(k C)\nadd_library(k STATIC k.c)\ntarget_include_directories(k PRIVATE include)\n"), 0o644)
	os.WriteFile(filepath.Join(src, "k.c"), []byte("#include \"k.h\"\nint k(void) { return K; }\n"), 0o644)
	os.WriteFile(filepath.Join(src, "include", "k.h"), []byte("#include \"k2.h\"\n#define K K2\n"), 0o644)
	os.WriteFile(filepath.Join(src, "include", "k2.h"), []byte("#define K2 1\n"), 0o644)
	build := filepath.Join(dir, "build")
	if out, err := exec.Command("cmake", "-S", src, "-B", build, "-G", "Unix Makefiles").CombinedOutput(); err != nil {
		t.Fatalf("cmake: %v\n%s", err, out)
	}
	cs, err := cmakeMakeCompiles(filepath.Join(build, "CMakeFiles", "k.dir", "flags.make"))
	if err != nil || len(cs) != 1 || cs[0].source != filepath.Join(src, "k.c") || cs[0].dir != build ||
		!reflect.DeepEqual(cs[0].Dirs, []string{filepath.Join(src, "include")}) {
		t.Fatalf("compiles %+v, %v", cs, err)
	}
	hits, truncated := newIncludeScanner(nil).scanCompile(cs[0])
	if truncated || len(hits) != 2 || hits[0].path != filepath.Join(src, "include", "k.h") || hits[1].path != filepath.Join(src, "include", "k2.h") {
		t.Fatalf("scan %+v", hits)
	}
}
