package ninja

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// genTree writes a CMake-shaped Ninja tree of dirs×per compile edges (deps = gcc, -MD -MF, -I
// folders; the "compiler" is a shell script named cc that copies the source and writes a depfile,
// so 5,000 compiles build in seconds), one archive edge per folder and one link edge; it builds it with
// the real ninja and returns the folder and the number of edges.
func genTree(tb testing.TB, dirs, per int) (string, int) {
	need(tb, "ninja", "sh")
	root := tb.TempDir()
	files := map[string]string{
		"tools/cc": "#!/bin/sh\n# fake compiler: cc -MD -MF dep -Iinc... -c src -o out\nwhile [ $# -gt 0 ]; do case $1 in -MF) dep=$2; shift;; -o) out=$2; shift;; -c) src=$2; shift;; esac; shift; done\n" +
			"cp \"$src\" \"$out\" && d=$(dirname \"$src\") && printf '%s: %s %s/d.h src/include/common.h\\n' \"$out\" \"$src\" \"$d\" > \"$dep\"\n",
		"src/include/common.h": "#define COMMON 1\n",
	}
	var bn strings.Builder
	bn.WriteString("ninja_required_version = 1.5\ncc = tools/cc\n")
	bn.WriteString("rule C_COMPILER\n  depfile = $DEP_FILE\n  deps = gcc\n  command = $cc $DEFINES $INCLUDES $FLAGS -MD -MT $out -MF $DEP_FILE -o $out -c $in\n  description = Building C object $out\n")
	bn.WriteString("rule AR\n  command = cat $in > $out\n  description = Linking C static library $out\n")
	bn.WriteString("rule LINK\n  command = cat $in > $out\n  description = Linking C executable $out\n")
	edges := 0
	var libs []string
	for d := 0; d < dirs; d++ {
		dn := fmt.Sprintf("src/d%03d", d)
		files[dn+"/d.h"] = fmt.Sprintf("#define D%d %d\n", d, d)
		var objs []string
		for i := 0; i < per; i++ {
			name := fmt.Sprintf("f%03d.c", i)
			files[dn+"/"+name] = fmt.Sprintf("#include \"d.h\"\n#include <common.h>\nint f_%d_%d(void) { return COMMON + %d; }\n", d, i, i)
			obj := fmt.Sprintf("CMakeFiles/d%03d.dir/%s.o", d, name)
			objs = append(objs, obj)
			fmt.Fprintf(&bn, "build %s: C_COMPILER %s/%s || cmake_object_order_depends_target_d%03d\n  DEP_FILE = %s.d\n  FLAGS = -O2 -g\n  INCLUDES = -I%s -Isrc/include\n  DEFINES = -DD=%d\n", obj, dn, name, d, obj, dn, d)
			edges++
		}
		fmt.Fprintf(&bn, "build cmake_object_order_depends_target_d%03d: phony\n", d)
		lib := fmt.Sprintf("libd%03d.a", d)
		libs = append(libs, lib)
		fmt.Fprintf(&bn, "build %s: AR %s\n", lib, strings.Join(objs, " "))
		edges++
	}
	fmt.Fprintf(&bn, "build app: LINK %s\n", strings.Join(libs, " "))
	edges++
	files["build.ninja"] = bn.String()
	write(tb, root, files)
	os.Chmod(filepath.Join(root, "tools/cc"), 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ninja", "-j2")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("ninja: %v\n%s", err, out[max(0, len(out)-2000):])
	}
	return root, edges
}

