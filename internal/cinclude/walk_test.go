package cinclude

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stalecheck/stalecheck/internal/depfile"
)

// walkAll follows a walk from the source breadth-first and returns every file it reaches, relative to
// dir, sorted.
func walkAll(w *Walk, sp SearchPath, src, dir string) []string {
	seen := map[string]bool{src: true}
	queue := []string{src}
	var out []string
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, inc := range w.Includes(f) {
			p, _, _ := sp.Resolve(inc, filepath.Dir(f), true)
			if p == "" || seen[p] {
				continue
			}
			seen[p] = true
			queue = append(queue, p)
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

// A computed include is followed through the macro a header defines, through a macro naming another
// macro, and through a -D option: the walk reaches what gcc's own depfile names.
func TestWalkComputedIncludes(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"src/a.c":           "#include FROM_CMDLINE\n#include \"lib.h\"\n#include LIB_IMPL\nint a;\n",
		"include/lib.h":     "#ifndef LIB_H\n#define LIB_H\n#define LIB_IMPL IMPL_NAME\n#define IMPL_NAME \"impl.h\"\n#endif\n",
		"include/impl.h":    "#include NESTED\n",
		"include/nested.h":  "/* reached through impl.h's computed include */\n",
		"include/cmdline.h": "#define NESTED <nested.h>\n",
		"include/unused.h":  "/* named by no macro */\n",
	}
	for p, s := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flags := []string{"-Iinclude", `-DFROM_CMDLINE="cmdline.h"`}
	sp := ParseSearchFlags(flags, dir)
	src := filepath.Join(dir, "src/a.c")
	c := NewCache()
	got := walkAll(c.NewWalk(sp, CommandDefines(flags), src), sp, src, dir)
	want := []string{"include/cmdline.h", "include/impl.h", "include/lib.h", "include/nested.h"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
	// Without a walk, only the literal include is listed.
	if incs := c.Includes(src); len(incs) != 1 || incs[0].Name != "lib.h" {
		t.Errorf("Includes: %+v", incs)
	}
	// The premise: gcc reads the same files.
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("gcc is not installed: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gcc, append(append([]string{"-MM"}, flags...), "src/a.c")...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gcc -MM: %v", err)
	}
	f, err := depfile.Parse(bytes.NewReader(out))
	if err != nil || len(f.Rules) != 1 {
		t.Fatalf("gcc -MM: %q (%v)", out, err)
	}
	var read []string
	for _, p := range f.Rules[0].Prereqs[1:] {
		read = append(read, filepath.Clean(p))
	}
	sort.Strings(read)
	if diff := cmp.Diff(read, got); diff != "" {
		t.Errorf("walk against gcc -MM (-gcc +walk):\n%s", diff)
	}
}

// Two definitions of one macro (an #ifdef choosing) name both headers, each marked Cond; a function-like
// macro and a body that is not a header name are not definitions.
func TestWalkConditionalDefinitions(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.c":    "#include \"cfg.h\"\n#include IMPL\n#include FN(x)\n",
		"cfg.h":  "#ifdef FAST\n#define IMPL \"fast.h\"\n#else\n#define IMPL \"slow.h\"\n#endif\n#define FN(x) \"fn.h\"\n#define NUM 3\n",
		"fast.h": "", "slow.h": "", "fn.h": "",
	}
	for p, s := range files {
		os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644)
	}
	c := NewCache()
	src := filepath.Join(dir, "a.c")
	w := c.NewWalk(SearchPath{}, nil, src)
	var got []string
	for _, inc := range w.Includes(src) {
		got = append(got, inc.Text()+map[bool]string{true: " cond"}[inc.Cond])
	}
	want := []string{`"cfg.h"`, `IMPL (= "fast.h") cond`, `IMPL (= "slow.h") cond`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("includes (-want +got):\n%s", diff)
	}
	if d := CommandDefines(strings.Fields("-DNUM=3 -D X=<x.h> -DFLAG")); len(d) != 1 || d[0].Name != "X" || d[0].Body != "<x.h>" {
		t.Errorf("CommandDefines: %+v", d)
	}
}

// The mention scan reads the system headers a compile reaches: -DNDEBUG matters to a source that
// includes <assert.h> without naming NDEBUG itself; a macro no file names does not.
func TestMentionsThroughSystemHeaders(t *testing.T) {
	if _, err := os.Stat("/usr/include/assert.h"); err != nil {
		t.Skip("no /usr/include/assert.h")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "a.c")
	os.WriteFile(src, []byte("#include <assert.h>\nint f(int x) { assert(x); return x; }\n"), 0o644)
	c := NewCache()
	if where, certain := c.Mentions(SearchPath{}, nil, []string{"NDEBUG"}, src); where != "/usr/include/assert.h" || !certain {
		t.Errorf("NDEBUG: %q %v", where, certain)
	}
	if where, certain := c.Mentions(SearchPath{}, nil, []string{"TRUTH_NEVER_NAMED"}, src); where != "" || !certain {
		t.Errorf("an unnamed macro: %q %v", where, certain)
	}
	// An unconditional #include found nowhere: a "no" cannot be trusted.
	os.WriteFile(src, []byte("#include \"missing.h\"\n"), 0o644)
	if where, certain := NewCache().Mentions(SearchPath{}, nil, []string{"X"}, src); where != "" || certain {
		t.Errorf("missing header: %q %v", where, certain)
	}
}
