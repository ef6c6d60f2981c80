// Package need lets a test ask for the external tools it drives (make, ninja, cmake, meson, nvcc, …).
// A test that drives one is a real-build test: with -short it is skipped (RealBuild), so that
// `go test -short ./...` runs the fast tests only.
// A missing tool skips the test with a message naming it, except under CI (the CI environment variable
// set, as .ci/run does), where .ci/setup-debian installs every tool this package is asked about: there a
// missing one fails the test, so a broken install cannot turn into silently skipped tests.
package need

import (
	"os"
	"os/exec"
	"testing"
)

// installHint says how each tool gets onto a Debian 12 machine.
var installHint = map[string]string{
	"nvcc":  ".ci/setup-debian --cuda installs Debian's nvidia-cuda-toolkit (nvcc 11.8, non-free)",
	"meson": ".ci/setup-debian installs meson",
	"cmake": ".ci/setup-debian installs cmake",
	"ninja": ".ci/setup-debian installs ninja-build",
}

// Tools skips t (or, under CI, fails it) unless every tool is on PATH; the message names the tool, the
// PATH lookup error and how to install it.
func Tools(t testing.TB, tools ...string) {
	t.Helper()
	RealBuild(t)
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			hint := installHint[tool]
			if hint == "" {
				hint = ".ci/setup-debian installs it"
			}
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (%v) under CI: this test drives a real %s (%s)", tool, err, tool, hint)
			}
			t.Skipf("%s is not installed (%v): this test drives a real %s (%s)", tool, err, tool, hint)
		}
	}
}

// RealBuild marks t as a test that drives a real build (cargo, cc, make, ninja, cmake, meson, go, nvcc)
// in a temporary folder: skipped with -short.
func RealBuild(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("drives a real build: skipped with -short")
	}
}
