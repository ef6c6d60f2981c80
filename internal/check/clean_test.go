package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A real crate from Debian's packages whose build script assembles with cc (psm 0.1.16 through cc 1.0.73,
// taken from a directory source): a clean build has no error findings, and the registry package's
// sources are found through the `running:` lines cc-rs logs.
func TestCleanBuildDebianPsm(t *testing.T) {
	const registry = "/usr/share/cargo/registry"
	if _, err := os.Stat(filepath.Join(registry, "psm-0.1.16")); err != nil {
		t.Fatalf("Debian's librust-psm-dev is required (CI installs it: apt-get install librust-psm-dev): %v", err)
	}
	p := testutil.NewProject(t, map[string]string{
		".cargo/config.toml": "[source.crates-io]\nreplace-with = \"debian\"\n[source.debian]\ndirectory = \"" + registry + "\"\n[net]\noffline = true\n",
		"Cargo.toml":         "[package]\nname = \"regdep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\npsm = \"0.1\"\n",
		"src/main.rs":        "fn main() { println!(\"{:?}\", psm::StackDirection::new()); }\n",
	})
	p.Cargo("build", "--release")
	fs, g := p.Check()
	noErrors(t, fs)
	none(t, fs, "rerun-scan-disabled") // a registry package: Cargo treats its sources as immutable
	var psm bool
	for _, s := range g.Steps {
		if s.Package != "psm" || !s.Live() || s.Script().RunDir == "" {
			continue
		}
		psm = true
		for _, in := range s.Inputs {
			if strings.HasSuffix(in.File.Path, "src/arch/x86_64.s") && in.Has("command-line") {
				return
			}
		}
		t.Fatalf("psm's run has no command-line input for src/arch/x86_64.s; inputs: %+v", s.Inputs)
	}
	if !psm {
		t.Fatal("no live psm build-script run in the graph")
	}
}

// The bundled example, built cleanly without and with its feature: no error findings, and the duplicate
// is reported as a warning.
func TestCleanBuildExample(t *testing.T) {
	p := testutil.Example(t, "seed-two-copies")
	p.Cargo("build", "--release")
	fs, _ := p.Check()
	noErrors(t, fs)
	none(t, fs, "duplicate-native-artifact")
	p.Cargo("build", "--release", "--features", "timing")
	fs, _ = p.Check()
	noErrors(t, fs)
	if f := one(t, fs, "duplicate-native-artifact"); f.Severity != check.Warning {
		t.Fatalf("duplicate-native-artifact severity %v", f.Severity)
	}
}
