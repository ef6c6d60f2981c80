package binfmt

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"io"
	"path"
	"runtime/debug"
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

// UnitSources lists the DWARF compile units of the file like CompileUnits, but decodes only each unit's
// first entry (Name and CompDir; Producer too), seeking from unit to unit by the unit headers' lengths
// instead of walking every entry, and reads the line tables (Files) only of the units want accepts
// (nil: none). Only .debug_abbrev, .debug_info and the string sections are loaded for the first pass
// (on a 54 MB debug Rust executable: 795 units in 19 MB of .debug_info, against every entry of them
// and every debug section for CompileUnits), .debug_line only when a unit is wanted. Relocatable
// objects (ET_REL) go through debug/elf's DWARF, which applies their relocations. Errors as
// CompileUnits.
func (f *ELFFile) UnitSources(want func(CompileUnit) bool) (cus []CompileUnit, err error) {
	infoSec := f.Section(".debug_info")
	if infoSec == nil {
		if f.Section(".zdebug_info") == nil {
			return nil, nil
		}
		return f.filterUnits(want) // the old GNU compression: debug/elf knows it
	}
	if f.Type == elf.ET_REL {
		return f.filterUnits(want)
	}
	if f.mapped != nil {
		// A page of the mapping that cannot be read (the file was truncated) faults: make that a panic
		// of this goroutine, which the recover below turns into an error.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	}
	defer func() {
		if !catchPanics {
			return
		}
		if p := recover(); p != nil {
			cus, err = nil, formatErr(f.Name, 0, nil, "DWARF decoder failed: %v", p)
		}
	}()
	load := func(name string) ([]byte, error) {
		s := f.Section(name)
		if s == nil || s.Type == elf.SHT_NOBITS {
			return nil, nil
		}
		if f.mapped != nil && s.Flags&elf.SHF_COMPRESSED == 0 && s.Offset <= uint64(len(f.mapped)) && s.FileSize <= uint64(len(f.mapped))-s.Offset {
			return f.mapped[s.Offset : s.Offset+s.FileSize : s.Offset+s.FileSize], nil
		}
		b, err := s.Data()
		if err != nil {
			return nil, f.secErr(s, err, "reading")
		}
		return b, nil
	}
	info, err := load(".debug_info")
	if err != nil {
		return nil, err
	}
	abbrev, err := load(".debug_abbrev")
	if err != nil {
		return nil, err
	}
	str, err := load(".debug_str")
	if err != nil {
		return nil, err
	}
	open := func(line []byte) (*dwarf.Data, error) {
		d, err := dwarf.New(abbrev, nil, nil, info, line, nil, nil, str)
		if err != nil {
			return nil, dwarfErr(f.Name, ".debug_info", err)
		}
		for _, name := range []string{".debug_line_str", ".debug_str_offsets", ".debug_addr", ".debug_rnglists"} {
			b, err := load(name)
			if err != nil {
				return nil, err
			}
			if b != nil {
				if err := d.AddSection(name, b); err != nil {
					return nil, dwarfErr(f.Name, name, err)
				}
			}
		}
		return d, nil
	}
	d, err := open(nil)
	if err != nil {
		return nil, err
	}
	bo := f.ByteOrder
	var wanted []int
	var offs []dwarf.Offset
	rd := d.Reader()
	for off := uint64(0); off+4 <= uint64(len(info)); {
		n, hdr := uint64(bo.Uint32(info[off:])), uint64(4)
		if n == 0xffffffff {
			if off+12 > uint64(len(info)) {
				return nil, formatErr(f.Name, int64(off), nil, "truncated 64-bit DWARF unit header in .debug_info")
			}
			n, hdr = bo.Uint64(info[off+4:]), 12
		}
		if n < 2 || n > uint64(len(info))-off-hdr {
			return nil, formatErr(f.Name, int64(off), nil, "DWARF unit length %d runs past the end of .debug_info (%d bytes)", n, len(info))
		}
		next := off + hdr + n
		// Reader.Seek takes the offset of an entry: the unit's first one follows its header (DWARF 2-4:
		// version, abbreviation offset, address size; 5: version, unit type, address size, abbreviation
		// offset, and the 8-byte id of a skeleton or split unit).
		offSize := uint64(4) // 32-bit DWARF; 8 in 64-bit
		if hdr == 12 {
			offSize = 8
		}
		die := off + hdr + 2 + offSize + 1
		if v := bo.Uint16(info[off+hdr:]); v >= 5 {
			die = off + hdr + 2 + 1 + 1 + offSize
			switch info[off+hdr+2] {
			case 0x01, 0x03: // DW_UT_compile, DW_UT_partial
			case 0x04, 0x05: // DW_UT_skeleton, DW_UT_split_compile
				die += 8
			default: // type units: no compile unit inside
				off = next
				continue
			}
		}
		if die >= next {
			return nil, formatErr(f.Name, int64(off), nil, "DWARF unit of %d bytes is shorter than its header", n)
		}
		rd.Seek(dwarf.Offset(die))
		e, err := rd.Next()
		if err != nil {
			return nil, dwarfErr(f.Name, ".debug_info", err)
		}
		if e != nil && (e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagSkeletonUnit) {
			cu := CompileUnit{}
			cu.Name, _ = e.Val(dwarf.AttrName).(string)
			cu.CompDir, _ = e.Val(dwarf.AttrCompDir).(string)
			cu.Producer, _ = e.Val(dwarf.AttrProducer).(string)
			if want != nil && want(cu) {
				wanted = append(wanted, len(cus))
			}
			cus = append(cus, cu)
			offs = append(offs, dwarf.Offset(die))
		}
		off = next
	}
	if len(wanted) == 0 {
		return cus, nil
	}
	line, err := load(".debug_line")
	if err != nil || line == nil {
		return cus, err
	}
	if d, err = open(line); err != nil {
		return nil, err
	}
	rd = d.Reader()
	for _, i := range wanted {
		rd.Seek(offs[i])
		e, err := rd.Next()
		if err != nil || e == nil {
			return nil, dwarfErr(f.Name, ".debug_info", err)
		}
		lr, err := d.LineReader(e)
		if err != nil {
			return nil, dwarfErr(f.Name, ".debug_line", err)
		}
		if lr == nil {
			continue
		}
		seen := map[string]bool{}
		for _, lf := range lr.Files() {
			if lf == nil || lf.Name == "" {
				continue
			}
			if p := absFile(cus[i].CompDir, lf.Name); !seen[p] {
				seen[p] = true
				cus[i].Files = append(cus[i].Files, p)
			}
		}
	}
	return cus, nil
}

// filterUnits is UnitSources through CompileUnits: every unit's line table is read, and dropped from
// the units want does not accept.
func (f *ELFFile) filterUnits(want func(CompileUnit) bool) ([]CompileUnit, error) {
	cus, err := f.CompileUnits()
	for i := range cus {
		files := cus[i].Files
		cus[i].Files = nil
		if want != nil && want(cus[i]) {
			cus[i].Files = files
		}
	}
	return cus, err
}
