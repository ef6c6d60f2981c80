package cargo

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The values below are the ones docs/cargo-target-dir.md §1.3 and §0 record for cargo 1.95.
func TestHashHexIsLittleEndian(t *testing.T) {
	if got := HashHex(10684275842462820881); got != "11aa4860452c4694" {
		t.Fatalf("HashHex = %s, want 11aa4860452c4694", got)
	}
}

func TestParseFingerprintRunUnit(t *testing.T) {
	fp, err := ParseFingerprint([]byte(`{"rustc":7458672600737419911,"features":"","declared_features":"","target":0,"profile":0,"path":0,
 "deps":[[2085560942386642520,"build_script_build",false,1496210744073729232]],
 "local":[{"RerunIfChanged":{"output":"release/build/demo-6c05cff324538f4e/output","paths":["build.rs"]}},
          {"RerunIfEnvChanged":{"var":"NSYS_OPT","val":null}},{"RerunIfEnvChanged":{"var":"CC","val":"gcc"}}],
 "rustflags":["-C","target-cpu=native"],"config":0,"compile_kind":13270707523875659407}`))
	if err != nil {
		t.Fatal(err)
	}
	if fp.Rustc != 7458672600737419911 || fp.CompileKind != 13270707523875659407 {
		t.Fatalf("u64 fields lost precision: %+v", fp)
	}
	if d := fp.Deps[0]; d.Name != "build_script_build" || d.Hash != 1496210744073729232 || d.PkgID != 2085560942386642520 {
		t.Fatalf("deps: %+v", d)
	}
	if r := fp.Local[0].RerunIfChanged; r == nil || r.Output != "release/build/demo-6c05cff324538f4e/output" || r.Paths[0] != "build.rs" {
		t.Fatalf("RerunIfChanged: %+v", fp.Local[0])
	}
	if e := fp.Local[1].RerunIfEnvChanged; e == nil || e.Var != "NSYS_OPT" || e.Val != nil {
		t.Fatalf("RerunIfEnvChanged unset: %+v", fp.Local[1])
	}
	if e := fp.Local[2].RerunIfEnvChanged; e == nil || e.Val == nil || *e.Val != "gcc" {
		t.Fatalf("RerunIfEnvChanged set: %+v", fp.Local[2])
	}
	if d := cmp.Diff([]string{"-C", "target-cpu=native"}, fp.Rustflags); d != "" {
		t.Fatal(d)
	}
}

