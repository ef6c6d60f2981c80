package binfmt

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func openELF(t testing.TB, path string) *ELFFile {
	t.Helper()
	f, err := OpenELF(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// readelfSections parses a `readelf -SW` listing: index -> name, type, addr, off, size.
func readelfSections(t *testing.T, text string) map[int][5]string {
	t.Helper()
	re := regexp.MustCompile(`^\s*\[\s*(\d+)\]\s+(\S*)\s+([A-Z_0-9]+)\s+([0-9a-f]{8,16})\s+([0-9a-f]+)\s+([0-9a-f]+)\s`)
	out := map[int][5]string{}
	for _, line := range strings.Split(text, "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		i, _ := strconv.Atoi(m[1])
		name := m[2]
		if m[3] == "NULL" && i == 0 {
			name = ""
		}
		out[i] = [5]string{name, m[3], m[4], m[5], m[6]}
	}
	return out
}

var readelfType = map[elf.SectionType]string{
	elf.SHT_NULL: "NULL", elf.SHT_PROGBITS: "PROGBITS", elf.SHT_NOBITS: "NOBITS", elf.SHT_NOTE: "NOTE",
	elf.SHT_RELA: "RELA", elf.SHT_REL: "REL", elf.SHT_SYMTAB: "SYMTAB", elf.SHT_STRTAB: "STRTAB",
	elf.SHT_DYNSYM: "DYNSYM", elf.SHT_DYNAMIC: "DYNAMIC", elf.SHT_GNU_HASH: "GNU_HASH", elf.SHT_GNU_VERSYM: "VERSYM",
	elf.SHT_GNU_VERNEED: "VERNEED", elf.SHT_INIT_ARRAY: "INIT_ARRAY", elf.SHT_FINI_ARRAY: "FINI_ARRAY", elf.SHT_GROUP: "GROUP",
}

// TestELFSectionsFixtures compares Sections with the readelf listings that
// came with the CUDA fixtures.
func TestELFSectionsFixtures(t *testing.T) {
	fx := fixtureDir(t)
	for _, c := range [][2]string{{"v1/readelf-obj.txt", "v1/kernel.o"}, {"v1/readelf-app.txt", "v1/app"},
		{"v2/readelf-obj.txt", "v2/kernel.o"}, {"v2/readelf-app.txt", "v2/app"}, {"rdc/readelf-obj.txt", "rdc/kernel.o"}} {
		want := readelfSections(t, string(readFile(t, filepath.Join(fx, c[0]))))
		if len(want) == 0 {
			t.Fatalf("%s: no sections parsed", c[0])
		}
		got := openELF(t, filepath.Join(fx, c[1])).SectionList()
		if len(got) != len(want) {
			t.Errorf("%s: %d sections, readelf lists %d", c[1], len(got), len(want))
			continue
		}
		for _, s := range got {
			w := want[s.Index]
			typ, ok := readelfType[s.Type]
			if !ok {
				typ = w[1]
			}
			g := [5]string{s.Name, typ, fmt.Sprintf("%016x", s.Addr), fmt.Sprintf("%06x", s.Offset), fmt.Sprintf("%06x", s.Size)}
			if g != w {
				t.Errorf("%s section %d: %q, readelf %q", c[1], s.Index, g, w)
			}
		}
	}
}

func TestELFSymbolsAgainstNm(t *testing.T) {
	need(t, "nm")
	dir := t.TempDir()
	buildCObjects(t, dir)
	writeFile(t, filepath.Join(dir, "main.c"), "int foo(int); const char *bar(void);\nint main(void) { return foo(1) + !bar(); }\n")
	sh(t, dir, nil, "cc", "-O2", "main.c", "foo.o", "bar.o", "-o", "app")
	for _, file := range []string{"foo.o", "bar.o", "app"} {
		f := openELF(t, filepath.Join(dir, file))
		syms, dyn, err := f.DefinedSymbols()
		if err != nil || dyn {
			t.Fatalf("%s: %v dyn=%v", file, err, dyn)
		}
		got := map[string]string{}
		for _, s := range syms {
			got[s.Name] = fmt.Sprintf("%x %x", s.Value, s.Size)
		}
		// nm -S --defined-only: "value size type name" or "value type name".
		out := sh(t, dir, nil, "nm", "-S", "--defined-only", file)
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			fl := strings.Fields(line)
			if len(fl) != 4 {
				continue
			}
			v, _ := strconv.ParseUint(fl[0], 16, 64)
			sz, _ := strconv.ParseUint(fl[1], 16, 64)
			if g, ok := got[fl[3]]; !ok || g != fmt.Sprintf("%x %x", v, sz) {
				t.Errorf("%s: symbol %s: got %q, nm says %x %x", file, fl[3], g, v, sz)
			}
			n++
		}
		if n == 0 {
			t.Errorf("%s: nm listed no sized symbols", file)
		}
	}
	f := openELF(t, filepath.Join(dir, "foo.o"))
	syms, _, _ := f.DefinedSymbols()
	want := map[string]string{"foo": ".text", "foo_name": ".text", "foo_table": ".data"}
	for _, s := range syms {
		if sec, ok := want[s.Name]; ok {
			if s.Section != sec || s.Bind != elf.STB_GLOBAL || s.Size == 0 {
				t.Errorf("%+v: want section %s, global, sized", s, sec)
			}
			delete(want, s.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("missing symbols %v", want)
	}
	files, err := openELF(t, filepath.Join(dir, "app")).FileSymbols()
	if err != nil || !slices.Contains(files, "foo.c") || !slices.Contains(files, "bar.c") {
		t.Errorf("STT_FILE symbols %q, %v", files, err)
	}

	// After strip only .dynsym is left.
	need(t, "strip")
	sh(t, dir, nil, "strip", "-o", "app.stripped", "app")
	syms, dyn, err := openELF(t, filepath.Join(dir, "app.stripped")).DefinedSymbols()
	if err != nil || !dyn {
		t.Errorf("stripped: dyn=%v err=%v (%d symbols)", dyn, err, len(syms))
	}
}

func TestELFStringsAndNotes(t *testing.T) {
	need(t, "objcopy", "strings", "readelf")
	dir := t.TempDir()
	buildCObjects(t, dir)
	writeFile(t, filepath.Join(dir, "main.c"), `#include <stdio.h>
int foo(int); const char *bar(void); const char *foo_name(void);
int main(void) { printf("%s %s %d\n", foo_name(), bar(), foo(2)); return 0; }
`)
	sh(t, dir, nil, "cc", "-O2", "-Wl,--build-id=sha1", "main.c", "foo.o", "bar.o", "-o", "app")

	foo, err := ReadELFFeatures(openReader(t, filepath.Join(dir, "foo.o")), "foo.o")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(foo.MergedStrings, "hello from q.h header") {
		t.Errorf("foo.o merged strings %q", foo.MergedStrings)
	}
	if foo.BuildID != nil {
		t.Errorf("object has a build-id %x", foo.BuildID)
	}
	if len(foo.Comment) == 0 || !strings.HasPrefix(foo.Comment[0], "GCC: (") {
		t.Errorf("comment %q", foo.Comment)
	}
	bar, err := ReadELFFeatures(openReader(t, filepath.Join(dir, "bar.o")), "bar.o")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(bar.RodataStrings, "bar-tag-string") {
		t.Errorf("bar.o .rodata strings %q", bar.RodataStrings)
	}

	app, err := ReadELFFeatures(openReader(t, filepath.Join(dir, "app")), "app")
	if err != nil {
		t.Fatal(err)
	}
	// Build-id as readelf prints it.
	notes := sh(t, dir, nil, "readelf", "-n", "app")
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindStringSubmatch(notes)
	if m == nil || hex.EncodeToString(app.BuildID) != m[1] || len(app.BuildID) != 20 {
		t.Errorf("build-id %x, readelf says %v", app.BuildID, m)
	}
	// .rodata strings as `strings -n 4` prints them for that section's bytes.
	sh(t, dir, nil, "objcopy", "-O", "binary", "--only-section=.rodata", "app", "rodata.bin")
	want := strings.Split(strings.TrimRight(sh(t, dir, nil, "strings", "-a", "-n", "4", "rodata.bin"), "\n"), "\n")
	if !slices.Equal(app.RodataStrings, want) {
		t.Errorf(".rodata strings\n got %q\nwant %q", app.RodataStrings, want)
	}
	// The literals of the objects' merged string sections survive in the
	// linked .rodata (possibly as a suffix of a longer string).
	for _, s := range foo.MergedStrings {
		found := false
		for _, r := range app.RodataStrings {
			if strings.HasSuffix(r, s) {
				found = true
			}
		}
		if !found {
			t.Errorf("literal %q of foo.o not in app's .rodata", s)
		}
	}
}

// TestELFStringsFixtures compares PrintableStrings with `strings` over the
// .rodata of the CUDA fixture executables.
func TestELFStringsFixtures(t *testing.T) {
	need(t, "objcopy", "strings")
	fx := fixtureDir(t)
	dir := t.TempDir()
	for _, p := range []string{"v1/app", "v2/app", "rdc/app"} {
		f := openELF(t, filepath.Join(fx, p))
		var got []string
		if err := f.PrintableStrings(".rodata", 4, func(_ uint64, s []byte) error {
			got = append(got, string(s))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "rodata.bin")
		sh(t, dir, nil, "objcopy", "-O", "binary", "--only-section=.rodata", filepath.Join(fx, p), out)
		want := strings.Split(strings.TrimRight(sh(t, dir, nil, "strings", "-a", "-n", "4", out), "\n"), "\n")
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d strings, strings(1) printed %d", p, len(got), len(want))
		}
		ft, err := f.Features()
		if err != nil {
			t.Fatal(err)
		}
		if len(ft.BuildID) != 20 || len(ft.Comment) == 0 || len(ft.Symbols) == 0 || ft.FromDynsym {
			t.Errorf("%s: build-id %x comment %q %d symbols dyn=%v", p, ft.BuildID, ft.Comment, len(ft.Symbols), ft.FromDynsym)
		}
	}
	// v2 prints CUZK_TIMING; v1 does not.
	has := func(p string) bool {
		ft, err := ReadELFFeatures(openReader(t, filepath.Join(fx, p)), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range append(ft.RodataStrings, ft.MergedStrings...) {
			if strings.Contains(s, "CUZK_TIMING") {
				return true
			}
		}
		return false
	}
	if has("v1/app") || has("v1/kernel.o") || !has("v2/app") || !has("v2/kernel.o") {
		t.Errorf("CUZK_TIMING: v1/app %v v1/kernel.o %v v2/app %v v2/kernel.o %v", has("v1/app"), has("v1/kernel.o"), has("v2/app"), has("v2/kernel.o"))
	}
}

// sectionStart finds where object section sec of obj was placed in the
// linked file, through a symbol defined in it.
func sectionStart(t *testing.T, obj *ELFFile, idx int, exe *ELFFile) (uint64, bool) {
	t.Helper()
	osyms, _, _ := obj.DefinedSymbols()
	esyms, _, _ := exe.DefinedSymbols()
	for _, s := range osyms {
		if int(s.SectionIndex) != idx || s.Bind != elf.STB_GLOBAL {
			continue
		}
		for _, e := range esyms {
			if e.Name == s.Name {
				return e.Value - s.Value, true
			}
		}
	}
	return 0, false
}

// linkedBytes reads size bytes at virtual address addr of exe.
func linkedBytes(t *testing.T, exe *ELFFile, addr, size uint64) []byte {
	t.Helper()
	for _, s := range exe.File.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && addr >= s.Addr && addr+size <= s.Addr+s.Size {
			b := make([]byte, size)
			if _, err := s.ReadAt(b, int64(addr-s.Addr)); err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("address %#x not in any section", addr)
	return nil
}

// TestMaskedSectionMatchesLinked links objects into executables (PIE and
// not, -fPIC so that GOTPCRELX relocations get relaxed from mov to lea) and
// checks that each object's masked .text and .data equal the linked bytes
// with the same mask applied, and that an edited object does not match.
func TestMaskedSectionMatchesLinked(t *testing.T) {
	need(t, "cc")
	for _, link := range [][]string{{"-no-pie"}, {"-pie"}, {"-pie", "-Wl,-z,pack-relative-relocs"}} {
		t.Run(strings.Join(link, ""), func(t *testing.T) {
			dir := t.TempDir()
			buildCObjects(t, dir, "-fPIC")
			writeFile(t, filepath.Join(dir, "main.c"), "int foo(int); const char *bar(void); extern int foo_table[4];\nint *tp = foo_table;\nint main(void) { return foo(1) + !bar() + *tp; }\n")
			sh(t, dir, nil, "cc", "-O2", "-c", "-fPIC", "main.c", "-o", "main.o")
			args := append(append([]string{}, link...), "main.o", "foo.o", "bar.o", "-o", "app")
			sh(t, dir, nil, "cc", args...)
			exe := openELF(t, filepath.Join(dir, "app"))
			proven := 0
			for _, objName := range []string{"foo.o", "bar.o", "main.o"} {
				obj := openELF(t, filepath.Join(dir, objName))
				for i, s := range obj.File.Sections {
					if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_MERGE != 0 || s.Size == 0 || s.Name == ".eh_frame" {
						continue
					}
					start, ok := sectionStart(t, obj, i, exe)
					if !ok {
						continue
					}
					ms, err := obj.MaskedSection(i)
					if err != nil {
						t.Fatal(err)
					}
					got := linkedBytes(t, exe, start, ms.Size)
					ApplyMask(got, ms.Mask)
					if !bytes.Equal(got, ms.Data) {
						t.Errorf("%s %s: masked bytes differ from the linked ones (mask %v)", objName, s.Name, ms.Mask)
					}
					if ms.Relocs > 0 && ms.MaskedBytes() == 0 {
						t.Errorf("%s %s: %d relocations but nothing masked", objName, s.Name, ms.Relocs)
					}
					if s.Name == ".text" && ms.MaskedBytes() >= ms.Size {
						t.Errorf("%s %s: everything masked", objName, s.Name)
					}
					proven++
				}
			}
			if proven < 4 {
				t.Fatalf("only %d sections compared", proven)
			}

			// The linked file's own relocations: a PIE has dynamic
			// (or RELR) relocations on the pointer tp in .data.
			tpSec := -1
			esyms, _, _ := exe.DefinedSymbols()
			var tpAddr uint64
			for _, s := range esyms {
				if s.Name == "tp" {
					tpSec, tpAddr = int(s.SectionIndex), s.Value
				}
			}
			ms, err := exe.MaskedSection(tpSec)
			if err != nil {
				t.Fatal(err)
			}
			masked := false
			for _, r := range ms.Mask {
				if r.Start <= tpAddr-ms.Addr && tpAddr-ms.Addr+8 <= r.End {
					masked = true
				}
			}
			if link[0] == "-pie" && !masked {
				t.Errorf("pointer tp at %#x in %s not masked: %v", tpAddr, ms.Name, ms.Mask)
			}
			if link[0] == "-no-pie" && masked {
				t.Errorf("non-PIE: tp masked without a relocation: %v", ms.Mask)
			}
		})
	}

	// An edited constant in foo.c changes the masked .text.
	dir := t.TempDir()
	buildCObjects(t, dir)
	a, _ := MaskedSectionByName(openReader(t, filepath.Join(dir, "foo.o")), "foo.o", ".text")
	writeFile(t, filepath.Join(dir, "foo.c"), strings.Replace(srcFoo, "q_twice(x) +", "q_twice(x) * 3 +", 1))
	sh(t, dir, nil, "cc", "-g", "-O2", "-c", "foo.c", "-o", "foo.o")
	b, err := MaskedSectionByName(openReader(t, filepath.Join(dir, "foo.o")), "foo.o", ".text")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Data, b.Data) {
		t.Error("edited foo.c gives the same masked .text")
	}
}

func TestRelocWindow(t *testing.T) {
	for _, c := range []struct {
		m          elf.Machine
		typ        uint32
		off        uint64
		exec       bool
		start, end uint64
	}{
		{elf.EM_X86_64, uint32(elf.R_X86_64_PLT32), 10, true, 10, 14},
		{elf.EM_X86_64, uint32(elf.R_X86_64_64), 0, false, 0, 8},
		{elf.EM_X86_64, uint32(elf.R_X86_64_REX_GOTPCRELX), 3, true, 0, 7},
		{elf.EM_X86_64, uint32(elf.R_X86_64_GOTPCRELX), 1, true, 0, 5},
		{elf.EM_X86_64, uint32(elf.R_X86_64_TLSGD), 4, true, 0, 16},
		{elf.EM_X86_64, uint32(elf.R_X86_64_TLSDESC_CALL), 4, true, 4, 6},
		{elf.EM_X86_64, 43, 10, true, 6, 14},
		{elf.EM_X86_64, 200, 10, true, 2, 18},
		{elf.EM_X86_64, uint32(elf.R_X86_64_NONE), 10, true, 10, 10},
		{elf.EM_AARCH64, uint32(elf.R_AARCH64_CALL26), 8, true, 8, 12},
		{elf.EM_AARCH64, uint32(elf.R_AARCH64_ABS64), 8, false, 8, 16},
		{elf.EM_CUDA, 1, 20, true, 16, 32},
		{elf.EM_CUDA, 1, 28, true, 16, 48},
		{elf.EM_386, uint32(elf.R_386_GOT32X), 2, true, 0, 6},
		{elf.EM_X86_64, uint32(elf.R_X86_64_64), ^uint64(0) - 3, false, ^uint64(0) - 3, ^uint64(0)},
	} {
		s, e := RelocWindow(c.m, c.typ, c.off, c.exec)
		if s != c.start || e != c.end {
			t.Errorf("%v type %d at %d: [%d,%d), want [%d,%d)", c.m, c.typ, c.off, s, e, c.start, c.end)
		}
	}
}

func TestMaskedSectionCUDAObject(t *testing.T) {
	fx := fixtureDir(t)
	// The host .text of v1/kernel.o and v1/app: all relocations masked,
	// the function bytes match.
	obj := openELF(t, filepath.Join(fx, "v1", "kernel.o"))
	exe := openELF(t, filepath.Join(fx, "v1", "app"))
	idx := -1
	for i, s := range obj.File.Sections {
		if s.Name == ".text" {
			idx = i
		}
	}
	ms, err := obj.MaskedSection(idx)
	if err != nil {
		t.Fatal(err)
	}
	start, ok := sectionStart(t, obj, idx, exe)
	if !ok {
		t.Fatal("no global symbol of kernel.o .text in app")
	}
	got := linkedBytes(t, exe, start, ms.Size)
	ApplyMask(got, ms.Mask)
	if !bytes.Equal(got, ms.Data) {
		t.Error("v1 kernel.o .text does not match v1/app")
	}
	// …and v2's does not match v1/app at the same symbol.
	obj2 := openELF(t, filepath.Join(fx, "v2", "kernel.o"))
	if _, err := MaskedSectionByName(bytes.NewReader([]byte("junk")), "x", ".text"); err == nil {
		t.Error("MaskedSectionByName on non-ELF data gave no error")
	}
	if _, err := MaskedSectionByName(openReader(t, filepath.Join(fx, "v2", "kernel.o")), "v2/kernel.o", ".nope"); err == nil {
		t.Error("MaskedSectionByName of a missing section gave no error")
	}
	for i, s := range obj2.File.Sections {
		if s.Name != ".text" {
			continue
		}
		m2, err := obj2.MaskedSection(i)
		if err != nil {
			t.Fatal(err)
		}
		if start2, ok := sectionStart(t, obj2, i, exe); ok {
			got := linkedBytes(t, exe, start2, m2.Size)
			ApplyMask(got, m2.Mask)
			if bytes.Equal(got, m2.Data) {
				t.Error("v2 kernel.o .text matches v1/app")
			}
		}
	}
}

func TestELFBadInput(t *testing.T) {
	need(t, "cc")
	dir := t.TempDir()
	buildCObjects(t, dir)
	good := readFile(t, filepath.Join(dir, "foo.o"))
	var fe *FormatError
	for _, n := range []int{0, 3, 16, 63, 64, 200} {
		_, err := ReadELFFeatures(bytes.NewReader(good[:n]), "foo.o")
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "foo.o") {
			t.Errorf("truncated to %d: %v", n, err)
		}
	}
	// Section header table offset beyond the end.
	bad := bytes.Clone(good)
	bad[0x28] = 0xff
	bad[0x29] = 0xff
	_, err := ReadELFFeatures(bytes.NewReader(bad), "foo.o")
	if !errors.As(err, &fe) {
		t.Errorf("bad e_shoff: %v", err)
	}
	// Cut the file inside the section data: sections whose data is gone
	// report the section's offset.
	f, _ := elf.NewFile(bytes.NewReader(good))
	rel := f.Section(".rela.text")
	cut := bytes.Clone(good)
	// Keep the headers valid but point .rela.text past the end.
	shoff := f.ByteOrder.Uint64(good[0x28:])
	for i, s := range f.Sections {
		if s == rel {
			at := shoff + uint64(i)*64 + 24
			f.ByteOrder.PutUint64(cut[at:], uint64(len(good))-8)
		}
	}
	ef, err := NewELF(bytes.NewReader(cut), "cut.o")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ef.MaskedSection(int(rel.Info))
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "cut.o") || fe.Offset != int64(len(good))-8 {
		t.Errorf("relocations past the end: %v", err)
	}
	// Random single-byte corruption all over: never a panic.
	for i := 0; i < len(good); i += 5 {
		b := bytes.Clone(good)
		b[i] ^= 0xa5
		if ef, err := NewELF(bytes.NewReader(b), "x"); err == nil {
			ef.Features()
			for j := range ef.File.Sections {
				ef.MaskedSection(j)
			}
			ef.CompileUnits()
			ef.Fatbins(nil)
		}
	}
}

func TestOpenELFMissing(t *testing.T) {
	if _, err := OpenELF(filepath.Join(t.TempDir(), "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%v", err)
	}
}
