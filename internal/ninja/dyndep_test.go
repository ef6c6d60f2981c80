package ninja

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// parseDyndep takes what ninja's dyndep parser takes and refuses, saying why, what it refuses.
func TestParseDyndep(t *testing.T) {
	p := filepath.Join(t.TempDir(), "main.dd")
	for _, c := range []struct {
		text string
		want map[string][]string
		err  string
	}{
		{"ninja_dyndep_version = 1\nbuild main.o: dyndep | data.h other.mod\n", map[string][]string{"main.o": {"data.h", "other.mod"}}, ""},
		{"# scan\nninja_dyndep_version = 1.0\n\nbuild main.o | main.mod: dyndep\n  restat = 1\nbuild b.o: dyndep | x.h\n",
			map[string][]string{"main.o": nil, "b.o": {"x.h"}}, ""},
		{"", nil, "expected 'ninja_dyndep_version = ...'"},
		{"build main.o: dyndep | data.h\n", nil, "line 1: expected 'ninja_dyndep_version = ...'"},
		{"ninja_dyndep_version = 2\n", nil, "unsupported 'ninja_dyndep_version = 2'"},
		{"ninja_dyndep_version = 1.1\n", nil, "unsupported"},
		{"ninja_dyndep_version = 1\nbuild main.o: dyn\n", nil, "line 2: expected build command name 'dyndep'"},
		{"ninja_dyndep_version = 1\nbuild main.o: dyndep main.c\n", nil, "explicit inputs not supported"},
		{"ninja_dyndep_version = 1\nbuild main.o: dyndep\n  pool = x\n", nil, "line 3"},
		{"ninja_dyndep_version = 1\nrule cc\n", nil, "line 2: expected a build statement"},
		{"ninja_dyndep_version = 1\n\x89PNG\x00\xff", nil, "line 2"},
	} {
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := parseDyndep(p)
		switch {
		case c.err == "" && (err != nil || !reflect.DeepEqual(got, c.want)):
			t.Errorf("%q: %v %v, want %v", c.text, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one with %q", c.text, err, c.err)
		}
	}
	if _, err := parseDyndep(filepath.Dir(p)); err == nil {
		t.Error("a folder: no error")
	}
}
