package truth

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A Shape is one real project layout of the corpus: a Cargo workspace whose binary `app` prints one line
// per observable value of every component, so that every content edit changes what the binary prints.
type Shape struct {
	Name  string
	Files map[string]string // workspace-relative path → content (knob tokens at version 0)
	Knobs []Knob
	// Features the app can be built with (each changes what it prints).
	Features []string
	// CFlags: whether CFLAGS reaches a C compile of this shape (and changes what it prints).
	CFlags bool
	// SysPackages: the workspace packages `cargo clean -p` is tried on.
	SysPackages []string
	// Needs: executables the shape cannot be built without (nvcc, cmake, make, c++).
	Needs []string
	// Vendor: Debian crates copied into the workspace as path packages (folder under vendor/ → crate dir).
	Vendor map[string]string
	// Heavy: slow to build from scratch (a big Debian crate); fewer random steps.
	Heavy bool
	// Why: one line on what real-world style the shape stands for.
	Why string
	// Coverage: a shape of the Cargo-coverage set (issue 11: outputs shared between configurations,
	// leftovers the linker prefers), run only with Options.Coverage.
	Coverage bool
}

// A Knob is one file whose content an edit changes. Its token TRUTHV_<Name>_<n> appears in the file
// and, through the build, in what the binary prints.
type Knob struct {
	Name string
	Kind string // "c-body", "header", "declared", "rust", "asm"
	File string
}

// Token is the text that marks a knob's version inside its file.
func Token(knob string, n int) string { return fmt.Sprintf("TRUTHV_%s_%d", knob, n) }

// component is one workspace crate of a shape: its files, its knobs, the Rust expression that yields its
// printed value, and what it needs.
type component struct {
	crate   string // package name
	lib     string // Rust crate name
	files   map[string]string
	knobs   []Knob
	expr    string // Rust expression of type String printed by app
	feature bool   // reacts to feature `fast`
	cflags  bool
	needs   []string
	deps    []string // [dependencies] lines of app for it (default: path dep)
	vendor  map[string]string
	sys     bool
	// appBuild: lines of app's build.rs main (app gets a build script only when a component needs one).
	appBuild string
}

func sub(s, name string) string { return strings.ReplaceAll(s, "NAME", name) }

func cargoToml(pkg string, links string, extra string) string {
	s := fmt.Sprintf("[package]\nname = %q\nversion = \"0.1.0\"\nedition = \"2021\"\n", pkg)
	if links != "" {
		s += fmt.Sprintf("links = %q\n", links)
	}
	return s + "[features]\nfast = []\n" + extra
}

// cLib: the C side shared by the cc-based styles: NAME.c includes NAME.h, which includes NAME_detail.h
// (the header knob, reached transitively through -I native/include).
func cLib(name, dir string) map[string]string {
	return map[string]string{
		dir + "/NAME.c": sub(`#include "NAME.h"
const char *NAME_tag(void) {
    static const char s[] = "TRUTHV_NAMEc_0|" NAME_HDR
#ifdef NAME_FAST
        "+fast"
#endif
#ifdef TRUTH_CFLAG
        "+cflag"
#endif
        ;
    return s;
}
`, name),
		dir + "/include/NAME.h":        sub("#ifndef NAME_H\n#define NAME_H\n#include \"NAME_detail.h\"\nconst char *NAME_tag(void);\n#endif\n", name),
		dir + "/include/NAME_detail.h": sub("#define NAME_HDR \"TRUTHV_NAMEh_0\"\n", name),
	}
}

func cKnobs(name, dir string) []Knob {
	return []Knob{{name + "c", "c-body", dir + "/" + name + ".c"}, {name + "h", "header", dir + "/include/" + name + "_detail.h"}}
}

const ffiLib = `use std::ffi::CStr;
use std::os::raw::c_char;
extern "C" { fn NAME_tag() -> *const c_char; }
pub const RS: &str = "TRUTHV_NAMErs_0";
pub fn tag() -> String { unsafe { format!("{}|{}", RS, CStr::from_ptr(NAME_tag()).to_string_lossy()) } }
`

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func prefix(p string, m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[p+"/"+k] = v
	}
	return out
}

