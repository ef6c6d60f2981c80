package ninja

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/safeio"
	needpkg "github.com/stalecheck/stalecheck/internal/testutil/need"
)

func need(t testing.TB, tools ...string) {
	t.Helper()
	needpkg.Tools(t, tools...)
}

func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sh(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// touchLater edits a file and moves its mtime a second past every output, so the edit is newer
// whatever the filesystem's timestamp granularity.
func touchLater(t testing.TB, p, appendText string) int64 {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(appendText)
	f.Close()
	when := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(p, when, when); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	return st.ModTime().UnixNano()
}

func readBuild(t testing.TB, dir string) *Build {
	t.Helper()
	b := readBuildDryRunMayFail(t, dir)
	if b.DryRunErr != nil {
		t.Fatalf("dry run %v", b.DryRunErr)
	}
	return b
}

// readBuildDryRunMayFail is readBuild for a build ninja refuses (its dry run fails, or is not run).
func readBuildDryRunMayFail(t testing.TB, dir string) *Build {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := Read(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b.LogErr != nil || b.DepsErr != nil {
		t.Fatalf("log %v, deps %v, dry run %v", b.LogErr, b.DepsErr, b.DryRunErr)
	}
	return b
}

func inputOf(ins []*Input, base string) *Input {
	for _, in := range ins {
		if filepath.Base(in.Path) == base {
			return in
		}
	}
	return nil
}

func hasClue(in *Input, h How) bool {
	for _, c := range in.Clues {
		if c.How == h {
			return true
		}
	}
	return false
}

// TestS13RuleWithoutDepfile is scenario S13: a hand-written build.ninja compiles main.c, which
// includes m.h, with no depfile or deps. After an edit of m.h ninja has no work to do; Read must name
// the missing depfile and m.h as newer than main.o and unseen by ninja.
func TestS13RuleWithoutDepfile(t *testing.T) {
	need(t, "ninja", "cc")
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"m.h":    "#define M 1\n",
		"main.c": "#include \"m.h\"\nint main(void) { return M; }\n",
		"build.ninja": "rule cc\n  command = cc -c $in -o $out\n" +
			"rule link\n  command = cc $in -o $out\n" +
			"build main.o: cc main.c\nbuild main: link main.o\n",
	})
	sh(t, dir, nil, "ninja")
	mh := touchLater(t, filepath.Join(dir, "m.h"), "#undef M\n#define M 2\n")
	if out := sh(t, dir, nil, "ninja", "-n"); !strings.Contains(out, "no work to do") {
		t.Fatalf("ninja -n should see nothing to do, said:\n%s", out)
	}
	b := readBuild(t, dir)
	if !b.DryRun.NoWork || len(b.DryRun.Dirty) != 0 {
		t.Fatalf("dry run: %+v", b.DryRun)
	}
	e := b.ByOutput["main.o"]
	if e == nil || e.Compile == nil {
		t.Fatalf("main.o edge or its compile not found: %+v", e)
	}
	if e.Compile.Source != filepath.Join(dir, "main.c") || e.Compile.Dir != dir {
		t.Fatalf("compile %+v", e.Compile)
	}
	if !strings.Contains(e.MissingDepfile, "rule cc has neither depfile nor deps") {
		t.Fatalf("missing depfile: %q", e.MissingDepfile)
	}
	if len(e.Unseen) != 1 || e.Unseen[0].Path != filepath.Join(dir, "m.h") || e.Unseen[0].MTime != mh {
		t.Fatalf("unseen: %+v", e.Unseen)
	}
	if !hasClue(e.Unseen[0], HowIncludeScan) || e.Unseen[0].Watched {
		t.Fatalf("m.h clues: %+v", e.Unseen[0])
	}
	st, _ := os.Stat(filepath.Join(dir, "main.o"))
	if e.Ref.OutputMTime != st.ModTime().UnixNano() || e.Ref.OutputMTime >= mh {
		t.Fatalf("reference %d, main.o %d, m.h %d", e.Ref.OutputMTime, st.ModTime().UnixNano(), mh)
	}
	if e.Ref.Log == nil || e.Ref.Log.Output != "main.o" || e.Ref.Log.MTime == 0 {
		t.Fatalf("log entry %+v", e.Ref.Log)
	}
	if len(e.Pending) != 0 || e.WouldRun {
		t.Fatalf("nothing pending expected: %+v would run %v", e.Pending, e.WouldRun)
	}
	if l := b.ByOutput["main"]; l.Compile != nil || l.MissingDepfile != "" || len(l.Unseen) != 0 {
		t.Fatalf("link edge: %+v", l)
	}
	// The fix step: a depfile. After the rebuild, nothing is unseen and the depfile is read.
	write(t, dir, map[string]string{"build.ninja": "rule cc\n  command = cc -MD -MF $out.d -c $in -o $out\n  depfile = $out.d\n" +
		"rule link\n  command = cc $in -o $out\n" +
		"build main.o: cc main.c\nbuild main: link main.o\n"})
	sh(t, dir, nil, "ninja")
	b = readBuild(t, dir)
	e = b.ByOutput["main.o"]
	if e.MissingDepfile != "" || len(e.Unseen) != 0 || !e.DepfileOnDisk {
		t.Fatalf("after the fix: missing %q unseen %+v depfile %v", e.MissingDepfile, e.Unseen, e.DepfileOnDisk)
	}
	if in := inputOf(e.Inputs, "m.h"); in == nil || !in.Watched || !hasClue(in, HowDepfile) {
		t.Fatalf("m.h after the fix: %+v", in)
	}
}

