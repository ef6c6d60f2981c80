package binfmt

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"io"
	"path"
	"strings"
)

// CompileUnit is one DWARF compile unit (DW_TAG_compile_unit, or the skeleton
// unit of split DWARF) of an ELF file: what the compiler compiled, where, with
// which flags, and every source file its line table names.
type CompileUnit struct {
	Name     string // DW_AT_name as written: the main source file, often relative to CompDir ("foo.c")
	CompDir  string // DW_AT_comp_dir: the compiler's working folder ("" if absent)
	Producer string // DW_AT_producer: compiler and, for GCC, its flags ("GNU C17 12.2.0 -mtune=generic -g -O2")
	// Files are the line table's file entries (the main source and every
	// header the compiler read that contributed lines), in table order
	// without duplicates. Relative entries are joined with their include
	// directory and then with CompDir, so with an absolute CompDir every
	// entry is an absolute, cleaned path. Nil when the unit has no line table.
	Files []string
}

// CompileUnits lists the DWARF compile units of the ELF object, executable or
// shared library in r, in .debug_info order. DWARF versions 2 to 5 are read
// (GCC 12 writes 5 by default, -gdwarf-4 gives 4), including SHF_COMPRESSED
// (zlib or zstd) debug sections; on ET_REL objects debug/elf applies the
// x86-64 relocations to the debug sections first.
//
// A file with no .debug_info section returns nil, nil. A file that is not ELF
// returns a *FormatError at offset 0; corrupt DWARF returns a *FormatError
// whose Offset is the offset within .debug_info (or .debug_line) that
// debug/dwarf reports. Memory: debug/dwarf loads the debug sections whole.
func CompileUnits(r io.ReaderAt) ([]CompileUnit, error) {
	f, err := newELF(r, "ELF data")
	if err != nil {
		return nil, err
	}
	return f.CompileUnits()
}

// CompileUnits is the package-level CompileUnits for an already open file;
// errors name f.Name.
func (f *ELFFile) CompileUnits() (cus []CompileUnit, err error) {
	if f.Section(".debug_info") == nil && f.Section(".zdebug_info") == nil {
		return nil, nil
	}
	defer func() {
		// debug/dwarf is fuzzed upstream, but a corrupt section must
		// never take the caller down with it.
		if !catchPanics {
			return
		}
		if p := recover(); p != nil {
			cus, err = nil, formatErr(f.Name, 0, nil, "DWARF decoder failed: %v", p)
		}
	}()
	d, err := f.DWARF()
	if err != nil {
		return nil, dwarfErr(f.Name, ".debug_info", err)
	}
	rd := d.Reader()
	for {
		e, err := rd.Next()
		if err != nil {
			return nil, dwarfErr(f.Name, ".debug_info", err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit && e.Tag != dwarf.TagSkeletonUnit {
			if e.Children {
				rd.SkipChildren()
			}
			continue
		}
		cu := CompileUnit{}
		cu.Name, _ = e.Val(dwarf.AttrName).(string)
		cu.CompDir, _ = e.Val(dwarf.AttrCompDir).(string)
		cu.Producer, _ = e.Val(dwarf.AttrProducer).(string)
		lr, err := d.LineReader(e)
		if err != nil {
			return nil, dwarfErr(f.Name, ".debug_line", err)
		}
		if lr != nil {
			seen := map[string]bool{}
			for _, lf := range lr.Files() {
				if lf == nil || lf.Name == "" {
					continue
				}
				p := absFile(cu.CompDir, lf.Name)
				if !seen[p] {
					seen[p] = true
					cu.Files = append(cu.Files, p)
				}
			}
		}
		cus = append(cus, cu)
		if e.Children {
			rd.SkipChildren()
		}
	}
	return cus, nil
}

// absFile joins a line-table file name with the compilation folder when it is
// relative. debug/dwarf joins DWARF 4 include folders with comp_dir itself,
// but leaves DWARF 5 folder entries as written, so both pass through here.
// Paths use forward slashes: ELF targets are Unix-like.
func absFile(compDir, name string) string {
	if path.IsAbs(name) || compDir == "" {
		return path.Clean(name)
	}
	return path.Join(compDir, name)
}

func dwarfErr(file, section string, err error) error {
	if de, ok := err.(dwarf.DecodeError); ok {
		sec := section
		if de.Name != "" {
			sec = "." + strings.TrimPrefix(de.Name, ".")
			if !strings.HasPrefix(de.Name, "debug") && !strings.HasPrefix(de.Name, ".debug") {
				sec = section
			}
		}
		return formatErr(file, int64(de.Offset), err, "decoding DWARF (offset within %s)", sec)
	}
	if _, ok := err.(*elf.FormatError); ok {
		return formatErr(file, 0, err, "reading DWARF sections")
	}
	return fmt.Errorf("%s: DWARF: %w", file, err)
}