func prefixKnobs(p string, ks []Knob) []Knob {
	out := make([]Knob, len(ks))
	for i, k := range ks {
		k.File = p + "/" + k.File
		out[i] = k
	}
	return out
}

// ccStyle: a -sys crate whose build.rs uses the cc crate; rerun says how it declares its inputs.
func ccStyle(name, rerun string, cpp bool) component {
	crate := name + "-sys"
	var decl string
	switch rerun {
	case "files":
		decl = "    println!(\"cargo:rerun-if-changed=build.rs\");\n    println!(\"cargo:rerun-if-changed=native/NAME.c\");\n"
	case "dir":
		decl = "    println!(\"cargo:rerun-if-changed=build.rs\");\n    println!(\"cargo:rerun-if-changed=native\");\n"
	case "none":
		decl = ""
	}
	src := "native/NAME.c"
	files := cLib(name, "native")
	if cpp {
		src = "native/NAME.cpp"
		c := files["native/NAME.c"]
		delete(files, "native/NAME.c")
		files["native/NAME.cpp"] = strings.Replace(strings.Replace(c, "#include \"NAME.h\"\n", "#include <string>\n#include \"NAME.h\"\n", 1),
			"const char *NAME_tag(void) {", "extern \"C\" const char *NAME_tag(void) {\n    static const std::string keep(\"cxx\");", 1)
		files["native/include/NAME.h"] = "#ifndef NAME_H\n#define NAME_H\n#include \"NAME_detail.h\"\nextern \"C\" const char *NAME_tag(void);\n#endif\n"
		decl = strings.ReplaceAll(decl, "NAME.c", "NAME.cpp")
	}
	build := "fn main() {\n" + decl + "    let mut b = cc::Build::new();\n"
	if cpp {
		build += "    b.cpp(true);\n"
	}
	build += "    b.file(\"" + src + "\").include(\"native/include\");\n" +
		"    if std::env::var_os(\"CARGO_FEATURE_FAST\").is_some() { b.define(\"NAME_FAST\", None); }\n" +
		"    b.compile(\"NAME\");\n}\n"
	files = merge(files, map[string]string{
		"Cargo.toml": cargoToml(crate, name, "[build-dependencies]\ncc = \"1.0\"\n"),
		"build.rs":   build,
		"src/lib.rs": ffiLib,
	})
	subbed := map[string]string{}
	for k, v := range files {
		subbed[sub(k, name)] = sub(v, name)
	}
	files = subbed
	knobs := append(cKnobs(name, "native"), Knob{name + "rs", "rust", "src/lib.rs"})
	if cpp {
		knobs[0].File = "native/" + name + ".cpp"
	}
	return component{crate: crate, lib: strings.ReplaceAll(crate, "-", "_"), files: files, knobs: knobs,
		expr: strings.ReplaceAll(crate, "-", "_") + "::tag()", feature: true, cflags: true, sys: true, needs: needsCpp(cpp)}
}

func needsCpp(cpp bool) []string {
	if cpp {
		return []string{"c++"}
	}
	return nil
}

// handmadePrologue opens the build.rs of the hand-made styles (handmade, soLeftover): a checked
// Command runner, and the two declared inputs.
const handmadePrologue = `use std::process::Command;
fn run(c: &mut Command) { let s = c.status().expect("spawn"); assert!(s.success(), "{:?} failed", c); }
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=native/NAME.c");
`

// handmade: build.rs runs cc and ar itself (no cc crate, no running: lines). It does not read CFLAGS:
// a script that reads an undeclared variable without logging it leaves no record on disk (only a
// traced build shows it), so that toggle is not in the corpus.
func handmade(name string) component {
	c := ccStyle(name, "files", false)
	c.files["Cargo.toml"] = cargoToml(c.crate, name, "")
	c.files["build.rs"] = sub(handmadePrologue+`    let out = std::env::var("OUT_DIR").unwrap();
    let mut c = Command::new("cc");
    c.args(["-c", "-fPIC", "-Inative/include", "native/NAME.c", "-o"]).arg(format!("{}/NAME.o", out));
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { c.arg("-DNAME_FAST"); }
    run(&mut c);
    let _ = std::fs::remove_file(format!("{}/libNAME.a", out));
    run(Command::new("ar").arg("crs").arg(format!("{}/libNAME.a", out)).arg(format!("{}/NAME.o", out)));
    println!("cargo:rustc-link-search=native={}", out);
    println!("cargo:rustc-link-lib=static=NAME");
}
`, name)
	c.cflags = false
	return c
}

