package evidence

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stalecheck/stalecheck/internal/graph"
)

// A source renamed out of an archive's rule: `ar crs` keeps the old member, which the symbol table
// names first for the symbol the new member also defines.
func TestOrphanMemberShadows(t *testing.T) {
	if testing.Short() {
		t.Skip("runs cc and ar")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	for name, src := range map[string]string{"a.c": "const char *tag(void) { return \"old\"; }\n",
		"a2.c": "const char *tag(void) { return \"new\"; }\n", "b.c": "int b(void) { return 2; }\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("cc", "-c", "a.c", "a2.c", "b.c")
	run("ar", "crs", "lib.a", "a.o", "b.o")
	if err := os.Remove(filepath.Join(dir, "a.o")); err != nil {
		t.Fatal(err)
	}
	run("ar", "crs", "lib.a", "a2.o", "b.o")
	lib := filepath.Join(dir, "lib.a")
	st, _ := os.Stat(lib)
	s := &graph.Step{System: "ninja", Label: "lib.a", Outputs: []graph.FileInfo{{Path: lib, Exists: true, Size: st.Size(), MTimeNS: st.ModTime().UnixNano()}}}
	for _, o := range []string{"a2.o", "b.o"} {
		s.Inputs = append(s.Inputs, &graph.Input{File: graph.FileInfo{Path: filepath.Join(dir, o), Exists: true}, How: []graph.How{graph.Declared}, Watched: true})
	}
	producer := &graph.Step{System: "ninja", Label: "a2.o", Outputs: []graph.FileInfo{{Path: filepath.Join(dir, "a2.o"), Exists: true}}}
	g := &graph.Graph{Steps: []*graph.Step{producer, s}}
	annotateOrphanMembers(g)
	var orphans []*graph.Input
	for _, in := range s.Inputs {
		if len(in.How) == 1 && in.How[0] == graph.ArchiveMember {
			orphans = append(orphans, in)
		}
	}
	if len(orphans) != 1 || orphans[0].File.Path != filepath.Join(dir, "a.o") || orphans[0].File.Exists {
		t.Fatalf("orphans = %+v", orphans)
	}
	if !reflect.DeepEqual(orphans[0].Shadows, []string{"tag"}) {
		t.Errorf("shadows = %v, want [tag]", orphans[0].Shadows)
	}
	// An archive whose members are all made now has no orphan.
	run("rm", "lib.a")
	run("ar", "crs", "lib.a", "a2.o", "b.o")
	s.Inputs = s.Inputs[:2]
	annotateOrphanMembers(g)
	if len(s.Inputs) != 2 {
		t.Errorf("a fresh archive: %d inputs", len(s.Inputs))
	}
}
