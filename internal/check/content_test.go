package check_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// kernelCrate is a crate whose build script makes lib<lib>.a with kernel() returning v, printing only
// rustc-link-search (the app names the library with #[link]).
func kernelCrate(files map[string]string, name, lib string, v int) {
	n := map[int]string{10: "TEN", 20: "TWENTY"}[v]
	files[name+"/Cargo.toml"] = "[package]\nname = \"" + name + "\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	files[name+"/src/lib.rs"] = "pub fn id() -> &'static str { \"" + name + "\" }\n"
	files[name+"/k.c"] = "#include <stdio.h>\nint kernel(void) { puts(\"KERNEL_FROM_" + n + "\"); return " + map[int]string{10: "10", 20: "20"}[v] + "; }\n"
	files[name+"/build.rs"] = `use std::{env, path::PathBuf, process::Command};
fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    assert!(Command::new("cc").args(["-c", "-O2", "-fPIC", "k.c", "-o"]).arg(out.join("k.o")).status().unwrap().success());
    let lib = out.join("lib` + lib + `.a");
    let _ = std::fs::remove_file(&lib);
    assert!(Command::new("ar").arg("crs").arg(&lib).arg(out.join("k.o")).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=k.c");
}
`
}

// S07: two crates each build libkernel.a and print link-search lines; the linker takes the first -L
// folder. The finding names both archives, the reconstructed order, and the copy inside by content.
func TestS07LinkSearchShadowing(t *testing.T) {
	files := map[string]string{
		"Cargo.toml":     "[workspace]\nmembers = [\"app\", \"kb\", \"ka\"]\nresolver = \"2\"\n",
		"app/Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nkb = { path = \"../kb\" }\nka = { path = \"../ka\" }\n",
		"app/src/main.rs": "#[link(name = \"kernel\", kind = \"static\")]\nextern \"C\" { fn kernel() -> i32; }\n" +
			"fn main() { println!(\"{} {} {}\", unsafe { kernel() }, ka::id(), kb::id()); }\n",
	}
	kernelCrate(files, "ka", "kernel", 10)
	kernelCrate(files, "kb", "kernel", 20)
	p := testutil.NewProject(t, files)
	p.Cargo("build", "--release")
	fs, _ := p.Check()
	f := one(t, fs, "link-search-shadowing")
	kaLib := filepath.Join(testutil.OutDirOf(runDirs(t, p, "release", "ka")[0]), "libkernel.a")
	kbLib := filepath.Join(testutil.OutDirOf(runDirs(t, p, "release", "kb")[0]), "libkernel.a")
	if f.Severity != check.Warning || f.Subjects[0] != p.Path("target/release/app") || f.Subjects[1] != kaLib || f.Subjects[2] != kbLib {
		t.Fatalf("want ka's copy first (sorted by package name):\n%s", testutil.Dump([]check.Finding{f}))
	}
	if !strings.Contains(f.Message, "reconstructed") || !strings.Contains(f.Message, "by content the binary holds "+strings.TrimPrefix(kaLib, p.Dir+"/")) {
		t.Fatalf("message lacks the order or the content proof: %s", f.Message)
	}
	if !fileContains(t, p.Path("target/release/app"), "KERNEL_FROM_TEN") || fileContains(t, p.Path("target/release/app"), "KERNEL_FROM_TWENTY") {
		t.Fatal("the premise fails: the binary does not hold ka's kernel")
	}

	// Fix step: kb names its library apart. Cargo never empties OUT_DIR, so the old libkernel.a would stay
	// in kb's folder (and stay shadowed): clean kb, then build; nothing is shadowed any more.
	p.Edit("kb/build.rs", `out.join("libkernel.a")`, `out.join("libkernel_kb.a")`)
	p.Cargo("build", "--release")
	fs, _ = p.Check()
	one(t, fs, "link-search-shadowing")
	p.Cargo("clean", "-p", "kb", "--release")
	p.Cargo("build", "--release")
	fs, _ = p.Check()
	none(t, fs, "link-search-shadowing")
}