// TestDepfileNeverWritten: a rule names a depfile (no deps) but nvcc is called without -MD, so the
// depfile never appears; ninja then rebuilds the edge on every run ("depfile is missing"), and Read
// names the cause.
func TestDepfileNeverWritten(t *testing.T) {
	need(t, "ninja", "nvcc")
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"k.cuh": "#define K 1\n",
		"k.cu":  "#include \"k.cuh\"\n__global__ void k(int *x) { x[0] = K; }\n",
		"build.ninja": "rule nvcc\n  command = nvcc -ccbin c++ -allow-unsupported-compiler -c $in -o $out\n  depfile = $out.d\n" +
			"build k.o: nvcc k.cu\n",
	})
	sh(t, dir, nil, "ninja")
	b := readBuild(t, dir)
	e := b.ByOutput["k.o"]
	if e.DepfileOnDisk || e.DepfilePath != filepath.Join(dir, "k.o.d") || !strings.Contains(e.MissingDepfile, "names depfile k.o.d but the command (nvcc) has no -MD/-MMD/-MF") {
		t.Fatalf("depfile %q on disk %v, missing %q", e.DepfilePath, e.DepfileOnDisk, e.MissingDepfile)
	}
	if !e.WouldRun || !strings.Contains(strings.Join(e.Why, "\n"), "depfile") {
		t.Fatalf("ninja should rebuild it for its missing depfile: %v %q", e.WouldRun, e.Why)
	}
	// The include scan stands in: k.cuh is an input ninja does not know.
	if in := inputOf(e.Inputs, "k.cuh"); in == nil || in.Watched || !hasClue(in, HowIncludeScan) {
		t.Fatalf("k.cuh: %+v", in)
	}
}

