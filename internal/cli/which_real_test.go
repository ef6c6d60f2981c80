package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

// fastmathFiles is the workspace of repro 15: fastmath-sys built with Debian's cc crate (through the
// directory source), whose banner is "msm done" or, with the `fast` feature, "timing: msm done".
func fastmathFiles(t *testing.T) map[string]string {
	files := testutil.CCSys(t)
	files["fastmath-sys/native/include/x.h"] = "#define X_SCALE 3\nint x_compute(int v);\nconst char *x_banner(void);\n"
	files["fastmath-sys/native/x.c"] = "#include \"x.h\"\nint x_compute(int v) { return v * X_SCALE; }\nconst char *x_banner(void) {\n" +
		"#ifdef FASTMATH_FAST\n    return \"timing: msm done\";\n#else\n    return \"msm done\";\n#endif\n}\n"
	files["app/src/main.rs"] = "fn main() { println!(\"{} -> {}\", fastmath_sys::banner(), fastmath_sys::compute(7)); }\n"
	return files
}

// Repro 15: two copies that differ only by a string that is a suffix of the other's ("msm done" vs
// "timing: msm done"). which names the copy really linked in both candidate orders, for a binary of
// either copy, and verify --matches holds for exactly that one.
func TestWhichSuffixStringRepro15(t *testing.T) {
	p := testutil.NewProject(t, fastmathFiles(t))
	p.Cargo("build", "--release")
	plainBin := filepath.Join(t.TempDir(), "app-plain")
	mustRun(t, p.Dir, "cp", "-p", p.Path("target/release/app"), plainBin)
	p.Cargo("build", "--release", "--features", "app/fast")
	bin := p.Path("target/release/app")
	if out, err := exec.Command(bin).Output(); err != nil || !strings.Contains(string(out), "timing: msm done") {
		t.Fatalf("premise: the binary prints %q (%v)", out, err)
	}
	var plain, fast string
	for _, r := range p.RunDirs("release", "fastmath-sys") {
		a := filepath.Join(testutil.OutDirOf(r), "libx.a")
		out, err := os.ReadFile(testutil.StdoutFile(r))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "FASTMATH_FAST") {
			fast = a
		} else {
			plain = a
		}
	}
	if plain == "" || fast == "" {
		t.Fatalf("want a plain and a fast OUT_DIR copy")
	}
	for _, c := range []struct {
		bin, want, other string
	}{{bin, fast, plain}, {plainBin, plain, fast}} {
		for _, order := range [][]string{{c.want, c.other}, {c.other, c.want}} {
			doc := whichRun(t, c.bin, "--candidate", order[0], "--candidate", order[1])
			if got := matchedPaths(doc); doc.Libraries[0].Outcome != "matched" || len(got) != 1 || got[0] != c.want {
				t.Errorf("%s with candidates %v: %+v", filepath.Base(c.bin), order, doc.Libraries[0])
			}
		}
		if _, _, code := run(t, "verify", c.bin, "--matches", c.want, "--target-dir", p.Path("target")); code != 0 {
			t.Errorf("verify %s --matches %s: exit %d, want 0", filepath.Base(c.bin), c.want, code)
		}
		if _, _, code := run(t, "verify", c.bin, "--matches", c.other, "--target-dir", p.Path("target")); code != 1 {
			t.Errorf("verify %s --matches %s: exit %d, want 1", filepath.Base(c.bin), c.other, code)
		}
	}
	// Found in the target folder: the fast OUT_DIR archive and the rlib that bundles it are one group.
	doc := whichRun(t, bin, "--lib", "x")
	got := matchedPaths(doc)
	if doc.Libraries[0].Outcome != "matched" || len(got) != 2 || got[0] != fast && got[1] != fast {
		t.Fatalf("automatic: %+v", doc.Libraries[0])
	}
	for _, g := range got {
		if g != fast && !strings.HasSuffix(g, ".rlib") {
			t.Errorf("matched %s besides the fast copy", g)
		}
	}
	// The rlib of the fast build, as --matches target, is judged against the other copies too.
	for _, g := range got {
		if strings.HasSuffix(g, ".rlib") {
			if _, _, code := run(t, "verify", bin, "--matches", g); code != 0 {
				t.Errorf("verify --matches %s (the fast rlib): exit %d", g, code)
			}
		}
	}
}

// buildLib compiles src with cc (extra flags) into dir/lib<name>.a and returns its path.
func buildLib(t *testing.T, dir, name, src string, flags ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "cc", append(append([]string{"-c", "-O2", "-fPIC", "-ffunction-sections", "-fdata-sections"}, flags...), c, "-o", name+".o")...)
	lib := filepath.Join(dir, "lib"+name+".a")
	mustRun(t, dir, "ar", "crs", lib, name+".o")
	return lib
}

