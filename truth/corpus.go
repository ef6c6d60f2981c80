package truth

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// The event corpus (this file and events.go) is generated from axes, not listed by hand:
//
//   - build system: Make (with and without depfiles), a hand-written Ninja file, CMake + Ninja,
//     Meson + Ninja, Go cgo, Cargo build scripts (the cc crate; the cmake crate, whose CMake build in
//     OUT_DIR is incremental itself; nvcc -ptx run by hand into a folder outside OUT_DIR), and the chains
//     that cross systems (a Make program and a Go program linking a Cargo staticlib; a -sys crate
//     exporting an OUT_DIR copy of its headers to a dependent's build script; a test binary);
//   - input kind: a C source, a CUDA source, a header through -I, a header reached through a macro
//     #include, a configure_file template, a data file a build script reads without declaring it, the
//     build description itself, a Rust source, a file in a git-ignored folder;
//   - edit: content with a newer mtime, content with an older mtime (cp -p, a restored cache), a
//     comment-only change, a touch, a new header that shadows one in an earlier -I folder, a source removed
//     from the library, a configuration toggle, an edit of the build description, a file in an ignored
//     folder, a branch switch (built on a branch that changed a file, then back), and seeded pairs of
//     these.
//
// Every project shares one C library (src/a.c and src/b.c, headers under include/, a template
// config.h.in) whose tokens TRUTHV_<knob>_<n> reach what the program prints, so every content edit
// changes the program's output and a comment-only edit changes nothing the compiler keeps.

// A Project is one generated build of the event corpus.
type Project struct {
	Name   string // system, and the variant of its description
	System string // make, ninja, cmake, meson, go, cargo, make+cargo, go+cargo
	Why    string
	// Slow: its first build compiles large registry crates (bindgen with its dependencies), so it is
	// started first (runOrder) rather than left to end the run.
	Slow  bool
	Files map[string]string
	// Build returns the user's build: shell lines run in the workspace one after the other. fast selects
	// the configuration toggle; first is the first build of a fresh checkout (configure steps).
	Build func(fast, first bool) []string
	// Partial returns the lines of a build stopped before the program was linked (an interrupted build:
	// the library rebuilt, the program not); nil when the project's build has no such point.
	Partial func(fast bool) []string
	// Env is the environment of the build and of stalecheck (the user's shell) for a configuration.
	Env func(fast bool) []string
	// Roots are the programs (workspace-relative) whose output is judged; a pattern (a test binary,
	// target/debug/deps/probe-*) names the newest executable it matches.
	Roots  []string
	Inputs []Input
	Needs  []string
	// Cargo lists the Cargo workspaces (workspace-relative folders) whose registry units the from-scratch
	// builds may reuse.
	Cargo []string
	// Toggle: whether the project has a configuration toggle (feature, option, variable).
	Toggle bool
	// Tool: whether the build finds the C compiler on PATH each time it runs it (cc, not a path a
	// configure step cached, as CMake does, nor gcc, which cgo runs): the tool edit puts a folder with
	// another cc first on PATH.
	Tool bool
	// Archive: the static library the project's own build writes (workspace-relative), for the
	// removed-source edit; "" when its build owns no archive of the sources.
	Archive string
	// Products are further files a build makes from the library's sources on the way to the program
	// (an archive in OUT_DIR, a Rust library bundling it), as "*/name" patterns whose name may hold
	// wildcards: an error naming one is right for an interrupted build or a removed source.
	Products []string
	// Rename returns the build description's files after src/a.c was renamed src/a2.c (the removed-source
	// edit); nil when the shape has no list of sources to edit.
	Rename func(files map[string]string) map[string]string
	// Description is the build description a user edits (Makefile, CMakeLists.txt, …), and DescEdit the
	// edit of it: a definition that reaches the program.
	Description string
	DescEdit    func(old string) string
	// Manifest is the Cargo.toml of a package whose program prints its description and version
	// (env!("CARGO_PKG_DESCRIPTION"), env!("CARGO_PKG_VERSION")): the edits of its [package] fields.
	Manifest string
	// Shadow is the -I folder searched before include/ (empty in the checkout).
	Shadow string
	// Ignored is a git-ignored folder inside the project.
	Ignored string
	// CheckDir is the folder (workspace-relative) the user runs stalecheck in ("" for the workspace).
	CheckDir string
}

// An Input is one file an edit may change. Its token TRUTHV_<Knob>_<n> (or TRUTHC_<Knob>_<n> in a comment)
// marks its version.
type Input struct {
	Knob string
	Kind string // c-source, cuda-source, header, macro-header, outside-header, template, data, rust
	File string
	// Derived: files made from this one (workspace-relative): an error naming one of them is right by
	// reason too.
	Derived []string
}

const libA = `#include "lib.h"
#include LIB_IMPL
#include "config.h"
/* TRUTHC_note_0 */
const char *lib_tag(void) {
    return "TRUTHV_a_0|" LIB_HDR "|" IMPL_TAG "|" CONF_TAG
#ifdef FAST
        "+fast"
#endif
#ifdef TRUTH_DESC
        "+desc"
#endif
#ifdef TRUTH_TOOL
        "+tool"
#endif
        ;
}
`

const libB = "const char *lib_b(void) { return \"TRUTHV_b_0\"\n#ifdef TRUTH_TOOL\n    \"+tool\"\n#endif\n    ; }\n"

const libH = `#ifndef LIB_H
#define LIB_H
#define LIB_HDR "TRUTHV_h_0"
#define LIB_IMPL "impl.h"
#endif
`

const implH = "#define IMPL_TAG \"TRUTHV_m_0\"\n"

const configIn = "#define CONF_TAG \"@CONF_PREFIX@TRUTHV_t_0\"\n"

const cMain = `#include <stdio.h>
const char *lib_tag(void);
const char *lib_b(void);
const char *gen_tag(void);
int main(void) {
    printf("lib=%s\nb=%s\ngen=%s\n", lib_tag(), lib_b(), gen_tag());
#ifdef TRUTH_TOOL
    puts("main+tool");
#endif
    return 0;
}
`

// cLibFiles: the shared C library, under dir ("" for the project root).
func cLibFiles(dir string) map[string]string {
	p := func(s string) string {
		if dir == "" {
			return s
		}
		return dir + "/" + s
	}
	return map[string]string{
		p("src/a.c"): libA, p("src/b.c"): libB, p("include/lib.h"): libH, p("include/impl.h"): implH,
		p("config.h.in"): configIn, p("override/README"): "headers here come before include/\n",
	}
}

// genFiles: a generator the C projects run as a custom step, `sh gen/gen.sh gen/tag.txt OUT`: it writes
// gen_tag.c from the data file gen/tag.txt, which the step's rule does not declare (only gen.sh is a
// prerequisite, an edge input, a DEPENDS, an input:): the build system never regenerates for an edit
// of it, whatever system runs the step.
var genFiles = map[string]string{
	"gen/gen.sh":  "printf 'const char *gen_tag(void) { return \"%s\"; }\\n' \"$(cat \"$1\")\" > \"$2\"\n",
	"gen/tag.txt": "TRUTHV_d_0\n",
}