// arAppend: handmade, but the archive is written with `ar qc` into the OUT_DIR it already holds (no
// remove first): every rerun of the script appends a second member of one name, and the linker takes the
// first, the oldest (tsyrogit/zxcvbn-c #38).
func arAppend(name string) component {
	c := handmade(name)
	b := c.files["build.rs"]
	b = strings.Replace(b, sub("    let _ = std::fs::remove_file(format!(\"{}/libNAME.a\", out));\n", name), "", 1)
	b = strings.Replace(b, `.arg("crs")`, `.arg("qc")`, 1)
	c.files["build.rs"] = b
	return c
}

// soLeftover: a hand-made script that builds a shared libNAME.so when CFLAGS asks for TRUTH_CFLAG and a
// static libNAME.a otherwise, into the same OUT_DIR (CFLAGS is not in Cargo's unit hash), linked with a
// kind-less `rustc-link-lib=NAME`: after CFLAGS is unset, GNU ld still takes the leftover .so before the
// new .a (cctbx/cctbx_project #1148). app's build script puts OUT_DIR on the binary's rpath (DEP_NAME_ROOT).
func soLeftover(name string) component {
	c := ccStyle(name, "files", false)
	c.files["Cargo.toml"] = cargoToml(c.crate, name, "")
	c.files["build.rs"] = sub(handmadePrologue+`    println!("cargo:rerun-if-env-changed=CFLAGS");
    let out = std::env::var("OUT_DIR").unwrap();
    let flags = std::env::var("CFLAGS").unwrap_or_default();
    let mut c = Command::new("cc");
    c.args(["-c", "-fPIC", "-Inative/include", "native/NAME.c", "-o"]).arg(format!("{}/NAME.o", out));
    c.args(flags.split_whitespace());
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { c.arg("-DNAME_FAST"); }
    run(&mut c);
    if flags.contains("TRUTH_CFLAG") {
        run(Command::new("cc").arg("-shared").arg("-o").arg(format!("{}/libNAME.so", out)).arg(format!("{}/NAME.o", out)));
    } else {
        run(Command::new("ar").arg("crs").arg(format!("{}/libNAME.a", out)).arg(format!("{}/NAME.o", out)));
    }
    println!("cargo:rustc-link-search=native={}", out);
    println!("cargo:rustc-link-lib=NAME");
    println!("cargo:root={}", out);
}
`, name)
	c.appBuild = sub("    if let Ok(r) = std::env::var(\"DEP_NAME_ROOT\") { println!(\"cargo:rustc-link-arg=-Wl,-rpath,{}\", r); }\n", strings.ToUpper(name))
	return c
}

// makeInTree: build.rs runs make inside the source tree; the archive lands in native/, outside OUT_DIR.
func makeInTree(name string) component {
	c := ccStyle(name, "files", false)
	c.files["Cargo.toml"] = cargoToml(c.crate, name, "")
	c.files["native/Makefile"] = sub("libNAME.a: NAME.o\n\tar crs $@ $^\nNAME.o: NAME.c include/NAME.h include/NAME_detail.h\n\tcc -c -fPIC -Iinclude NAME.c -o NAME.o\n", name)
	c.files["build.rs"] = sub(`use std::process::Command;
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=native/NAME.c");
    println!("cargo:rerun-if-changed=native/include");
    let s = Command::new("make").arg("-s").arg("-C").arg("native").env_remove("MAKEFLAGS").env_remove("MFLAGS").status().expect("make");
    assert!(s.success());
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    println!("cargo:rustc-link-search=native={}/native", dir);
    println!("cargo:rustc-link-lib=static=NAME");
}
`, name)
	c.files["native/.gitignore"] = "*.o\n*.a\n"
	c.feature, c.cflags = false, false
	c.needs = []string{"make"}
	return c
}

