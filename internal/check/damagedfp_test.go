package check_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A live build-script run's fingerprint JSON truncated: the record is unreadable (a warning naming
// it), and the declarations the output still lists are not judged against an unknown package root, so
// no file is called missing (a newcomer's attack found false pending-rebuild errors and run refusing).
func TestDamagedRunFingerprintNoFalseErrors(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	p.Cargo("build")
	_, g := p.Check()
	var jf string
	for _, s := range g.Steps {
		if s.Kind == graph.ScriptRun && s.Live() {
			jf = filepath.Join(unit.Of(s).FingerprintDir, unit.Of(s).Target+".json")
		}
	}
	if err := os.WriteFile(jf, []byte(`{"rustc":`), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, _ := p.Check()
	noErrors(t, fs)
	found := false
	for _, f := range fs {
		found = found || f.Rule == "unreadable-record" && strings.Contains(f.Message, filepath.Base(jf))
	}
	if !found {
		t.Errorf("no unreadable-record naming %s", jf)
	}
}