func TestParseFingerprintPrecalculatedAndFeatures(t *testing.T) {
	fp, err := ParseFingerprint([]byte(`{"rustc":1,"features":"[\"a\", \"timing\"]","deps":[],"local":[{"Precalculated":"1796022068.762452620s (src/lib.rs)"}],"rustflags":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "timing"}, FeatureList(fp.Features)); d != "" {
		t.Fatal(d)
	}
	ns, file, ok := PrecalculatedTime(*fp.Local[0].Precalculated)
	if !ok || ns != 1796022068762452620 || file != "src/lib.rs" {
		t.Fatalf("PrecalculatedTime = %d %q %v", ns, file, ok)
	}
	if _, _, ok := PrecalculatedTime("0.1.16"); ok {
		t.Fatal("a version string is not a time")
	}
}

func TestParseFingerprintRejectsOddJSON(t *testing.T) {
	for _, in := range []string{``, `[]`, `{}`, `{"rustc":"x"}`, `{"rustc":1,"deps":[[1,"a",false]]}`, `{"rustc":1,"deps":[],"local":[{"A":1,"B":2}]}`, `{"rustc":-1}`} {
		if _, err := ParseFingerprint([]byte(in)); err == nil {
			t.Errorf("%q: want an error", in)
		}
	}
}

func encodeDepInfo(files []DepInfoEntry, env map[string]string) []byte {
	var b []byte
	u32 := func(v uint32) { b = binary.LittleEndian.AppendUint32(b, v) }
	str := func(s string) { u32(uint32(len(s))); b = append(b, s...) }
	u32(1)
	b = append(b, 0xff, 1)
	u32(uint32(len(files)))
	for _, f := range files {
		typ := byte(1)
		if f.PackageRelative {
			typ = 0
		}
		b = append(b, typ)
		str(f.Path)
		b = append(b, 0)
	}
	u32(uint32(len(env)))
	for k, v := range env {
		str(k)
		b = append(b, 1)
		str(v)
	}
	return b
}

func TestParseDepInfo(t *testing.T) {
	// The bytes of a real dep-bin-gpu-prover written by cargo 1.95.
	real := []byte{1, 0, 0, 0, 0xff, 1, 1, 0, 0, 0, 0, 0x0b, 0, 0, 0, 's', 'r', 'c', '/', 'm', 'a', 'i', 'n', '.', 'r', 's', 0, 0, 0, 0, 0}
	di, err := ParseDepInfo(real)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]DepInfoEntry{{PackageRelative: true, Path: "src/main.rs"}}, di.Files); d != "" {
		t.Fatal(d)
	}
	files := []DepInfoEntry{{true, "src/main.rs"}, {false, "release/build/gen-e8dc3f89ccbfef64/out/gen.rs"}}
	di, err = ParseDepInfo(encodeDepInfo(files, map[string]string{"CARGO_PKG_NAME": "gen"}))
	if err != nil || len(di.Files) != 2 || *di.Env["CARGO_PKG_NAME"] != "gen" {
		t.Fatalf("%v %+v", err, di)
	}
	for n := 0; n < len(real); n++ {
		if _, err := ParseDepInfo(real[:n]); err == nil && n != 0 {
			t.Errorf("truncated to %d bytes: want an error", n)
		} else if err != nil && !strings.Contains(err.Error(), "offset") {
			t.Errorf("error without offset: %v", err)
		}
	}
}

func TestParseBuildOutputRewritesMovedOutDir(t *testing.T) {
	out := `TARGET = Some("x86_64-unknown-linux-gnu")
running: ZERO_AR_DATE="1" "ar" "cq" "/old/target/release/build/psm-3be5/out/libpsm_s.a" "/old/target/release/build/psm-3be5/out/src/arch/x86_64.o"
running: "cc" "-O3" "-ffunction-sections" "-fPIC" "-m64" "-I" "src/arch" "-o" "/old/target/release/build/psm-3be5/out/src/arch/x86_64.o" "-c" "src/arch/x86_64.s"
exit status: 0
cargo:rustc-cfg=asm
cargo::rustc-link-lib=static:+whole-archive=psm_s
cargo:rustc-link-search=native=/old/target/release/build/psm-3be5/out
cargo:rerun-if-env-changed=CC
cargo:rerun-if-changed=src/arch
`
	bo := ParseBuildOutput([]byte(out), "/old/target/release/build/psm-3be5/out", "/new/target/release/build/psm-3be5/out")
	if d := cmp.Diff([]LinkSearch{{"native", "/new/target/release/build/psm-3be5/out"}}, bo.LinkSearch); d != "" {
		t.Fatal(d)
	}
	if d := cmp.Diff([]LinkLib{{"static", "+whole-archive", "psm_s"}}, bo.LinkLibs); d != "" {
		t.Fatal(d)
	}
	if len(bo.Commands) != 2 {
		t.Fatalf("commands: %q", bo.Commands)
	}
	if d := cmp.Diff([]string{"src/arch/x86_64.s"}, CommandSources(bo.Commands[1])); d != "" {
		t.Fatalf("sources of the cc line: %s", d)
	}
	if got := CommandSources(bo.Commands[0]); len(got) != 0 {
		t.Fatalf("ar line has no sources, got %q", got)
	}
	if d := cmp.Diff([]string{"CC"}, bo.RerunIfEnvChanged); d != "" {
		t.Fatal(d)
	}
}

func TestSplitUnitName(t *testing.T) {
	for in, want := range map[string][2]string{
		"prover-sys-901e648c4e8c9ffb": {"prover-sys", "901e648c4e8c9ffb"},
		"a-0123456789abcdef":          {"a", "0123456789abcdef"},
		"noHash":                      {},
		"x-0123456789ABCDEF":          {},
		"x-0123":                      {},
	} {
		p, h, ok := SplitUnitName(in)
		if ok != (want[0] != "") || p != want[0] || h != want[1] {
			t.Errorf("%s: got %q %q %v", in, p, h, ok)
		}
	}
}
