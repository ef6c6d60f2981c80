package makefile

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// genTree writes a Make tree of nObj objects in 20 folders (one header each), up to date: every
// source includes its folder's header, every object has a gcc-style .d file and the Makefile includes
// them. Objects are copies of one real `cc -g -MMD` object (so DWARF is read for each), the program a
// copy of a real linked program; mtimes are sources < objects < program.
func genTree(b *testing.B, nObj int) string {
	b.Helper()
	dir := b.TempDir()
	writeFiles(b, dir, map[string]string{"seed/h.h": "struct s { int a; };\n", "seed/x.c": "#include \"h.h\"\nint main(void) { struct s v = {0}; return v.a; }\n"})
	cmd := exec.Command("cc", "-g", "-O0", "-MMD", "-c", "-o", "x.o", "x.c")
	cmd.Dir = filepath.Join(dir, "seed")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("cc: %v %s", err, out)
	}
	cmd = exec.Command("cc", "-o", "prog", "x.o")
	cmd.Dir = filepath.Join(dir, "seed")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("cc: %v %s", err, out)
	}
	obj, err := os.ReadFile(filepath.Join(dir, "seed", "x.o"))
	if err != nil {
		b.Fatal(err)
	}
	prog, err := os.ReadFile(filepath.Join(dir, "seed", "prog"))
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	set := func(p string, t time.Time) {
		if err := os.Chtimes(p, t, t); err != nil {
			b.Fatal(err)
		}
	}
	var objs []string
	for i := 0; i < nObj; i++ {
		d := fmt.Sprintf("src/d%02d", i%20)
		name := fmt.Sprintf("%s/f%04d", d, i)
		writeFiles(b, dir, map[string]string{
			d + "/h.h":  "struct s { int a; };\n",
			name + ".c": fmt.Sprintf("#include \"h.h\"\nint f%d(void) { struct s v = {%d}; return v.a; }\n", i, i),
			name + ".d": fmt.Sprintf("%s.o: %s.c %s/h.h\n", name, name, d),
		})
		if err := os.WriteFile(filepath.Join(dir, name+".o"), obj, 0o644); err != nil {
			b.Fatal(err)
		}
		set(filepath.Join(dir, name+".c"), t0)
		set(filepath.Join(dir, d, "h.h"), t0)
		set(filepath.Join(dir, name+".d"), t0.Add(time.Second))
		set(filepath.Join(dir, name+".o"), t0.Add(time.Second))
		objs = append(objs, name+".o")
	}
	mk := "CFLAGS = -g -O0 -MMD -Isrc\nOBJS = " + strings.Join(objs, " \\\n  ") + "\n" +
		"prog: $(OBJS)\n\t$(CC) -o $@ $^\n-include $(OBJS:.o=.d)\n"
	writeFiles(b, dir, map[string]string{"Makefile": mk})
	set(filepath.Join(dir, "Makefile"), t0)
	if err := os.WriteFile(filepath.Join(dir, "prog"), prog, 0o755); err != nil {
		b.Fatal(err)
	}
	set(filepath.Join(dir, "prog"), t0.Add(2*time.Second))
	if err := os.RemoveAll(filepath.Join(dir, "seed")); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkMake2000 reads a generated, up-to-date tree of 2,000 objects: Read (both make passes,
// parsing, depfiles, DWARF of every object) against `make -n -q` alone.
func BenchmarkMake2000(b *testing.B) {
	needTools(b)
	dir := genTree(b, 2000)
	b.Run("make-n-q", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			cmd := exec.Command("make", "-n", "-q", "--no-print-directory")
			cmd.Dir, cmd.Env = dir, append(os.Environ(), "MAKEFLAGS=")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("make -n -q: %v %s", err, out)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		f, err := Detect(dir)
		if err != nil || f == nil {
			b.Fatalf("Detect: %v", err)
		}
		for i := 0; i < b.N; i++ {
			bd, err := Read(context.Background(), f)
			if err != nil {
				b.Fatal(err)
			}
			if len(bd.Steps) != 2001 || len(bd.Facts) != 0 || len(bd.Problems) != 0 {
				b.Fatalf("%d steps, facts %v, problems %v", len(bd.Steps), bd.Facts, bd.Problems)
			}
		}
	})
}
