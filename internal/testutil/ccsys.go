package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// CCCrate is the folder of Debian's cc crate in its directory registry (librust-cc-dev).
const CCCrate = DebianRegistry + "/cc-1.0.73"

// CCSys returns the files of the workspace the reproductions in ../shared/repros build (mkproj.sh):
// a bin `app` (feature `fast`) on a path crate `fastmath-sys` whose build.rs compiles native/x.c with
// Debian's cc crate (`cc::Build::new().file("native/x.c").include("native/include")`, `-DFASTMATH_FAST`
// with feature `fast`) into OUT_DIR/libx.a, declaring build.rs and native/x.c; native/include/x.h is
// included but not declared. Crates come from Debian's registry through a directory source. It fails
// the test when librust-cc-dev is not installed (CI installs it).
func CCSys(t testing.TB) map[string]string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(CCCrate, "Cargo.toml")); err != nil {
		t.Fatalf("Debian's librust-cc-dev is required (CI installs it: apt-get install librust-cc-dev): %v", err)
	}
	return ccSysFiles()
}

// ccSysFiles are CCSys's files; variants (CcIncludeWorkspace, tests' own) override some of them.
func ccSysFiles() map[string]string {
	return map[string]string{
		".cargo/config.toml": "[source.crates-io]\nreplace-with = \"debian\"\n[source.debian]\ndirectory = \"" + DebianRegistry + "\"\n[net]\noffline = true\n",
		"Cargo.toml":         "[workspace]\nresolver = \"2\"\nmembers = [\"app\", \"fastmath-sys\"]\n",
		"fastmath-sys/Cargo.toml": "[package]\nname = \"fastmath-sys\"\nversion = \"0.1.0\"\nedition = \"2021\"\nlinks = \"fastmath\"\n" +
			"[features]\nfast = []\n[build-dependencies]\ncc = \"1.0\"\n",
		"fastmath-sys/build.rs": `fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=native/x.c");
    let mut b = cc::Build::new();
    b.file("native/x.c").include("native/include");
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { b.define("FASTMATH_FAST", None); }
    b.compile("x");
}
`,
		"fastmath-sys/native/include/x.h": "#ifndef X_H\n#define X_H\n#define X_SCALE 3\n#define X_BANNER \"fastmath banner v1\"\n" +
			"int x_compute(int v);\nconst char *x_banner(void);\n#endif\n",
		"fastmath-sys/native/x.c": `#include "x.h"
int x_compute(int v) {
#ifdef FASTMATH_FAST
    return v * X_SCALE + 1000;
#else
    return v * X_SCALE;
#endif
}
const char *x_banner(void) {
#ifdef FASTMATH_FAST
    return X_BANNER " (fast)";
#else
    return X_BANNER " (plain)";
#endif
}
`,
		"fastmath-sys/src/lib.rs": `use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
extern "C" { fn x_compute(v: c_int) -> c_int; fn x_banner() -> *const c_char; }
pub fn compute(v: i32) -> i32 { unsafe { x_compute(v) } }
pub fn banner() -> String { unsafe { CStr::from_ptr(x_banner()).to_string_lossy().into_owned() } }
`,
		"app/Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[features]\nfast = [\"fastmath-sys/fast\"]\n" +
			"[dependencies]\nfastmath-sys = { path = \"../fastmath-sys\" }\n",
		"app/src/main.rs": `fn main() {
    let n: i32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(7);
    println!("{} -> {}", fastmath_sys::banner(), fastmath_sys::compute(n));
}
`,
	}
}
