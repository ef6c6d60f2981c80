package check_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/testutil"
)

// rerun-if-changed=native (a folder): touching a file under it makes Cargo rerun the script, but with
// the same content the binary is not stale, so neither the folder's finding nor the file's is an error.
// An edit is.
func TestDeclaredFolderTouchIsNotStale(t *testing.T) {
	files := testutil.CCSys(t)
	files["fastmath-sys/build.rs"] = strings.Replace(files["fastmath-sys/build.rs"], "rerun-if-changed=native/x.c", "rerun-if-changed=native", 1)
	p := testutil.NewProject(t, files)
	p.StateDir = t.TempDir()
	p.Cargo("build")
	p.Check()
	now := time.Now()
	if err := os.Chtimes(p.Path("fastmath-sys/native/x.c"), now, now); err != nil {
		t.Fatal(err)
	}
	fs, _ := p.Check()
	noErrors(t, fs)
	if len(testutil.Rule(fs, "pending-rebuild")) == 0 {
		t.Fatalf("no pending-rebuild for the touched file: Cargo reruns the script")
	}
	p.Edit("fastmath-sys/native/x.c", "return v * X_SCALE;", "return v * X_SCALE + 1;")
	fs, _ = p.Check()
	if !hasError(fs, "pending-rebuild") {
		t.Errorf("an edit under the declared folder is not an error: %v", rules(fs))
	}
}
