package cmaketree

import (
	"reflect"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	text := "# CMAKE generated file\nset(CMAKE_MAKEFILE_DEPENDS\n  \"CMakeCache.txt\"\n  \"/src/dir (1)/CMakeLists.txt\"\n  )\n\n" +
		"set(CMAKE_DEPENDS_DEPENDENCY_FILES\n  \"/src/a.c\" \"CMakeFiles/t.dir/a.c.o\" \"gcc\" \"CMakeFiles/t.dir/a.c.o.d\"\n  )\n"
	if got, want := List(text, "CMAKE_MAKEFILE_DEPENDS"), []string{"CMakeCache.txt", "/src/dir (1)/CMakeLists.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DEPENDS: %q, want %q", got, want)
	}
	if got, want := List(text, "CMAKE_DEPENDS_DEPENDENCY_FILES"), []string{"/src/a.c", "CMakeFiles/t.dir/a.c.o", "gcc", "CMakeFiles/t.dir/a.c.o.d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DEPENDENCY_FILES: %q, want %q", got, want)
	}
	if got := List(text, "CMAKE_MAKEFILE_OUTPUTS"); got != nil {
		t.Errorf("absent list: %q", got)
	}
}

// TestGlobs: file(GLOB) and file(GLOB_RECURSE) calls, their options skipped, patterns resolved against
// the list's folder and the source tree's top; CONFIGURE_DEPENDS globs and values only CMake knows are
// left out.
func TestGlobs(t *testing.T) {
	text := "project(p C)\nfile(GLOB SRCS src/*.c \"${CMAKE_SOURCE_DIR}/common/*.c\") # sources\n" +
		"file(GLOB_RECURSE MORE LIST_DIRECTORIES false RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/lib/*.cpp)\n" +
		"file(GLOB WATCHED CONFIGURE_DEPENDS src/*.h)\nfile(GLOB OTHER ${MY_DIR}/*.c)\n"
	got := Globs("/w/sub/CMakeLists.txt", text, "/w")
	if len(got) != 2 {
		t.Fatalf("got %d globs: %+v", len(got), got)
	}
	if g := got[0]; g.Line != 2 || g.Recurse || strings.Join(g.Patterns, " ") != "/w/sub/src/*.c /w/common/*.c" {
		t.Errorf("first: %+v", g)
	}
	if g := got[1]; g.Line != 3 || !g.Recurse || strings.Join(g.Patterns, " ") != "/w/sub/lib/*.cpp" {
		t.Errorf("second: %+v", g)
	}
}