// genInput is the generator's undeclared data file as an edited input; derived is the file it makes.
func genInput(derived string) Input {
	return Input{Knob: "d", Kind: "data", File: "gen/tag.txt", Derived: []string{derived}}
}

func cLibInputs(dir string, template bool, derivedConfig string) []Input {
	p := func(s string) string {
		if dir == "" {
			return s
		}
		return dir + "/" + s
	}
	in := []Input{
		{Knob: "a", Kind: "c-source", File: p("src/a.c")},
		{Knob: "h", Kind: "header", File: p("include/lib.h")},
		{Knob: "m", Kind: "macro-header", File: p("include/impl.h")},
		{Knob: "b", Kind: "c-source", File: p("src/b.c")},
	}
	if template {
		t := Input{Knob: "t", Kind: "template", File: p("config.h.in")}
		if derivedConfig != "" {
			t.Derived = []string{derivedConfig}
		}
		in = append(in, t)
	}
	return in
}

func sh(lines ...string) []string { return lines }

func fastIf(fast bool, yes, no string) string {
	if fast {
		return yes
	}
	return no
}

func makeProject(depfiles bool) Project {
	name, why := "make", "a Makefile with gcc depfiles (-MMD -MP), ar crs into an archive it keeps"
	dep, inc := "DEPFLAGS := -MMD -MP\n", "-include $(OBJS:.o=.d) src/main.d\n"
	if !depfiles {
		name, why = "make-nodep", "a Makefile whose objects name only their .c file (no depfiles): headers are not prerequisites; compiled with -g, whose DWARF line tables leave out headers of macros only"
		dep, inc = "DEPFLAGS := -g\n", ""
	}
	mk := `CPPFLAGS := -Ioverride -Iinclude -I.
ifdef FAST
CPPFLAGS += -DFAST
endif
SRCS := src/a.c src/b.c
OBJS := $(SRCS:.c=.o)
` + dep + `app: src/main.o gen_tag.o libtruth.a
	$(CC) -o $@ src/main.o gen_tag.o -L. -ltruth
gen_tag.c: gen/gen.sh
	sh gen/gen.sh gen/tag.txt $@
libtruth.a: $(OBJS)
	ar crs $@ $^
%.o: %.c
	$(CC) $(DEPFLAGS) $(CPPFLAGS) -O1 -c $< -o $@
$(OBJS): | config.h
config.h: config.h.in
	sed 's/@CONF_PREFIX@//' config.h.in > $@
` + inc // after the first rule: an included depfile's target must not become the default goal
	files := merge(cLibFiles(""), genFiles, map[string]string{"Makefile": mk, "src/main.c": cMain,
		".gitignore": "*.o\n*.d\n*.a\napp\nconfig.h\ngen_tag.c\nscratch/\n"})
	return Project{Name: name, System: "make", Why: why, Files: files,
		// The toggle is a variable of the user's shell (export FAST=1), which make reads as a make
		// variable: stalecheck, run from the same shell, sees what the next make would run. (FAST=1 on
		// make's command line alone leaves nothing on disk that says the build used it.)
		Build:   func(fast, first bool) []string { return sh("make -s") },
		Partial: func(fast bool) []string { return sh("make -s libtruth.a") },
		Env: func(fast bool) []string {
			if fast {
				return []string{"FAST=1"}
			}
			return nil
		},
		Roots: []string{"app"}, Inputs: append(cLibInputs("", true, "config.h"), genInput("gen_tag.c")), Needs: []string{"make", "cc", "ar"},
		Toggle: true, Tool: true, Archive: "libtruth.a", Shadow: "override", Ignored: "scratch",
		Rename: func(f map[string]string) map[string]string {
			return map[string]string{"Makefile": strings.Replace(f["Makefile"], "src/a.c", "src/a2.c", 1)}
		},
		Description: "Makefile", DescEdit: func(s string) string {
			return strings.Replace(s, "CPPFLAGS := -Ioverride", "CPPFLAGS := -DTRUTH_DESC -Ioverride", 1)
		}}
}

func ninjaProject() Project {
	nj := `cflags = -O1 -Ioverride -Iinclude -Ibuild
rule cc
  command = cc -MMD -MF $out.d $cflags -c $in -o $out
  depfile = $out.d
  deps = gcc
rule ar
  command = ar crs $out $in
rule link
  command = cc -o $out $in
rule gen
  command = sed 's/@CONF_PREFIX@//' $in > $out
rule gensh
  command = sh gen/gen.sh gen/tag.txt $out
build build/config.h: gen config.h.in
build build/gen_tag.c: gensh gen/gen.sh
build build/gen_tag.o: cc build/gen_tag.c
build build/a.o: cc src/a.c || build/config.h
build build/b.o: cc src/b.c || build/config.h
build build/main.o: cc src/main.c
build build/libtruth.a: ar build/a.o build/b.o
build build/app: link build/main.o build/gen_tag.o build/libtruth.a
default build/app
`
	files := merge(cLibFiles(""), genFiles, map[string]string{"build.ninja": nj, "src/main.c": cMain,
		".gitignore": "build/\n.ninja_*\nscratch/\n"})
	return Project{Name: "ninja", System: "ninja", Why: "a hand-written build.ninja: depfiles (deps = gcc), ar crs into an archive it keeps",
		Files: files, Build: func(fast, first bool) []string { return sh("ninja -v") },
		Partial: func(fast bool) []string { return sh("ninja build/libtruth.a") },
		Roots:   []string{"build/app"}, Inputs: append(cLibInputs("", true, "build/config.h"), genInput("build/gen_tag.c")), Needs: []string{"ninja", "cc", "ar"},
		Tool: true, Archive: "build/libtruth.a", Shadow: "override", Ignored: "scratch",
		Rename: func(f map[string]string) map[string]string {
			s := strings.Replace(f["build.ninja"], "build build/a.o: cc src/a.c", "build build/a2.o: cc src/a2.c", 1)
			return map[string]string{"build.ninja": strings.Replace(s, "ar build/a.o", "ar build/a2.o", 1)}
		},
		Description: "build.ninja", DescEdit: func(s string) string {
			return strings.Replace(s, "cflags = -O1", "cflags = -O1 -DTRUTH_DESC", 1)
		}}
}

