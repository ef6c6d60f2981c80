package gocgo_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stalecheck/stalecheck/internal/gocgo"
)

// The Cargo places of TestCargoPlaces in Cargo's new build-dir layout (docs/cargo-new-layout.md): a
// build-script run's OUT_DIR is build/<pkg>/<hash>/out beside run/, a rustc unit's staticlib lies in
// its own build/<pkg>/<hash>/out.
func TestCargoPlacesNewLayout(t *testing.T) {
	goEnv(t)
	dir := t.TempDir()
	tgt := filepath.Join(dir, "tgt")
	write(t, dir, map[string]string{
		"tgt/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n",
		"tgt/release/build/foo/0123456789abcdef/fingerprint/lib-foo":           "0011223344556677",
		"tgt/release/build/foo/0123456789abcdef/out/libfoo-0123456789abcdef.a": "!<arch>\n",
		"tgt/release/build/bar-sys/99aa99aa99aa99aa/run/stdout":                "",
		"tgt/release/build/bar-sys/99aa99aa99aa99aa/out/libbar.a":              "!<arch>\n",
		"m/go.mod": "module example.com/m\n\ngo 1.26\n",
		"m/m.go":   "package m\n\n/*\n#cgo LDFLAGS: -L${SRCDIR}/../tgt/release/build/foo/0123456789abcdef/out -l:libfoo-0123456789abcdef.a -L${SRCDIR}/../tgt/release/build/bar-sys/99aa99aa99aa99aa/out -lbar\n*/\nimport \"C\"\n",
	})
	m, err := gocgo.Read(context.Background(), filepath.Join(dir, "m"), gocgo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]gocgo.CargoOrigin{}
	for _, in := range m.Package("example.com/m").Discovered {
		if in.Cargo == nil {
			t.Fatalf("%s: no Cargo origin", in.Path)
		}
		got[filepath.Base(in.Path)] = *in.Cargo
	}
	rel := filepath.Join(tgt, "release")
	want := map[string]gocgo.CargoOrigin{
		"libfoo-0123456789abcdef.a": {TargetDir: tgt, Profile: "release", ProfileDir: rel, Place: "deps", CrateName: "foo"},
		"libbar.a": {TargetDir: tgt, Profile: "release", ProfileDir: rel, Place: "build-script-out",
			BuildDir: filepath.Join(rel, "build", "bar-sys", "99aa99aa99aa99aa"), CrateName: "bar"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
}
