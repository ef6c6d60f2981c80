package cmaketree

import (
	"reflect"
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
