package ninja

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// nvccEnv makes Debian's nvcc 11.8 accept gcc 12 as its host compiler.
var nvccEnv = []string{"NVCC_PREPEND_FLAGS=-ccbin c++ -allow-unsupported-compiler"}

// crossCheck compares the Go manifest parse of every edge with ninja's own -t query and -t commands.
func crossCheck(t *testing.T, b *Build) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var outs []string
	for _, e := range b.Edges {
		outs = append(outs, e.Outputs...)
	}
	q, err := b.Tool.Query(ctx, b.Dir, outs...)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := b.Tool.Targets(ctx, b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range b.Edges {
		o := e.Outputs[0]
		r := q[o]
		if r == nil || r.Rule != e.Rule || targets[o] != e.Rule {
			t.Fatalf("%s: ninja says rule %+v / %q, parsed %q", o, r, targets[o], e.Rule)
		}
		if !reflect.DeepEqual(r.Explicit, e.Explicit) || !reflect.DeepEqual(r.Implicit, e.Implicit) || !reflect.DeepEqual(r.OrderOnly, e.OrderOnly) {
			t.Fatalf("%s: ninja query %+v, parsed explicit %q implicit %q order-only %q", o, r, e.Explicit, e.Implicit, e.OrderOnly)
		}
		cmd, err := b.Tool.Command(ctx, b.Dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if cmd != e.Command {
			t.Fatalf("%s: ninja's command\n%s\nparsed\n%s", o, cmd, e.Command)
		}
	}
}

func edgeFor(t *testing.T, b *Build, suffix string) *Edge {
	t.Helper()
	for _, e := range b.Edges {
		for _, o := range e.Outputs {
			if strings.HasSuffix(o, suffix) {
				return e
			}
		}
	}
	t.Fatalf("no edge with an output ending in %s", suffix)
	return nil
}

// TestCMakeNinjaHeaderEditIsPending: a real cmake -G Ninja project whose compile writes a depfile
// (deps = gcc). After a header edit ninja will rebuild: the header is pending, not unseen.
func TestCMakeNinjaHeaderEditIsPending(t *testing.T) {
	need(t, "cmake", "ninja", "cc")
	root := t.TempDir()
	src, bld := filepath.Join(root, "src"), filepath.Join(root, "build")
	write(t, src, map[string]string{
		"CMakeLists.txt": "cmake_minimum_required(VERSION 3.13)\nproject(p C)\nadd_executable(app main.c)\ntarget_include_directories(app PRIVATE include)\n",
		"include/m.h":    "#define M 1\n",
		"main.c":         "#include \"m.h\"\nint main(void) { return M; }\n",
	})
	sh(t, root, nil, "cmake", "-S", src, "-B", bld, "-G", "Ninja", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
	sh(t, bld, nil, "ninja")
	mh := touchLater(t, filepath.Join(src, "include", "m.h"), "#undef M\n#define M 2\n")
	b := readBuild(t, bld)
	crossCheck(t, b)
	g := b.Generator
	if g == nil || g.System != "cmake" || g.Generator != "Ninja" || g.Source != src || g.Err != nil {
		t.Fatalf("generator %+v", g)
	}
	compiles, err := g.CompileEntries()
	if g.CompileDB != filepath.Join(bld, "compile_commands.json") || len(compiles) != 1 || compiles[0].File != filepath.Join(src, "main.c") {
		t.Fatalf("compile db %q %+v (%v)", g.CompileDB, compiles, err)
	}
	e := edgeFor(t, b, "main.c.o")
	if e.Deps != "gcc" || e.Depfile == "" || e.MissingDepfile != "" || e.Compile == nil || !e.Compile.WritesDeps() {
		t.Fatalf("edge %+v compile %+v missing %q", e.ManifestEdge, e.Compile, e.MissingDepfile)
	}
	if len(e.Compile.Includes) != 1 || e.Compile.Includes[0].Path != filepath.Join(src, "include") {
		t.Fatalf("includes %+v", e.Compile.Includes)
	}
	if len(e.Unseen) != 0 {
		t.Fatalf("a header ninja tracks reported unseen: %+v", e.Unseen[0])
	}
	if len(e.Pending) != 1 || e.Pending[0].Path != filepath.Join(src, "include", "m.h") || e.Pending[0].MTime != mh ||
		!hasClue(e.Pending[0], HowDepsLog) || hasClue(e.Pending[0], HowIncludeScan) {
		t.Fatalf("pending %+v", e.Pending)
	}
	// With AlwaysScan the include scan reaches the same header through the -I folder.
	all, err := Read(context.Background(), bld, Options{NoDryRun: true, AlwaysScan: true})
	if err != nil {
		t.Fatal(err)
	}
	if in := inputOf(edgeFor(t, all, "main.c.o").Pending, "m.h"); in == nil || !hasClue(in, HowIncludeScan) || !hasClue(in, HowDepsLog) {
		t.Fatalf("AlwaysScan: %+v", in)
	}
	if !e.WouldRun || len(e.Why) == 0 || !strings.Contains(strings.Join(e.Why, "\n"), "m.h") {
		t.Fatalf("dry run: would run %v why %q", e.WouldRun, e.Why)
	}
	if e.Ref.Deps == nil || e.Ref.Log == nil || e.Ref.Deps.MTime != e.Ref.OutputMTime {
		t.Fatalf("reference %+v", e.Ref)
	}
}

// TestCMakeNinjaNvccCuhEdit: a real CMake + Ninja + nvcc 11.8 project. CMake 3.25 passes -MD -MF to
// nvcc with deps = gcc, so a .cuh edit is tracked: pending, and the dry run agrees.
func TestCMakeNinjaNvccCuhEdit(t *testing.T) {
	need(t, "cmake", "ninja", "cc", "nvcc")
	root := t.TempDir()
	src, bld := filepath.Join(root, "src"), filepath.Join(root, "build")
	write(t, src, map[string]string{
		"CMakeLists.txt": "cmake_minimum_required(VERSION 3.18)\nproject(k LANGUAGES C CUDA)\nadd_executable(k main.c kern.cu)\n",
		"kern.cuh":       "#define SCALE 2\n",
		"kern.cu":        "#include \"kern.cuh\"\n__global__ void k(int *x) { x[0] = SCALE; }\nextern \"C\" int launch(void) { return SCALE; }\n",
		"main.c":         "int launch(void);\nint main(void) { return launch(); }\n",
	})
	sh(t, root, nvccEnv, "cmake", "-S", src, "-B", bld, "-G", "Ninja")
	sh(t, bld, nvccEnv, "ninja")
	cuh := touchLater(t, filepath.Join(src, "kern.cuh"), "#undef SCALE\n#define SCALE 3\n")
	b := readBuild(t, bld)
	crossCheck(t, b)
	if b.Generator == nil || b.Generator.Cache["CMAKE_CUDA_COMPILER"] != "/usr/bin/nvcc" {
		t.Fatalf("generator %+v", b.Generator)
	}
	e := edgeFor(t, b, "kern.cu.o")
	if e.Compile == nil || filepath.Base(e.Compile.Compiler) != "nvcc" || e.Compile.Source != filepath.Join(src, "kern.cu") || e.MissingDepfile != "" {
		t.Fatalf("compile %+v missing %q", e.Compile, e.MissingDepfile)
	}
	in := inputOf(e.Pending, "kern.cuh")
	if in == nil || in.MTime != cuh || !hasClue(in, HowDepsLog) || len(e.Unseen) != 0 || !e.WouldRun {
		t.Fatalf("pending %+v unseen %+v would run %v", e.Pending, e.Unseen, e.WouldRun)
	}
	if c := edgeFor(t, b, "main.c.o"); c.WouldRun || len(c.Pending) != 0 {
		t.Fatalf("main.c.o should be up to date: %+v", c.Pending)
	}
}

// TestCMakeMakefilesGeneratorIsOnlyNamed: a Unix Makefiles build folder is detected and its generator
// named; it is no Ninja folder.
func TestCMakeMakefilesGeneratorIsOnlyNamed(t *testing.T) {
	need(t, "cmake", "make", "cc")
	root := t.TempDir()
	src, bld := filepath.Join(root, "src"), filepath.Join(root, "build")
	write(t, src, map[string]string{"CMakeLists.txt": "cmake_minimum_required(VERSION 3.13)\nproject(p C)\nadd_executable(app main.c)\n", "main.c": "int main(void){return 0;}\n"})
	sh(t, root, nil, "cmake", "-S", src, "-B", bld, "-G", "Unix Makefiles")
	g := DetectGenerator(bld)
	if g == nil || g.System != "cmake" || g.Generator != "Unix Makefiles" || g.Source != src {
		t.Fatalf("%+v", g)
	}
	if IsBuildFolder(bld) {
		t.Fatal("a Makefiles folder taken for a Ninja one")
	}
	if _, err := Read(context.Background(), bld, Options{}); !os.IsNotExist(err) {
		t.Fatalf("Read of a Makefiles folder: %v", err)
	}
}

// TestMesonCudaRuleNamesADepfileNvccNeverWrites: Meson 1.0's CUDA rule has deps = gcc and a depfile,
// but calls nvcc without -MD: the deps log records no inputs, a .cuh edit leaves ninja with nothing to
// do. The C compile of the same project is tracked: its header edit is pending.
func TestMesonCudaRuleNamesADepfileNvccNeverWrites(t *testing.T) {
	need(t, "meson", "ninja", "cc", "nvcc")
	src := t.TempDir()
	bld := filepath.Join(src, "b")
	write(t, src, map[string]string{
		"meson.build": "project('k', 'c', 'cuda')\nexecutable('k', 'main.c', 'kern.cu')\n",
		"kern.cuh":    "#define SCALE 2\n",
		"kern.cu":     "#include \"kern.cuh\"\n__global__ void k(int *x) { x[0] = SCALE; }\nextern \"C\" int launch(void) { return SCALE; }\n",
		"m.h":         "#define M 0\n",
		"main.c":      "#include \"m.h\"\nint launch(void);\nint main(void) { return launch() + M; }\n",
	})
	sh(t, src, nvccEnv, "meson", "setup", bld)
	sh(t, bld, nvccEnv, "ninja")
	cuh := touchLater(t, filepath.Join(src, "kern.cuh"), "#undef SCALE\n#define SCALE 3\n")
	mh := touchLater(t, filepath.Join(src, "m.h"), "#undef M\n#define M 1\n")
	b := readBuild(t, bld)
	crossCheck(t, b)
	g := b.Generator
	if g == nil {
		t.Fatal("no generator")
	}
	if compiles, err := g.CompileEntries(); g.System != "meson" || g.Source != src || g.Version == "" || len(g.Intro) == 0 || len(compiles) != 2 {
		t.Fatalf("generator %+v, compile db %d entries (%v)", g, len(compiles), err)
	}
	cu := edgeFor(t, b, "kern.cu.o")
	if cu.Deps != "gcc" || cu.Depfile == "" || cu.Ref.Deps == nil || len(cu.Ref.Deps.Inputs) != 0 {
		t.Fatalf("meson cuda edge %+v deps %+v", cu.ManifestEdge, cu.Ref.Deps)
	}
	if !strings.Contains(cu.MissingDepfile, "has no -MD/-MMD/-MF") {
		t.Fatalf("missing depfile %q", cu.MissingDepfile)
	}
	if in := inputOf(cu.Unseen, "kern.cuh"); in == nil || in.MTime != cuh || in.Watched || !hasClue(in, HowIncludeScan) || cu.WouldRun {
		t.Fatalf("unseen %+v would run %v", cu.Unseen, cu.WouldRun)
	}
	c := edgeFor(t, b, "main.c.o")
	if in := inputOf(c.Pending, "m.h"); in == nil || in.MTime != mh || !hasClue(in, HowDepsLog) || !c.WouldRun || c.MissingDepfile != "" || len(c.Unseen) != 0 {
		t.Fatalf("main.c.o pending %+v unseen %+v missing %q", c.Pending, c.Unseen, c.MissingDepfile)
	}
}