// cmakeStyle: build.rs uses the cmake crate on native/CMakeLists.txt (install into OUT_DIR/lib).
func cmakeStyle(name string) component {
	c := ccStyle(name, "files", false)
	c.files["Cargo.toml"] = cargoToml(c.crate, name, "[build-dependencies]\ncmake = \"0.1\"\n")
	c.files["native/CMakeLists.txt"] = sub(`cmake_minimum_required(VERSION 3.10)
project(NAME C)
option(NAME_FAST "fast variant" OFF)
add_library(NAME STATIC NAME.c)
target_include_directories(NAME PRIVATE include)
if(NAME_FAST)
  target_compile_definitions(NAME PRIVATE NAME_FAST)
endif()
install(TARGETS NAME ARCHIVE DESTINATION lib)
`, name)
	c.files["build.rs"] = sub(`fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=native");
    let fast = if std::env::var_os("CARGO_FEATURE_FAST").is_some() { "ON" } else { "OFF" };
    let dst = cmake::Config::new("native").define("NAME_FAST", fast).build();
    println!("cargo:rustc-link-search=native={}/lib", dst.display());
    println!("cargo:rustc-link-lib=static=NAME");
}
`, name)
	c.needs = []string{"cmake", "make"}
	return c
}

// bindingsGen: build.rs turns a declared header into OUT_DIR/bindings.rs (the bindgen pattern without
// libclang) and compiles NAME.c, which is not declared.
func bindingsGen(name string) component {
	c := ccStyle(name, "files", false)
	c.files["build.rs"] = sub(`use std::io::Write;
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=native/include/NAME_detail.h");
    let h = std::fs::read_to_string("native/include/NAME_detail.h").unwrap();
    let mut f = std::fs::File::create(format!("{}/bindings.rs", std::env::var("OUT_DIR").unwrap())).unwrap();
    for line in h.lines() {
        let w: Vec<&str> = line.splitn(3, ' ').collect();
        if w.len() == 3 && w[0] == "#define" { writeln!(f, "pub const {}: &str = {};", w[1], w[2]).unwrap(); }
    }
    let mut b = cc::Build::new();
    b.file("native/NAME.c").include("native/include");
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { b.define("NAME_FAST", None); }
    b.compile("NAME");
}
`, name)
	c.files["src/lib.rs"] = sub(ffiLib+"include!(concat!(env!(\"OUT_DIR\"), \"/bindings.rs\"));\npub fn gen() -> String { NAME_HDR.to_string() }\n", name)
	c.expr = "format!(\"{}|gen={}\", " + c.lib + "::tag(), " + c.lib + "::gen())"
	return c
}

// asmStyle: an assembly file (.S, through cpp) assembled by the cc crate; a string symbol holds the knobs.
func asmStyle(name string) component {
	crate := name + "-sys"
	files := map[string]string{
		"Cargo.toml": cargoToml(crate, name, "[build-dependencies]\ncc = \"1.0\"\n"),
		"build.rs": sub(`fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=native/NAME.S");
    let mut b = cc::Build::new();
    b.file("native/NAME.S").include("native/include");
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { b.define("NAME_FAST", None); }
    b.compile("NAME");
}
`, name),
		"native/" + name + ".S": sub(`#include "NAME_asm.h"
    .section .rodata
    .globl NAME_tag_str
NAME_tag_str:
    .ascii "TRUTHV_NAMEs_0|"
#ifdef NAME_FAST
    .ascii "+fast|"
#endif
#ifdef TRUTH_CFLAG
    .ascii "+cflag|"
#endif
    .asciz NAME_ASM_TAG
    .section .note.GNU-stack,"",@progbits
`, name),
		"native/include/" + name + "_asm.h": sub("#define NAME_ASM_TAG \"TRUTHV_NAMEh_0\"\n", name),
		"src/lib.rs": sub(`use std::ffi::CStr;
use std::os::raw::c_char;
extern "C" { static NAME_tag_str: u8; }
pub fn tag() -> String { unsafe { CStr::from_ptr(&NAME_tag_str as *const u8 as *const c_char).to_string_lossy().into_owned() } }
`, name),
	}
	lib := strings.ReplaceAll(crate, "-", "_")
	return component{crate: crate, lib: lib, files: files, sys: true, feature: true, cflags: true,
		knobs: []Knob{{name + "s", "asm", "native/" + name + ".S"}, {name + "h", "header", "native/include/" + name + "_asm.h"}},
		expr:  lib + "::tag()"}
}

