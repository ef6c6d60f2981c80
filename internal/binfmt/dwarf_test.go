package binfmt

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func openReader(t testing.TB, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func dwarfVersion(t *testing.T, path string) int {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := f.Section(".debug_info").Data()
	if err != nil || len(b) < 6 {
		t.Fatalf("reading .debug_info: %v", err)
	}
	return int(f.ByteOrder.Uint16(b[4:]))
}

func TestCompileUnitsObjects(t *testing.T) {
	for _, c := range []struct {
		name    string
		flags   []string
		version int
	}{
		{"dwarf5-default", nil, 5},
		{"dwarf4", []string{"-gdwarf-4"}, 4},
		{"dwarf5-zlib", []string{"-gdwarf-5", "-gz=zlib"}, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			buildCObjects(t, dir, c.flags...)
			foo := filepath.Join(dir, "foo.o")
			if c.name != "dwarf5-zlib" {
				if v := dwarfVersion(t, foo); v != c.version {
					t.Fatalf("compiler wrote DWARF %d, test expects %d", v, c.version)
				}
			}
			cus, err := CompileUnits(openReader(t, foo))
			if err != nil {
				t.Fatal(err)
			}
			if len(cus) != 1 {
				t.Fatalf("%d compile units: %+v", len(cus), cus)
			}
			cu := cus[0]
			if cu.Name != "foo.c" || cu.CompDir != dir {
				t.Errorf("Name %q CompDir %q, want foo.c, %s", cu.Name, cu.CompDir, dir)
			}
			if !strings.HasPrefix(cu.Producer, "GNU C") || !strings.Contains(cu.Producer, "-O2") {
				t.Errorf("Producer %q", cu.Producer)
			}
			for _, want := range []string{filepath.Join(dir, "foo.c"), filepath.Join(dir, "inc", "q.h")} {
				if !slices.Contains(cu.Files, want) {
					t.Errorf("Files %q lacks %s", cu.Files, want)
				}
			}
			seen := map[string]bool{}
			for _, f := range cu.Files {
				if !filepath.IsAbs(f) || filepath.Clean(f) != f {
					t.Errorf("file %q is not absolute and clean", f)
				}
				if seen[f] {
					t.Errorf("duplicate file %q", f)
				}
				seen[f] = true
			}
		})
	}
}

// TestCompileUnitsRelativeIncludes compiles with a relative -I folder and a
// header in a sibling folder, from a subfolder, to exercise both
// include-directory forms.
func TestCompileUnitsRelativeIncludes(t *testing.T) {
	need(t, "cc")
	for _, g := range []string{"-gdwarf-4", "-gdwarf-5"} {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "include", "p.h"), "static inline int p(int x) { return x + 7; }\n")
		writeFile(t, filepath.Join(dir, "src", "m.c"), "#include \"p.h\"\nint m(int x) { return p(x); }\n")
		sh(t, filepath.Join(dir, "src"), nil, "cc", g, "-O0", "-I../include", "-c", "m.c", "-o", "m.o")
		cus, err := CompileUnits(openReader(t, filepath.Join(dir, "src", "m.o")))
		if err != nil {
			t.Fatal(err)
		}
		if len(cus) != 1 || !slices.Contains(cus[0].Files, filepath.Join(dir, "include", "p.h")) || !slices.Contains(cus[0].Files, filepath.Join(dir, "src", "m.c")) {
			t.Errorf("%s: %+v", g, cus)
		}
	}
}

