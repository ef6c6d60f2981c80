package check_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

const makeSysMakefile = "O ?= .\n\n$(O)/libfoo.a: $(O)/foo.o\n\tar crs $@ $^\n\n$(O)/foo.o: foo.c\n\tcc -c -O2 -fPIC foo.c -o $@\n"

func makeSysBuildRS(out string) string {
	return `use std::{env, path::PathBuf, process::Command};

fn main() {
    let native = env::current_dir().unwrap().join("native");
    let out = ` + out + `;
    assert!(Command::new("make").arg("-C").arg(&native).arg(format!("O={}", out.display())).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=foo");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=native/foo.c");
}
`
}

// S05: the build script runs make in native/, which leaves native/libfoo.a next to the sources, and
// links from there. cargo clean leaves it; the release build reuses the debug build's objects.
func TestS05OutputOutsideOutDir(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":               "[workspace]\nmembers = [\"app\", \"make-sys\"]\nresolver = \"2\"\n",
		"app/Cargo.toml":           "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nmake-sys = { path = \"../make-sys\" }\n",
		"app/src/main.rs":          "fn main() { println!(\"{}\", make_sys::val()); }\n",
		"make-sys/Cargo.toml":      "[package]\nname = \"make-sys\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"make-sys/src/lib.rs":      "extern \"C\" { fn foo_val() -> i32; }\npub fn val() -> i32 { unsafe { foo_val() } }\n",
		"make-sys/native/foo.c":    "int foo_val(void) { return 5; }\n",
		"make-sys/native/Makefile": makeSysMakefile,
		"make-sys/build.rs":        makeSysBuildRS("native.clone()"),
	})
	p.Cargo("build")
	obj := p.Path("make-sys/native/foo.o")
	st1, err := os.Stat(obj)
	if err != nil {
		t.Fatalf("the premise fails: make wrote no native/foo.o: %v", err)
	}
	p.Cargo("build", "--release")
	if st2, err := os.Stat(obj); err != nil || !st2.ModTime().Equal(st1.ModTime()) {
		t.Fatalf("the premise fails: the release build did not reuse the debug build's foo.o (%v)", err)
	}

	fs, _ := p.Check()
	f := one(t, fs, "output-outside-out-dir")
	lib, dir := p.Path("make-sys/native/libfoo.a"), p.Path("make-sys/native")
	if f.Severity != check.Warning {
		t.Errorf("severity %v, want warning", f.Severity)
	}
	if strings.Join(f.Subjects, " ") != lib+" "+dir {
		t.Errorf("subjects %v, want [%s %s]", f.Subjects, lib, dir)
	}
	if want := []string{p.Path("target/debug/app"), p.Path("target/debug/libmake_sys.rlib"), p.Path("target/release/app"), p.Path("target/release/libmake_sys.rlib")}; strings.Join(f.Roots, " ") != strings.Join(want, " ") {
		t.Errorf("roots %v, want %v", f.Roots, want)
	}
	for _, want := range []string{"the build script of make-sys links make-sys/native/libfoo.a from outside its OUT_DIR",
		"rustc-link-search=" + dir, "cargo clean will not remove it", "2 runs (debug, release) link the same files"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if !strings.Contains(f.Fix, "OUT_DIR") {
		t.Errorf("fix %q does not say to build into OUT_DIR", f.Fix)
	}

	// cargo clean leaves the library where it is.
	p.Cargo("clean")
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("the premise fails: cargo clean removed %s", lib)
	}

	// Fix step: build into OUT_DIR; the stale native/libfoo.a is no longer linked, and the finding goes.
	p.Write("make-sys/build.rs", makeSysBuildRS(`PathBuf::from(env::var("OUT_DIR").unwrap())`))
	p.Cargo("build")
	p.Cargo("build", "--release")
	fs, _ = p.Check()
	none(t, fs, "output-outside-out-dir")
	noErrors(t, fs)
}