// nvccStyle: CUDA compiled by the cc crate's nvcc mode (host code that runs without a GPU, one kernel so
// that the object carries a fatbinary).
func nvccStyle(name string) component {
	c := ccStyle(name, "files", false)
	cu := strings.Replace(c.files["native/"+name+".c"], "const char *NAME_tag(void) {",
		"__global__ void NAME_kernel(int *p) { *p = 1; }\nextern \"C\" const char *NAME_tag(void) {", 1)
	cu = strings.Replace(cu, "#include \""+name+".h\"", "#include \""+name+".cuh\"", 1)
	delete(c.files, "native/"+name+".c")
	delete(c.files, "native/include/"+name+".h")
	c.files["native/"+name+".cu"] = sub(cu, name)
	c.files["native/include/"+name+".cuh"] = sub("#pragma once\n#include \"NAME_detail.h\"\nextern \"C\" const char *NAME_tag(void);\n", name)
	c.files["build.rs"] = sub(`fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=native/NAME.cu");
    let mut b = cc::Build::new();
    b.cuda(true).flag("-cudart=static").flag("-allow-unsupported-compiler").file("native/NAME.cu").include("native/include");
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { b.define("NAME_FAST", None); }
    b.compile("NAME");
    println!("cargo:rustc-link-lib=static=cudart_static");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    for d in ["/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64"] { println!("cargo:rustc-link-search=native={}", d); }
}
`, name)
	c.knobs[0].File = "native/" + name + ".cu"
	c.cflags = false
	c.needs = []string{"nvcc"}
	return c
}

// declaredData: a pure-Rust build script that turns a declared data file into generated code.
func declaredData(name string) component {
	crate := name + "-gen"
	lib := strings.ReplaceAll(crate, "-", "_")
	return component{crate: crate, lib: lib, files: map[string]string{
		"Cargo.toml": cargoToml(crate, "", ""),
		"build.rs": `fn main() {
    println!("cargo:rerun-if-changed=data/version.txt");
    let v = std::fs::read_to_string("data/version.txt").unwrap();
    std::fs::write(format!("{}/gen.rs", std::env::var("OUT_DIR").unwrap()), format!("pub const VERSION: &str = {:?};\n", v.trim())).unwrap();
}
`,
		"data/version.txt": "TRUTHV_" + name + "d_0\n",
		"src/lib.rs":       "include!(concat!(env!(\"OUT_DIR\"), \"/gen.rs\"));\npub fn tag() -> String { VERSION.to_string() }\n",
	}, knobs: []Knob{{name + "d", "declared", "data/version.txt"}}, expr: lib + "::tag()"}
}

// rustLib: a Rust-only workspace library, optionally standing between app and another component.
func rustLib(name string, inner *component) component {
	body := "pub const RS: &str = \"TRUTHV_" + name + "rs_0\";\npub fn tag() -> String { RS.to_string() }\n"
	extra := ""
	if inner != nil {
		body = "pub const RS: &str = \"TRUTHV_" + name + "rs_0\";\npub fn tag() -> String { format!(\"{}>{}\", RS, " + inner.expr + ") }\n"
		extra = "fast = [\"" + inner.crate + "/fast\"]\n[dependencies]\n" + inner.crate + " = { path = \"../" + inner.crate + "\" }\n"
	}
	toml := fmt.Sprintf("[package]\nname = %q\nversion = \"0.1.0\"\nedition = \"2021\"\n[features]\n", name)
	if inner == nil {
		toml += "fast = []\n"
	}
	return component{crate: name, lib: strings.ReplaceAll(name, "-", "_"), files: map[string]string{
		"Cargo.toml": toml + extra, "src/lib.rs": body,
	}, knobs: []Knob{{name + "rs", "rust", "src/lib.rs"}}, expr: strings.ReplaceAll(name, "-", "_") + "::tag()", feature: inner != nil && inner.feature}
}