// linkApp links main.c with the archives into dir/app (with --gc-sections, as rustc links).
func linkApp(t *testing.T, dir, main string, libs ...string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "main.c"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "app")
	mustRun(t, dir, "cc", append(append([]string{"-O2", "-Wl,--gc-sections", "main.c"}, libs...), "-o", app)...)
	return app
}

// Copies that differ only in code: a constant (an immediate operand: relocation masks must not hide
// it), or a constant table in .rodata (data sections are features). which names the linked copy in
// both candidate orders; stripped of .symtab, nothing decides: "unknown", and verify --matches cannot
// tell (exit 2). Copies identical but for a define that changes nothing are "identical".
func TestWhichCodeAndDataOnlyDifferences(t *testing.T) {
	dir := t.TempDir()
	main := "#include <stdio.h>\nint k_scale(int);\nint main(int c, char **v) { (void)v; printf(\"%d\\n\", k_scale(c)); return 0; }\n"
	cases := []struct{ name, a, b string }{
		{"immediate", "int k_scale(int v) { return v * 3 + 1000; }\n", "int k_scale(int v) { return v * 3 + 1001; }\n"},
		{"table", "static const int t[8] = {1, 2, 3, 4, 5, 6, 7, 8};\nint k_scale(int v) { return t[v & 7]; }\n",
			"static const int t[8] = {1, 2, 3, 4, 5, 6, 7, 9};\nint k_scale(int v) { return t[v & 7]; }\n"},
	}
	for _, c := range cases {
		a := buildLib(t, filepath.Join(dir, c.name, "a"), "k", c.a)
		b := buildLib(t, filepath.Join(dir, c.name, "b"), "k", c.b)
		appDir := filepath.Join(dir, c.name)
		app := linkApp(t, appDir, main, b)
		for _, order := range [][]string{{a, b}, {b, a}} {
			doc := whichRun(t, app, "--candidate", order[0], "--candidate", order[1])
			if got := matchedPaths(doc); doc.Libraries[0].Outcome != "matched" || len(got) != 1 || got[0] != b {
				t.Errorf("%s, candidates %v: %+v", c.name, order, doc.Libraries[0])
			}
		}
		stripped := filepath.Join(appDir, "app-stripped")
		mustRun(t, appDir, "strip", "-o", stripped, app)
		doc := whichRun(t, stripped, "--candidate", a, "--candidate", b)
		if l := doc.Libraries[0]; l.Outcome != "unknown" || len(matchedPaths(doc)) != 0 {
			t.Errorf("%s, stripped: want unknown, got %+v", c.name, l)
		}
		out, _, code := run(t, "which", stripped, "--candidate", a, "--candidate", b)
		if code != 0 || !strings.Contains(out, "cannot tell") {
			t.Errorf("%s, stripped, text: exit %d\n%s", c.name, code, out)
		}
		for _, m := range []string{a, b} {
			if _, _, code := run(t, "verify", stripped, "--matches", m); code != 2 {
				t.Errorf("%s, stripped: verify --matches %s: exit %d, want 2", c.name, m, code)
			}
		}
	}
	// A define that changes nothing: the copies do not differ in content.
	src := "#ifdef UNUSED_FLAG\n#define EXTRA 0\n#endif\nint k_scale(int v) { return v * 3 + 1000; }\nconst char *k_name(void) { return \"kscale library\"; }\n"
	a := buildLib(t, filepath.Join(dir, "define", "a"), "k", src)
	b := buildLib(t, filepath.Join(dir, "define", "b"), "k", src, "-DUNUSED_FLAG")
	app := linkApp(t, filepath.Join(dir, "define"), "#include <stdio.h>\nint k_scale(int);\nconst char *k_name(void);\nint main(int c, char **v) { (void)v; printf(\"%s %d\\n\", k_name(), k_scale(c)); return 0; }\n", b)
	doc := whichRun(t, app, "--candidate", a, "--candidate", b)
	if l := doc.Libraries[0]; l.Outcome != "identical" || len(matchedPaths(doc)) != 2 {
		t.Errorf("define that changes nothing: %+v", l)
	}
}