// TestGeneratedTreeReads checks the benchmark's tree on a small scale: every compile edge found,
// nothing pending or unseen, the deps log read, ninja's dry run agreeing.
func TestGeneratedTreeReads(t *testing.T) {
	dir, n := genTree(t, 3, 10)
	b := readBuild(t, dir)
	if len(b.Edges) != n || !b.DryRun.NoWork {
		t.Fatalf("%d edges, want %d; dry run %+v", len(b.Edges), n, b.DryRun)
	}
	crossCheck(t, b)
	for _, e := range b.Edges {
		if len(e.Pending)+len(e.Unseen) != 0 || e.MissingDepfile != "" || e.WouldRun {
			t.Fatalf("%s: pending %v unseen %v missing %q", e.Outputs[0], e.Pending, e.Unseen, e.MissingDepfile)
		}
		if e.Rule == "C_COMPILER" && (e.Ref.Deps == nil || len(e.Ref.Deps.Inputs) != 3 || e.Compile == nil || len(e.Compile.Includes) != 2) {
			t.Fatalf("%s: deps %+v compile %+v", e.Outputs[0], e.Ref.Deps, e.Compile)
		}
	}
	// An edit of one folder's header: the 10 compiles of that folder are pending, none unseen.
	touchLater(t, filepath.Join(dir, "src/d001/d.h"), "\n")
	b = readBuild(t, dir)
	pending := 0
	for _, e := range b.Edges {
		if len(e.Unseen) != 0 {
			t.Fatalf("%s: unseen %v", e.Outputs[0], e.Unseen[0].Path)
		}
		if len(e.Pending) > 0 {
			pending++
			if !e.WouldRun {
				t.Fatalf("%s pending but ninja would not run it", e.Outputs[0])
			}
		}
	}
	if pending != 10 {
		t.Fatalf("%d pending edges, want 10", pending)
	}
}

// BenchmarkReadVsNinjaDryRun times Read on a generated 5,051-edge tree with nothing to do against
// `ninja -n` on the same tree; the ratio is reported as read/ninja-n.
func BenchmarkReadVsNinjaDryRun(b *testing.B) {
	dir, n := genTree(b, 50, 100)
	ctx := context.Background()
	var ninjaNs, readNs, readNoDryNs float64
	var ninjaCPU, readCPU, readNoDryCPU float64
	b.Run("ninja-n", func(b *testing.B) {
		c0 := cpuNs()
		defer func() { ninjaCPU = float64(cpuNs()-c0) / float64(b.N) }()
		for i := 0; i < b.N; i++ {
			out, err := exec.Command("ninja", "-C", dir, "-n").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "no work to do") {
				b.Fatalf("%v %s", err, out)
			}
		}
		ninjaNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("Read", func(b *testing.B) {
		c0 := cpuNs()
		defer func() { readCPU = float64(cpuNs()-c0) / float64(b.N) }()
		for i := 0; i < b.N; i++ {
			r, err := Read(ctx, dir, Options{})
			if err != nil || r.DryRunErr != nil || len(r.Edges) != n || !r.DryRun.NoWork {
				b.Fatalf("%v %v %d", err, r.DryRunErr, len(r.Edges))
			}
		}
		readNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("Read-NoDryRun", func(b *testing.B) {
		c0 := cpuNs()
		defer func() { readNoDryCPU = float64(cpuNs()-c0) / float64(b.N) }()
		for i := 0; i < b.N; i++ {
			if _, err := Read(ctx, dir, Options{NoDryRun: true}); err != nil {
				b.Fatal(err)
			}
		}
		readNoDryNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	if ninjaNs > 0 {
		b.Logf("%d edges: ninja -n %.1f ms, Read %.1f ms (ratio %.2f), Read without the dry run %.1f ms (ratio %.2f)",
			n, ninjaNs/1e6, readNs/1e6, readNs/ninjaNs, readNoDryNs/1e6, readNoDryNs/ninjaNs)
		b.Logf("CPU (user+sys, this process and its reaped children): ninja -n %.1f ms, Read %.1f ms (ratio %.2f), Read without the dry run %.1f ms (ratio %.2f)",
			ninjaCPU/1e6, readCPU/1e6, readCPU/ninjaCPU, readNoDryCPU/1e6, readNoDryCPU/ninjaCPU)
	}
}

// cpuNs is the user+sys CPU time of this process and its reaped children, in nanoseconds. It is less
// at the mercy of other load on the machine than wall time.
func cpuNs() int64 {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) int64 { return t.Sec*1e9 + t.Usec*1e3 }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
