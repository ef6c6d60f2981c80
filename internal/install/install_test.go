package install

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CMake: install_manifest.txt's files paired with the FILES of cmake_install.cmake and the scripts it
// includes, by name; a name two sources share is left out, and so is a manifest line no script names.
func TestCMakeRecords(t *testing.T) {
	b := t.TempDir()
	write(t, filepath.Join(b, "install_manifest.txt"), "/p/bin/app\n/p/lib/libk.so\n/p/bin/tool\n/p/share/x.txt\n/p/include/dup.h")
	write(t, filepath.Join(b, "cmake_install.cmake"), `if(CMAKE_INSTALL_COMPONENT)
  include("`+b+`/sub/cmake_install.cmake")
endif()
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/bin" TYPE EXECUTABLE FILES "`+b+`/app")
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/bin" TYPE EXECUTABLE OPTIONAL FILES "`+b+`/tool" "`+b+`/other")
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/include" TYPE FILE FILES "/src/a/dup.h" "/src/b/dup.h")
`)
	write(t, filepath.Join(b, "sub", "cmake_install.cmake"), `  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib" TYPE SHARED_LIBRARY FILES "`+b+`/sub/libk.so")
`)
	tool, got := Records(b)
	m := filepath.Join(b, "install_manifest.txt")
	want := []Copy{{"/p/bin/app", b + "/app", m}, {"/p/lib/libk.so", b + "/sub/libk.so", m}, {"/p/bin/tool", b + "/tool", m}}
	if tool != "CMake" || !cmp.Equal(got, want) {
		t.Fatalf("Records = %s %v", tool, cmp.Diff(want, got))
	}
}

// Meson: intro-installed.json's pairs whose installed file install-log.txt lists.
func TestMesonRecords(t *testing.T) {
	b := t.TempDir()
	write(t, filepath.Join(b, "meson-info", "intro-installed.json"), `{"`+b+`/app": "/p/bin/app", "`+b+`/libk.so": "/p/lib/libk.so"}`)
	write(t, filepath.Join(b, "meson-logs", "install-log.txt"), "# List of files installed by Meson\n/p/bin/app\n/p/bin\n")
	tool, got := Records(b)
	want := []Copy{{"/p/bin/app", b + "/app", filepath.Join(b, "meson-info", "intro-installed.json")}}
	if tool != "Meson" || !cmp.Equal(got, want) {
		t.Fatalf("Records = %s %v", tool, cmp.Diff(want, got))
	}
	// No install yet (no log): nothing, though the build says what it would install.
	os.Remove(filepath.Join(b, "meson-logs", "install-log.txt"))
	if tool, got := Records(b); tool != "" || got != nil {
		t.Fatalf("before any install: %s %v", tool, got)
	}
}
