package explain_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/explain"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

func role(t *testing.T, r *explain.PackageReport, target string) explain.Role {
	t.Helper()
	for _, x := range r.Roles {
		if x.Target == target {
			return x
		}
	}
	t.Fatalf("no role %s in %+v", target, r.Roles)
	return explain.Role{}
}

func differ(t *testing.T, ro explain.Role, name string) []string {
	t.Helper()
	for _, f := range ro.Differ {
		if f.Name == name {
			return f.Values
		}
	}
	t.Fatalf("%s: %q does not differ; differ %+v", ro.Target, name, ro.Differ)
	return nil
}

func same(ro explain.Role, name string) bool {
	for _, f := range ro.Same {
		if f.Name == name {
			return true
		}
	}
	return false
}

// S02 plus a debug build: three lib units of seed-sys; the fingerprints say what differs (profile,
// features, the build script they depend on) and which binary uses each.
func TestPackageConfigurations(t *testing.T) {
	p := sysProject(t, "cargo:rerun-if-changed=build.rs")
	p.Cargo("build", "--release")
	p.Cargo("build", "--release", "--features", "timing")
	p.Cargo("build")
	g := readGraph(t, p)
	r, err := explain.Package(g, "seed-sys", explain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.Versions, ",") != "0.1.0" || len(r.Sources) != 1 || r.Sources[0].Kind != "path" || r.Sources[0].Root != p.Path("seed-sys") {
		t.Fatalf("versions %v sources %+v", r.Versions, r.Sources)
	}
	if len(r.Roles) != 3 || r.Roles[0].Target != "lib-seed_sys" || r.Roles[1].Target != "run-build-script-build-script-build" || r.Roles[2].Target != "build-script-build-script-build" {
		t.Fatalf("roles %+v", r.Roles)
	}
	lib := role(t, r, "lib-seed_sys")
	if len(lib.Variants) != 3 {
		t.Fatalf("lib variants %+v", lib.Variants)
	}
	// Sorted by profile folder, live first: debug, release (timing, live), release (default).
	if got := strings.Join(differ(t, lib, "profile folder"), ","); got != "debug,release,release" {
		t.Errorf("profile folders %s", got)
	}
	if got := strings.Join(differ(t, lib, "features"), ","); got != `[],["timing"],[]` {
		t.Errorf("features %s", got)
	}
	differ(t, lib, "profile settings")
	differ(t, lib, "dep build_script_build")
	for _, f := range []string{"rustflags", "compile kind", "rustc", "declared features"} {
		if !same(lib, f) {
			t.Errorf("lib units: %s should be the same", f)
		}
	}
	uses := func(v explain.Variant) string {
		var s []string
		for _, u := range v.UsedBy {
			s = append(s, strings.TrimPrefix(u.Path, p.Dir+"/")+"@"+u.Profile)
		}
		return strings.Join(s, " ")
	}
	if got := uses(lib.Variants[0]); got != "target/debug/app@debug target/debug/libseed_sys.rlib@debug" {
		t.Errorf("debug variant used by %q", got)
	}
	if got := uses(lib.Variants[1]); got != "target/release/app@release target/release/libseed_sys.rlib@release" {
		t.Errorf("release timing variant used by %q", got)
	}
	if got := uses(lib.Variants[2]); got != "" {
		t.Errorf("release default variant used by %q, want none", got)
	}
	// The run units: the same difference, read through their compile units; each has its own folder.
	run := role(t, r, "run-build-script-build-script-build")
	if got := strings.Join(differ(t, run, "features"), ","); got != `[],["timing"],[]` {
		t.Errorf("run features %s", got)
	}
	for _, v := range run.Variants {
		if !strings.Contains(v.Dir, "/build/seed-sys-") && !strings.Contains(v.Dir, "/build/seed-sys/") || v.Bytes == 0 {
			t.Errorf("run variant %s: dir %s bytes %d", v.Unit, v.Dir, v.Bytes)
		}
	}
	var b bytes.Buffer
	if err := explain.WritePackageText(&b, g, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"seed-sys 0.1.0: path package at " + p.Path("seed-sys"), "\nlib (lib-seed_sys): 3 unit(s)\n",
		"\nbuild-script run (run-build-script-build-script-build): 3 unit(s)\n", "\nbuild-script compile (build-script-build-script-build): ",
		`features           A [] | B ["timing"] | C []` + "\n                       (another set of Cargo features was enabled for the package",
		"    profile settings   A hash ", "\n                       (a [profile] setting differs: opt-level, debug, lto, ",
		"used by no current binary", "used by target/release/app (bin, release)", "; rustc hash "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	// Hashes are named as hashes: no bare u64 in the text.
	if m := regexp.MustCompile(`(profile settings|rustc|target settings|source path|config) [0-9]{6,}`).FindString(b.String()); m != "" {
		t.Errorf("text prints a bare hash %q:\n%s", m, b.String())
	}
	for _, f := range lib.Differ {
		if f.Meaning == "" {
			t.Errorf("differing field %q has no meaning", f.Name)
		}
	}

	// One profile's only unit: no differences, its fields listed.
	if _, err := explain.Package(g, "app", explain.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := explain.Package(g, "nosuch", explain.Options{}); err == nil || !strings.Contains(err.Error(), "no unit of package \"nosuch\"") {
		t.Fatalf("unknown package: %v", err)
	}
}

// Two versions of one package: 0.1.0 from a directory source and 0.2.0 as a renamed path dependency.
// pkg@version picks one; cargo metadata (AskCargo) agrees on where each comes from.
func TestPackageTwoVersions(t *testing.T) {
	p := testutil.NewProject(t, nil)
	vendor := testutil.VendorCopy(t, t.TempDir(), map[string]map[string]string{
		"twover-0.1.0": {
			"Cargo.toml":           "[package]\nname = \"twover\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
			"src/lib.rs":           "pub fn v() -> u32 { 1 }\n",
			".cargo-checksum.json": "{\"package\":null,\"files\":{}}\n",
		},
	})
	p.Env = []string{"CARGO_HOME=" + t.TempDir()}
	p.Write(".cargo/config.toml", testutil.DirectorySourceConfig(vendor))
	p.Write("Cargo.toml", "[package]\nname = \"two\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ntwover = \"0.1\"\n"+
		"twover2 = { package = \"twover\", path = \"twover2\" }\n")
	p.Write("twover2/Cargo.toml", "[package]\nname = \"twover\"\nversion = \"0.2.0\"\nedition = \"2021\"\n")
	p.Write("twover2/src/lib.rs", "pub fn v() -> u32 { 2 }\n")
	p.Write("src/main.rs", "fn main() { println!(\"{} {}\", twover::v(), twover2::v()); }\n")
	p.Cargo("build")
	g := readGraph(t, p)

	all, err := explain.Package(g, "twover", explain.Options{AskCargo: true, Env: p.Env})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(all.Versions, ",") != "0.1.0,0.2.0" || len(all.Sources) != 2 {
		t.Fatalf("versions %v sources %+v", all.Versions, all.Sources)
	}
	kinds := map[string]string{}
	for _, s := range all.Sources {
		kinds[s.Version] = s.Kind + " " + s.Root
	}
	if kinds["0.1.0"] != "directory "+vendor+"/twover-0.1.0" || kinds["0.2.0"] != "path "+p.Path("twover2") {
		t.Fatalf("sources %v", kinds)
	}
	if all.MetadataErr != "" || len(all.Metadata) != 2 {
		t.Fatalf("cargo metadata: %q %+v", all.MetadataErr, all.Metadata)
	}
	for _, m := range all.Metadata {
		switch m.Version {
		case "0.1.0":
			if m.Source == nil || *m.Source != "registry+https://github.com/rust-lang/crates.io-index" || m.ManifestPath != vendor+"/twover-0.1.0/Cargo.toml" {
				t.Errorf("metadata 0.1.0: %s", m.Where())
			}
		case "0.2.0":
			if m.Source != nil || m.ManifestPath != p.Path("twover2/Cargo.toml") {
				t.Errorf("metadata 0.2.0: %s", m.Where())
			}
		}
	}
	lib := role(t, all, "lib-twover")
	if len(lib.Variants) != 2 {
		t.Fatalf("variants %+v", lib.Variants)
	}
	differ(t, lib, "source path")

	one, err := explain.Package(g, "twover@0.2.0", explain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Sources) != 1 || one.Sources[0].Kind != "path" || len(one.Roles) != 1 || len(one.Roles[0].Variants) != 1 || one.Roles[0].Variants[0].Version != "0.2.0" {
		t.Fatalf("twover@0.2.0: %+v", one)
	}
	if _, err := explain.Package(g, "twover@9.9.9", explain.Options{}); err == nil || !strings.Contains(err.Error(), "versions on disk: 0.1.0, 0.2.0") {
		t.Fatalf("twover@9.9.9: %v", err)
	}
}
