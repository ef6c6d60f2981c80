package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

// A build script reads a data file it names but does not declare (repro turn3/01): an edit leaves Cargo
// Fresh and the binary stale, and the file named in build.rs is an input of the run like a source it
// compiles.
func TestUndeclaredDataFileNamedInBuildScript(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":     "[package]\nname = \"gentxt\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs":       "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    let v = std::fs::read_to_string(\"data/table.txt\").unwrap();\n    std::fs::write(format!(\"{}/v.rs\", std::env::var(\"OUT_DIR\").unwrap()), format!(\"const V: &str = {:?};\", v.trim())).unwrap();\n}\n",
		"data/table.txt": "v=1\n",
		"data/notes.md":  "not read\n",
		"src/main.rs":    "include!(concat!(env!(\"OUT_DIR\"), \"/v.rs\"));\nfn main() { println!(\"{}\", V); }\n",
	})
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Write("data/notes.md", "edited, never read\n")
	p.Write("data/table.txt", "v=2\n")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh gentxt") {
		t.Fatalf("the premise fails: cargo rebuilt gentxt:\n%s", out)
	}
	fs, _ = p.Check()
	f := one(t, fs, "untracked-input-changed")
	if f.Severity != check.Error || f.Subjects[0] != p.Path("data/table.txt") {
		t.Errorf("want an error naming data/table.txt, got %v %v: %s", f.Severity, f.Subjects, f.Message)
	}
}

// A build script compiles every .cu of kernels/ to PTX in OUT_DIR and declares only itself (repro
// turn3/09): scale.ptx named after kernels/scale.cu ties the source to the run, so its edit is an error,
// not a package-folder candidate's warning.
func TestCudaToPTXNamedAfterItsSource(t *testing.T) {
	need.Tools(t, "nvcc")
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"ptxapp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs": `use std::{env, fs, path::PathBuf, process::Command};
fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    for e in fs::read_dir("kernels").unwrap() {
        let p = e.unwrap().path();
        if p.extension().map_or(false, |x| x == "cu") {
            let dst = out.join(p.file_stem().unwrap()).with_extension("ptx");
            let st = Command::new("nvcc").args(["-ptx", "-ccbin", "c++", "-allow-unsupported-compiler", "-o"]).arg(&dst).arg(&p).status().unwrap();
            assert!(st.success());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
`,
		"kernels/scale.cu": "extern \"C\" __global__ void scale(float *x) { x[threadIdx.x] *= 3.0f; }\n",
		"src/main.rs":      "const PTX: &str = include_str!(concat!(env!(\"OUT_DIR\"), \"/scale.ptx\"));\nfn main() { println!(\"{}\", PTX.contains(\"0f40400000\")); }\n",
	})
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Edit("kernels/scale.cu", "3.0f", "4.0f")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh ptxapp") {
		t.Fatalf("the premise fails: cargo rebuilt ptxapp:\n%s", out)
	}
	fs, _ = p.Check()
	f := one(t, fs, "untracked-input-changed")
	if f.Severity != check.Error || f.Subjects[0] != p.Path("kernels/scale.cu") || !strings.Contains(evidenceHow(f, "input"), "output-stem") {
		t.Errorf("want an error naming kernels/scale.cu known by its output scale.ptx, got %v %v (%s): %s", f.Severity, f.Subjects, evidenceHow(f, "input"), f.Message)
	}
}

// A links crate copies its include folder into OUT_DIR and exports it (cargo:include); a second -sys
// crate compiles against DEP_BASE_INCLUDE (repro turn3/truth-dep-include-readdir). The OUT_DIR copy of
// the same name ties the package's header to the first crate's run: its edit is an error naming the app.
func TestHeaderCopiedIntoOutDirAndExported(t *testing.T) {
	p := testutil.NewProject(t, linksIncludeFiles())
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Edit("base-sys/native/include/api.h", "api-1", "api-2")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh user-sys") {
		t.Fatalf("the premise fails: cargo rebuilt user-sys:\n%s", out)
	}
	fs, _ = p.Check()
	var found bool
	for _, f := range fs {
		if f.Rule == "untracked-input-changed" && f.Severity == check.Error && f.Subjects[0] == p.Path("base-sys/native/include/api.h") &&
			testutil.HasSubject(check.Finding{Subjects: f.Roots}, p.Path("target/debug/app")) {
			found = true
		}
	}
	if !found {
		t.Errorf("want an untracked-input-changed error on base-sys/native/include/api.h naming target/debug/app; got %v", fs)
	}
}

