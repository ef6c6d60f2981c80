package testutil

import (
	"github.com/stalecheck/stalecheck/internal/testutil/need"
	"os"
	"path/filepath"
	"testing"
)

// NeedDebianCrates fails the test unless Debian's cc and cmake crate sources are installed in
// DebianRegistry (librust-cc-dev, librust-cmake-dev; CI installs them).
func NeedDebianCrates(t testing.TB) {
	t.Helper()
	need.RealBuild(t)
	for _, glob := range []string{"cc-1.*", "cmake-0.1.*"} {
		if m, _ := filepath.Glob(filepath.Join(DebianRegistry, glob)); len(m) == 0 {
			t.Fatalf("Debian's %s crate is required in %s (CI installs librust-cc-dev and librust-cmake-dev)", glob, DebianRegistry)
		}
	}
	if _, err := os.Stat("/usr/bin/cmake"); err != nil {
		t.Fatalf("cmake is required (CI installs it): %v", err)
	}
}

// CcIncludeWorkspace returns the files of the usual -sys crate shape, built with Debian's cc crate
// through a directory source: a bin `app` that prints `fastmath_sys::banner()` and `compute(7)`, and
// `fastmath-sys`, whose build.rs runs
// `cc::Build::new().file("native/x.c").include("native/include")` (plus `.define("FASTMATH_FAST")`
// with the `fast` feature) and declares only build.rs and native/x.c. Headers (all reached by
// #include, none declared): native/include/x.h (X_BANNER "fastmath banner v1"), which includes
// "detail.h" beside it (X_SCALE 3) and, under #ifdef FASTMATH_FAST, "fast.h" (X_FAST_BONUS 1000);
// x.c also includes <cfg.h> from native/include and <stdio.h> from the system.
func CcIncludeWorkspace() map[string]string {
	files := ccSysFiles()
	files["fastmath-sys/native/include/x.h"] = "#ifndef X_H\n#define X_H\n#include \"detail.h\"\n#ifdef FASTMATH_FAST\n#include \"fast.h\"\n#endif\n" +
		"#define X_BANNER \"fastmath banner v1\"\nint x_compute(int v);\nconst char *x_banner(void);\n#endif\n"
	files["fastmath-sys/native/include/detail.h"] = "#define X_SCALE 3\n"
	files["fastmath-sys/native/include/fast.h"] = "#define X_FAST_BONUS 1000\n"
	files["fastmath-sys/native/include/cfg.h"] = "#define X_CFG 1\n"
	files["fastmath-sys/native/x.c"] = `#include <stdio.h>
#include <cfg.h>
#include "x.h"
int x_compute(int v) {
#ifdef FASTMATH_FAST
    return v * X_SCALE + X_FAST_BONUS;
#else
    return v * X_SCALE + X_CFG - 1;
#endif
}
const char *x_banner(void) { return X_BANNER; }
`
	files["app/src/main.rs"] = "fn main() { println!(\"{} -> {}\", fastmath_sys::banner(), fastmath_sys::compute(7)); }\n"
	return files
}

// CmakeWorkspace returns the files of a -sys crate built with Debian's cmake crate (a build-dependency
// that depends on cc) through a directory source: `cm-sys`, whose build.rs runs
// `cmake::Config::new("csrc").build()` on a CMakeLists.txt that builds the static library libcmk.a
// from csrc/cmk.c (including csrc/include/cmk.h) and installs it into OUT_DIR/lib together with
// cmk.h into OUT_DIR/include (CMake keeps the header's mtime: older than the run). The crate's
// lib.rs reads that installed header with include_str!, so Cargo's dep-info names it; a bin `app`
// prints `cm_sys::val()` (42) and the header's length. The build script prints no rerun-if line.
func CmakeWorkspace() map[string]string {
	return map[string]string{
		".cargo/config.toml": DirectorySourceConfig(DebianRegistry),
		"Cargo.toml":         "[workspace]\nresolver = \"2\"\nmembers = [\"app\", \"cm-sys\"]\n",
		"cm-sys/Cargo.toml": "[package]\nname = \"cm-sys\"\nversion = \"0.1.0\"\nedition = \"2021\"\nlinks = \"cmk\"\n\n" +
			"[build-dependencies]\ncmake = \"0.1\"\n",
		"cm-sys/build.rs": `fn main() {
    let dst = cmake::Config::new("csrc").build();
    println!("cargo:rustc-link-search=native={}/lib", dst.display());
    println!("cargo:rustc-link-lib=static=cmk");
}
`,
		"cm-sys/csrc/CMakeLists.txt": `cmake_minimum_required(VERSION 3.10)
project(cmk C)
add_library(cmk STATIC cmk.c)
target_include_directories(cmk PRIVATE include)
install(TARGETS cmk ARCHIVE DESTINATION lib)
install(FILES include/cmk.h DESTINATION include)
`,
		"cm-sys/csrc/include/cmk.h": "#define CMK_VAL 42\n",
		"cm-sys/csrc/cmk.c":         "#include \"cmk.h\"\nint cmk_val(void) { return CMK_VAL; }\n",
		"cm-sys/src/lib.rs": "extern \"C\" { fn cmk_val() -> i32; }\npub fn val() -> i32 { unsafe { cmk_val() } }\n" +
			"pub const HEADER: &str = include_str!(concat!(env!(\"OUT_DIR\"), \"/include/cmk.h\"));\n",
		"app/Cargo.toml":  "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ncm-sys = { path = \"../cm-sys\" }\n",
		"app/src/main.rs": "fn main() { println!(\"{} {}\", cm_sys::val(), cm_sys::HEADER.len()); }\n",
	}
}

// CmakeNinjaWorkspace is CmakeWorkspace with CMake's Ninja generator and
// CMAKE_EXPORT_COMPILE_COMMANDS=ON (Ninja folds the compiler's depfiles into .ninja_deps, so
// compile_commands.json is the only compile record in OUT_DIR), and a build script that declares
// build.rs, csrc/cmk.c and csrc/CMakeLists.txt but not the header csrc/include/cmk.h.
func CmakeNinjaWorkspace() map[string]string {
	files := CmakeWorkspace()
	files["cm-sys/build.rs"] = `fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/cmk.c");
    println!("cargo:rerun-if-changed=csrc/CMakeLists.txt");
    let dst = cmake::Config::new("csrc").generator("Ninja").define("CMAKE_EXPORT_COMPILE_COMMANDS", "ON").build();
    println!("cargo:rustc-link-search=native={}/lib", dst.display());
    println!("cargo:rustc-link-lib=static=cmk");
}
`
	return files
}
