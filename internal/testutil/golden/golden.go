// Package golden compares a test's output with a file under testdata/golden, or rewrites the file when
// the package's tests run with -update (the flag this package registers in every test binary that
// imports it).
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// Check compares got with testdata/golden/NAME; with -update it writes got there instead.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	how := "go test -run '" + t.Name() + "' -update"
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (%s writes it)", err, how)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs from the golden file (-want +got; %s rewrites it):\n%s", name, how, d)
	}
}