// cmakeProject is the CMake project with the Ninja generator, or with "Unix Makefiles" (make: a top
// Makefile that runs $(MAKE) -f CMakeFiles/Makefile2, which runs each target's build.make).
func cmakeProject(makefiles bool) Project {
	cm := `cmake_minimum_required(VERSION 3.10)
project(truth C)
option(FAST "fast variant" OFF)
configure_file(config.h.in config.h @ONLY)
set(CONF_PREFIX "")
add_library(truth STATIC src/a.c src/b.c)
target_include_directories(truth PRIVATE override include ${CMAKE_CURRENT_BINARY_DIR})
if(FAST)
  target_compile_definitions(truth PRIVATE FAST)
endif()
add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/gen_tag.c
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/gen/gen.sh ${CMAKE_CURRENT_SOURCE_DIR}/gen/tag.txt ${CMAKE_CURRENT_BINARY_DIR}/gen_tag.c
  DEPENDS gen/gen.sh)
add_executable(app src/main.c ${CMAKE_CURRENT_BINARY_DIR}/gen_tag.c)
target_link_libraries(app truth)
`
	files := merge(cLibFiles(""), genFiles, map[string]string{"CMakeLists.txt": cm, "src/main.c": cMain,
		".gitignore": "build/\nscratch/\n"})
	name, why, gen, tool := "cmake-ninja", "CMake with the Ninja generator: configure_file, an option, a static library", "Ninja", "ninja"
	if makefiles {
		name, why, gen, tool = "cmake-make", "CMake with the Unix Makefiles generator (recursive make through CMakeFiles/Makefile2): configure_file, an option, a static library", `"Unix Makefiles"`, "make"
	}
	return Project{Name: name, System: "cmake", Why: why,
		Files: files,
		Build: func(fast, first bool) []string {
			return sh("cmake -S . -B build -G "+gen+" -DFAST="+fastIf(fast, "ON", "OFF")+" >/dev/null", "cmake --build build")
		},
		Partial: func(fast bool) []string { return sh("cmake --build build --target truth") },
		Roots:   []string{"build/app"}, Inputs: append(cLibInputs("", true, "build/config.h"), genInput("build/gen_tag.c")), Needs: []string{"cmake", tool, "cc"},
		Toggle: true, Archive: "build/libtruth.a", Shadow: "override", Ignored: "scratch",
		Rename: func(f map[string]string) map[string]string {
			return map[string]string{"CMakeLists.txt": strings.Replace(f["CMakeLists.txt"], "src/a.c", "src/a2.c", 1)}
		},
		Description: "CMakeLists.txt", DescEdit: func(s string) string {
			return strings.Replace(s, "add_executable(app", "target_compile_definitions(truth PRIVATE TRUTH_DESC)\nadd_executable(app", 1)
		}}
}

func mesonProject() Project {
	mb := `project('truth', 'c')
conf = configuration_data()
conf.set('CONF_PREFIX', '')
configure_file(input: 'config.h.in', output: 'config.h', configuration: conf)
args = get_option('fast') ? ['-DFAST'] : []
lib = static_library('truth', 'src/a.c', 'src/b.c', include_directories: include_directories('override', 'include'), c_args: args)
gen_tag = custom_target('gen_tag', output: 'gen_tag.c', input: 'gen/gen.sh',
  command: ['sh', '@INPUT@', meson.current_source_dir() / 'gen/tag.txt', '@OUTPUT@'])
executable('app', 'src/main.c', gen_tag, link_with: lib)
`
	files := merge(cLibFiles(""), genFiles, map[string]string{"meson.build": mb, "meson_options.txt": "option('fast', type: 'boolean', value: false)\n",
		"src/main.c": cMain, ".gitignore": "build/\nscratch/\n"})
	return Project{Name: "meson-ninja", System: "meson", Why: "Meson with Ninja: configure_file, an option, a static library",
		Files: files,
		Build: func(fast, first bool) []string {
			if first {
				return sh("meson setup build -Dfast="+fastIf(fast, "true", "false")+" >/dev/null", "ninja -C build")
			}
			return sh("meson configure build -Dfast="+fastIf(fast, "true", "false"), "ninja -C build")
		},
		Partial: func(fast bool) []string { return sh("ninja -C build libtruth.a") },
		Roots:   []string{"build/app"}, Inputs: append(cLibInputs("", true, "build/config.h"), genInput("build/gen_tag.c")), Needs: []string{"meson", "ninja", "cc"},
		Toggle: true, Tool: true, Archive: "build/libtruth.a", Shadow: "override", Ignored: "scratch",
		Rename: func(f map[string]string) map[string]string {
			return map[string]string{"meson.build": strings.Replace(f["meson.build"], "src/a.c", "src/a2.c", 1)}
		},
		Description: "meson.build", DescEdit: func(s string) string {
			return strings.Replace(s, "c_args: args)", "c_args: args + ['-DTRUTH_DESC'])", 1)
		}}
}

// goEnv: the Go toolchain's environment for the corpus: its own build cache (GOCACHE, set by the engine),
// no toolchain download, CGO_CFLAGS as the configuration.
func goEnv(fast bool) []string {
	return []string{"CGO_ENABLED=1", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "CGO_CFLAGS=-O2 -g" + fastIf(fast, " -DFAST", "")}
}

func goProject() Project {
	main := "package main\n\n/*\n#cgo CFLAGS: -I${SRCDIR}/override -I${SRCDIR}/include\n#include \"csrc/a.c\"\n#include \"csrc/b.c\"\n*/\nimport \"C\"\nimport \"fmt\"\n\nfunc main() { fmt.Printf(\"lib=%s\\nb=%s\\n\", C.GoString(C.lib_tag()), C.GoString(C.lib_b())) }\n"
	files := map[string]string{"go.mod": "module truthgo\n\ngo 1.22\n", "main.go": main,
		"csrc/a.c": "#include \"config.h\"\n" + strings.Replace(libA, "#include \"config.h\"\n", "", 1), "csrc/b.c": libB,
		"include/lib.h": libH, "include/impl.h": implH, "include/config.h": strings.ReplaceAll(configIn, "@CONF_PREFIX@", ""),
		"override/README": "headers here come before include/\n", ".gitignore": "app\nscratch/\n"}
	in := []Input{
		{Knob: "a", Kind: "c-source", File: "csrc/a.c"}, {Knob: "h", Kind: "header", File: "include/lib.h"},
		{Knob: "m", Kind: "macro-header", File: "include/impl.h"}, {Knob: "b", Kind: "c-source", File: "csrc/b.c"},
		{Knob: "t", Kind: "header", File: "include/config.h"},
	}
	return Project{Name: "go-cgo", System: "go", Why: "a Go program whose cgo preamble includes C files of a subfolder and headers through -I",
		Files: files, Build: func(fast, first bool) []string { return sh("go build -o app .") }, Env: goEnv,
		Roots: []string{"app"}, Inputs: in, Needs: []string{"go", "cc"}, Toggle: true, Shadow: "override", Ignored: "scratch",
		Description: "main.go", DescEdit: func(s string) string {
			return strings.Replace(s, "#cgo CFLAGS:", "#cgo CFLAGS: -DTRUTH_DESC", 1)
		}}
}

// debianRegistryConfig is a package's .cargo/config.toml: Debian's crates as the registry (offline).
const debianRegistryConfig = "[source.crates-io]\nreplace-with = \"debian\"\n[source.debian]\ndirectory = \"/usr/share/cargo/registry\"\n"

