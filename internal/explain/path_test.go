package explain_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/explain"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

const kernelV1 = "int native_run(void) { return 1; }\n"
const kernelV2 = "#include <stdio.h>\nint native_run(void) { fputs(\"TIMING_V2\\n\", stderr); return 2; }\n"

func sysProject(t *testing.T, directives ...string) *testutil.Project {
	p := testutil.NewProject(t, testutil.SysCrate("seed-sys", "groth16_cuda",
		map[string]string{"cuda/groth16.c": kernelV1}, nil, directives))
	p.Env = []string{"CARGO_HOME=" + t.TempDir()}
	return p
}

func runBin(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}

// §11.5 case 1: the script declares only build.rs; the edited C source is not watched. Case 7 and 8 on
// the same build: the library in OUT_DIR is unwatched, and the lib crate bundled it into its rlib.
func TestCase1UndeclaredAnd7And8BundledInRlib(t *testing.T) {
	p := sysProject(t, "cargo:rerun-if-changed=build.rs")
	p.Cargo("build", "--release")
	p.Write("seed-sys/cuda/groth16.c", kernelV2)
	src := p.Path("seed-sys/cuda/groth16.c")
	run := runDir(t, p, "release", "seed-sys")

	r := explainPath(t, p, "seed-sys/cuda/groth16.c")
	if len(r.Steps) != 1 {
		t.Fatalf("want one step reading the source:\n%s", dumpPath(r))
	}
	v := verdict(t, r, "build-script run", true)
	wantCodes(t, v, explain.Undeclared)
	wantCase(t, v, explain.Undeclared, 1, "seed-sys/cuda/groth16.c is not among the run's rerun-if-changed paths (it declares rerun-if-changed=build.rs)",
		"It was modified at "+mtime(t, src)+", after the last run at "+mtime(t, testutil.StdoutFile(run)))
	if v.Declared || v.WillRerun || v.LastRun != testutil.StdoutFile(run) {
		t.Errorf("declared %v, will rerun %v, last run %s", v.Declared, v.WillRerun, v.LastRun)
	}
	if !hasClue(v, "archive-member") {
		t.Errorf("the run's clues lack archive-member:\n%s", dumpPath(r))
	}
	if cargoRebuilds(t, p, "seed-sys", "--release") {
		t.Fatal("cargo rebuilt seed-sys; explain said it would not")
	}

	// The library in OUT_DIR: an output of the run (case 7) that the lib unit bundled into its rlib (case 8).
	lib := filepath.Join(testutil.OutDirOf(run), "libgroth16_cuda.a")
	r = explainPath(t, p, lib)
	wantCodes(t, verdict(t, r, "build-script run", true), explain.OutDirUnwatched)
	wantCase(t, verdict(t, r, "build-script run", true), explain.OutDirUnwatched, 7, "Cargo tracks only the run folder's output file")
	lv := verdict(t, r, "lib unit", true)
	wantCodes(t, lv, explain.OutDirUnwatched, explain.BundledInRlib)
	rlibs, _ := filepath.Glob(p.Path("target/release/deps/libseed_sys-*.rlib"))
	fresh, _ := filepath.Glob(p.Path("target/release/build/seed-sys/*/out/libseed_sys-*.rlib")) // new layout
	rlibs = append(rlibs, fresh...)
	if len(rlibs) != 1 {
		t.Fatalf("rlibs %v", rlibs)
	}
	wantCase(t, lv, explain.BundledInRlib, 8, "into "+strings.TrimPrefix(rlibs[0], p.Dir+"/")+" (it holds groth16.o)")
	if len(r.Steps) != 2 || lv.WillRerun {
		t.Fatalf("want the run and the lib unit, neither rerun:\n%s", dumpPath(r))
	}
	// Premise of case 8: without the .a, relinking the binary still works, from the rlib's copy.
	if err := os.Remove(lib); err != nil {
		t.Fatal(err)
	}
	p.Edit("app/src/main.rs", "fn main()", "fn main() /* relink */")
	if cargoRebuilds(t, p, "seed-sys", "--release") {
		t.Fatal("cargo rebuilt seed-sys after the .a was removed")
	}
	if got := runBin(t, p.Path("target/release/app")); got != "1" {
		t.Fatalf("the relinked binary prints %q, want 1 (the rlib's bundled copy)", got)
	}
}

