package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil"
	"github.com/stalecheck/stalecheck/internal/testutil/fixtures"
)

type whichJSON struct {
	SchemaVersion int    `json:"schema_version"`
	Command       string `json:"command"`
	Libraries     []struct {
		Name       string `json:"name"`
		Outcome    string `json:"outcome"`
		Confidence string `json:"confidence"`
		Candidates []struct {
			Path     string `json:"path"`
			Matched  bool   `json:"matched"`
			Evidence []struct {
				Kind, Feature, Presence string
			} `json:"evidence"`
		} `json:"candidates"`
	} `json:"libraries"`
}

func whichRun(t *testing.T, args ...string) whichJSON {
	t.Helper()
	out, stderr, code := run(t, append([]string{"which", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("which %v: exit %d: %s", args, code, stderr)
	}
	var doc whichJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.SchemaVersion != 1 || doc.Command != "which" || len(doc.Libraries) == 0 {
		t.Fatalf("bad envelope: %s", out)
	}
	return doc
}

// matchedPaths returns the candidates marked matched of the first library.
func matchedPaths(doc whichJSON) []string {
	var out []string
	for _, c := range doc.Libraries[0].Candidates {
		if c.Matched {
			out = append(out, c.Path)
		}
	}
	return out
}

// S15: the link-order fixtures; run_*.txt is the truth (app_a_first prints v1, app_b_first v2).
func TestWhichS15LinkOrder(t *testing.T) {
	fixtures := fixtures.CUDA(t)
	a := filepath.Join(fixtures, "linkorder/a/libgroth16_cuda.a")
	b := filepath.Join(fixtures, "linkorder/b/libgroth16_cuda.a")
	for app, want := range map[string]string{"app_a_first": a, "app_b_first": b} {
		truth, err := os.ReadFile(filepath.Join(fixtures, "linkorder", "run_"+strings.TrimPrefix(app, "app_")+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		version := map[string]string{a: "v1", b: "v2"}[want]
		if !strings.Contains(string(truth), "groth16_run "+version) {
			t.Fatalf("fixture truth for %s does not say %s:\n%s", app, version, truth)
		}
		doc := whichRun(t, filepath.Join(fixtures, "linkorder", app), "--candidate", a, "--candidate", b)
		l := doc.Libraries[0]
		if l.Outcome != "matched" || l.Confidence != "certain" || strings.Join(matchedPaths(doc), ",") != want {
			t.Fatalf("%s: %+v", app, l)
		}
		var fatbin, timing bool
		for _, c := range l.Candidates {
			for _, e := range c.Evidence {
				if e.Kind == "fatbin" && strings.Contains(e.Feature, "sm_90") && (e.Presence == "present") == c.Matched {
					fatbin = true
				}
				if strings.Contains(e.Feature, "CUZK_TIMING") {
					timing = e.Presence == "present"
				}
			}
		}
		if !fatbin {
			t.Errorf("%s: no sm_90 fatbin entry decides", app)
		}
		if timing != (version == "v2") {
			t.Errorf("%s: CUZK_TIMING present=%v", app, timing)
		}
	}
	// The text form names the copy inside.
	out, _, code := run(t, "which", filepath.Join(fixtures, "linkorder/app_b_first"), "--candidate", a, "--candidate", b)
	if code != 0 || !strings.Contains(out, "matched (certain): inside is "+b) || !strings.Contains(out, `absent  string "CUZK_TIMING`) == false {
		t.Fatalf("text which:\n%s", out)
	}
}

func TestVerifyContainsV1V2(t *testing.T) {
	fixtures := fixtures.CUDA(t)
	for app, want := range map[string]int{"v1/app": 1, "v2/app": 0} {
		_, _, code := run(t, "verify", filepath.Join(fixtures, app), "--contains", "CUZK_TIMING")
		if code != want {
			t.Errorf("verify %s --contains CUZK_TIMING: exit %d, want %d", app, code, want)
		}
	}
	// .comment and debug info are not searched: "GCC:" lives only in .comment.
	if _, _, code := run(t, "verify", filepath.Join(fixtures, "v2/app"), "--contains", "GCC: ("); code != 1 {
		t.Errorf("--contains found a .comment string: exit %d", code)
	}
	if _, _, code := run(t, "verify", filepath.Join(fixtures, "v2/app"), "--symbol", "groth16_run"); code != 0 {
		t.Errorf("--symbol groth16_run: exit %d", code)
	}
	if _, _, code := run(t, "verify", filepath.Join(fixtures, "v2/app"), "--symbol", "no_such_symbol"); code != 1 {
		t.Errorf("--symbol no_such_symbol: exit %d", code)
	}
	if _, _, code := run(t, "verify", filepath.Join(fixtures, "v2/app")); code != 2 {
		t.Errorf("verify without a check: exit %d", code)
	}
}

// A stripped binary: --symbol cannot tell (exit 2), yet strings and fatbin entries still decide which copy.
func TestStrippedBinary(t *testing.T) {
	fixtures := fixtures.CUDA(t)
	dir := t.TempDir()
	stripped := filepath.Join(dir, "app")
	if out, err := exec.Command("strip", "-o", stripped, filepath.Join(fixtures, "linkorder/app_b_first")).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	if _, stderr, code := run(t, "verify", stripped, "--symbol", "groth16_run"); code != 2 {
		t.Errorf("--symbol on a stripped binary: exit %d %s", code, stderr)
	}
	a := filepath.Join(fixtures, "linkorder/a/libgroth16_cuda.a")
	b := filepath.Join(fixtures, "linkorder/b/libgroth16_cuda.a")
	doc := whichRun(t, stripped, "--candidate", a, "--candidate", b)
	if got := matchedPaths(doc); doc.Libraries[0].Outcome != "matched" || len(got) != 1 || got[0] != b {
		t.Fatalf("stripped: %+v", doc.Libraries[0])
	}
	if _, _, code := run(t, "verify", stripped, "--matches", b); code != 0 {
		t.Errorf("verify --matches b on the stripped b binary: exit %d", code)
	}
	if _, _, code := run(t, "verify", stripped, "--matches", a); code != 1 {
		t.Errorf("verify --matches a on the stripped b binary: exit %d", code)
	}
}

// Relocatable device code (-rdc): the archive's __nv_relfatbin entries are found in the linked app.
func TestWhichRDC(t *testing.T) {
	fixtures := fixtures.CUDA(t)
	rdc := filepath.Join(fixtures, "rdc/libgroth16_cuda.a")
	other := filepath.Join(fixtures, "linkorder/a/libgroth16_cuda.a")
	doc := whichRun(t, filepath.Join(fixtures, "rdc/app"), "--candidate", rdc, "--candidate", other)
	if got := matchedPaths(doc); len(got) != 1 || got[0] != rdc {
		t.Fatalf("rdc: %+v", doc.Libraries[0])
	}
	var rel bool
	for _, e := range doc.Libraries[0].Candidates[0].Evidence {
		if e.Kind == "fatbin" && strings.Contains(e.Feature, "__nv_relfatbin") && e.Presence == "present" {
			rel = true
		}
	}
	if !rel {
		t.Errorf("no __nv_relfatbin entry found present: %+v", doc.Libraries[0].Candidates[0])
	}
}

// A plain gcc link with two -L folders holding libk.a: the first wins, and which proves it.
func TestWhichPlainGccLinkOrder(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"old", "new"} {
		os.MkdirAll(filepath.Join(dir, v), 0o755)
		src := filepath.Join(dir, v, "k.c")
		os.WriteFile(src, []byte("const char *k_version(void) { return \"K_VERSION_"+strings.ToUpper(v)+"\"; }\n"), 0o644)
		mustRun(t, dir, "cc", "-c", "-O2", src, "-o", filepath.Join(dir, v, "k.o"))
		mustRun(t, dir, "ar", "rcs", filepath.Join(dir, v, "libk.a"), filepath.Join(dir, v, "k.o"))
	}
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("#include <stdio.h>\nconst char *k_version(void);\nint main(void) { puts(k_version()); return 0; }\n"), 0o644)
	mustRun(t, dir, "cc", "main.c", "-L", "old", "-L", "new", "-lk", "-o", "app")
	doc := whichRun(t, filepath.Join(dir, "app"), "--candidate", filepath.Join(dir, "old/libk.a"), "--candidate", filepath.Join(dir, "new/libk.a"))
	if got := matchedPaths(doc); len(got) != 1 || got[0] != filepath.Join(dir, "old/libk.a") {
		t.Fatalf("gcc -L old -L new: %+v", doc.Libraries[0])
	}
}

func mustRun(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// A Rust binary linking the real nvcc fixture archive (with no-op stand-ins for the CUDA runtime calls, so
// it links without CUDA): the fatbin carried into the Rust binary is found, and which finds the copy in
// OUT_DIR on its own.
func TestWhichRustBinaryLinksFixtureArchive(t *testing.T) {
	fixtures := fixtures.CUDA(t)
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":  "[package]\nname = \"rsgpu\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/main.rs": "extern \"C\" { fn groth16_run(n: i32) -> i32; }\nfn main() { if std::env::args().count() > 5 { unsafe { groth16_run(1); } } }\n",
		"stubs.c": "#include <stddef.h>\nstatic void *h;\nvoid **__cudaRegisterFatBinary(void *f) { (void)f; return &h; }\nvoid __cudaRegisterFatBinaryEnd(void **h) { (void)h; }\n" +
			"void __cudaUnregisterFatBinary(void **h) { (void)h; }\nvoid __cudaRegisterFunction(void) {}\nint __cudaPushCallConfiguration(void) { return 0; }\n" +
			"int __cudaPopCallConfiguration(void) { return 0; }\nint __cudaLaunchKernel(void) { return 0; }\nint __cudaGetKernel(void) { return 0; }\n" +
			"int cudaMalloc(void **p, size_t n) { (void)p; (void)n; return 1; }\nint cudaFree(void *p) { (void)p; return 0; }\n" +
			"int cudaMemcpy(void) { return 0; }\nint cudaMemset(void) { return 0; }\n",
		"build.rs": `use std::{env, path::PathBuf, process::Command};
fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    std::fs::copy("` + filepath.Join(fixtures, "linkorder/b/libgroth16_cuda.a") + `", out.join("libgroth16_cuda.a")).unwrap();
    assert!(Command::new("cc").args(["-c", "-O2", "-fPIC", "stubs.c", "-o"]).arg(out.join("stubs.o")).status().unwrap().success());
    assert!(Command::new("ar").arg("crs").arg(out.join("libcudastub.a")).arg(out.join("stubs.o")).status().unwrap().success());
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=groth16_cuda");
    println!("cargo:rustc-link-lib=static=cudastub");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=stubs.c");
}
`,
	})
	p.Cargo("build", "--release")
	bin := p.Path("target/release/rsgpu")
	a := filepath.Join(fixtures, "linkorder/a/libgroth16_cuda.a")
	b := filepath.Join(fixtures, "linkorder/b/libgroth16_cuda.a")
	doc := whichRun(t, bin, "--candidate", a, "--candidate", b)
	if got := matchedPaths(doc); len(got) != 1 || got[0] != b {
		t.Fatalf("Rust binary: %+v", doc.Libraries[0])
	}
	// Found automatically in the target folder: one copy, matched by its content.
	doc = whichRun(t, bin, "--lib", "groth16_cuda")
	if l := doc.Libraries[0]; l.Outcome != "matched" || len(l.Candidates) != 1 || !l.Candidates[0].Matched {
		t.Fatalf("automatic candidates: %+v", l)
	}
	if _, _, code := run(t, "verify", bin, "--contains", "CUZK_TIMING"); code != 0 {
		t.Errorf("the Rust binary should carry v2's CUZK_TIMING")
	}
}

// S16: a static library bundled into an rlib. Replacing the .a in OUT_DIR by hand and relinking changes
// nothing: the rlib holds the old members, and which points at the rlib's copy.
func TestWhichS16BundledIntoRlib(t *testing.T) {
	files := testutil.SysCrate("bund-sys", "bund", map[string]string{"native/bund.c": "const char *bund(void) { return \"BUND_ORIGINAL_V1\"; }\nint native_run(void) { return bund()[0]; }\n"},
		nil, []string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=native"})
	p := testutil.NewProject(t, files)
	p.Cargo("build", "--release")
	lib := oneOf(t, p.OutFiles("release", "bund-sys", "libbund.a"))
	outDir := filepath.Dir(lib)
	// Replace the archive by hand with a different build.
	src := filepath.Join(t.TempDir(), "bund.c")
	os.WriteFile(src, []byte("const char *bund(void) { return \"BUND_REPLACED_V2\"; }\nint native_run(void) { return bund()[0] + 1; }\n"), 0o644)
	mustRun(t, outDir, "cc", "-c", "-O2", "-fPIC", src, "-o", "bund.o")
	os.Remove(lib)
	mustRun(t, outDir, "ar", "crs", "libbund.a", "bund.o")
	p.Write("app/src/main.rs", "fn main() { println!(\"{}\", bund_sys::run() + 0); }\n")
	p.Cargo("build", "--release")
	bin := p.Path("target/release/app")
	if _, _, code := run(t, "verify", bin, "--contains", "BUND_REPLACED_V2"); code != 1 {
		t.Fatal("the premise fails: the relinked binary holds the replaced archive")
	}
	doc := whichRun(t, bin, "--lib", "bund")
	got := matchedPaths(doc)
	if doc.Libraries[0].Outcome != "matched" || len(got) != 1 || !strings.HasSuffix(got[0], ".rlib") {
		t.Fatalf("want the rlib's copy, got %+v", doc.Libraries[0])
	}
}

// Two builds of one library that differ only in a string literal (same code): with one candidate,
// which must not call the wrong copy "matched", and verify --matches must not hold; bad arguments are
// errors (exit 2), never a hang.
func TestWhichSingleCandidateAndBadArguments(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"V1", "V2"} {
		os.MkdirAll(filepath.Join(dir, v), 0o755)
		src := filepath.Join(dir, v, "kern.c")
		os.WriteFile(src, []byte("const char *kern_tag(void) { return \"KERN_TAG_"+v+"\"; }\n"), 0o644)
		mustRun(t, dir, "cc", "-c", "-O2", src, "-o", filepath.Join(dir, v, "kern.o"))
		mustRun(t, dir, "ar", "rcs", filepath.Join(dir, v, "libkern.a"), filepath.Join(dir, v, "kern.o"))
	}
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("#include <stdio.h>\nconst char *kern_tag(void);\nint main(void) { puts(kern_tag()); return 0; }\n"), 0o644)
	mustRun(t, dir, "cc", "main.c", "V2/libkern.a", "-o", "app")
	app, v1, v2 := filepath.Join(dir, "app"), filepath.Join(dir, "V1/libkern.a"), filepath.Join(dir, "V2/libkern.a")

	if doc := whichRun(t, app, "--candidate", v1); doc.Libraries[0].Outcome == "matched" {
		t.Fatalf("V1 alone called matched for a V2 binary: %+v", doc.Libraries[0])
	}
	if doc := whichRun(t, app, "--candidate", v2); doc.Libraries[0].Outcome != "matched" {
		t.Fatalf("V2 alone: %+v", doc.Libraries[0])
	}
	if _, _, code := run(t, "verify", app, "--matches", v1); code != 1 {
		t.Errorf("verify --matches V1 on a V2 binary: exit %d, want 1", code)
	}
	if _, _, code := run(t, "verify", app, "--matches", v2); code != 0 {
		t.Errorf("verify --matches V2: exit %d, want 0", code)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"verify", app, "--contains", ""},
		{"verify", app, "--symbol", ""},
		{"verify", app, "--matches", "/etc/passwd"},
		{"verify", fifo, "--contains", "x"},
		{"verify", app, "--matches", fifo},
		{"which", fifo, "--candidate", v1},
		{"which", app, "--candidate", fifo, "--candidate", v1},
		{"which", dir, "--candidate", v1},
		{"which", filepath.Join(dir, "missing"), "--candidate", v1},
	} {
		done := make(chan int, 1)
		go func() { _, _, code := run(t, args...); done <- code }()
		select {
		case code := <-done:
			if code != 2 {
				t.Errorf("%v: exit %d, want 2", args, code)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%v: hangs", args)
		}
	}
}