// scriptOpening is how the corpus's build scripts begin: they declare build.rs, the template and
// src/a.c, and write config.h from the template into OUT_DIR; ccScript goes on to set up the library's
// cc::Build (b).
const scriptOpening = `fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=config.h.in");
    println!("cargo:rerun-if-changed=src/a.c");
    let out = std::env::var("OUT_DIR").unwrap();
    let t = std::fs::read_to_string("config.h.in").unwrap().replace("@CONF_PREFIX@", "");
    std::fs::write(format!("{}/config.h", out), t).unwrap();
`

const ccScript = scriptOpening + `    let mut b = cc::Build::new();
    b.file("src/a.c").file("src/b.c").include("override").include("include").include(&out);
`

// cargoCrate: a Cargo package (in dir) whose build script compiles the C library with the cc crate and
// generates config.h from the template into OUT_DIR; it declares build.rs, the template and src/a.c, not
// the headers nor src/b.c. kind is "bin" (package app) or "staticlib" (package truthrs, for the chains).
func cargoCrate(dir, kind string) (map[string]string, []Input) {
	pkg, target := "app", ""
	if kind == "staticlib" {
		pkg, target = "truthrs", "[lib]\ncrate-type = [\"staticlib\"]\n"
	}
	files := map[string]string{}
	for k, v := range cLibFiles("") {
		files[dir+"/"+k] = v
	}
	// The program's package compiles x.c against a header of a folder outside the package (shared/ of
	// the workspace), which neither Cargo's package scan nor the script's declarations cover.
	outside := ""
	if kind == "bin" {
		outside = "    b.file(\"src/x.c\").include(\"../shared/include\");\n"
		files["shared/include/ext.h"] = "#define EXT_TAG \"TRUTHV_x_0\"\n"
		files[dir+"/src/x.c"] = "#include \"ext.h\"\nconst char *x_tag(void) { return EXT_TAG; }\n"
	}
	files[dir+"/Cargo.toml"] = "[package]\nname = \"" + pkg + "\"\nversion = \"0.1.0\"\nedition = \"2021\"\n" +
		"description = \"TRUTHV_d_0\"\nhomepage = \"https://example.invalid/h0\"\n" + target +
		"[features]\nfast = []\n[build-dependencies]\ncc = \"1.0\"\n"
	files[dir+"/.cargo/config.toml"] = debianRegistryConfig
	files[dir+"/build.rs"] = ccScript + `    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { b.define("FAST", None); }
` + outside + `    b.compile("truthc");
}
`
	rs := `use std::ffi::CStr;
use std::os::raw::c_char;
extern "C" { fn lib_tag() -> *const c_char; fn lib_b() -> *const c_char; }
pub const RS: &[u8] = b"TRUTHV_rs_0\0";
fn s(p: *const c_char) -> String { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() }
`
	in := cLibInputs(dir, true, "")
	if kind == "bin" {
		files[dir+"/src/main.rs"] = rs + "extern \"C\" { fn x_tag() -> *const c_char; }\n" +
			"fn main() { println!(\"lib={}\\nb={}\\nrs={}\\npkg={} {}\\nx={}\", s(unsafe { lib_tag() }), s(unsafe { lib_b() }), String::from_utf8_lossy(&RS[..RS.len() - 1]), env!(\"CARGO_PKG_DESCRIPTION\"), env!(\"CARGO_PKG_VERSION\"), s(unsafe { x_tag() })); }\n"
		in = append(in, Input{Knob: "rs", Kind: "rust", File: dir + "/src/main.rs"}, Input{Knob: "x", Kind: "outside-header", File: "shared/include/ext.h"})
	} else {
		files[dir+"/src/lib.rs"] = rs + `#[no_mangle] pub extern "C" fn rs_tag() -> *const c_char { RS.as_ptr() as *const c_char }
#[no_mangle] pub extern "C" fn rs_lib_tag() -> *const c_char { unsafe { lib_tag() } }
#[no_mangle] pub extern "C" fn rs_lib_b() -> *const c_char { unsafe { lib_b() } }
pub fn tags() -> String { format!("{}|{}", s(unsafe { lib_tag() }), s(unsafe { lib_b() })) }
`
		in = append(in, Input{Knob: "rs", Kind: "rust", File: dir + "/src/lib.rs"})
	}
	return files, in
}

func cargoProject() Project {
	files, in := cargoCrate("rs", "bin")
	files[".gitignore"] = "target/\nrs/scratch/\n"
	return Project{Name: "cargo-cc", System: "cargo", Why: "a Cargo build script with the cc crate: declares build.rs, the template and src/a.c, not the headers",
		Files: files, Build: func(fast, first bool) []string {
			return sh("cd rs && cargo build" + fastIf(fast, " --features fast", ""))
		},
		Products: []string{"*/out/libtruthc.a"},
		Roots:    []string{"rs/target/debug/app"}, Inputs: in, Needs: []string{"cargo", "cc", "ar"}, Cargo: []string{"rs"},
		Toggle: true, Tool: true, Shadow: "rs/override", Ignored: "rs/scratch", CheckDir: "rs", Manifest: "rs/Cargo.toml",
		Rename: func(f map[string]string) map[string]string {
			s := strings.Replace(f["rs/build.rs"], `b.file("src/a.c")`, `b.file("src/a2.c")`, 1)
			return map[string]string{"rs/build.rs": strings.Replace(s, "rerun-if-changed=src/a.c", "rerun-if-changed=src/a2.c", 1)}
		},
		Description: "rs/build.rs", DescEdit: func(s string) string {
			return strings.Replace(s, "    b.compile(", "    b.define(\"TRUTH_DESC\", None);\n    b.compile(", 1)
		}}
}

const chainMain = `#include <stdio.h>
const char *rs_tag(void);
const char *rs_lib_tag(void);
const char *rs_lib_b(void);
int main(void) {
    printf("lib=%s\nb=%s\nrs=%s\n", rs_lib_tag(), rs_lib_b(), rs_tag());
#ifdef TRUTH_TOOL
    puts("main+tool");
#endif
    return 0;
}
`

