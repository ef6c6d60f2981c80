package cinclude

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/depfile"
)

func TestParseIncludes(t *testing.T) {
	src := `#ifndef X_H
#define X_H
#include "a.h" // first
/* #include "commented.h" */
#  include <b.h>
/* a block
#include "inside-comment.h"
*/
#if defined(FAST)
#include "fast.h"
#else
#include "slow.h"
#endif
#include MACRO_HEADER
#endif
`
	var got []string
	for _, l := range Parse([]byte(src)) {
		got = append(got, l.Name+map[bool]string{true: "?", false: ""}[l.Cond]+map[bool]string{true: "<>", false: ""}[l.Angle])
	}
	want := []string{"a.h", "b.h<>", "fast.h?", "slow.h?"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("includes %v, want %v (the guard is not a condition; comments are skipped)", got, want)
	}
	// Not a guard: #ifndef followed by something other than its #define.
	ls := Parse([]byte("#ifndef FOO\n#include \"a.h\"\n#endif\n"))
	if len(ls) != 1 || !ls[0].Cond {
		t.Fatalf("an #ifndef that is not an include guard must make its include conditional: %+v", ls)
	}
	// Not a guard either: #ifndef X then #define Y.
	ls = Parse([]byte("#ifndef X\n#define Y\n#include \"a.h\"\n#endif\n"))
	if len(ls) != 1 || !ls[0].Cond {
		t.Fatalf("#ifndef X / #define Y is no guard: %+v", ls)
	}
}

// Line numbers name the directive's first physical line; #import counts; an inline comment between
// the directive and its name, and a block comment opened after a directive, are skipped.
func TestParseLinesAndComments(t *testing.T) {
	src := "int x; /* open\n#include \"in-comment.h\"\n*/ #include \"after-comment.h\"\n" +
		"#include \\\n  \"continued.h\"\n#import <objc.h>\n#include /* why */ \"inline.h\"\n#include_next <next.h>\n#include <>\n"
	got := Parse([]byte(src))
	want := []Include{{Name: "after-comment.h", Line: 3}, {Name: "continued.h", Line: 4},
		{Name: "objc.h", Angle: true, Line: 6}, {Name: "inline.h", Line: 7}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse:\n got %+v\nwant %+v", got, want)
	}
	in := false
	if s := StripComments(`a /* b */ c // d`, &in); s != "a   c " || in {
		t.Fatalf("StripComments %q (open %v)", s, in)
	}
	if s := StripComments(`a /* b`, &in); s != "a  " || !in {
		t.Fatalf("StripComments leaves %q, open %v", s, in)
	}
	if q := (Include{Name: "x.h", Angle: true}).Quoted(); q != "<x.h>" {
		t.Fatalf("Quoted %s", q)
	}
}

func TestFlag(t *testing.T) {
	words := strings.Fields(`cc -Iinc -I /abs -I- -iquote q -isystem=sys -idirafterafter --include-path nv --system-include nvs -include f.h -c x.c -I`)
	sp := ParseSearchFlags(words, "/b")
	want := SearchPath{Quote: []string{"/b/q"}, Dirs: []string{"/b/inc", "/abs", "/b/nv"}, System: []string{"/b/sys", "/b/nvs"}, After: []string{"/b/after"}}
	if !reflect.DeepEqual(sp, want) {
		t.Fatalf("ParseSearchFlags:\n got %+v\nwant %+v", sp, want)
	}
	if f, d, next, ok := Flag([]string{"-I", "", "x"}, 0, "/b"); !ok || f != "-I" || d != "" || next != 1 {
		t.Fatalf("-I with an empty folder: %q %q %d %v", f, d, next, ok)
	}
	if f, d, next, ok := Flag([]string{"-Irel/../x"}, 0, ""); !ok || f != "-I" || d != "x" || next != 0 {
		t.Fatalf("-I without a working folder: %q %q %d %v", f, d, next, ok)
	}
	if _, _, _, ok := Flag([]string{"-include", "f.h"}, 0, "/b"); ok {
		t.Fatal("-include is not a search folder")
	}
	if got := sp.All(); !reflect.DeepEqual(got, []string{"/b/q", "/b/inc", "/abs", "/b/nv", "/b/sys", "/b/nvs", "/b/after"}) {
		t.Fatalf("All %v", got)
	}
	if !IsSystemHeader("/usr/include/stdio.h") || !IsSystemHeader("/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h") ||
		!IsSystemHeader("/usr/local/cuda-12.2/include/cuda.h") || !IsSystemHeader("/usr/lib/gcc-cross/x/include/a.h") ||
		IsSystemHeader("/usr/includes/x.h") || IsSystemHeader("/home/u/usr/include/x.h") {
		t.Error("IsSystemHeader misjudges a path")
	}
}

