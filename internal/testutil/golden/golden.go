// Package golden compares a test's output with a file under testdata/golden, or rewrites the file when
// the package's tests run with -update (each test package declares that flag and passes its value).
package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check compares got with testdata/golden/NAME; with update it writes got there instead. how says how
// to rewrite the files ("go test ./internal/check -update").
func Check(t testing.TB, name string, got []byte, update bool, how string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if update {
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