func TestCompileUnitsArchiveAndExecutable(t *testing.T) {
	need(t, "cc", "ar")
	dir := t.TempDir()
	objs := buildCObjects(t, dir)
	sh(t, dir, nil, "ar", append([]string{"rcs", "libfoo.a"}, objs...)...)
	a, err := OpenArchive(filepath.Join(dir, "libfoo.a"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range a.Members {
		sr, c, err := a.Open(m)
		if err != nil {
			t.Fatal(err)
		}
		cus, err := CompileUnits(sr)
		c.Close()
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		for _, cu := range cus {
			names = append(names, cu.Name)
		}
	}
	if want := []string{"foo.c", "bar.c", "this_is_a_long_member_name.c"}; !slices.Equal(names, want) {
		t.Errorf("archive CUs %q, want %q", names, want)
	}

	// A program linked from the archive has one CU per linked member (and
	// none for members it did not need).
	writeFile(t, filepath.Join(dir, "main.c"), "int foo(int);\nint main(void) { return foo(1); }\n")
	sh(t, dir, nil, "cc", "-g", "-O2", "main.c", "-L.", "-lfoo", "-o", "app")
	cus, err := CompileUnits(openReader(t, filepath.Join(dir, "app")))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cu := range cus {
		got = append(got, cu.Name)
	}
	if !slices.Contains(got, "main.c") || !slices.Contains(got, "foo.c") || slices.Contains(got, "bar.c") {
		t.Errorf("app CUs %q: want main.c and foo.c, not bar.c", got)
	}
}

func TestCompileUnitsNoDebug(t *testing.T) {
	need(t, "cc")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "n.c"), "int n(void) { return 1; }\n")
	sh(t, dir, nil, "cc", "-g0", "-c", "n.c", "-o", "n.o")
	cus, err := CompileUnits(openReader(t, filepath.Join(dir, "n.o")))
	if cus != nil || err != nil {
		t.Errorf("no-debug object: %v, %v; want nil, nil", cus, err)
	}
	// The CUDA fixtures were built without -g.
	fx := fixtureDir(t)
	cus, err = CompileUnits(openReader(t, filepath.Join(fx, "v1", "kernel.o")))
	if cus != nil || err != nil {
		t.Errorf("v1/kernel.o: %v, %v", cus, err)
	}
}

func TestCompileUnitsBadInput(t *testing.T) {
	need(t, "cc")
	dir := t.TempDir()
	buildCObjects(t, dir)
	good := readFile(t, filepath.Join(dir, "foo.o"))
	var fe *FormatError
	if _, err := CompileUnits(bytes.NewReader([]byte("not an elf file at all, no"))); !errors.As(err, &fe) {
		t.Errorf("non-ELF: %v", err)
	}
	if _, err := CompileUnits(bytes.NewReader(good[:40])); !errors.As(err, &fe) {
		t.Errorf("truncated: %v", err)
	}
	// Corrupt .debug_info and .debug_line byte by byte: an error or a
	// result, never a panic.
	f, err := elf.NewFile(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".debug_info", ".debug_line", ".debug_abbrev", ".debug_str", ".debug_line_str"} {
		s := f.Section(name)
		if s == nil {
			continue
		}
		for i := uint64(0); i < s.Size; i += 3 {
			bad := bytes.Clone(good)
			bad[s.Offset+i] ^= 0xff
			CompileUnits(bytes.NewReader(bad))
		}
	}
	// A .debug_info whose first unit claims more bytes than exist.
	s := f.Section(".debug_info")
	bad := bytes.Clone(good)
	copy(bad[s.Offset:], []byte{0xf0, 0xff, 0xff, 0x0f})
	_, err = CompileUnits(bytes.NewReader(bad))
	if !errors.As(err, &fe) {
		t.Errorf("bad unit length: %v", err)
	}
}

