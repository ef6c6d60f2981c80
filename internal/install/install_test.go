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
	write(t, filepath.Join(b, "install_manifest.txt"), "/p/bin/app\n/p/lib/libk.so\n/p/bin/tool\n/p/share/x.txt\n/p/include/dup.h\n/p/sbin/app")
	write(t, filepath.Join(b, "cmake_install.cmake"), `if(CMAKE_INSTALL_COMPONENT)
  include("`+b+`/sub/cmake_install.cmake")
endif()
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/bin" TYPE EXECUTABLE FILES "`+b+`/app")
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/bin" TYPE EXECUTABLE OPTIONAL FILES "`+b+`/tool" "`+b+`/other")
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/include" TYPE FILE FILES "/src/a/dup.h" "/src/b/dup.h")
  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/sbin" TYPE EXECUTABLE FILES "`+b+`/sub/app")
`)
	write(t, filepath.Join(b, "CMakeCache.txt"), "CMAKE_BUILD_TYPE:STRING=\nCMAKE_INSTALL_PREFIX:PATH=/p\n")
	write(t, filepath.Join(b, "sub", "cmake_install.cmake"), `  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib" TYPE SHARED_LIBRARY FILES "`+b+`/sub/libk.so")
`)
	tool, got := Records(b)
	m := filepath.Join(b, "install_manifest.txt")
	want := []Copy{{Installed: "/p/bin/app", From: b + "/app", Record: m}, {Installed: "/p/lib/libk.so", From: b + "/sub/libk.so", Record: m},
		{Installed: "/p/bin/tool", From: b + "/tool", Record: m}, {Installed: "/p/sbin/app", From: b + "/sub/app", Record: m}}
	if tool != "CMake" || !cmp.Equal(got, want) {
		t.Fatalf("Records = %s %v", tool, cmp.Diff(want, got))
	}
}

// cmake --install --prefix P: the copies say P, which the fix must give again.
func TestCMakeRecordsOtherPrefix(t *testing.T) {
	b := t.TempDir()
	write(t, filepath.Join(b, "install_manifest.txt"), "/q/usr/bin/app\n")
	write(t, filepath.Join(b, "cmake_install.cmake"), `  file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/bin" TYPE EXECUTABLE FILES "`+b+`/app")`+"\n")
	write(t, filepath.Join(b, "CMakeCache.txt"), "CMAKE_INSTALL_PREFIX:PATH=/usr/local\n")
	_, got := Records(b)
	if len(got) != 1 || got[0].Prefix != "/q/usr" {
		t.Fatalf("Records = %+v", got)
	}
	if cmd := (&Origin{Tool: "CMake", BuildDir: b, Prefix: got[0].Prefix}).command(); cmd != "cmake --install "+b+" --prefix /q/usr" {
		t.Fatalf("fix %q", cmd)
	}
}

// Meson: intro-installed.json's pairs whose installed file install-log.txt lists (a value that is no
// string leaves the others alone).
func TestMesonRecords(t *testing.T) {
	b := t.TempDir()
	write(t, filepath.Join(b, "meson-info", "intro-installed.json"), `{"`+b+`/app": "/p/bin/app", "`+b+`/libk.so": "/p/lib/libk.so", "`+b+`/odd": 7}`)
	write(t, filepath.Join(b, "meson-logs", "install-log.txt"), "# List of files installed by Meson\n/p/bin/app\n/p/bin\n")
	tool, got := Records(b)
	want := []Copy{{Installed: "/p/bin/app", From: b + "/app", Record: filepath.Join(b, "meson-info", "intro-installed.json")}}
	if tool != "Meson" || !cmp.Equal(got, want) {
		t.Fatalf("Records = %s %v", tool, cmp.Diff(want, got))
	}
	// No install yet (no log): nothing, though the build says what it would install.
	os.Remove(filepath.Join(b, "meson-logs", "install-log.txt"))
	if tool, got := Records(b); tool != "" || got != nil {
		t.Fatalf("before any install: %s %v", tool, got)
	}
}