// chainProject: a Cargo staticlib (rs/, release) linked by a Make program (cprog/) or a Go program
// (gprog/); the user's build is cargo's, then the program's.
func chainProject(program string) Project {
	files, in := cargoCrate("rs", "staticlib")
	lib := "rs/target/release/libtruthrs.a"
	for i := range in {
		in[i].Derived = []string{lib}
	}
	p := Project{Inputs: in, Cargo: []string{"rs"}, Toggle: true, Tool: true, Shadow: "rs/override", Ignored: "scratch"}
	cargo := func(fast bool) string {
		return "(cd rs && cargo build --release" + fastIf(fast, " --features fast", "") + ")"
	}
	switch program {
	case "make":
		files["cprog/Makefile"] = "app: main.o ../" + lib + "\n\t$(CC) -o $@ main.o ../" + lib + " -lpthread -ldl -lm\n"
		files["cprog/main.c"] = chainMain
		files[".gitignore"] = "target/\ncprog/app\ncprog/*.o\nscratch/\n"
		p.Name, p.System, p.Why = "make-links-staticlib", "make+cargo", "a Make program linking a Cargo staticlib (release) by its path"
		p.Build = func(fast, first bool) []string { return sh(cargo(fast), "make -s -C cprog") }
		p.Partial = func(fast bool) []string { return sh(cargo(fast)) }
		p.Roots = []string{"cprog/app"}
		p.Needs = []string{"cargo", "make", "cc", "ar"}
	case "go":
		files["gprog/go.mod"] = "module truthchain\n\ngo 1.22\n"
		files["gprog/main.go"] = "package main\n\n/*\n#cgo LDFLAGS: ${SRCDIR}/../" + lib + " -lpthread -ldl -lm\nconst char *rs_tag(void);\nconst char *rs_lib_tag(void);\nconst char *rs_lib_b(void);\n*/\nimport \"C\"\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Printf(\"lib=%s\\nb=%s\\nrs=%s\\n\", C.GoString(C.rs_lib_tag()), C.GoString(C.rs_lib_b()), C.GoString(C.rs_tag()))\n}\n"
		files[".gitignore"] = "target/\ngprog/app\nscratch/\n"
		p.Name, p.System, p.Why = "go-links-staticlib", "go+cargo", "a Go program linking a Cargo staticlib (release) through #cgo LDFLAGS"
		p.Build = func(fast, first bool) []string { return sh(cargo(fast), "cd gprog && go build -o app .") }
		p.Partial = func(fast bool) []string { return sh(cargo(fast)) }
		p.Env = func(fast bool) []string { return goEnv(false) }
		p.Roots = []string{"gprog/app"}
		p.Needs = []string{"cargo", "go", "cc", "ar"}
	}
	p.Files = files
	return p
}

// sysChainProject: a Cargo workspace (ws/) of a `links` -sys crate and a package that builds against it.
// truthsys's build script compiles the C library with the cc crate, copies include/ into OUT_DIR and
// exports that copy (cargo:include, read by the dependent as DEP_TRUTHC_INCLUDE); app's build script
// compiles glue.c against the exported copy and turns data.txt, a file it reads but never declares, into
// Rust source. Nothing declares the headers, src/b.c, glue's header copy or data.txt.
func sysChainProject() Project {
	files := map[string]string{}
	for k, v := range cLibFiles("") {
		files["ws/truthsys/"+k] = v
	}
	reg := debianRegistryConfig
	files["ws/.cargo/config.toml"] = reg
	files["ws/Cargo.toml"] = "[workspace]\nmembers = [\"truthsys\", \"app\"]\nresolver = \"2\"\n"
	files["ws/truthsys/Cargo.toml"] = "[package]\nname = \"truthsys\"\nversion = \"0.1.0\"\nedition = \"2021\"\nlinks = \"truthc\"\n" +
		"[features]\nfast = []\n[build-dependencies]\ncc = \"1.0\"\n"
	files["ws/truthsys/build.rs"] = scriptOpening + `    let inc = format!("{}/include", out);
    std::fs::create_dir_all(&inc).unwrap();
    for h in ["lib.h", "impl.h"] {
        std::fs::copy(format!("include/{}", h), format!("{}/{}", inc, h)).unwrap();
    }
    println!("cargo:include={}", inc);
    let mut b = cc::Build::new();
    b.file("src/a.c").file("src/b.c").include("override").include("include").include(&out);
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { b.define("FAST", None); }
    b.compile("truthc");
}
`
	files["ws/truthsys/src/lib.rs"] = `use std::os::raw::c_char;
extern "C" { pub fn lib_tag() -> *const c_char; pub fn lib_b() -> *const c_char; }
`
	files["ws/app/Cargo.toml"] = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n" +
		"[features]\nfast = [\"truthsys/fast\"]\n[dependencies]\ntruthsys = { path = \"../truthsys\" }\n[build-dependencies]\ncc = \"1.0\"\n" +
		"[[test]]\nname = \"probe\"\nharness = false\n"
	files["ws/app/build.rs"] = `fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=glue.c");
    let inc = std::env::var("DEP_TRUTHC_INCLUDE").unwrap();
    cc::Build::new().file("glue.c").include(&inc).compile("glue");
    let out = std::env::var("OUT_DIR").unwrap();
    let d = std::fs::read_to_string("data.txt").unwrap();
    std::fs::write(format!("{}/data.rs", out), format!("pub const DATA: &str = {:?};\n", d.trim())).unwrap();
}
`
	files["ws/app/glue.c"] = "#include \"lib.h\"\n#include LIB_IMPL\nconst char *glue_tag(void) { return \"TRUTHV_g_0|\" LIB_HDR \"|\" IMPL_TAG\n#ifdef TRUTH_GLUE\n  \"+desc\"\n#endif\n  ; }\n"
	files["ws/app/data.txt"] = "TRUTHV_d_0\n"
	files["ws/app/src/main.rs"] = `use std::ffi::CStr;
use std::os::raw::c_char;
include!(concat!(env!("OUT_DIR"), "/data.rs"));
extern "C" { fn glue_tag() -> *const c_char; }
fn s(p: *const c_char) -> String { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() }
fn main() {
    println!("lib={}\nb={}\nglue={}\ndata={}\nrs=TRUTHV_rs_0", s(unsafe { truthsys::lib_tag() }), s(unsafe { truthsys::lib_b() }), s(unsafe { glue_tag() }), DATA);
}
`
	// A test binary (harness = false: a program) linking the same copies.
	files["ws/app/tests/probe.rs"] = `use std::ffi::CStr;
use std::os::raw::c_char;
include!(concat!(env!("OUT_DIR"), "/data.rs"));
extern "C" { fn glue_tag() -> *const c_char; }
fn s(p: *const c_char) -> String { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() }
fn main() { println!("probe lib={} b={} glue={} data={}", s(unsafe { truthsys::lib_tag() }), s(unsafe { truthsys::lib_b() }), s(unsafe { glue_tag() }), DATA); }
`
	files[".gitignore"] = "target/\nws/scratch/\n"
	in := cLibInputs("ws/truthsys", true, "")
	for i := range in {
		if in[i].Kind == "header" || in[i].Kind == "macro-header" { // the exported copy in truthsys's OUT_DIR
			in[i].Derived = []string{"*/out/include/" + filepath.Base(in[i].File)}
		}
	}
	in = append(in, Input{Knob: "g", Kind: "c-source", File: "ws/app/glue.c"},
		Input{Knob: "d", Kind: "data", File: "ws/app/data.txt"},
		Input{Knob: "rs", Kind: "rust", File: "ws/app/src/main.rs"})
	return Project{Name: "cargo-sys-chain", System: "cargo", Why: "a links -sys crate exporting an OUT_DIR copy of its headers (cargo:include) to a dependent whose build script compiles against it and reads an undeclared data file",
		Files: files, Build: func(fast, first bool) []string {
			f := fastIf(fast, " --features fast", "")
			return sh("cd ws && cargo build"+f, "cd ws && cargo test --no-run -q"+f)
		},
		Partial: func(fast bool) []string {
			return sh("cd ws && cargo build -p truthsys" + fastIf(fast, " --features fast", ""))
		},
		Products: []string{"*/out/libtruthc.a", "*/libtruthsys-*.rlib"},
		Roots:    []string{"ws/target/debug/app", "ws/target/debug/deps/probe-*"}, Inputs: in, Needs: []string{"cargo", "cc", "ar"}, Cargo: []string{"ws"},
		Toggle: true, Tool: true, Shadow: "ws/truthsys/override", Ignored: "ws/scratch", CheckDir: "ws",
		Rename: func(f map[string]string) map[string]string {
			s := strings.Replace(f["ws/truthsys/build.rs"], `b.file("src/a.c")`, `b.file("src/a2.c")`, 1)
			return map[string]string{"ws/truthsys/build.rs": strings.Replace(s, "rerun-if-changed=src/a.c", "rerun-if-changed=src/a2.c", 1)}
		},
		Description: "ws/app/build.rs", DescEdit: func(s string) string {
			return strings.Replace(s, `.include(&inc)`, `.include(&inc).define("TRUTH_GLUE", Some("1"))`, 1)
		}}
}