// Candidates of two libraries given together are judged per library; an rlib made by rustc that
// bundles one of them (with LTO bitcode for its Rust code) joins that library's group, and Rust-only
// rlibs (bitcode members, embedded bitcode) are read without error and reported as having nothing
// native to compare.
func TestWhichGroupsCandidatesPerLibraryAndReadsRlibs(t *testing.T) {
	dir := t.TempDir()
	x := buildLib(t, filepath.Join(dir, "x"), "x", "const char *x_tag(void) { return \"library x tag\"; }\n", "-gz=zlib", "-g")
	y := buildLib(t, filepath.Join(dir, "y"), "y", "const char *y_tag(void) { return \"library y tag\"; }\n")
	y2 := buildLib(t, filepath.Join(dir, "y2"), "y", "const char *y_tag(void) { return \"library y tag, v2\"; }\n")
	app := linkApp(t, dir, "#include <stdio.h>\nconst char *x_tag(void);\nconst char *y_tag(void);\nint main(void) { printf(\"%s %s\\n\", x_tag(), y_tag()); return 0; }\n", x, y)
	// Rust rlibs: one bundling liby.a (its Rust code as LLVM bitcode), one Rust-only with embedded bitcode.
	lib := filepath.Join(dir, "lib.rs")
	if err := os.WriteFile(lib, []byte("extern \"C\" { fn y_tag() -> *const u8; }\npub fn tag() -> *const u8 { unsafe { y_tag() } }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "rustc", "--edition", "2021", "--crate-type", "rlib", "--crate-name", "ywrap", "-C", "linker-plugin-lto", "-L", "native="+filepath.Dir(y), "-l", "static=y", "-o", filepath.Join(dir, "libywrap.rlib"), lib)
	if err := os.WriteFile(filepath.Join(dir, "pure.rs"), []byte("pub fn add(a: u32, b: u32) -> u32 { a.wrapping_mul(b) ^ 0x5a5a }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "rustc", "--edition", "2021", "--crate-type", "rlib", "--crate-name", "pure", "-C", "embed-bitcode=yes", "-C", "opt-level=2", "-o", filepath.Join(dir, "libpure.rlib"), filepath.Join(dir, "pure.rs"))
	rlib, pure := filepath.Join(dir, "libywrap.rlib"), filepath.Join(dir, "libpure.rlib")

	doc := whichRun(t, app, "--candidate", x, "--candidate", y, "--candidate", y2, "--candidate", rlib)
	if len(doc.Libraries) != 2 {
		t.Fatalf("want 2 libraries (x, y), got %+v", doc.Libraries)
	}
	for _, l := range doc.Libraries {
		var matched []string
		for _, c := range l.Candidates {
			if c.Matched {
				matched = append(matched, c.Path)
			}
		}
		switch l.Name {
		case "x":
			if l.Outcome != "matched" || len(l.Candidates) != 1 || len(matched) != 1 {
				t.Errorf("library x: %+v", l)
			}
		case "y":
			if l.Outcome != "matched" || len(l.Candidates) != 3 || strings.Join(matched, ",") != y+","+rlib {
				t.Errorf("library y: want %s and the rlib that bundles it, got %+v", y, l)
			}
		default:
			t.Errorf("unexpected library %q", l.Name)
		}
	}
	doc = whichRun(t, app, "--candidate", pure)
	if l := doc.Libraries[0]; l.Outcome != "unknown" || len(l.Candidates) != 1 || l.Candidates[0].Matched {
		t.Errorf("Rust-only rlib: %+v", l)
	}
	out, _, code := run(t, "which", app, "--candidate", pure)
	if code != 0 || !strings.Contains(out, "holds no native object") {
		t.Errorf("Rust-only rlib, text: exit %d\n%s", code, out)
	}
	if _, _, code := run(t, "verify", app, "--matches", pure); code != 2 {
		t.Errorf("verify --matches a Rust-only rlib: exit %d, want 2", code)
	}
	if _, _, code := run(t, "verify", app, "--matches", y2); code != 1 {
		t.Errorf("verify --matches y2: exit %d, want 1", code)
	}
}

// A real binary linking system libraries through Debian's -sys crates (bzip2-sys, libz-sys,
// libsqlite3-sys, openssl-sys, zstd-sys: rlibs with Rust code only) and one static library of a path
// -sys crate: which answers for the static one and reads every rlib without error.
func TestWhichSystemLibrarySysCrates(t *testing.T) {
	files := testutil.SysCrate("stat-sys", "stat", map[string]string{"native/stat.c": "const char *stat_tag(void) { return \"STATIC_TAG_V1\"; }\nint native_run(void) { return stat_tag()[0]; }\n"},
		nil, []string{"cargo:rerun-if-changed=build.rs"})
	files[".cargo/config.toml"] = testutil.DirectorySourceConfig(testutil.DebianRegistry)
	files["app/Cargo.toml"] += "bzip2-sys = \"0.1\"\nlibz-sys = \"1\"\nlibsqlite3-sys = \"0.25\"\nopenssl-sys = \"0.9\"\nzstd-sys = \"2\"\n"
	files["app/src/main.rs"] = "fn main() { unsafe {\n  println!(\"{} {}\", stat_sys::run(), bzip2_sys::BZ2_bzCompressInit as usize);\n" +
		"  println!(\"{:?} {:?}\", libz_sys::zlibVersion(), libsqlite3_sys::sqlite3_libversion());\n" +
		"  println!(\"{} {}\", openssl_sys::OpenSSL_version_num(), zstd_sys::ZSTD_versionNumber());\n} }\n"
	p := testutil.NewProject(t, files)
	p.Cargo("build", "--release")
	bin := p.Path("target/release/app")
	doc := whichRun(t, bin)
	// The OUT_DIR archive and the rlib that bundles it do not differ: "identical", both inside.
	if len(doc.Libraries) != 1 || doc.Libraries[0].Name != "stat" || doc.Libraries[0].Outcome != "identical" || len(matchedPaths(doc)) != 2 {
		t.Fatalf("want the one static library, inside: %+v", doc.Libraries)
	}
	var rlibs []string
	for _, c := range []string{"bzip2_sys", "libz_sys", "libsqlite3_sys", "openssl_sys", "zstd_sys"} {
		rlibs = append(rlibs, oneOf(t, p.UnitFiles("release", strings.ReplaceAll(c, "_", "-"), "lib"+c+"-*.rlib")))
	}
	args := []string{bin}
	for _, r := range rlibs {
		args = append(args, "--candidate", r)
	}
	doc = whichRun(t, args...)
	if len(doc.Libraries) != len(rlibs) {
		t.Fatalf("want one library per -sys rlib: %+v", doc.Libraries)
	}
	for _, l := range doc.Libraries {
		if l.Outcome != "unknown" || len(l.Candidates) != 1 || l.Candidates[0].Matched {
			t.Errorf("%s: want unknown (nothing native to compare), got %+v", l.Name, l)
		}
	}
	if _, _, code := run(t, "verify", bin, "--matches", rlibs[0]); code != 2 {
		t.Errorf("verify --matches %s: exit %d, want 2 (nothing to compare)", rlibs[0], code)
	}
	// The stat-sys rlib bundles libstat.a: one group with the OUT_DIR archive.
	statRlib := oneOf(t, p.UnitFiles("release", "stat-sys", "libstat_sys-*.rlib"))
	if _, _, code := run(t, "verify", bin, "--matches", statRlib); code != 0 {
		t.Errorf("verify --matches %s: exit %d, want 0", statRlib, code)
	}
}

// Hand-written assembly defines labels without a .type: a string table under a global label is still
// a data feature, so copies that differ only there are told apart, and a single copy is found inside
// (the truth harness's assembly shape answered none-inside).
func TestWhichAssemblyLabels(t *testing.T) {
	dir := t.TempDir()
	asm := func(d, tag string) string {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		src := "    .section .rodata\n    .globl k_tag\nk_tag:\n    .asciz \"" + tag + "\"\n    .section .note.GNU-stack,\"\",@progbits\n"
		if err := os.WriteFile(filepath.Join(d, "k.S"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		mustRun(t, d, "cc", "-c", "k.S", "-o", "k.o")
		mustRun(t, d, "ar", "crs", "libk.a", "k.o")
		return filepath.Join(d, "libk.a")
	}
	a := asm(filepath.Join(dir, "a"), "assembly tag one")
	b := asm(filepath.Join(dir, "b"), "assembly tag two")
	app := linkApp(t, dir, "#include <stdio.h>\nextern const char k_tag[];\nint main(void) { puts(k_tag); return 0; }\n", b)
	for _, order := range [][]string{{a, b}, {b, a}} {
		doc := whichRun(t, app, "--candidate", order[0], "--candidate", order[1])
		if got := matchedPaths(doc); doc.Libraries[0].Outcome != "matched" || len(got) != 1 || got[0] != b {
			t.Errorf("candidates %v: %+v", order, doc.Libraries[0])
		}
	}
	if doc := whichRun(t, app, "--candidate", b); doc.Libraries[0].Outcome != "identical" && doc.Libraries[0].Outcome != "matched" {
		t.Errorf("one copy: want its content inside, got %+v", doc.Libraries[0])
	}
}