// debianDep: a Debian crate used as a registry dependency, as it is.
func debianDep(dep, version, expr string) component {
	return component{crate: dep, expr: expr, deps: []string{fmt.Sprintf("%s = %q", dep, version)}}
}

// vendoredPsm: Debian's psm sources copied into the workspace as a path package, so edits to its
// assembly (src/arch/x86_64.s, through cpp) and its header (psm.h) are real edits to a real crate.
func vendoredPsm() component {
	return component{crate: "psm", lib: "psm", vendor: map[string]string{"vendor/psm": "psm-0.1.16"},
		files: map[string]string{},
		knobs: []Knob{{"psms", "asm", "vendor/psm/src/arch/x86_64.s"}, {"psmh", "header", "vendor/psm/src/arch/psm.h"}},
		expr:  "{ extern \"C\" { static truth_psm_tag: u8; } unsafe { std::ffi::CStr::from_ptr(&truth_psm_tag as *const u8 as *const std::os::raw::c_char).to_string_lossy().into_owned() } } + &format!(\"|stack={}\", psm::StackDirection::new() as u8)",
		deps:  []string{"psm = { path = \"vendor/psm\" }"}, sys: true}
}

// vendorPatch is appended to the vendored crate's files when the workspace is made.
var vendorPatch = map[string]string{
	"vendor/psm/src/arch/x86_64.s": "\n.section .rodata\n.globl truth_psm_tag\ntruth_psm_tag:\n.ascii \"TRUTHV_psms_0|\"\n.asciz TRUTH_PSM_TAG\n.section .note.GNU-stack,\"\",%progbits\n",
	"vendor/psm/src/arch/psm.h":    "\n#ifndef TRUTH_PSM_TAG\n#define TRUTH_PSM_TAG \"TRUTHV_psmh_0\"\n#endif\n",
}