// rsMainC is the Rust program of a package whose build script links the C library (lib_tag, lib_b).
const rsMainC = `use std::ffi::CStr;
use std::os::raw::c_char;
extern "C" { fn lib_tag() -> *const c_char; fn lib_b() -> *const c_char; }
fn s(p: *const c_char) -> String { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() }
fn main() { println!("lib={}\nb={}\nrs=TRUTHV_rs_0", s(unsafe { lib_tag() }), s(unsafe { lib_b() })); }
`

// cmakeCrateProject: a Cargo package whose build script builds the C library with the cmake crate
// (CMake configures into OUT_DIR, configure_file makes config.h, the install step copies libtruth.a);
// the script declares CMakeLists.txt, the template and src/a.c, not the headers nor src/b.c.
func cmakeCrateProject() Project {
	files := map[string]string{}
	for k, v := range cLibFiles("") {
		files["rc/"+k] = v
	}
	files["rc/CMakeLists.txt"] = `cmake_minimum_required(VERSION 3.10)
project(truth C)
option(FAST "fast variant" OFF)
set(CONF_PREFIX "")
configure_file(config.h.in config.h @ONLY)
add_library(truth STATIC src/a.c src/b.c)
target_include_directories(truth PRIVATE override include ${CMAKE_CURRENT_BINARY_DIR})
if(FAST)
  target_compile_definitions(truth PRIVATE FAST)
endif()
install(TARGETS truth ARCHIVE DESTINATION lib)
`
	files["rc/Cargo.toml"] = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n" +
		"[features]\nfast = []\n[build-dependencies]\ncmake = \"0.1\"\n"
	files["rc/.cargo/config.toml"] = debianRegistryConfig
	files["rc/build.rs"] = `fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=CMakeLists.txt");
    println!("cargo:rerun-if-changed=config.h.in");
    println!("cargo:rerun-if-changed=src/a.c");
    let fast = if std::env::var_os("CARGO_FEATURE_FAST").is_some() { "ON" } else { "OFF" };
    let dst = cmake::Config::new(".").define("FAST", fast).build();
    println!("cargo:rustc-link-search=native={}/lib", dst.display());
    println!("cargo:rustc-link-lib=static=truth");
}
`
	files["rc/src/main.rs"] = rsMainC
	files[".gitignore"] = "target/\nrc/scratch/\n"
	in := cLibInputs("rc", true, "")
	for i := range in {
		if in[i].Kind == "template" {
			in[i].Derived = []string{"*/out/build/config.h"}
		}
	}
	in = append(in, Input{Knob: "rs", Kind: "rust", File: "rc/src/main.rs"})
	return Project{Name: "cargo-cmake", System: "cargo", Why: "a Cargo build script with the cmake crate: configure_file and an install step in OUT_DIR; declares CMakeLists.txt, the template and src/a.c, not the headers",
		Files: files, Build: func(fast, first bool) []string {
			return sh("cd rc && cargo build" + fastIf(fast, " --features fast", ""))
		},
		Products: []string{"*/out/lib/libtruth.a", "*/out/build/libtruth.a"},
		Roots:    []string{"rc/target/debug/app"}, Inputs: in, Needs: []string{"cargo", "cmake", "cc", "ar"}, Cargo: []string{"rc"},
		Toggle: true, Shadow: "rc/override", Ignored: "rc/scratch", CheckDir: "rc",
		Rename: func(f map[string]string) map[string]string {
			return map[string]string{"rc/CMakeLists.txt": strings.Replace(f["rc/CMakeLists.txt"], "src/a.c", "src/a2.c", 1),
				"rc/build.rs": strings.Replace(f["rc/build.rs"], "rerun-if-changed=src/a.c", "rerun-if-changed=src/a2.c", 1)}
		},
		Description: "rc/CMakeLists.txt", DescEdit: func(s string) string {
			return strings.Replace(s, "install(TARGETS", "target_compile_definitions(truth PRIVATE TRUTH_DESC)\ninstall(TARGETS", 1)
		}}
}