// TestNoDryRunWhereNinjaWouldWrite: ninja -n creates the folders of outputs it would build and writes
// response files (src/build.cc StartEdge); Read does not run it there, and the folder stays absent.
func TestNoDryRunWhereNinjaWouldWrite(t *testing.T) {
	need(t, "ninja")
	dir := t.TempDir()
	write(t, dir, map[string]string{"x.c": "int x;\n",
		"build.ninja": "rule cc\n  command = cc -c $in -o $out\nbuild obj/x.o: cc x.c\n"})
	ctx := context.Background()
	b, err := Read(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(b.DryRunErr, ErrLogsUnsafe) || !strings.Contains(b.DryRunErr.Error(), filepath.Join(dir, "obj")) {
		t.Fatalf("dry run err %v", b.DryRunErr)
	}
	if _, err := os.Stat(filepath.Join(dir, "obj")); !os.IsNotExist(err) {
		t.Fatalf("obj/ created: %v", err)
	}
	// What Read guards against is real: ninja -n itself creates the folder.
	sh(t, dir, nil, "ninja", "-n")
	if _, err := os.Stat(filepath.Join(dir, "obj")); err != nil {
		t.Fatalf("ninja -n did not create obj/ (%v): the guard may be stale for this ninja", err)
	}
	write(t, dir, map[string]string{"build.ninja": "rule ar\n  command = ar rcs $out @$out.rsp\n  rspfile = $out.rsp\n  rspfile_content = $in\nbuild obj/x.a: ar x.c\n"})
	if b, _ = Read(ctx, dir, Options{}); !errors.Is(b.DryRunErr, ErrLogsUnsafe) || !strings.Contains(b.DryRunErr.Error(), "rspfile obj/x.a.rsp") {
		t.Fatalf("rspfile: %v", b.DryRunErr)
	}
	if b, _ = Read(ctx, dir, Options{AllowDryRunWrites: true}); b.DryRunErr != nil || len(b.DryRun.Commands) != 1 {
		t.Fatalf("allowed: %v %+v", b.DryRunErr, b.DryRun)
	}
}

// TestDyndepInputs: data.h reaches main.o only through the dyndep file a scan edge writes (no depfile):
// ninja loads it and redoes main.o after an edit of data.h, so data.h is a watched input (pending, not
// unseen), and the edge is no compile without dependency information.
func TestDyndepInputs(t *testing.T) {
	need(t, "ninja", "cc")
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"data.h":  "#define D 1\n",
		"main.c":  "#include \"data.h\"\nint main(void) { return D; }\n",
		"scan.sh": "#!/bin/sh\n{ echo 'ninja_dyndep_version = 1'; echo \"build $2: dyndep | data.h\"; } > \"$3\"\n",
		"build.ninja": "rule cc\n  command = cc -c $in -o $out\nrule scan\n  command = sh ./scan.sh $in main.o $out\n" +
			"rule link\n  command = cc $in -o $out\n" +
			"build main.dd: scan main.c\nbuild main.o: cc main.c || main.dd\n  dyndep = main.dd\nbuild app: link main.o\n",
	})
	sh(t, dir, nil, "ninja")
	if e := readBuild(t, dir).ByOutput["main.o"]; e.MissingDepfile != "" || len(e.Pending)+len(e.Unseen) != 0 {
		t.Fatalf("fresh: missing %q pending %+v unseen %+v", e.MissingDepfile, e.Pending, e.Unseen)
	}
	touchLater(t, filepath.Join(dir, "data.h"), "\n")
	if out := sh(t, dir, nil, "ninja", "-n"); !strings.Contains(out, "main.o") {
		t.Fatalf("premise: ninja -n does not redo main.o:\n%s", out)
	}
	e := readBuild(t, dir).ByOutput["main.o"]
	if len(e.Pending) != 1 || e.Pending[0].Path != filepath.Join(dir, "data.h") || len(e.Unseen) != 0 {
		t.Fatalf("after the edit: pending %+v unseen %+v", e.Pending, e.Unseen)
	}
	// A dyndep file ninja refuses: what it adds is unknown, said as such (not a fresh edge).
	dd := filepath.Join(dir, "main.dd")
	write(t, dir, map[string]string{"main.dd": "ninja_dyndep_version = 2\nbuild main.o: dyndep | data.h\n"})
	if out, err := exec.Command("ninja", "-C", dir, "-n").CombinedOutput(); err == nil {
		t.Fatalf("premise: ninja takes a version 2 dyndep file:\n%s", out)
	}
	if e := readBuildDryRunMayFail(t, dir).ByOutput["main.o"]; e.DyndepErr == nil || !strings.Contains(e.DyndepErr.Error(), "unsupported") {
		t.Fatalf("version 2 dyndep file: %v", e.DyndepErr)
	}
	// A FIFO in its place: ninja -n would wait for a writer until its deadline; it is not run.
	if err := os.Remove(dd); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(dd, 0o644); err != nil {
		t.Fatal(err)
	}
	b := readBuildDryRunMayFail(t, dir)
	if e := b.ByOutput["main.o"]; !errors.Is(e.DyndepErr, safeio.ErrNotRegular) || b.DryRunErr == nil || !strings.Contains(b.DryRunErr.Error(), dd) {
		t.Fatalf("FIFO dyndep file: %v; dry run: %v", e.DyndepErr, b.DryRunErr)
	}
}

// TestCommandChangedByIncludedFile: the flags of main.o's command come from flags.ninja, which
// build.ninja includes; after an edit of it (ninja not run) ninja redoes main.o for its command, and the
// record that changed it is flags.ninja, not build.ninja.
func TestCommandChangedByIncludedFile(t *testing.T) {
	need(t, "ninja", "cc")
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"main.c":      "int main(void) { return V; }\n",
		"flags.ninja": "cflags = -DV=0\n",
		"build.ninja": "include flags.ninja\nrule cc\n  command = cc $cflags -c $in -o $out\nbuild main.o: cc main.c\n",
	})
	sh(t, dir, nil, "ninja")
	write(t, dir, map[string]string{"flags.ninja": "cflags = -DV=1\n"})
	touchLater(t, filepath.Join(dir, "flags.ninja"), "")
	b := readBuild(t, dir)
	why, record, ok := (&Origin{Build: b, Edge: b.ByOutput["main.o"]}).OwnReason()
	if !ok || record != filepath.Join(dir, "flags.ninja") {
		t.Fatalf("own reason %q, record %q, ok %v; want flags.ninja", why, record, ok)
	}
}