// UnitSources gives CompileUnits' names, folders and producers, unit by unit, with line-table files only
// for the units asked for: on C executables in DWARF 5 and 4 and on a real Rust debug executable (cargo),
// whose units of the standard library have comp_dir /rustc/<hash>.
func TestUnitSourcesAgreesWithCompileUnits(t *testing.T) {
	need(t, "cc", "ar")
	dir := t.TempDir()
	objs := buildCObjects(t, dir)
	sh(t, dir, nil, "ar", append([]string{"rcs", "libfoo.a"}, objs...)...)
	writeFile(t, filepath.Join(dir, "main.c"), "int foo(int);\nint main(void) { return foo(1); }\n")
	sh(t, dir, nil, "cc", "-g", "-O2", "main.c", "-L.", "-lfoo", "-o", "app5")
	sh(t, dir, nil, "cc", "-gdwarf-4", "-O2", "main.c", "-L.", "-lfoo", "-o", "app4")
	bins := []string{filepath.Join(dir, "app5"), filepath.Join(dir, "app4")}
	if _, err := exec.LookPath("cargo"); err == nil {
		ws := filepath.Join(dir, "rs")
		writeFile(t, filepath.Join(ws, "Cargo.toml"), "[package]\nname = \"rs\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
		writeFile(t, filepath.Join(ws, "src", "main.rs"), "mod util;\nfn main() { println!(\"{}\", util::v()); }\n")
		writeFile(t, filepath.Join(ws, "src", "util.rs"), "pub fn v() -> i32 { 7 }\n")
		sh(t, ws, []string{"CARGO_NET_OFFLINE=true", "CARGO_TARGET_DIR=" + filepath.Join(ws, "target")}, "cargo", "build", "-q")
		bins = append(bins, filepath.Join(ws, "target", "debug", "rs"))
	}
	for _, bin := range bins {
		f, err := OpenELF(bin)
		if err != nil {
			t.Fatal(err)
		}
		all, err := f.CompileUnits()
		if err != nil {
			t.Fatal(err)
		}
		// Ask for the line tables of the units not compiled under /rustc (the program's own).
		mine := func(cu CompileUnit) bool { return !strings.HasPrefix(cu.CompDir, "/rustc/") }
		got, err := f.UnitSources(mine)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		if len(got) != len(all) || len(all) == 0 {
			t.Fatalf("%s: %d units, CompileUnits %d", bin, len(got), len(all))
		}
		asked := 0
		for i := range all {
			if got[i].Name != all[i].Name || got[i].CompDir != all[i].CompDir || got[i].Producer != all[i].Producer {
				t.Errorf("%s unit %d: %+v, CompileUnits %+v", bin, i, got[i], all[i])
			}
			want := all[i].Files
			if !mine(all[i]) {
				want = nil
			} else {
				asked++
			}
			if !slices.Equal(got[i].Files, want) {
				t.Errorf("%s unit %d (%s): files %q, want %q", bin, i, all[i].Name, got[i].Files, want)
			}
		}
		if asked == 0 {
			t.Errorf("%s: no unit of the program's own", bin)
		}
		if strings.HasSuffix(bin, "/rs") {
			var names []string
			for _, cu := range got {
				if mine(cu) {
					names = append(names, cu.CompDir)
					for _, p := range cu.Files {
						names = append(names, p)
					}
				}
			}
			if !slices.Contains(names, filepath.Join(dir, "rs")) || !slices.Contains(names, filepath.Join(dir, "rs", "src", "util.rs")) {
				t.Errorf("the Rust executable's own units name %q: want comp_dir %s and src/util.rs", names, filepath.Join(dir, "rs"))
			}
		}
	}

	// Damaged .debug_info: an error naming the file, or a result; never a panic.
	good := readFile(t, bins[0])
	ef, err := elf.NewFile(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	s := ef.Section(".debug_info")
	for i := uint64(0); i < s.Size && i < 4096; i += 7 {
		bad := bytes.Clone(good)
		bad[s.Offset+i] ^= 0xff
		if f, err := NewELF(bytes.NewReader(bad), "bad"); err == nil {
			if _, err := f.UnitSources(func(CompileUnit) bool { return true }); err != nil && !strings.Contains(err.Error(), "bad") {
				t.Errorf("offset %d: error %v does not name the file", i, err)
			}
		}
	}
	bad := bytes.Clone(good)
	ef.ByteOrder.PutUint32(bad[s.Offset:], uint32(s.Size)+100) // the first unit runs past the section
	f, _ := NewELF(bytes.NewReader(bad), "bad")
	var fe *FormatError
	if _, err := f.UnitSources(nil); !errors.As(err, &fe) {
		t.Errorf("a unit longer than .debug_info: %v, want a *FormatError", err)
	}
}