// ptxProject: a Cargo package whose build script compiles a CUDA kernel to PTX with nvcc into a folder
// of the package, outside OUT_DIR (ptx/, git-ignored), and whose program embeds it with include_str!.
// The script declares build.rs and kern.cu, not the header the kernel includes through -I.
func ptxProject() Project {
	files := map[string]string{
		"cu/Cargo.toml":         "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[features]\nfast = []\n",
		"cu/.cargo/config.toml": debianRegistryConfig,
		"cu/override/README":    "headers here come before include/\n",
		"cu/include/lib.h":      "#define KERN_SCALE 3\n__device__ int TRUTHV_h_0;\n",
		"cu/include/impl.h":     "__device__ int TRUTHV_m_0;\n",
		"cu/kern.cu": `#include "lib.h"
#define KERN_IMPL "impl.h"
#include KERN_IMPL
/* TRUTHC_note_0 */
#ifdef FAST
__device__ int truth_fast;
#endif
#ifdef TRUTH_DESC
__device__ int truth_desc;
#endif
extern "C" __global__ void TRUTHV_a_0(int *x) { x[threadIdx.x] *= KERN_SCALE; }
`,
		"cu/build.rs": `use std::process::Command;
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=kern.cu");
    std::fs::create_dir_all("ptx").unwrap();
    let mut c = Command::new("nvcc");
    c.args(["-ptx", "-Ioverride", "-Iinclude", "kern.cu", "-o", "ptx/kern.ptx"]);
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { c.arg("-DFAST"); }
    let st = c.status().unwrap();
    assert!(st.success(), "nvcc failed");
}
`,
		"cu/src/main.rs": `const PTX: &str = include_str!("../ptx/kern.ptx");
fn main() {
    for l in PTX.lines() {
        if l.starts_with(".global") || l.starts_with(".visible .entry") { println!("{}", l); }
    }
    println!("rs=TRUTHV_rs_0");
}
`,
		".gitignore": "target/\ncu/ptx/\ncu/scratch/\n",
	}
	in := []Input{
		{Knob: "a", Kind: "cuda-source", File: "cu/kern.cu", Derived: []string{"cu/ptx/kern.ptx"}},
		{Knob: "h", Kind: "header", File: "cu/include/lib.h", Derived: []string{"cu/ptx/kern.ptx"}},
		{Knob: "m", Kind: "macro-header", File: "cu/include/impl.h", Derived: []string{"cu/ptx/kern.ptx"}},
		{Knob: "rs", Kind: "rust", File: "cu/src/main.rs"},
	}
	return Project{Name: "cargo-nvcc-ptx", System: "cargo", Why: "a Cargo build script running nvcc -ptx into a folder outside OUT_DIR, embedded with include_str!; declares kern.cu, not its headers",
		Files: files, Build: func(fast, first bool) []string {
			return sh("cd cu && cargo build" + fastIf(fast, " --features fast", ""))
		},
		// nvcc 11.8 with gcc 12 needs these (the user's shell holds them).
		Env:   func(fast bool) []string { return []string{"NVCC_APPEND_FLAGS=-ccbin c++ -allow-unsupported-compiler"} },
		Roots: []string{"cu/target/debug/app"}, Inputs: in, Needs: []string{"cargo", "nvcc"}, Cargo: []string{"cu"},
		Toggle: true, Shadow: "cu/override", Ignored: "cu/scratch", CheckDir: "cu",
		Description: "cu/build.rs", DescEdit: func(s string) string {
			return strings.Replace(s, `"kern.cu", "-o"`, `"-DTRUTH_DESC", "kern.cu", "-o"`, 1)
		}}
}

// bindgenProject: a Cargo build script that compiles the C library with the cc crate and turns
// wrapper.h (which includes lib.h) into OUT_DIR/bindings.rs with Debian's bindgen 0.60 and libclang,
// whose constants the program prints. bindgen's CargoCallbacks declares the headers wrapper.h includes,
// not wrapper.h itself; the script declares build.rs, the template and src/a.c.
func bindgenProject() Project {
	files := map[string]string{}
	for k, v := range cLibFiles("") {
		files["bg/"+k] = v
	}
	files["bg/Cargo.toml"] = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[features]\nfast = []\n" +
		"[build-dependencies]\ncc = \"1.0\"\nbindgen = { version = \"0.60\", default-features = false, features = [\"runtime\"] }\n"
	files["bg/.cargo/config.toml"] = debianRegistryConfig
	files["bg/wrapper.h"] = "#include \"lib.h\"\n#define WRAP_TAG \"TRUTHV_w_0\"\n"
	files["bg/build.rs"] = ccScript + `    let mut g = bindgen::Builder::default().header("wrapper.h").clang_arg("-Ioverride").clang_arg("-Iinclude");
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { b.define("FAST", None); g = g.clang_arg("-DFAST"); }
    b.compile("truthc");
    g.parse_callbacks(Box::new(bindgen::CargoCallbacks)).generate().unwrap()
        .write_to_file(format!("{}/bindings.rs", out)).unwrap();
}
`
	files["bg/src/main.rs"] = `use std::ffi::CStr;
use std::os::raw::c_char;
include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
extern "C" { fn lib_tag() -> *const c_char; fn lib_b() -> *const c_char; }
fn s(p: *const c_char) -> String { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() }
fn c(b: &[u8]) -> String { String::from_utf8_lossy(&b[..b.len() - 1]).into_owned() }
fn main() { println!("lib={}\nb={}\nhdr={} wrap={}\nrs=TRUTHV_rs_0", s(unsafe { lib_tag() }), s(unsafe { lib_b() }), c(LIB_HDR), c(WRAP_TAG)); }
`
	files[".gitignore"] = "target/\nbg/scratch/\n"
	in := append(cLibInputs("bg", true, ""), Input{Knob: "w", Kind: "bindgen-header", File: "bg/wrapper.h"},
		Input{Knob: "rs", Kind: "rust", File: "bg/src/main.rs"})
	return Project{Name: "cargo-bindgen", System: "cargo", Slow: true, Why: "a Cargo build script with the cc crate and Debian's bindgen 0.60 (libclang): bindings.rs from wrapper.h, whose includes bindgen declares, not wrapper.h",
		Files: files, Build: func(fast, first bool) []string {
			return sh("cd bg && cargo build" + fastIf(fast, " --features fast", ""))
		},
		Products: []string{"*/out/libtruthc.a", "*/out/bindings.rs"},
		Roots:    []string{"bg/target/debug/app"}, Inputs: in, Needs: []string{"cargo", "cc", "ar", "clang"}, Cargo: []string{"bg"},
		Toggle: true, Tool: true, Shadow: "bg/override", Ignored: "bg/scratch", CheckDir: "bg",
		Rename: func(f map[string]string) map[string]string {
			s := strings.Replace(f["bg/build.rs"], `b.file("src/a.c")`, `b.file("src/a2.c")`, 1)
			return map[string]string{"bg/build.rs": strings.Replace(s, "rerun-if-changed=src/a.c", "rerun-if-changed=src/a2.c", 1)}
		},
		Description: "bg/build.rs", DescEdit: func(s string) string {
			return strings.Replace(s, "    b.compile(", "    b.define(\"TRUTH_DESC\", None);\n    b.compile(", 1)
		}}
}

