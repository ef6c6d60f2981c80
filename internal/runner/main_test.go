package runner

import (
	"os"
	"testing"
)

// TestMain lets this test binary serve as the exec helper, as stalecheck's main does.
func TestMain(m *testing.M) {
	ExecHelperHook()
	os.Exit(m.Run())
}