func shapeOf(name, why string, heavy bool, comps ...component) Shape {
	s := Shape{Name: name, Files: map[string]string{}, Heavy: heavy, Why: why, Vendor: map[string]string{}}
	members := []string{"app"}
	deps := ""
	fastDeps := []string{}
	prints := ""
	appBuild := ""
	needs := map[string]bool{}
	for _, c := range comps {
		for _, n := range c.needs {
			needs[n] = true
		}
		for k, v := range c.vendor {
			s.Vendor[k] = v
		}
		if c.deps != nil {
			deps += strings.Join(c.deps, "\n") + "\n"
		} else {
			members = append(members, c.crate)
			deps += fmt.Sprintf("%s = { path = \"../%s\" }\n", c.crate, c.crate)
			for k, v := range c.files {
				s.Files[c.crate+"/"+k] = v
			}
			s.Knobs = append(s.Knobs, prefixKnobs(c.crate, c.knobs)...)
		}
		if c.vendor != nil {
			s.Knobs = append(s.Knobs, c.knobs...)
			deps = strings.ReplaceAll(deps, "path = \"vendor/", "path = \"../vendor/")
		}
		if c.feature {
			fastDeps = append(fastDeps, fmt.Sprintf("%q", c.crate+"/fast"))
		}
		if c.cflags {
			s.CFlags = true
		}
		if c.sys && c.vendor == nil {
			s.SysPackages = append(s.SysPackages, c.crate)
		}
		prints += fmt.Sprintf("    println!(\"%s={}\", %s);\n", c.crate, c.expr)
		appBuild += c.appBuild
	}
	if appBuild != "" {
		s.Files["app/build.rs"] = "fn main() {\n" + appBuild + "}\n"
	}
	if len(fastDeps) > 0 {
		s.Features = []string{"fast"}
	}
	s.Files["Cargo.toml"] = "[workspace]\nresolver = \"2\"\nmembers = [" + quoteJoin(members) + "]\n"
	s.Files[".cargo/config.toml"] = "[source.crates-io]\nreplace-with = \"debian\"\n[source.debian]\ndirectory = \"/usr/share/cargo/registry\"\n"
	s.Files[".gitignore"] = "target/\n"
	s.Files["app/Cargo.toml"] = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[features]\nfast = [" +
		strings.Join(fastDeps, ", ") + "]\n[dependencies]\n" + deps
	s.Files["app/src/main.rs"] = "#![allow(unexpected_cfgs)]\nconst APP: &str = \"TRUTHV_apprs_0\";\nfn main() {\n    println!(\"app={}\", APP);\n" + prints +
		"    if cfg!(feature = \"fast\") { println!(\"feature=fast\"); }\n    if cfg!(truth_rf) { println!(\"rustflags=truth_rf\"); }\n    if cfg!(debug_assertions) { println!(\"profile=debug\"); } else { println!(\"profile=release\"); }\n}\n"
	s.Knobs = append(s.Knobs, Knob{"apprs", "rust", "app/src/main.rs"})
	for n := range needs {
		s.Needs = append(s.Needs, n)
	}
	sort.Strings(s.Needs)
	return s
}

func quoteJoin(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// Shapes is the corpus, in a fixed order.
func Shapes() []Shape {
	ccinc := ccStyle("ccinc", "files", false)
	return []Shape{
		shapeOf("cc-include", "cc::Build with .include() and .define(); declares build.rs and the .c only (most -sys crates)", false, ccinc),
		shapeOf("cc-rerun-dir", "cc::Build; rerun-if-changed on the whole native folder", false, ccStyle("ccdir", "dir", false)),
		shapeOf("cc-package-scan", "cc::Build with no rerun-if-changed: Cargo scans the whole package", false, ccStyle("ccscan", "none", false)),
		shapeOf("cxx-bridge", "C++ compiled with c++ through cc::Build::cpp(true), extern \"C\" bridge", false, ccStyle("cxx", "files", true)),
		shapeOf("handmade-cc-ar", "build.rs runs cc and ar with Command (no running: lines)", false, handmade("hand")),
		shapeOf("make-in-tree", "build.rs runs make inside the source tree; the archive lives outside OUT_DIR", false, makeInTree("mk")),
		shapeOf("cmake", "the cmake crate on a CMakeLists.txt (configure, build, install into OUT_DIR)", false, cmakeStyle("cm")),
		shapeOf("bindings-gen", "a declared header turned into OUT_DIR/bindings.rs, beside an undeclared .c", false, bindingsGen("bg")),
		shapeOf("assembly", "a .S file through cpp assembled by the cc crate", false, asmStyle("asm")),
		shapeOf("nvcc", "CUDA through cc::Build::cuda(true) (nvcc), a kernel and host code", false, nvccStyle("cu")),
		shapeOf("declared-data", "a pure-Rust build script generating code from a declared data file", false, declaredData("dd")),
		shapeOf("rust-chain", "app → a Rust library → a cc -sys crate", false, rustLib("mid", &ccinc), ccinc),
		shapeOf("vendored-psm", "Debian's psm copied in as a path package: edits to its assembly and header", false, vendoredPsm(), ccStyle("vp", "files", false)),
		shapeOf("dep-ring", "Debian's ring (C and assembly through cc) beside a cc -sys crate", true,
			debianDep("ring", "0.16", "hexs(ring::digest::digest(&ring::digest::SHA256, b\"truth\").as_ref())"), ccStyle("rg", "files", false)),
		shapeOf("dep-blake3", "Debian's blake3 (assembly through cc) beside a package-scanned cc crate", false,
			debianDep("blake3", "1", "blake3::hash(b\"truth\").to_hex().to_string()"), ccStyle("bl", "none", false)),
		shapeOf("dep-sha2-asm", "Debian's sha2-asm (assembly through cc) beside a hand-made cc+ar crate", false,
			debianDep("sha2-asm", "0.6", "{ let mut s = [0x6a09e667u32,0xbb67ae85,0x3c6ef372,0xa54ff53a,0x510e527f,0x9b05688c,0x1f83d9ab,0x5be0cd19]; sha2_asm::compress256(&mut s, &[[0u8; 64]]); format!(\"{:08x}\", s[0]) }"), handmade("sh")),
		shapeOf("dep-zstd-sys", "Debian's zstd-sys (links the system libzstd, pkg-config) beside a cc crate", false,
			debianDep("zstd-sys", "2", "unsafe { zstd_sys::ZSTD_versionNumber() }.to_string()"), ccStyle("zs", "dir", false)),
		shapeOf("dep-libsqlite3-sys", "Debian's libsqlite3-sys (system libsqlite3) beside a C++ bridge", false,
			debianDep("libsqlite3-sys", "0.25", "(unsafe { libsqlite3_sys::sqlite3_libversion_number() } > 0).to_string()"), ccStyle("sq", "files", true)),
		shapeOf("dep-bzip2-sys", "Debian's bzip2-sys (system libbz2) beside a bindings generator", false,
			debianDep("bzip2-sys", "0.1", "{ let mut s: bzip2_sys::bz_stream = unsafe { std::mem::zeroed() }; let r = unsafe { bzip2_sys::BZ2_bzCompressInit(&mut s, 1, 0, 0) }; unsafe { bzip2_sys::BZ2_bzCompressEnd(&mut s) }; r.to_string() }"), bindingsGen("bz")),
		shapeOf("dep-libz-sys", "Debian's libz-sys (system zlib) beside an assembly crate", false,
			debianDep("libz-sys", "1", "unsafe { std::ffi::CStr::from_ptr(libz_sys::zlibVersion()) }.to_string_lossy().into_owned()"), asmStyle("lz")),
		shapeOf("dep-openssl-sys", "Debian's openssl-sys (system OpenSSL, pkg-config) beside a cmake crate", false,
			debianDep("openssl-sys", "0.9", "(unsafe { openssl_sys::OpenSSL_version_num() } > 0).to_string()"), cmakeStyle("os")),
		shapeOf("multi-native", "three native components in one binary: cc with includes, cmake, a declared data file", false,
			ccStyle("mna", "files", false), cmakeStyle("mnb"), declaredData("mnc")),
		coverage(shapeOf("ar-append", "(coverage) build.rs runs cc and `ar qc` into the archive it already holds: a second member of one name per rerun", false, arAppend("aq"))),
		coverage(shapeOf("so-leftover", "(coverage) build.rs makes libNAME.so with CFLAGS and libNAME.a without, in one OUT_DIR; GNU ld prefers the leftover .so", false, soLeftover("so"))),
	}
}

func coverage(s Shape) Shape { s.Coverage = true; return s }

// Materialize writes the shape's workspace into dir: its files, the vendored Debian crates (with the
// knob patches appended) and a git repository with one commit on branch main and one on branch alt
// (the first knob's token bumped), for the branch-switch edit.
func (s Shape) Materialize(dir, registry string) error {
	for rel, content := range s.Files {
		if strings.Contains(content, "hexs(") && rel == "app/src/main.rs" {
			content += "fn hexs(b: &[u8]) -> String { b.iter().map(|x| format!(\"{:02x}\", x)).collect() }\n"
		}
		if err := writeFile(filepath.Join(dir, rel), content); err != nil {
			return err
		}
	}
	for dst, src := range s.Vendor {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, dst)), 0o755); err != nil {
			return err
		}
		if err := run(dir, nil, "cp", "-a", filepath.Join(registry, src), filepath.Join(dir, dst)); err != nil {
			return err
		}
		// Debian's directory-source checksum file: a path package has none.
		os.Remove(filepath.Join(dir, dst, ".cargo-checksum.json"))
		for rel, add := range vendorPatch {
			if !strings.HasPrefix(rel, dst+"/") {
				continue
			}
			p := filepath.Join(dir, rel)
			old, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, append(old, add...), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