// makeInTreeProject: a Cargo package whose build script runs make in a folder of the package (csrc/):
// the objects, their depfiles and the archive land beside the sources, outside the target folder, and
// make's own mtime rules decide what is recompiled; the feature passes FAST=1 on make's command line.
// The script declares build.rs, the Makefile and src/a.c.
func makeInTreeProject() Project {
	files := map[string]string{}
	for k, v := range cLibFiles("") {
		files["mk/csrc/"+k] = v
	}
	files["mk/csrc/Makefile"] = `CPPFLAGS := -Ioverride -Iinclude -I.
ifdef FAST
CPPFLAGS += -DFAST
endif
SRCS := src/a.c src/b.c
OBJS := $(SRCS:.c=.o)
libtruth.a: $(OBJS)
	ar crs $@ $^
%.o: %.c
	$(CC) -MMD -MP $(CPPFLAGS) -O1 -fPIC -c $< -o $@
$(OBJS): | config.h
config.h: config.h.in
	sed 's/@CONF_PREFIX@//' config.h.in > $@
-include $(OBJS:.o=.d)
`
	files["mk/Cargo.toml"] = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[features]\nfast = []\n"
	files["mk/build.rs"] = `use std::process::Command;
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/Makefile");
    println!("cargo:rerun-if-changed=csrc/src/a.c");
    let mut c = Command::new("make");
    c.args(["-s", "-C", "csrc"]);
    if std::env::var_os("CARGO_FEATURE_FAST").is_some() { c.arg("FAST=1"); }
    assert!(c.status().unwrap().success(), "make failed");
    let dir = std::env::current_dir().unwrap().join("csrc");
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=truth");
}
`
	files["mk/src/main.rs"] = rsMainC
	files[".gitignore"] = "target/\n*.o\n*.d\n*.a\nmk/csrc/config.h\nmk/scratch/\n"
	in := append(cLibInputs("mk/csrc", true, "mk/csrc/config.h"), Input{Knob: "rs", Kind: "rust", File: "mk/src/main.rs"})
	return Project{Name: "cargo-make-in-tree", System: "cargo", Why: "a Cargo build script running make in a folder of the package: objects, depfiles and the archive beside the sources; the feature passes FAST=1 to make",
		Files: files, Build: func(fast, first bool) []string {
			return sh("cd mk && cargo build" + fastIf(fast, " --features fast", ""))
		},
		Roots: []string{"mk/target/debug/app"}, Inputs: in, Needs: []string{"cargo", "make", "cc", "ar"}, Cargo: []string{"mk"},
		Toggle: true, Archive: "mk/csrc/libtruth.a", Shadow: "mk/csrc/override", Ignored: "mk/scratch", CheckDir: "mk",
		Rename: func(f map[string]string) map[string]string {
			return map[string]string{"mk/csrc/Makefile": strings.Replace(f["mk/csrc/Makefile"], "src/a.c", "src/a2.c", 1),
				"mk/build.rs": strings.Replace(f["mk/build.rs"], "rerun-if-changed=csrc/src/a.c", "rerun-if-changed=csrc/src/a2.c", 1)}
		},
		Description: "mk/csrc/Makefile", DescEdit: func(s string) string {
			return strings.Replace(s, "CPPFLAGS := -Ioverride", "CPPFLAGS := -DTRUTH_DESC -Ioverride", 1)
		}}
}

// Projects is the event corpus, in a fixed order.
func Projects() []Project {
	return []Project{makeProject(true), makeProject(false), ninjaProject(), cmakeProject(false), cmakeProject(true), mesonProject(), goProject(),
		cargoProject(), cmakeCrateProject(), sysChainProject(), ptxProject(), makeInTreeProject(), bindgenProject(), chainProject("make"), chainProject("go")}
}

// An Event is one edit (or a seeded pair of edits) applied to a project's known-fresh state.
type Event struct {
	Kind  string // the edit kind; a pair is "A+B"
	Edits []EvEdit
}

// EvEdit is one change the user makes.
type EvEdit struct {
	Kind  string // content, content-older, comment, touch, shadow, remove-source, config, description, ignored, branch
	Input *Input // for the edits of one input
	// Reason: the workspace-relative files an error must name to be right for this edit (nil: any error
	// naming the stale program is right).
	Reason []string
}

func (e EvEdit) label() string {
	if e.Input != nil {
		return e.Kind + " " + e.Input.Kind + " " + e.Input.File
	}
	return e.Kind
}

// SingleEdits lists every edit the axes give the project, in a fixed order.
func (p Project) SingleEdits() []EvEdit {
	var out []EvEdit
	for i := range p.Inputs {
		in := &p.Inputs[i]
		reason := append([]string{in.File}, in.Derived...)
		out = append(out, EvEdit{Kind: "content", Input: in, Reason: reason}, EvEdit{Kind: "content-older", Input: in, Reason: reason})
		if in.Kind != "rust" && in.Kind != "template" {
			out = append(out, EvEdit{Kind: "touch", Input: in})
		}
	}
	for i := range p.Inputs {
		if k := p.Inputs[i].Knob; k == "a" || k == "h" {
			// Built on a branch that changed it, then back on the first branch.
			out = append(out, EvEdit{Kind: "branch", Input: &p.Inputs[i], Reason: []string{p.Inputs[i].File}})
		}
		if p.Inputs[i].Knob == "a" {
			in := &p.Inputs[i]
			out = append(out, EvEdit{Kind: "comment", Input: in})
			if p.Partial != nil {
				reason := append([]string{in.File}, in.Derived...)
				if p.Archive != "" {
					reason = append(reason, p.Archive)
				}
				reason = append(reason, p.Products...)
				out = append(out, EvEdit{Kind: "interrupted", Input: in, Reason: reason})
			}
			if p.Rename != nil {
				reason := []string{in.File}
				if p.Archive != "" {
					reason = append(reason, p.Archive)
				}
				reason = append(reason, p.Products...)
				out = append(out, EvEdit{Kind: "remove-source", Input: in, Reason: reason})
			}
		}
		if p.Inputs[i].Kind == "header" && p.Shadow != "" && strings.HasSuffix(p.Inputs[i].File, "/lib.h") {
			out = append(out, EvEdit{Kind: "shadow", Input: &p.Inputs[i], Reason: []string{p.Shadow + "/lib.h"}})
		}
	}
	if p.Toggle {
		out = append(out, EvEdit{Kind: "config"})
	}
	if p.Tool {
		out = append(out, EvEdit{Kind: "tool", Reason: []string{"*/" + toolDir + "/cc"}})
	}
	if p.Description != "" {
		out = append(out, EvEdit{Kind: "description", Reason: []string{p.Description}})
	}
	if p.Ignored != "" {
		out = append(out, EvEdit{Kind: "ignored"})
	}
	if p.Manifest != "" {
		out = append(out, EvEdit{Kind: "manifest", Reason: []string{p.Manifest}}, EvEdit{Kind: "version", Reason: []string{p.Manifest}},
			EvEdit{Kind: "manifest-unread"})
	}
	if len(p.Cargo) > 0 {
		// cargo clean -p on the workspace's packages with a build script: Cargo removes their units and
		// OUT_DIRs, not what their scripts wrote elsewhere (objects in the source tree, PTX beside it).
		out = append(out, EvEdit{Kind: "clean-p"})
	}
	return out
}

// EditKinds lists the edit kinds of the corpus, sorted.
func EditKinds() []string {
	seen := map[string]bool{}
	for _, p := range Projects() {
		for _, e := range p.SingleEdits() {
			seen[e.Kind] = true
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// toolDir is the folder (in the project's run folder, outside the workspace) of the tool edit's cc: a
// wrapper that runs the system's compiler with one more definition, which every C source of the corpus
// reads (as another compiler changes the code of every object; a wrapper that changes nothing, such as
// ccache, would draw the same errors, which would then be conservative).
const toolDir = "toolbin"

const toolWrapper = "#!/bin/sh\nexec /usr/bin/cc -DTRUTH_TOOL \"$@\"\n"

func (p Project) String() string { return fmt.Sprintf("%s (%s)", p.Name, p.System) }