// §11.5 case 1 (modern cc-rs): only rerun-if-env-changed lines switch off the package scan.
func TestCase1EnvOnly(t *testing.T) {
	p := sysProject(t, "cargo:rerun-if-env-changed=ADD_FLAGS")
	p.Cargo("build", "--release")
	p.Write("seed-sys/cuda/groth16.c", kernelV2)
	r := explainPath(t, p, p.Path("seed-sys/cuda/groth16.c"))
	v := verdict(t, r, "build-script run", true)
	wantCodes(t, v, explain.EnvOnly)
	wantCase(t, v, explain.EnvOnly, 1, "prints only rerun-if-env-changed lines (ADD_FLAGS), which switches off Cargo's scan of the package")
	if cargoRebuilds(t, p, "seed-sys", "--release") {
		t.Fatal("cargo rebuilt seed-sys; explain said it would not")
	}
}

// §11.5 cases 2 and 3 on Debian's psm from a writable copy of the directory source: the old-style
// script is keyed on Precalculated("0.1.16"), and the lib unit's dep-info tracks no package file.
func TestCases2And3RegistryPackage(t *testing.T) {
	p := testutil.NewProject(t, nil)
	vendor := testutil.VendorCopy(t, t.TempDir(), nil)
	p.Env = []string{"CARGO_HOME=" + t.TempDir()}
	p.Write(".cargo/config.toml", testutil.DirectorySourceConfig(vendor))
	p.Write("Cargo.toml", "[package]\nname = \"regdep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\npsm = \"0.1\"\n")
	p.Write("src/main.rs", "fn main() { println!(\"{:?}\", psm::StackDirection::new()); }\n")
	p.Cargo("build", "--release")
	asm := filepath.Join(vendor, "psm-0.1.16/src/arch/x86_64.s")
	librs := filepath.Join(vendor, "psm-0.1.16/src/lib.rs")
	for _, f := range []string{asm, librs} {
		appendFile(t, f, "\n/* edited */\n")
	}

	r := explainPath(t, p, asm)
	v := verdict(t, r, "build-script run", true)
	wantCodes(t, v, explain.PrecalculatedVersion)
	wantCase(t, v, explain.PrecalculatedVersion, 2, `Precalculated("0.1.16")`, "directory-source (vendored registry) package that is its version",
		"It was modified at "+mtime(t, asm))
	if !hasClue(v, "command-line") {
		t.Errorf("psm's run does not read x86_64.s by its running: line:\n%s", dumpPath(r))
	}

	r = explainPath(t, p, librs)
	lv := verdict(t, r, "lib unit", true)
	wantCodes(t, lv, explain.RegistryUntracked)
	wantCase(t, lv, explain.RegistryUntracked, 3, "psm is a directory-source (vendored registry) package: Cargo's dep-info drops the package's own files")
	if lv.Declared || !hasClue(lv, "rustc-dep-info") {
		t.Errorf("lib unit: declared %v, clues %v", lv.Declared, lv.Reads)
	}
	if cargoRebuilds(t, p, "psm", "--release") {
		t.Fatal("cargo rebuilt psm; explain said it would not")
	}
}

