package trace_test

import (
	"testing"

	"github.com/stalecheck/stalecheck/internal/trace"
)

// Program paths of both Cargo build-dir layouts, and look-alikes that are not build-script runs: each
// is read as the layout's folder says (docs/cargo-new-layout.md), never guessed. The real builds are
// TestCargoBuildScriptShapes.
func TestBuildScriptRunsBothLayouts(t *testing.T) {
	const prof = "/w/target/debug"
	cases := []struct {
		exe, unit string
		new, want bool
	}{
		{prof + "/build/app-0123456789abcdef/build-script-build", "app-0123456789abcdef", false, true},
		{prof + "/build/my-sys-0123456789abcdef/build-script-main", "my-sys-0123456789abcdef", false, true},
		{prof + "/build/my-sys/0123456789abcdef/out/build-script-build", "my-sys-0123456789abcdef", true, true},
		{prof + "/build/my-sys/0123456789ABCDEF/out/build-script-build", "", false, false}, // not Cargo's hash
		{prof + "/build/my-sys/01234/out/build-script-build", "", false, false},
		{prof + "/build/my-sys/0123456789abcdef/run/build-script-build", "", false, false},
		{prof + "/deps/build-script-build", "", false, false},
		{"/usr/bin/build-script-x", "", false, false},
		{"build-script-build", "", false, false},
	}
	for _, c := range cases {
		tr := &trace.Trace{Processes: []trace.Process{{Execs: []trace.Exec{{Path: c.exe, Env: []string{"OUT_DIR=/o"}}}}}}
		runs := tr.BuildScriptRuns()
		if !c.want {
			if len(runs) != 0 {
				t.Errorf("%s: read as a build-script run %+v", c.exe, runs[0])
			}
			continue
		}
		if len(runs) != 1 || runs[0].Unit != c.unit || runs[0].NewLayout != c.new || runs[0].BuildDir != prof || runs[0].OutDir != "/o" {
			t.Errorf("%s: runs %+v, want unit %s new %v in %s", c.exe, runs, c.unit, c.new, prof)
		}
	}
}

// rustc's --out-dir and -C extra-filename give a unit's hash in both layouts; a new-layout bin has no
// extra-filename, and an out/ folder that is not a unit's gives none.
func TestRustcUnitHash(t *testing.T) {
	cases := []struct {
		argv      []string
		hash      string
		newLayout bool
	}{
		{[]string{"rustc", "--crate-name", "app", "-C", "extra-filename=-0123456789abcdef", "--out-dir", "/t/debug/deps"}, "0123456789abcdef", false},
		{[]string{"rustc", "--crate-name", "app", "--out-dir", "/t/debug/build/app/0123456789abcdef/out"}, "0123456789abcdef", true},
		{[]string{"rustc", "--crate-name", "lib", "-C", "extra-filename=-fedcba9876543210", "--out-dir", "/t/debug/build/lib/fedcba9876543210/out"}, "fedcba9876543210", true},
		{[]string{"rustc", "--crate-name", "app", "--out-dir", "/t/debug/out"}, "", false},
		{[]string{"rustc", "--crate-name", "app", "--out-dir", "/t/debug/build/app/xyz/out"}, "", false},
		{[]string{"rustc", "--crate-name", "app", "--out-dir"}, "", false},
	}
	for _, c := range cases {
		tr := &trace.Trace{Processes: []trace.Process{{Execs: []trace.Exec{{Path: "/bin/rustc", Argv: c.argv}}}}}
		us := tr.RustcUnits()
		if len(us) != 1 || us[0].Hash != c.hash || us[0].NewLayout != c.newLayout {
			t.Errorf("%q: units %+v, want hash %q new %v", c.argv, us, c.hash, c.newLayout)
		}
	}
}

// TestAccessOpened: only an open is a read of a file's content; a stat, an access check, a readlink or
// an exec is a look-up (trace --show listed the toolchain's folders stat'ed as files read).
func TestAccessOpened(t *testing.T) {
	for op, want := range map[string]bool{"openat": true, "open": true, "openat2": true, "creat": true,
		"newfstatat": false, "statx": false, "access": false, "readlink": false, "execve": false} {
		if got := (&trace.Access{Op: op}).Opened(); got != want {
			t.Errorf("%s: Opened %v, want %v", op, got, want)
		}
	}
}