// cargo clean -p of the links crate whose metadata the other build script reads (repro
// turn3/truth-cleanp-links-dep): the run's deps entry naming base-sys's run dangles because its records
// were removed, not because it was rebuilt; with no source changed, the binary equals a fresh build.
func TestCleanPOfALinksDependencyOfABuildScript(t *testing.T) {
	p := testutil.NewProject(t, linksIncludeFiles())
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Cargo("clean", "-p", "base-sys")
	fs, _ = p.Check()
	noErrors(t, fs)
	var infos int
	for _, f := range fs {
		if f.Rule == "pending-rebuild" && f.Severity == check.Info {
			infos++
		}
	}
	if infos == 0 {
		t.Errorf("want pending-rebuild infos (Cargo rebuilds what clean -p removed), got %v", fs)
	}
}

// linksIncludeFiles: base-sys (links "base") copies its include folder into OUT_DIR and exports it;
// user-sys compiles against DEP_BASE_INCLUDE.
func linksIncludeFiles() map[string]string {
	return map[string]string{
		".cargo/config.toml":  testutil.DirectorySourceConfig(testutil.DebianRegistry),
		"Cargo.toml":          "[workspace]\nresolver = \"2\"\nmembers = [\"app\", \"base-sys\", \"user-sys\"]\n",
		"app/Cargo.toml":      "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\nbase-sys = { path = \"../base-sys\" }\nuser-sys = { path = \"../user-sys\" }\n",
		"app/src/main.rs":     "fn main() { println!(\"{}\", user_sys::tag()); let _ = base_sys::X; }\n",
		"base-sys/Cargo.toml": "[package]\nname = \"base-sys\"\nversion = \"0.1.0\"\nedition = \"2021\"\nlinks = \"base\"\n",
		"base-sys/build.rs": `fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let inc = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("include");
    std::fs::create_dir_all(&inc).unwrap();
    for e in std::fs::read_dir("native/include").unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), inc.join(e.file_name())).unwrap();
    }
    println!("cargo:include={}", inc.display());
}
`,
		"base-sys/src/lib.rs":           "pub const X: u8 = 1;\n",
		"base-sys/native/include/api.h": "#define API_VALUE \"api-1\"\n",
		"user-sys/Cargo.toml":           "[package]\nname = \"user-sys\"\nversion = \"0.1.0\"\nedition = \"2021\"\nlinks = \"user\"\n[dependencies]\nbase-sys = { path = \"../base-sys\" }\n[build-dependencies]\ncc = \"1.0\"\n",
		"user-sys/build.rs":             "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    println!(\"cargo:rerun-if-changed=native/user.c\");\n    cc::Build::new().file(\"native/user.c\").include(std::env::var(\"DEP_BASE_INCLUDE\").unwrap()).compile(\"user\");\n}\n",
		"user-sys/native/user.c":        "#include \"api.h\"\nconst char *user_tag(void) { return \"user|\" API_VALUE; }\n",
		"user-sys/src/lib.rs":           "extern \"C\" { fn user_tag() -> *const std::os::raw::c_char; }\npub fn tag() -> String { unsafe { std::ffi::CStr::from_ptr(user_tag()).to_string_lossy().into_owned() } }\n",
	}
}

