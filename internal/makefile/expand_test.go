package makefile

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestExpandRecipe(t *testing.T) {
	db := &Database{Variables: map[string]Variable{
		"CC":       {Name: "CC", Value: "cc", Origin: "default"},
		"CPPFLAGS": {Name: "CPPFLAGS", Value: "-Ioverride -Iinclude $(EXTRA)", Origin: "makefile"},
		"EXTRA":    {Name: "EXTRA", Value: "-DX=$$$$HOME", Simple: true, Origin: "makefile"}, // make -p doubles each $ of a simple value: EXTRA := -DX=$$$$HOME in the makefile
		"DEP":      {Name: "DEP", Value: "-MMD", Simple: true, Origin: "makefile"},
	}}
	r := &reader{db: db, dir: "/w"}
	f := &File{Name: "src/a.o", Prereqs: []string{"src/a.c", "include/a.h", "src/a.c"}, Stem: "src/a",
		Recipe:     []string{"@$(CC) $(DEP) $(CPPFLAGS) ${CFLAGS} -c $< -o $@", "-echo $^ $* $$x", "$(patsubst %.c,%.o,$<)"},
		TargetVars: []Variable{{Name: "DEP", Value: "-MD", Simple: true}}}
	lines, complete := r.expandRecipe(f, "src/a.o")
	want := []string{"cc -MD -Ioverride -Iinclude -DX=$$HOME  -c src/a.c -o src/a.o", "echo src/a.c include/a.h src/a $x"}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("lines = %q\nwant    %q", lines, want)
	}
	if complete {
		t.Error("a function call was left out: the recipe is not complete")
	}
	runs := compileRuns(lines, "/w")
	if len(runs) != 1 || runs[0].source != "/w/src/a.c" ||
		!reflect.DeepEqual(runs[0].sp.Dirs, []string{filepath.Join("/w", "override"), filepath.Join("/w", "include")}) {
		t.Errorf("compile runs = %+v", runs)
	}
}

func TestExpandBoundsRecursion(t *testing.T) {
	db := &Database{Variables: map[string]Variable{"A": {Name: "A", Value: "$(A)x", Origin: "makefile"}}}
	r := &reader{db: db}
	if _, ok := r.expand("$(A)", &File{}, nil, 0); ok {
		t.Error("a variable that refers to itself must not expand")
	}
}

// TestSubMakes: the makes a recipe runs, with the folder and the makefile make would read: -C first,
// then -f relative to it; the folder's own make is left out; CMake's Makefile2 in the same folder is in.
func TestSubMakes(t *testing.T) {
	f := &Folder{Dir: "/b", Makefile: "/b/Makefile"}
	got := subMakes([]string{
		"make -f CMakeFiles/Makefile2 all",
		"make -C lib",
		"cd sub && make --file=GNUmakefile.sub",
		"make -C lib -f ../other.mk",
		"make -fMakefile.x",
		"make -f Makefile",
		"make all",
		"echo make -C x && true",
	}, f)
	want := []SubMake{{Dir: "/b", Makefile: "/b/CMakeFiles/Makefile2"}, {Dir: "/b/lib"}, {Dir: "/b/sub", Makefile: "/b/sub/GNUmakefile.sub"},
		{Dir: "/b/lib", Makefile: "/b/other.mk"}, {Dir: "/b", Makefile: "/b/Makefile.x"}}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("subMakes:\n got %+v\nwant %+v", got, want)
	}
}
