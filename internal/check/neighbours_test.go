package check_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A build script compiles csrc/x.c with -g through std::process::Command (no command line logged):
// DWARF's line table lists x.c but not csrc/include/f.h, a header of macros only, so the folders DWARF
// shows never held it. The folders build.rs names are searched after DWARF's: an edit of f.h (Cargo
// does not watch it) is an untracked-input-changed error, as it is without -g.
func TestDWARFCompileFindsMacroOnlyHeader(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs": `use std::process::Command;
fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    let o = format!("{}/x.o", out);
    assert!(Command::new("cc").args(["-O2", "-g", "-fPIC", "-Icsrc/include", "-c", "csrc/x.c", "-o"]).arg(&o).status().unwrap().success());
    assert!(Command::new("ar").arg("crs").arg(format!("{}/libnative.a", out)).arg(&o).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out);
    println!("cargo:rustc-link-lib=static=native");
    println!("cargo:rerun-if-changed=build.rs");
}
`,
		"csrc/include/f.h": "#define FACTOR 3\n",
		"csrc/x.c":         "#include \"f.h\"\nint scale(int v) { return v * FACTOR; }\n",
		"src/main.rs":      "extern \"C\" { fn scale(v: i32) -> i32; }\nfn main() { println!(\"{}\", unsafe { scale(2) }); }\n",
	})
	p.Cargo("build")
	if fs, _ := p.Check(); len(testutil.AtLeast(fs, check.Error)) != 0 {
		t.Fatalf("healthy build:\n%s", testutil.Dump(fs))
	}
	hdr := p.Path("csrc/include/f.h")
	if err := os.WriteFile(hdr, []byte("#define FACTOR 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(2 * time.Second)
	os.Chtimes(hdr, when, when)
	fs, _ := p.Check()
	var found bool
	for _, f := range testutil.AtLeast(fs, check.Error) {
		if f.Rule == "untracked-input-changed" && len(f.Subjects) > 0 && f.Subjects[0] == hdr {
			found = true
			if !strings.Contains(testutil.Dump([]check.Finding{f}), "include-scan") {
				t.Errorf("not known by the include scan:\n%s", testutil.Dump([]check.Finding{f}))
			}
		}
	}
	if !found {
		t.Fatalf("the macro-only header's edit is no error:\n%s", testutil.Dump(fs))
	}
}

// build.rs compiles csrc/unix/io.c into io.o; csrc/win/io.c, of the same stem, is never compiled. An
// edit of the Windows file (or of the header only it includes) leaves the binary what a fresh build
// makes: the archive member io.o and the name io.c in build.rs are the Unix file's clues, since build.rs
// names it by its path. At most a candidate warning, no error; an edit of the Unix file stays an error.
func TestSameStemSourceNotCompiled(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs": `use std::process::Command;
fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    let o = format!("{}/io.o", out);
    assert!(Command::new("cc").args(["-O2", "-fPIC", "-c", "csrc/unix/io.c", "-o"]).arg(&o).status().unwrap().success());
    assert!(Command::new("ar").arg("crs").arg(format!("{}/libnative.a", out)).arg(&o).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out);
    println!("cargo:rustc-link-lib=static=native");
    println!("cargo:rerun-if-changed=build.rs");
}
`,
		"csrc/unix/io.c": "int io_write(int x) { return x * 3; }\n",
		"csrc/win/win.h": "#define WINV 1\n",
		"csrc/win/io.c":  "#include \"win.h\"\nint io_write(int x) { return x * WINV; }\n",
		"src/main.rs":    "extern \"C\" { fn io_write(x: i32) -> i32; }\nfn main() { println!(\"{}\", unsafe { io_write(3) }); }\n",
	})
	p.Cargo("build")
	edit := func(rel, text string) {
		path := p.Path(rel)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(2 * time.Second)
		os.Chtimes(path, when, when)
	}
	edit("csrc/win/io.c", "#include \"win.h\"\nint io_write(int x) { return x * WINV + 1; }\n")
	edit("csrc/win/win.h", "#define WINV 2\n")
	if fs, _ := p.Check(); len(testutil.AtLeast(fs, check.Error)) != 0 {
		t.Fatalf("edits of a source never compiled are errors:\n%s", testutil.Dump(testutil.AtLeast(fs, check.Error)))
	}
	edit("csrc/unix/io.c", "int io_write(int x) { return x * 4; }\n")
	var found bool
	fs, _ := p.Check()
	for _, f := range testutil.AtLeast(fs, check.Error) {
		found = found || f.Rule == "untracked-input-changed" && f.Subjects[0] == p.Path("csrc/unix/io.c")
	}
	if !found {
		t.Fatalf("the compiled file's edit is no error:\n%s", testutil.Dump(fs))
	}
}
