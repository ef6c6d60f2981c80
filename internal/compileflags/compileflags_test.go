package compileflags

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil/need"
)

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want []Compile
	}{
		{"cc -O2 -g -c main.c -o main.o", []Compile{{Object: "main.o", Level: "-O2"}}},
		{"gcc -g -c main.c -o main.o", []Compile{{Object: "main.o", Level: "-O0"}}},
		{"cc -O2 -c a.c -o a.o", []Compile{{Object: "a.o", Level: "-O2"}}},
		{"x86_64-linux-gnu-gcc-12 -O -ggdb -c a.c -o a.o", []Compile{{Object: "a.o", Level: "-O1"}}},
		{"ccache g++ -O2 -O3 -g -c a.cc -o a.o", []Compile{{Object: "a.o", Level: "-O3"}}},
		{"CCACHE_DIR=/tmp/c ccache cc -Os -g -c a.c -o a.o", []Compile{{Object: "a.o", Level: "-Os"}}},
		{"cd /b/sub && /usr/bin/cc -DX -O2 -g -MD -MT x -MF x.d -o CMakeFiles/k.dir/k.c.o -c /s/k.c",
			[]Compile{{Object: "CMakeFiles/k.dir/k.c.o", Dir: "/b/sub", Level: "-O2"}}},
		{"echo compiling\ncc -O2 -g -c a.c -o a.o", []Compile{{Object: "a.o", Level: "-O2"}}},
		{"cc -O2 -c src/main.c", []Compile{{Object: "main.o", Level: "-O2"}}}, // no -o: the source's name, here
		// Quoted words are one word: the options inside them are a macro's value.
		{`cc -g -O2 -DBUILD_FLAGS="\"-g -O3\"" -c main.c -o main.o`, []Compile{{Object: "main.o", Level: "-O2"}}},
		{`cc '-DOPTS="-g -O3"' -c a.c -o a.o`, []Compile{{Object: "a.o", Level: "-O0"}}},
		{`cc -Wa,-O2 -c a.c -o a.o`, []Compile{{Object: "a.o", Level: "-O0"}}},
		{"cc -O2 -g -c a.c -o a.o && cc -O1 -g -c b.c -o b.o", []Compile{{Object: "a.o", Level: "-O2"}, {Object: "b.o", Level: "-O1"}}},
		// Not told: no -c, not GCC's driver, a response file, two sources.
		{"cc -O2 -g -o app a.o", nil},
		{"nvcc -O3 -g -c k.cu -o k.o", nil},
		{"clang-14 -O2 -g -c a.c -o a.o", nil},
		{"cc -g -c a.c -o a.o @flags.rsp", nil},
		{"cc -O2 -c a.c b.c", nil},
	} {
		if got := ParseCommand(c.cmd); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseCommand(%q) = %+v; want %+v", c.cmd, got, c.want)
		}
	}
}

func TestProducerLevel(t *testing.T) {
	for _, c := range []struct {
		producer, want string
		ok             bool
	}{
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O0 -fasynchronous-unwind-tables", "-O0", true},
		{"GNU C++17 12.2.0 -mtune=generic -march=x86-64 -g -O2", "-O2", true},
		{"GNU C17 12.2.0 -mtune=generic -march=x86-64 -g", "-O0", true},
		{"GNU C11 4.8.5 -O", "-O1", true},
		{"GNU C17 12.2.0", "", false}, // no options recorded
		{"Debian clang version 14.0.6", "", false},
		{"", "", false},
	} {
		got, ok := ProducerLevel(c.producer)
		if ok != c.ok || got != c.want {
			t.Errorf("ProducerLevel(%q) = %q, %v; want %q, %v", c.producer, got, ok, c.want, c.ok)
		}
	}
}

// Annotate on an object no adapter read: it reads the object's own DWARF. Built with -O0 and a command
// that says -O2 now: Built says so; with the producer the adapter read (CommandRecords.Producer), the
// object is not opened; a command that matches says nothing.
func TestAnnotateReadsTheObject(t *testing.T) {
	need.RealBuild(t)
	need.Tools(t, "cc")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.c"), []byte("int a(int x) { return x + 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-O0", "-g", "-c", filepath.Join(dir, "a.c"), "-o", filepath.Join(dir, "a.o")).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	obj := filepath.Join(dir, "a.o")
	st, err := os.Stat(obj)
	if err != nil {
		t.Fatal(err)
	}
	step := func(cmd, producer string) *graph.Step {
		s := &graph.Step{Command: cmd, Reference: graph.FileInfo{Path: obj, Exists: true, Size: st.Size(), MTimeNS: st.ModTime().UnixNano()}}
		s.Outputs = []graph.FileInfo{s.Reference}
		s.OwnCmd().CommandDir = dir
		s.OwnCmd().Producer = producer
		s.Roots = []*graph.Root{{File: s.Reference}}
		return s
	}
	stale, same, told := step("cc -O2 -g -c a.c -o a.o", ""), step("cc -O0 -g -c a.c -o a.o", ""), step("cc -O0 -g -c a.c -o a.o", "GNU C17 12.2.0 -g -O3")
	Annotate(&graph.Graph{Steps: []*graph.Step{stale, same, told}})
	if b := stale.Cmd().Built; b == nil || b.Was != "-O0" || b.Now != "-O2" || b.Object != obj || !strings.HasPrefix(b.Producer, "GNU C") {
		t.Fatalf("-O0 object, -O2 command: %+v", b)
	}
	if b := same.Cmd().Built; b != nil {
		t.Fatalf("-O0 object, -O0 command: %+v", b)
	}
	if b := told.Cmd().Built; b == nil || b.Was != "-O3" {
		t.Fatalf("the producer the adapter read is the one judged: %+v", b)
	}
}