// Resolve follows GCC's search order: each case is compiled by the real gcc with -M (it prints the
// headers it read and writes nothing) and Resolve must pick the same file.
func TestResolveMatchesGCC(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("gcc is not installed: %v", err)
	}
	dir := t.TempDir()
	for _, p := range []string{"src/x.h", "q/x.h", "q/q.h", "i/x.h", "i/y.h", "i/q.h", "s/y.h", "s/z.h", "s/w.h", "a/w.h", "a/v.h", "i2/v.h"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte("/* "+p+" */\n"), 0o644)
	}
	// -isystem before -I on the command line: GCC still searches -I first.
	flags := strings.Fields("-isystem s -iquote q -I i -idirafter a -I i2")
	sp := ParseSearchFlags(flags, dir)
	own := filepath.Join(dir, "src")
	for _, inc := range []Include{{Name: "x.h"}, {Name: "x.h", Angle: true}, {Name: "q.h"}, {Name: "q.h", Angle: true},
		{Name: "y.h", Angle: true}, {Name: "z.h"}, {Name: "w.h", Angle: true}, {Name: "v.h"}, {Name: "none.h"}} {
		src := filepath.Join(own, "t.c")
		os.WriteFile(src, []byte("#include "+inc.Quoted()+"\n"), 0o644)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, gcc, append(append([]string{"-M", "-MG", "-nostdinc"}, flags...), src)...)
		cmd.Dir = dir
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("gcc -M for %s: %v", inc.Quoted(), err)
		}
		f, err := depfile.Parse(bytes.NewReader(out))
		if err != nil || len(f.Rules) != 1 || len(f.Rules[0].Prereqs) < 2 {
			t.Fatalf("gcc -M for %s: %q (%v)", inc.Quoted(), out, err)
		}
		// The source, the implicit /usr/include/stdc-predef.h, then the header.
		want := f.Rules[0].Prereqs[len(f.Rules[0].Prereqs)-1]
		if !filepath.IsAbs(want) {
			want = filepath.Join(dir, want) // gcc names what it found through a relative folder relatively
		}
		if !isFile(want) {
			want = "" // -MG: not found, named as written
		}
		got, flag, d := sp.Resolve(inc, own, true)
		if got != filepath.Clean(want) && !(want == "" && got == "") {
			t.Errorf("%s: Resolve %q (%s %s), gcc read %q", inc.Quoted(), got, flag, d, want)
		}
	}
	// An absolute name; a system folder passed over only with skipSystem.
	abs := filepath.Join(dir, "i", "x.h")
	if got, flag, _ := sp.Resolve(Include{Name: abs, Angle: true}, own, true); got != abs || flag != "absolute" {
		t.Errorf("absolute: %q %q", got, flag)
	}
	sys := SearchPath{Dirs: []string{"/usr/include", filepath.Join(dir, "i")}}
	if _, err := os.Stat("/usr/include/stdio.h"); err == nil {
		if got, flag, _ := sys.Resolve(Include{Name: "stdio.h", Angle: true}, own, false); got != "/usr/include/stdio.h" || flag != "-I" {
			t.Errorf("system folder searched: %q %q", got, flag)
		}
		if got, _, _ := sys.Resolve(Include{Name: "stdio.h", Angle: true}, own, true); got != "" {
			t.Errorf("system folder skipped: %q", got)
		}
	}
}

// The cache parses each file once and answers from many goroutines at once (run with -race).
func TestCacheConcurrent(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 20 {
		p := filepath.Join(dir, fmt.Sprintf("h%d.h", i))
		os.WriteFile(p, fmt.Appendf(nil, "#pragma once\n#include \"h%d.h\"\n", i+1), 0o644)
		paths = append(paths, p)
	}
	paths = append(paths, filepath.Join(dir, "missing.h"), dir)
	c := NewCache()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				p := paths[(g+k)%len(paths)]
				got := c.Includes(p)
				if strings.HasPrefix(filepath.Base(p), "h") {
					var n int
					fmt.Sscanf(filepath.Base(p), "h%d.h", &n)
					if len(got) != 1 || got[0].Name != fmt.Sprintf("h%d.h", n+1) || got[0].Line != 2 {
						t.Errorf("%s: %+v", p, got)
						return
					}
				} else if got != nil {
					t.Errorf("%s (not a readable file): %+v", p, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	// A file edited after its first read is still answered from the cache (one parse per check).
	os.WriteFile(paths[0], []byte("\n"), 0o644)
	if got := c.Includes(paths[0]); len(got) != 1 {
		t.Fatalf("cached answer lost: %+v", got)
	}
	if got := NewCache().Includes(paths[0]); got != nil {
		t.Fatalf("a fresh cache reads the file again: %+v", got)
	}
}