// §11.5 case 4: a git dependency (file:// URL, private CARGO_HOME) declares rerun-if-changed for its C
// source, but the checkout lies under $CARGO_HOME/git, which Cargo skips.
func TestCase4CargoHomeSkip(t *testing.T) {
	home := t.TempDir()
	url := testutil.GitRepo(t, t.TempDir(), testutil.NativeCrate("gitfoo", "0.1.0", "7", []string{"cargo:rerun-if-changed=native/gitfoo.c"}, false))
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":  "[package]\nname = \"gws\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ngitfoo = { git = \"" + url + "\" }\n",
		"src/main.rs": "fn main() { println!(\"{}\", gitfoo::val()); }\n",
	})
	p.Env = []string{"CARGO_HOME=" + home, "CARGO_NET_OFFLINE=false"}
	p.Cargo("build", "--release")
	srcs, _ := filepath.Glob(filepath.Join(home, "git/checkouts/*/*/native/gitfoo.c"))
	if len(srcs) != 1 {
		t.Fatalf("checkout sources %v", srcs)
	}
	src := srcs[0]
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(src, []byte("int gitfoo_val(void) { return 8; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := explainPath(t, p, src)
	v := verdict(t, r, "build-script run", true)
	wantCodes(t, v, explain.CargoHomeSkip)
	wantCase(t, v, explain.CargoHomeSkip, 4, "rerun-if-changed="+filepath.Join(filepath.Dir(filepath.Dir(src)), "native/gitfoo.c"),
		"$CARGO_HOME/git ("+filepath.Join(home, "git")+")")
	if v.Declared || v.WillRerun {
		t.Errorf("declared %v will rerun %v", v.Declared, v.WillRerun)
	}
	if cargoRebuilds(t, p, "gitfoo", "--release") {
		t.Fatal("cargo rebuilt gitfoo; explain said it would not")
	}
	if got := runBin(t, p.Path("target/release/gws")); got != "7" {
		t.Fatalf("binary prints %q", got)
	}
}

// §11.5 case 5: the declared source changed; the build of one configuration reruns its own run folder
// while the other configuration's folder stays stale until that configuration is built.
func TestCase5OtherConfiguration(t *testing.T) {
	p := sysProject(t, "cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=cuda")
	p.Cargo("build", "--release")
	p.Cargo("build", "--release", "--features", "timing")
	p.Write("seed-sys/cuda/groth16.c", kernelV2)

	r := explainPath(t, p, "seed-sys/cuda/groth16.c")
	live, other := verdict(t, r, "build-script run", true), verdict(t, r, "build-script run", false)
	wantCodes(t, live, explain.Changed)
	wantCodes(t, other, explain.Changed, explain.OtherConfiguration)
	if !live.WillRerun || !other.WillRerun || !live.Declared || live.DeclaredBy != "rerun-if-changed=cuda" {
		t.Fatalf("both runs watch cuda and are stale:\n%s", dumpPath(r))
	}
	if !cargoRebuilds(t, p, "seed-sys", "--release", "--features", "timing") {
		t.Fatal("cargo did not rerun the timing configuration; explain said it would")
	}

	r = explainPath(t, p, "seed-sys/cuda/groth16.c")
	live, other = verdict(t, r, "build-script run", true), verdict(t, r, "build-script run", false)
	wantCodes(t, live, explain.Unchanged)
	wantCodes(t, other, explain.Changed, explain.OtherConfiguration)
	wantCase(t, other, explain.OtherConfiguration, 5, other.Unit+" belongs to another configuration (profile release, features [])",
		"the current binaries use "+live.Unit+` (profile release, features ["timing"])`, "Cargo reruns it only when that configuration is built again")
	if live.WillRerun || !other.WillRerun {
		t.Fatalf("after the timing build:\n%s", dumpPath(r))
	}
	if !cargoRebuilds(t, p, "seed-sys", "--release") {
		t.Fatal("cargo did not rerun the default configuration; explain said it would")
	}
}

// §11.5 case 6: an edit stamped with exactly the run's start time is fresh to Cargo.
func TestCase6EqualMTime(t *testing.T) {
	p := sysProject(t, "cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=cuda/groth16.c")
	p.Cargo("build", "--release")
	out := testutil.StdoutFile(runDir(t, p, "release", "seed-sys"))
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	src := p.Path("seed-sys/cuda/groth16.c")
	p.Write("seed-sys/cuda/groth16.c", kernelV2)
	if err := os.Chtimes(src, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	r := explainPath(t, p, src)
	v := verdict(t, r, "build-script run", true)
	wantCodes(t, v, explain.EqualMTime)
	wantCase(t, v, explain.EqualMTime, 6, "has exactly the mtime of the script's last run started ("+mtime(t, out), "Cargo counts equal as fresh")
	if !v.Declared || v.WillRerun {
		t.Fatalf("declared %v will rerun %v", v.Declared, v.WillRerun)
	}
	if cargoRebuilds(t, p, "seed-sys", "--release") {
		t.Fatal("cargo rebuilt seed-sys; explain said the equal mtime hides the edit")
	}
	// One nanosecond later, Cargo sees it.
	if err := os.Chtimes(src, st.ModTime(), st.ModTime().Add(time.Nanosecond)); err != nil {
		t.Fatal(err)
	}
	v = verdict(t, explainPath(t, p, src), "build-script run", true)
	wantCodes(t, v, explain.Changed)
	if !cargoRebuilds(t, p, "seed-sys", "--release") {
		t.Fatal("cargo did not rerun seed-sys; explain said it would")
	}
}

// §11.5 case 7 on a bin crate whose own build script makes the library: replacing it in OUT_DIR is
// invisible to Cargo; the bin links it at its final link.
func TestCase7OutDirUnwatched(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml": "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"build.rs": `use std::{env, path::PathBuf, process::Command};
fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    assert!(Command::new("cc").args(["-c", "-fPIC", "native/kernel.c", "-o"]).arg(out.join("kernel.o")).status().unwrap().success());
    assert!(Command::new("ar").arg("crs").arg(out.join("libkernel.a")).arg(out.join("kernel.o")).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=kernel");
    println!("cargo:rerun-if-changed=build.rs");
}
`,
		"native/kernel.c": "int kernel_val(void) { return 5; }\n",
		"src/main.rs":     "extern \"C\" { fn kernel_val() -> i32; }\nfn main() { println!(\"{}\", unsafe { kernel_val() }); }\n",
	})
	p.Env = []string{"CARGO_HOME=" + t.TempDir()}
	p.Cargo("build", "--release")
	run := runDir(t, p, "release", "demo")
	lib := filepath.Join(testutil.OutDirOf(run), "libkernel.a")
	// Replace the library by one that returns 6.
	tmp := t.TempDir()
	os.WriteFile(filepath.Join(tmp, "k.c"), []byte("int kernel_val(void) { return 6; }\n"), 0o644)
	for _, c := range [][]string{{"cc", "-c", "-fPIC", filepath.Join(tmp, "k.c"), "-o", filepath.Join(tmp, "kernel.o")}, {"rm", "-f", lib}, {"ar", "crs", lib, filepath.Join(tmp, "kernel.o")}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	r := explainPath(t, p, lib)
	rv := verdict(t, r, "build-script run", true)
	wantCodes(t, rv, explain.OutDirUnwatched)
	bv := verdict(t, r, "bin unit", true)
	wantCodes(t, bv, explain.OutDirUnwatched)
	wantCase(t, bv, explain.OutDirUnwatched, 7, bv.Unit+" links "+strings.TrimPrefix(lib, p.Dir+"/")+" from the OUT_DIR of "+rv.Unit,
		"does not relink")
	if cargoRebuilds(t, p, "demo", "--release") {
		t.Fatal("cargo rebuilt demo; explain said it would not")
	}
	if got := runBin(t, p.Path("target/release/demo")); got != "5" {
		t.Fatalf("binary prints %q, want the old 5", got)
	}
	// Relinking picks the replaced library: it is linked at the final link, not bundled.
	p.Edit("src/main.rs", "fn main()", "fn main() /* relink */")
	p.Cargo("build", "--release")
	if got := runBin(t, p.Path("target/release/demo")); got != "6" {
		t.Fatalf("relinked binary prints %q, want 6", got)
	}
}

// A path package whose script prints no rerun-if line: any newer package file reruns it.
func TestPrecalculatedPathPackageReruns(t *testing.T) {
	p := sysProject(t)
	p.Cargo("build", "--release")
	p.Write("seed-sys/cuda/groth16.c", kernelV2)
	v := verdict(t, explainPath(t, p, "seed-sys/cuda/groth16.c"), "build-script run", true)
	wantCodes(t, v, explain.PrecalculatedChanged)
	if !v.Declared || !v.WillRerun || !strings.Contains(v.DeclaredBy, "scan of the whole package") {
		t.Fatalf("declared %v by %q, will rerun %v", v.Declared, v.DeclaredBy, v.WillRerun)
	}
	if !cargoRebuilds(t, p, "seed-sys", "--release") {
		t.Fatal("cargo did not rerun seed-sys; explain said it would")
	}
	v = verdict(t, explainPath(t, p, "seed-sys/cuda/groth16.c"), "build-script run", true)
	wantCodes(t, v, explain.Unchanged)
}

// A file no step reads is said so; explain still answers.
func TestPathNoStep(t *testing.T) {
	p := sysProject(t, "cargo:rerun-if-changed=build.rs")
	p.Write("seed-sys/notes.txt", "hello\n")
	p.Cargo("build", "--release")
	r := explainPath(t, p, "seed-sys/notes.txt")
	if len(r.Steps) != 0 || !strings.Contains(r.Note, "lies in package seed-sys") {
		t.Fatalf("got:\n%s", dumpPath(r))
	}
	// A Rust source: the lib unit declares it (Cargo's dep-info) and it is fresh.
	v := verdict(t, explainPath(t, p, "seed-sys/src/lib.rs"), "lib unit", true)
	wantCodes(t, v, explain.Unchanged)
	if !v.Declared {
		t.Fatal("lib.rs is not declared by the lib unit")
	}
}

func hasClue(v explain.StepVerdict, how string) bool {
	for _, c := range v.Reads {
		if c.How == how {
			return true
		}
	}
	return false
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	time.Sleep(20 * time.Millisecond)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