// The cmake crate configures a template (configure_file) that build.rs does not declare (repro
// turn3/truth-cmake-configure): CMake's CMakeFiles/Makefile.cmake in OUT_DIR lists it among the files
// the configure step read, so its edit is an error. A file the CMakeLists.txt reads with file(STRINGS),
// which CMake's regeneration list leaves out, is named by the CMakeLists.txt build.rs declares.
func TestCMakeConfigureTemplateInOutDir(t *testing.T) {
	need.Tools(t, "cmake", "make")
	p := testutil.NewProject(t, map[string]string{
		".cargo/config.toml": testutil.DirectorySourceConfig(testutil.DebianRegistry),
		"Cargo.toml":         "[workspace]\nresolver = \"2\"\nmembers = [\"app\", \"cm-sys\"]\n",
		"app/Cargo.toml":     "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\ncm-sys = { path = \"../cm-sys\" }\n",
		"app/src/main.rs":    "fn main() { println!(\"cm={}\", cm_sys::tag()); }\n",
		"cm-sys/Cargo.toml":  "[package]\nname = \"cm-sys\"\nversion = \"0.1.0\"\nedition = \"2021\"\nlinks = \"cm\"\n[build-dependencies]\ncmake = \"0.1\"\n",
		"cm-sys/build.rs": "fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n    println!(\"cargo:rerun-if-changed=native/CMakeLists.txt\");\n    println!(\"cargo:rerun-if-changed=native/cm.c\");\n" +
			"    let dst = cmake::Config::new(\"native\").build();\n    println!(\"cargo:rustc-link-search=native={}/lib\", dst.display());\n    println!(\"cargo:rustc-link-lib=static=cm\");\n}\n",
		"cm-sys/native/CMakeLists.txt": "cmake_minimum_required(VERSION 3.10)\nproject(cm C)\nfile(STRINGS \"${CMAKE_CURRENT_SOURCE_DIR}/version.txt\" CM_VERSION LIMIT_COUNT 1)\nconfigure_file(cfg.h.in ${CMAKE_CURRENT_BINARY_DIR}/gen/cfg.h @ONLY)\nadd_library(cm STATIC cm.c)\ntarget_include_directories(cm PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/gen)\ninstall(TARGETS cm ARCHIVE DESTINATION lib)\n",
		"cm-sys/native/cfg.h.in":       "#define CM_CFG \"in-1|@CM_VERSION@\"\n",
		"cm-sys/native/version.txt":    "version-1\n",
		"cm-sys/native/cm.c":           "#include \"cfg.h\"\nconst char *cm_tag(void) { return CM_CFG; }\n",
		"cm-sys/src/lib.rs":            "extern \"C\" { fn cm_tag() -> *const std::os::raw::c_char; }\npub fn tag() -> String { unsafe { std::ffi::CStr::from_ptr(cm_tag()).to_string_lossy().into_owned() } }\n",
	})
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	p.Edit("cm-sys/native/cfg.h.in", "in-1", "in-2")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh cm-sys") {
		t.Fatalf("the premise fails: cargo rebuilt cm-sys:\n%s", out)
	}
	fs, _ = p.Check()
	var found bool
	for _, f := range fs {
		if f.Rule == "untracked-input-changed" && f.Severity == check.Error && f.Subjects[0] == p.Path("cm-sys/native/cfg.h.in") {
			found = true
		}
	}
	if !found {
		t.Errorf("want an untracked-input-changed error on cm-sys/native/cfg.h.in; got %v", fs)
	}
	p.Edit("cm-sys/native/cfg.h.in", "in-2", "in-1") // back to the content of the run's baseline
	p.Edit("cm-sys/native/version.txt", "version-1", "version-2")
	if out := p.Cargo("build", "-v"); !strings.Contains(out, "Fresh cm-sys") {
		t.Fatalf("the premise fails: cargo rebuilt cm-sys:\n%s", out)
	}
	fs, _ = p.Check()
	found = false
	for _, f := range fs {
		if f.Rule == "untracked-input-changed" && f.Severity == check.Error && f.Subjects[0] == p.Path("cm-sys/native/version.txt") {
			found = true
		}
	}
	if !found {
		t.Errorf("want an untracked-input-changed error on cm-sys/native/version.txt; got %v", fs)
	}
}
