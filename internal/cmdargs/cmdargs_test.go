package cmdargs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// roles renders Files' answer as "path:role" words, relative to /w.
func roles(cmd string) string {
	var out []string
	for _, w := range Files(cmd, "/w") {
		r := map[Role]string{Argument: "arg", Program: "prog", Written: "out", CopySource: "src"}[w.Role]
		out = append(out, strings.TrimPrefix(w.Path, "/w/")+":"+r)
	}
	return strings.Join(out, " ")
}

func TestFiles(t *testing.T) {
	for cmd, want := range map[string]string{
		// A generator: its arguments, read or written, the text does not say.
		"sh gen.sh table.in table.h": "gen.sh:arg table.in:arg table.h:arg",
		// Outputs by syntax.
		"cc -MMD -MF main.o.d -Iinc -O2 -c main.c -o main.o":  "main.o.d:out main.o:out main.c:arg",
		"sed 's/@X@//' config.h.in > config.h":                "config.h:out s/@X@:arg config.h.in:arg",
		"./gen < data.txt >> out.h 2>err.log":                 "data.txt:arg out.h:out err.log:out gen:prog",
		"gen data.txt 2>&1 | tee log.txt":                     "data.txt:arg log.txt:out",
		"cp a.txt b.txt && install -m 644 c.h include/c.h":    "a.txt:src b.txt:out c.h:src include/c.h:out",
		"touch stamp; rm -f old.o":                            "stamp:out old.o:out",
		"/usr/bin/cmake -E copy_if_different in.h out.h":      "/usr/bin/cmake:prog in.h:src out.h:out",
		"/usr/bin/cmake -E cmake_symlink_library a.so a.so.1": "/usr/bin/cmake:prog a.so:out a.so.1:out",
		"/usr/bin/cmake -E env FOO=1 python3 gen.py":          "/usr/bin/cmake:prog gen.py:arg",
		"ar crs libx.a a.o b.o":                               "crs:arg libx.a:arg a.o:arg b.o:arg",
		"ld -Map app.map -o app main.o @objs.rsp":             "app.map:out app:out main.o:arg",
		"gcc -include force.h -c x.c --output=x.o":            "force.h:arg x.c:arg",
		// A cd moves the folder of later words, on its line only.
		"cd /b && sh /s/gen.sh /s/t.in /b/t.h\nsh gen2.sh": "/s/gen.sh:arg /s/t.in:arg /b/t.h:arg gen2.sh:arg",
		"cd sub && sh gen.sh in.txt":                       "sub/gen.sh:arg sub/in.txt:arg",
		"cd $(DIR) && sh gen.sh in.txt":                    "",
		// Words only the shell can resolve name nothing; quotes are removed; assignments and wrappers skipped.
		"sh gen.sh $IN \"$OUT\" *.txt ~/x `pwd`/y":             "gen.sh:arg",
		"CC=gcc env -i LANG=C sh 'my gen.sh' \"a b.in\" x\\ y": "my gen.sh:arg a b.in:arg x y:arg",
		"@echo hi\n-sh gen.sh in.txt":                          "hi:arg gen.sh:arg in.txt:arg",
		"cat <<EOF > out.h":                                    "",
		"python3 gen.py --out=x.h --input in.json":             "gen.py:arg in.json:arg",
		"(cd sub; make) && true":                               "",
	} {
		if d := cmp.Diff(want, roles(cmd)); d != "" {
			t.Errorf("Files(%q) (-want +got):\n%s", cmd, d)
		}
	}
}

// TestFilesNeverPanics feeds cut and odd command lines (unbalanced quotes, lone operators, escapes at
// the end): Files answers something or nothing, never panics.
func TestFilesNeverPanics(t *testing.T) {
	base := `cd "a b" && sh 'gen.sh' x\ y > "o" 2>&1 | tee -a l; cp a b || rm -f c & 3<in <<<here $(x) ` + "`y`"
	for i := 0; i <= len(base); i++ {
		for _, s := range []string{base[:i], base[i:], base[:i] + "\\", base[:i] + "'", base[:i] + "\"", base[:i] + ">"} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Files(%q) panicked: %v", s, r)
					}
				}()
				for _, w := range Files(s, "/w") {
					if !strings.HasPrefix(w.Path, "/") {
						t.Fatalf("Files(%q): relative path %q", s, w.Path)
					}
				}
			}()
		}
	}
	if got := Files("sh gen.sh in", ""); len(got) != 0 {
		t.Errorf("no folder: relative words resolved: %v", fmt.Sprint(got))
	}
}

// TestLinks: -l libraries with the command's -L folders (all of them, in order, wherever they stand),
// static where -static or -Bstatic is in effect; Candidates in GNU ld's order.
func TestLinks(t *testing.T) {
	got := Links("cd sub && cc -o app main.o -Llib -L /x -lz -Wl,-Bstatic -lm -Wl,-Bdynamic -l:libq.a -l pthread\necho -lnope", "/w")
	want := []Link{
		{Name: "z", Dirs: []string{"/w/sub/lib", "/x"}},
		{Name: "m", Dirs: []string{"/w/sub/lib", "/x"}, Static: true},
		{Name: ":libq.a", Dirs: []string{"/w/sub/lib", "/x"}},
		{Name: "pthread", Dirs: []string{"/w/sub/lib", "/x"}},
	}
	for i := range got {
		got[i].Line = ""
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Links (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"/w/sub/lib/libz.so", "/w/sub/lib/libz.a", "/x/libz.so", "/x/libz.a"}, got[0].Candidates()); d != "" {
		t.Errorf("Candidates of -lz:\n%s", d)
	}
	if d := cmp.Diff([]string{"/w/sub/lib/libm.a", "/x/libm.a"}, got[1].Candidates()); d != "" {
		t.Errorf("Candidates of a static -lm:\n%s", d)
	}
	if d := cmp.Diff([]string{"/w/sub/lib/libq.a", "/x/libq.a"}, got[2].Candidates()); d != "" {
		t.Errorf("Candidates of -l:libq.a:\n%s", d)
	}
	if l := Links("cc -o app main.o -lz", "/w"); len(l) != 0 {
		t.Errorf("no -L folder: %v", l)
	}
}

// TestWithoutPrinting: lines that only print (echo, printf, CMake's progress lines) are dropped; a
// line that prints into a file, or does anything else beside printing, stays.
func TestWithoutPrinting(t *testing.T) {
	cmd := "@/usr/bin/cmake -E cmake_echo_color --switch= --green --progress-num=3 \"Building C object x.o\"\n" +
		"cc -c x.c -o x.o\necho done\necho v > version.h\nprintf 'a\\n' && touch y\n: nothing"
	if got, want := WithoutPrinting(cmd), "cc -c x.c -o x.o\necho v > version.h\nprintf 'a\\n' && touch y"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
