package content

import (
	"path/filepath"
	"testing"
)

// JSON replaces bytes that are not UTF-8: a source named so must still find its content baseline.
func TestStoreKeyOfNonUTF8Path(t *testing.T) {
	ws := "/w"
	for _, p := range []string{"/w/src/caf\xe9.c", "/w/src/ok.c", "/w/b64:odd.c", "/elsewhere/\xff.h"} {
		k := relTo(ws, p)
		back := pathOfKey(k)
		if !filepath.IsAbs(back) {
			back = filepath.Join(ws, back)
		}
		if back != p {
			t.Errorf("%q: key %q gives back %q", p, k, back)
		}
	}
	if k := relTo(ws, "/w/src/caf\xe9.c"); k == relTo(ws, "/w/src/caf\xef.c") {
		t.Error("two names that differ in a non-UTF-8 byte share a key")
	}
}
