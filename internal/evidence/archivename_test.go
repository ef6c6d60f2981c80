package evidence

import "testing"

// The link name of a static library in Cargo's folders of both build-dir layouts: a unit's hash
// suffix is dropped only where Cargo puts it (deps/ in the legacy layout; the unit folder's own hash
// in the new layout's out/), never from a name that only looks like one.
func TestArchiveNameBothLayouts(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"/t/debug/deps/librcalc-0123456789abcdef.a", "rcalc"},
		{"/t/debug/librcalc.a", "rcalc"},
		{"/t/debug/build/rcalc/0123456789abcdef/out/librcalc-0123456789abcdef.a", "rcalc"},
		{"/t/debug/build/rcalc/0123456789abcdef/out/librcalc.a", "rcalc"},
		// Another hash than the folder's: a file of that name, not Cargo's suffix.
		{"/t/debug/build/rcalc/0123456789abcdef/out/librcalc-fedcba9876543210.a", "rcalc-fedcba9876543210"},
		// An OUT_DIR library whose name ends in 16 hex digits, not in a unit folder of that hash.
		{"/t/debug/build/x-sys-0123456789abcdef/out/libk-0123456789abcdef.a", "k-0123456789abcdef"},
		{"/usr/lib/libz-0123456789abcdef.a", "z-0123456789abcdef"},
	} {
		if got := archiveName(c.path); got != c.want {
			t.Errorf("archiveName(%s) = %q, want %q", c.path, got, c.want)
		}
	}
}
