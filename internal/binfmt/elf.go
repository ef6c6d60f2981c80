package binfmt

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// ELFFile is an ELF object, executable or shared library opened through
// debug/elf, with the name used in errors. All methods read from the
// underlying io.ReaderAt on demand.
type ELFFile struct {
	*elf.File
	Name string // file name (or "archive.a(member.o)") used in errors

	r      io.ReaderAt
	closer io.Closer
	mapped []byte // the whole file, when MapELF mapped it: sections are sliced from it, not copied

	dynMask []addrRange // ET_EXEC/ET_DYN: masked address ranges of all relocations, sorted; built lazily
	dynDone bool

	allSyms  []elf.Symbol // the whole symbol table, read once by RelocTargets
	symsDone bool
}

// OpenELF opens the ELF file at path. Close releases it.
func OpenELF(path string) (*ELFFile, error) {
	fh, err := safeio.Open(path)
	if err != nil {
		return nil, err
	}
	f, err := NewELF(fh, path)
	if err != nil {
		fh.Close()
		return nil, err
	}
	f.closer = fh
	return f, nil
}

// MapELF maps the ELF file at path read-only (mmap) and reads its headers; Close unmaps it. Sections
// that UnitSources reads are then slices of the mapping: only the pages decoded are read from the page
// cache (the unit headers and the strings they name, of a 54 MB debug executable's 36 MB of
// .debug_info and .debug_str). A fault on the mapping (the file truncated meanwhile) is an error of
// the call that touched it, not a crash. Errors name the file.
func MapELF(path string) (*ELFFile, error) {
	fh, err := safeio.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, formatErr(path, 0, nil, "empty file, not ELF")
	}
	data, err := unix.Mmap(int(fh.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", path, err)
	}
	f, err := newELF(bytes.NewReader(data), path)
	if err != nil {
		unix.Munmap(data)
		return nil, err
	}
	f.mapped = data
	f.closer = unmapper(data)
	return f, nil
}

// Mapped is the whole file as MapELF mapped it (nil for a file it did not map); valid until Close.
func (f *ELFFile) Mapped() []byte { return f.mapped }

type unmapper []byte

func (u unmapper) Close() error { return unix.Munmap(u) }

// NewELF reads the ELF header, section headers and program headers from r.
// name is used in errors only. Data that is not ELF, or whose headers are
// inconsistent, gives a *FormatError with the byte offset debug/elf reports.
func NewELF(r io.ReaderAt, name string) (*ELFFile, error) {
	return newELF(r, name)
}

func newELF(r io.ReaderAt, name string) (ef *ELFFile, err error) {
	defer func() {
		if !catchPanics {
			return
		}
		if p := recover(); p != nil {
			ef, err = nil, formatErr(name, 0, nil, "ELF decoder failed: %v", p)
		}
	}()
	var head [16]byte
	n, _ := r.ReadAt(head[:], 0)
	if what := notELF(head[:n]); what != "" {
		return nil, formatErr(name, 0, nil, "not an ELF file: %s", what)
	}
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, elfErr(name, err)
	}
	return &ELFFile{File: f, Name: name, r: r}, nil
}

// notELF says what a file whose first bytes are head is, when it is no ELF file ("" when it may be one),
// so that an archive or a script given as a binary is named as such rather than by debug/elf's "bad
// magic number '[33 60 97 114]'".
func notELF(head []byte) string {
	b := string(head)
	switch {
	case len(head) == 0:
		return "it is empty"
	case strings.HasPrefix(b, "\x7fELF") && len(head) >= 16:
		return ""
	case strings.HasPrefix(b, "\x7fELF"):
		return fmt.Sprintf("it ends after %d bytes, inside the ELF header", len(head))
	case strings.HasPrefix(b, arMagic) || strings.HasPrefix(b, thinMagic):
		return "it is an ar archive (a static library), not a program"
	case strings.HasPrefix(b, "#!"):
		return "it is a script (#!), not a compiled program"
	case strings.HasPrefix(b, "MZ"):
		return "it is a Windows (PE) executable"
	case len(head) >= 4 && (binary.BigEndian.Uint32(head) == 0xfeedface || binary.BigEndian.Uint32(head) == 0xfeedfacf ||
		binary.LittleEndian.Uint32(head) == 0xfeedface || binary.LittleEndian.Uint32(head) == 0xfeedfacf || binary.BigEndian.Uint32(head) == 0xcafebabe):
		return "it is a Mach-O file"
	case utf8.Valid(head) && !bytes.ContainsAny(head, "\x00"):
		return "it is text"
	}
	return fmt.Sprintf("it begins with the bytes % x", head[:min(len(head), 4)])
}

// catchPanics makes the public entry points turn a panic inside debug/elf or
// debug/dwarf (on hostile input) into a *FormatError. The fuzz tests turn it
// off so that any panic, ours or the standard library's, is reported.
var catchPanics = true

// Close closes the file opened by OpenELF; it does nothing for NewELF.
func (f *ELFFile) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

var elfOffRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`at byte (0x[0-9a-fA-F]+|[0-9]+)`) })

// elfErr turns a debug/elf error into a *FormatError carrying its byte offset.
func elfErr(name string, err error) error {
	var off int64
	if m := elfOffRE().FindStringSubmatch(err.Error()); m != nil {
		if v, perr := strconv.ParseInt(m[1], 0, 64); perr == nil {
			off = v
		}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return formatErr(name, off, io.ErrUnexpectedEOF, "truncated ELF file")
	}
	var fe *elf.FormatError
	if errors.As(err, &fe) {
		return formatErr(name, off, err, "bad ELF file")
	}
	return fmt.Errorf("%s: %w", name, err)
}

// secErr reports a problem with one section, at the section's file offset.
func (f *ELFFile) secErr(s *elf.Section, err error, what string) error {
	return formatErr(f.Name, int64(s.Offset), err, "ELF section %q: %s", s.Name, what)
}

// ELFSection describes one ELF section header.
type ELFSection struct {
	Index      int                 // section header index
	Name       string              // ".text", ".rodata.str1.1", ".nv_fatbin", …
	Type       elf.SectionType     // SHT_PROGBITS, SHT_NOBITS, …
	Flags      elf.SectionFlag     // SHF_ALLOC, SHF_MERGE, SHF_STRINGS, …
	Addr       uint64              // sh_addr: virtual address (0 in ET_REL objects)
	Offset     uint64              // sh_offset: byte offset in the file
	Size       uint64              // bytes in memory (uncompressed size for SHF_COMPRESSED)
	FileSize   uint64              // bytes in the file (0 for SHT_NOBITS)
	Align      uint64              // sh_addralign in bytes
	EntSize    uint64              // sh_entsize in bytes (string width for SHF_STRINGS)
	Link, Info uint32              // sh_link, sh_info
	Compressed elf.CompressionType // 0 when not SHF_COMPRESSED
}

// SectionList returns the section headers in index order, the null section
// 0 included. (The embedded elf.File's Sections field, f.File.Sections, gives
// debug/elf's own view.)
func (f *ELFFile) SectionList() []ELFSection {
	out := make([]ELFSection, 0, len(f.File.Sections))
	for i, s := range f.File.Sections {
		e := ELFSection{Index: i, Name: s.Name, Type: s.Type, Flags: s.Flags, Addr: s.Addr, Offset: s.Offset,
			Size: s.Size, FileSize: s.FileSize, Align: s.Addralign, EntSize: s.Entsize, Link: s.Link, Info: s.Info}
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			e.Compressed = compressionType(f, s)
		}
		out = append(out, e)
	}
	return out
}

// compressionType reads ch_type of a SHF_COMPRESSED section's Chdr from the
// file itself (debug/elf leaves Section.ReaderAt nil for such sections).
func compressionType(f *ELFFile, s *elf.Section) elf.CompressionType {
	var b [4]byte
	if s.Type == elf.SHT_NOBITS || s.FileSize < 4 || readFullAt(f.r, b[:], int64(s.Offset)) != nil {
		return 0
	}
	return elf.CompressionType(f.ByteOrder.Uint32(b[:]))
}

// ELFSymbol is a defined ELF symbol (st_shndx not SHN_UNDEF).
type ELFSymbol struct {
	Name         string
	Section      string           // defining section's name; "*ABS*" for SHN_ABS, "*COM*" for common symbols
	SectionIndex elf.SectionIndex // st_shndx
	Value        uint64           // st_value: offset in the section (ET_REL) or virtual address (ET_EXEC/ET_DYN); alignment for common symbols
	Size         uint64           // st_size in bytes
	Bind         elf.SymBind      // STB_LOCAL, STB_GLOBAL, STB_WEAK, …
	Type         elf.SymType      // STT_FUNC, STT_OBJECT, STT_TLS, …
}

// DefinedSymbols returns the defined symbols of .symtab, or of .dynsym when
// the file has no .symtab (fromDynsym is then true), in table order.
// Section symbols (STT_SECTION) and source-file symbols (STT_FILE, see
// FileSymbols) are left out. A file with neither table returns nil, false, nil.
func (f *ELFFile) DefinedSymbols() (syms []ELFSymbol, fromDynsym bool, err error) {
	all, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		all, err = f.DynamicSymbols()
		fromDynsym = true
		if errors.Is(err, elf.ErrNoSymbols) {
			return nil, false, nil
		}
	}
	if err != nil {
		return nil, fromDynsym, f.symErr(err)
	}
	for _, s := range all {
		if s.Section == elf.SHN_UNDEF {
			continue
		}
		t := elf.ST_TYPE(s.Info)
		if t == elf.STT_SECTION || t == elf.STT_FILE {
			continue
		}
		es := ELFSymbol{Name: s.Name, SectionIndex: s.Section, Value: s.Value, Size: s.Size, Bind: elf.ST_BIND(s.Info), Type: t}
		switch {
		case s.Section == elf.SHN_ABS:
			es.Section = "*ABS*"
		case s.Section == elf.SHN_COMMON:
			es.Section = "*COM*"
		case int(s.Section) < len(f.File.Sections):
			es.Section = f.File.Sections[s.Section].Name
		}
		syms = append(syms, es)
	}
	return syms, fromDynsym, nil
}

func (f *ELFFile) symErr(err error) error {
	if s := f.SectionByType(elf.SHT_SYMTAB); s != nil {
		return f.secErr(s, err, "reading symbols")
	}
	if s := f.SectionByType(elf.SHT_DYNSYM); s != nil {
		return f.secErr(s, err, "reading dynamic symbols")
	}
	return elfErr(f.Name, err)
}

// FileSymbols returns the names of the STT_FILE symbols of .symtab: the
// source basename of each object that contributed to a linked file
// ("foo.c", "tmpxft_000012ab_00000000-6_k1.cudafe1.cpp", Rust CGU names), in
// table order without duplicates. nil when there is no .symtab.
func (f *ELFFile) FileSymbols() ([]string, error) {
	all, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		return nil, nil
	}
	if err != nil {
		return nil, f.symErr(err)
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range all {
		if elf.ST_TYPE(s.Info) == elf.STT_FILE && s.Name != "" && !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s.Name)
		}
	}
	return out, nil
}

// stringsBufSize bounds the read buffer of the string scanners.
const stringsBufSize = 64 << 10

// maxStringLen bounds one reported string; longer runs are reported in
// pieces of this many bytes (so memory stays bounded on any input).
const maxStringLen = 1 << 20

// isMergedStrings reports whether s is an allocated SHF_MERGE|SHF_STRINGS
// section (.rodata.str1.1, .rodata.str1.8, .rodata.str4.4 in objects).
func isMergedStrings(s *elf.Section) bool {
	return s.Type == elf.SHT_PROGBITS && s.Flags&(elf.SHF_MERGE|elf.SHF_STRINGS|elf.SHF_ALLOC) == elf.SHF_MERGE|elf.SHF_STRINGS|elf.SHF_ALLOC
}

// MergedStrings calls fn for every string of every allocated
// SHF_MERGE|SHF_STRINGS section (the string literals of an object:
// .rodata.str1.1 and friends), in section then offset order. s is the
// string's bytes without its terminator (for sh_entsize 2 or 4, the raw
// units, without the zero unit); off is its byte offset in the section. Empty
// strings are skipped. s is only valid during the call. Sections are
// streamed through a 64 KiB buffer.
func (f *ELFFile) MergedStrings(fn func(section string, off uint64, s []byte) error) error {
	for _, sec := range f.File.Sections {
		if !isMergedStrings(sec) {
			continue
		}
		w := int(sec.Entsize)
		if w < 1 || w > 8 {
			w = 1
		}
		err := f.scanSection(sec, func(r *bufio.Reader) error {
			if w == 1 {
				return nulRuns(r, func(start uint64, s []byte, _ bool, _ runEnd) error { return fn(sec.Name, start, s) })
			}
			var cur []byte
			var start, pos uint64
			unit := make([]byte, w)
			for {
				if _, err := io.ReadFull(r, unit); err != nil {
					if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
						if len(cur) > 0 {
							return fn(sec.Name, start, cur)
						}
						return nil
					}
					return err
				}
				pos += uint64(w)
				if allZero(unit) {
					if len(cur) > 0 {
						if err := fn(sec.Name, start, cur); err != nil {
							return err
						}
					}
					cur = cur[:0]
					start = pos
					continue
				}
				cur = append(cur, unit...)
				if len(cur) >= maxStringLen {
					if err := fn(sec.Name, start, cur); err != nil {
						return err
					}
					cur = cur[:0]
					start = pos
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// RodataStrings calls fn for every run of text that a NUL ends in the read-only data sections that are
// not merged-string sections (.rodata, .rodata.<name>): where a compiler puts string literals when it
// does not merge them (gcc at -O0 does, with no symbol to name them). A run counts only when it starts at
// the section's start or just after a NUL and every byte is printable ASCII, a tab or newline, or part of
// UTF-8 text, so pointer tables and constants (whose bytes are rarely all text) give nothing. Runs of
// maxStringLen or more bytes are cut as MergedStrings cuts them. s is only valid during the call.
func (f *ELFFile) RodataStrings(fn func(section string, off uint64, s []byte) error) error {
	for _, sec := range f.File.Sections {
		if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_ALLOC == 0 || sec.Flags&(elf.SHF_WRITE|elf.SHF_EXECINSTR) != 0 ||
			isMergedStrings(sec) || !(sec.Name == ".rodata" || strings.HasPrefix(sec.Name, ".rodata.")) {
			continue
		}
		err := f.scanSection(sec, func(r *bufio.Reader) error {
			return nulRuns(r, func(start uint64, s []byte, text bool, end runEnd) error {
				// A run the section's end cuts is not NUL-terminated: not a literal.
				if !text || end == endEOF || end == endNUL && !utf8.Valid(s) {
					return nil
				}
				return fn(sec.Name, start, s)
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// runEnd is what ended a run of nulRuns.
type runEnd int

const (
	endNUL runEnd = iota // a NUL byte
	endMax               // maxStringLen bytes: the run goes on in the next one
	endEOF               // the end of the data, without a NUL
)

// nulRuns calls run with each non-empty run of r's bytes between NULs (its offset, its bytes, whether
// every byte is text: no control character but tab and newline), cut at maxStringLen bytes, and the
// run the end of the data cuts. It reads up to each NUL at once (bufio's ReadSlice) and copies whole
// pieces, not a byte per call: a section of megabytes is scanned at memory speed. s is only valid
// during the call.
func nulRuns(r *bufio.Reader, run func(start uint64, s []byte, text bool, end runEnd) error) error {
	var cur []byte
	var start, pos uint64
	text := true
	for {
		chunk, err := r.ReadSlice(0)
		nul := err == nil
		if nul {
			chunk = chunk[:len(chunk)-1]
		}
		for len(chunk) > 0 {
			piece := chunk[:min(len(chunk), maxStringLen-len(cur))]
			chunk = chunk[len(piece):]
			if text && !isText(piece) {
				text = false
			}
			cur = append(cur, piece...)
			pos += uint64(len(piece))
			if len(cur) >= maxStringLen {
				if err := run(start, cur, text, endMax); err != nil {
					return err
				}
				cur, text, start = cur[:0], true, pos
			}
		}
		switch {
		case nul:
			pos++
			if len(cur) > 0 {
				if err := run(start, cur, text, endNUL); err != nil {
					return err
				}
			}
			cur, text, start = cur[:0], true, pos
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			if len(cur) > 0 {
				return run(start, cur, text, endEOF)
			}
			return nil
		default:
			return err
		}
	}
}

// isText reports whether b has no control character but tab and newline (nor DEL).
func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return false
		}
	}
	return true
}

func allZero(b []byte) bool {
	// Compared with a block of zeros a chunk at a time (bytes.Equal is the runtime's vectorised
	// memequal; zeroBlock is fatbin.go's): fat binaries pad containers with kilobytes of zeros, a third
	// of a 1.1 GiB one.
	for len(b) >= len(zeroBlock) {
		if !bytes.Equal(b[:len(zeroBlock)], zeroBlock[:]) {
			return false
		}
		b = b[len(zeroBlock):]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// PrintableStrings calls fn for every run of at least min printable ASCII
// bytes (0x20–0x7e and tab, as GNU strings' default) in the named section,
// the way `strings -n min` prints them for that section's bytes. off is the
// run's byte offset in the section; s is valid only during the call. A run
// longer than 1 MiB is reported in 1 MiB pieces. A missing or SHT_NOBITS
// section yields no calls. min < 1 means 4.
func (f *ELFFile) PrintableStrings(section string, min int, fn func(off uint64, s []byte) error) error {
	if min < 1 {
		min = 4
	}
	sec := f.Section(section)
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil
	}
	return f.scanSection(sec, func(r *bufio.Reader) error {
		var cur []byte
		var pos, start uint64
		for {
			c, err := r.ReadByte()
			if err != nil {
				if errors.Is(err, io.EOF) {
					if len(cur) >= min {
						return fn(start, cur)
					}
					return nil
				}
				return err
			}
			pos++
			if c == '\t' || (c >= 0x20 && c < 0x7f) {
				if len(cur) == 0 {
					start = pos - 1
				}
				cur = append(cur, c)
				if len(cur) >= maxStringLen {
					if err := fn(start, cur); err != nil {
						return err
					}
					cur = cur[:0]
				}
				continue
			}
			if len(cur) >= min {
				if err := fn(start, cur); err != nil {
					return err
				}
			}
			cur = cur[:0]
		}
	})
}

// scanSection streams a section's (decompressed) bytes through a bounded
// buffer. Read errors become *FormatError at the section's offset; errors
// returned by the callback's fn pass through unchanged.
func (f *ELFFile) scanSection(sec *elf.Section, scan func(*bufio.Reader) error) (err error) {
	defer func() {
		if !catchPanics {
			return
		}
		if p := recover(); p != nil {
			err = f.secErr(sec, nil, fmt.Sprintf("decoder failed: %v", p))
		}
	}()
	if sec.Type == elf.SHT_NOBITS {
		return nil
	}
	rd := &trackReader{r: sec.Open()}
	size := stringsBufSize
	if sec.Size < uint64(size) {
		size = int(sec.Size) + 16
	}
	err = scan(bufio.NewReaderSize(rd, size))
	if err != nil && rd.err != nil && errors.Is(err, rd.err) {
		return f.secErr(sec, err, "reading section data")
	}
	return err
}

// trackReader remembers the error its reader returned, so that read errors
// can be told apart from callback errors.
type trackReader struct {
	r   io.Reader
	err error
}

func (t *trackReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		t.err = err
	}
	return n, err
}

// BuildID returns the descriptor of the NT_GNU_BUILD_ID note ("GNU" owner,
// type 3; usually 20 bytes of SHA-1), searching the SHT_NOTE sections, or
// the PT_NOTE segments when the file has no section headers. Linkers write it;
// relocatable objects have none. nil, nil when absent.
func (f *ELFFile) BuildID() ([]byte, error) {
	for _, s := range f.File.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		if s.Size > 1<<20 {
			continue // not a plausible note section; skip rather than load
		}
		b, err := s.Data()
		if err != nil {
			return nil, f.secErr(s, err, "reading notes")
		}
		id, err := findBuildID(b, f.ByteOrder, s.Addralign)
		if err != nil {
			return nil, f.secErr(s, err, "decoding notes")
		}
		if id != nil {
			return id, nil
		}
	}
	if len(f.File.Sections) > 1 {
		return nil, nil
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<20 {
			continue
		}
		b := make([]byte, p.Filesz)
		if err := readFullAt(p.ReaderAt, b, 0); err != nil {
			return nil, formatErr(f.Name, int64(p.Off), err, "reading PT_NOTE segment")
		}
		id, err := findBuildID(b, f.ByteOrder, p.Align)
		if err != nil {
			return nil, formatErr(f.Name, int64(p.Off), err, "decoding PT_NOTE segment")
		}
		if id != nil {
			return id, nil
		}
	}
	return nil, nil
}

// findBuildID walks ELF notes (namesz, descsz, type, name, desc). Name and
// desc start at offsets aligned to 4 bytes, or to 8 in 8-aligned note
// sections such as .note.gnu.property.
func findBuildID(b []byte, bo binary.ByteOrder, align uint64) ([]byte, error) {
	pad := uint64(4)
	if align == 8 {
		pad = 8
	}
	up := func(n uint64) uint64 { return (n + pad - 1) &^ (pad - 1) }
	n := uint64(len(b))
	for p := uint64(0); p+12 <= n; {
		namesz := uint64(bo.Uint32(b[p:]))
		descsz := uint64(bo.Uint32(b[p+4:]))
		typ := bo.Uint32(b[p+8:])
		q := p + 12
		if namesz > n-q {
			return nil, fmt.Errorf("note at offset %d: name of %d bytes runs past the end", p, namesz)
		}
		d := up(q + namesz)
		if d > n || descsz > n-d {
			return nil, fmt.Errorf("note at offset %d: descriptor of %d bytes runs past the end", p, descsz)
		}
		name := b[q : q+namesz]
		desc := b[d : d+descsz]
		if typ == ntGNUBuildID && string(bytes.TrimRight(name, "\x00")) == "GNU" {
			return bytes.Clone(desc), nil
		}
		p = up(d + descsz)
	}
	return nil, nil
}

// Comment returns the NUL-separated, non-empty strings of the .comment
// section ("GCC: (Debian 12.2.0-14+deb12u1) 12.2.0", "rustc version 1.95.0
// …", "Linker: LLD 22.1.2"). Linkers de-duplicate them, so they name the
// contributing compilers, not the objects. nil when there is no .comment.
func (f *ELFFile) Comment() ([]string, error) {
	sec := f.Section(".comment")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	var out []string
	err := f.scanSection(sec, func(r *bufio.Reader) error {
		var cur []byte
		for {
			c, err := r.ReadByte()
			if err == io.EOF || (err == nil && c == 0) {
				if len(cur) > 0 {
					out = append(out, string(cur))
				}
				cur = cur[:0]
				if err == io.EOF {
					return nil
				}
				continue
			}
			if err != nil {
				return err
			}
			if len(cur) < maxStringLen {
				cur = append(cur, c)
			}
		}
	})
	return out, err
}

// ELFFeatures is what an ELF file says about its own identity, gathered by
// ReadELFFeatures.
type ELFFeatures struct {
	Type       elf.Type     // ET_REL, ET_EXEC, ET_DYN
	Machine    elf.Machine  // EM_X86_64, EM_CUDA, …
	Sections   []ELFSection // every section header, in index order
	Symbols    []ELFSymbol  // defined symbols (see DefinedSymbols)
	FromDynsym bool         // Symbols came from .dynsym because there is no .symtab
	Files      []string     // STT_FILE names (see FileSymbols)
	// MergedStrings are the strings of the allocated SHF_MERGE|SHF_STRINGS
	// sections (.rodata.str1.1 …), in section order, without duplicates.
	// Linked files usually merge these into .rodata; see RodataStrings.
	MergedStrings []string
	// RodataStrings are the runs of at least 4 printable bytes in .rodata
	// (as `strings -n 4` on that section), in order, duplicates kept.
	RodataStrings []string
	BuildID       []byte   // NT_GNU_BUILD_ID descriptor; nil in objects
	Comment       []string // .comment strings
}

// ReadELFFeatures opens the ELF data in r (name is used in errors) and
// gathers its features. Errors are *FormatError values naming the file and
// the byte offset of the bad header or section.
func ReadELFFeatures(r io.ReaderAt, name string) (*ELFFeatures, error) {
	f, err := NewELF(r, name)
	if err != nil {
		return nil, err
	}
	return f.Features()
}

// Features gathers the ELFFeatures of f.
func (f *ELFFile) Features() (*ELFFeatures, error) {
	ft := &ELFFeatures{Type: f.Type, Machine: f.Machine, Sections: f.SectionList()}
	var err error
	if ft.Symbols, ft.FromDynsym, err = f.DefinedSymbols(); err != nil {
		return nil, err
	}
	if ft.Files, err = f.FileSymbols(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	err = f.MergedStrings(func(_ string, _ uint64, s []byte) error {
		if !seen[string(s)] {
			seen[string(s)] = true
			ft.MergedStrings = append(ft.MergedStrings, string(s))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = f.PrintableStrings(".rodata", 4, func(_ uint64, s []byte) error {
		ft.RodataStrings = append(ft.RodataStrings, string(s))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if ft.BuildID, err = f.BuildID(); err != nil {
		return nil, err
	}
	if ft.Comment, err = f.Comment(); err != nil {
		return nil, err
	}
	return ft, nil
}

// ---- relocations and masking ----

// Relocation is one entry of a SHT_REL or SHT_RELA section.
type Relocation struct {
	Offset    uint64 // r_offset: byte offset in the target section (ET_REL) or virtual address (ET_EXEC/ET_DYN)
	Type      uint32 // r_type, machine specific (elf.R_X86_64 for EM_X86_64)
	Sym       uint32 // symbol table index
	Addend    int64  // r_addend (0 for SHT_REL, whose addend is in the patched bytes)
	HasAddend bool   // the entry came from SHT_RELA
}

// ntGNUBuildID is the NT_GNU_BUILD_ID note type.
const ntGNUBuildID = 3

// shtRELR is SHT_RELR (packed relative relocations), which debug/elf lacks.
const shtRELR = elf.SectionType(19)

// Relocations returns the entries of every SHT_REL and SHT_RELA section whose
// sh_info names section index target, in file order. This is how relocatable
// objects (ET_REL) attach relocations to sections.
func (f *ELFFile) Relocations(target int) ([]Relocation, error) {
	var out []Relocation
	for _, rs := range f.File.Sections {
		if (rs.Type != elf.SHT_REL && rs.Type != elf.SHT_RELA) || int(rs.Info) != target || rs.Info == 0 {
			continue
		}
		err := f.readRelocs(rs, func(r Relocation) { out = append(out, r) })
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RelocTarget is where one relocation of a relocatable object points: a section of the same object
// and a byte offset in it (the symbol's value plus the addend).
type RelocTarget struct {
	Section int   // section index of the symbol the relocation names
	Offset  int64 // symbol value + addend (PC-relative forms point a few bytes before the target)
}

// RelocTargets returns, for section idx of a relocatable object, the sections (and offsets) its
// relocations point into: what the linker must keep when it keeps idx. Relocations against undefined,
// absolute or common symbols are left out. An error names the symbol table or relocation section
// that cannot be read.
func (f *ELFFile) RelocTargets(idx int) ([]RelocTarget, error) {
	if f.Type != elf.ET_REL {
		return nil, nil
	}
	rels, err := f.Relocations(idx)
	if err != nil || len(rels) == 0 {
		return nil, err
	}
	if !f.symsDone {
		f.symsDone = true
		syms, err := f.File.Symbols()
		if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
			return nil, fmt.Errorf("%s: symbol table: %w", f.Name, err)
		}
		f.allSyms = syms
	}
	var out []RelocTarget
	for _, r := range rels {
		// debug/elf drops the null symbol 0, so index i is allSyms[i-1].
		if r.Sym == 0 || int(r.Sym) > len(f.allSyms) {
			continue
		}
		sym := f.allSyms[r.Sym-1]
		if sym.Section == elf.SHN_UNDEF || sym.Section >= elf.SHN_LORESERVE {
			continue
		}
		out = append(out, RelocTarget{Section: int(sym.Section), Offset: int64(sym.Value) + r.Addend})
	}
	return out, nil
}

// readRelocs streams one REL/RELA section's entries.
func (f *ELFFile) readRelocs(rs *elf.Section, fn func(Relocation)) error {
	is64 := f.Class == elf.ELFCLASS64
	var esz int
	switch {
	case is64 && rs.Type == elf.SHT_RELA:
		esz = 24
	case is64:
		esz = 16
	case rs.Type == elf.SHT_RELA:
		esz = 12
	default:
		esz = 8
	}
	bo := f.ByteOrder
	return f.scanSection(rs, func(r *bufio.Reader) error {
		buf := make([]byte, esz)
		for i := 0; ; i++ {
			if _, err := io.ReadFull(r, buf); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				if errors.Is(err, io.ErrUnexpectedEOF) {
					return formatErr(f.Name, int64(rs.Offset)+int64(i*esz), err, "ELF section %q: truncated relocation entry %d", rs.Name, i)
				}
				return err
			}
			var rel Relocation
			if is64 {
				rel.Offset = bo.Uint64(buf)
				info := bo.Uint64(buf[8:])
				rel.Sym, rel.Type = uint32(info>>32), uint32(info)
				if esz == 24 {
					rel.Addend, rel.HasAddend = int64(bo.Uint64(buf[16:])), true
				}
			} else {
				rel.Offset = uint64(bo.Uint32(buf))
				info := bo.Uint32(buf[4:])
				rel.Sym, rel.Type = info>>8, info&0xff
				if esz == 12 {
					rel.Addend, rel.HasAddend = int64(int32(bo.Uint32(buf[8:]))), true
				}
			}
			fn(rel)
		}
	})
}

// ByteRange is a half-open byte range [Start, End) within a section.
type ByteRange struct{ Start, End uint64 }

type addrRange struct{ start, end uint64 }

// RelocWindow returns the bytes a linker may change for one relocation of
// type typ at r_offset off, as the range [off-before, off+after). The widths
// follow the x86-64 psABI, plus linker relaxations measured with GNU ld 2.40
// (docs/binary-formats.md §2.3):
//
//   - R_X86_64_64, PC64, GOTOFF64, SIZE64, DTPOFF64, TPOFF64, GLOB_DAT, JUMP_SLOT, RELATIVE…: 8 bytes
//   - PC32, PLT32, 32, 32S, GOT32, GOTPC32, SIZE32, DTPOFF32, TPOFF32: 4 bytes
//   - GOTPCREL, GOTPCRELX, REX_GOTPCRELX, GOTTPOFF, GOTPC32_TLSDESC: 4 bytes and the 3 before (opcode,
//     ModRM, REX): ld relaxes GOT loads into direct ones, the plain GOTPCREL too
//   - APX CODE_4/5/6_* forms: 4 bytes and the 4/5/6 before
//   - TLSGD, TLSLD: 4 before to 12 after (the whole GD/LD sequence and its call)
//   - TLSDESC_CALL: 2 bytes; 16/PC16: 2; 8/PC8: 1
//
// i386 and AArch64 have their own tables (instruction relocations on AArch64
// cover the 4-byte instruction word). EM_CUDA (cubins, whose R_CUDA widths
// are not published) covers whole 16-byte instruction words when exec is true
// (an SHF_EXECINSTR section) and 8 bytes otherwise. Unknown types and
// machines get a wide window of 8 bytes either side, so that a new
// relocation type never causes a false mismatch; a type that patches nothing
// (NONE, COPY) gives an empty range.
func RelocWindow(m elf.Machine, typ uint32, off uint64, exec bool) (start, end uint64) {
	before, after := relocWidths(m, typ)
	if m == elf.EM_CUDA && exec {
		start = off &^ 15
		end = (off + 8 + 15) &^ 15
		if end < start { // overflow
			end = ^uint64(0)
		}
		return start, end
	}
	if off < before {
		start = 0
	} else {
		start = off - before
	}
	end = off + after
	if end < off {
		end = ^uint64(0)
	}
	return start, end
}

func relocWidths(m elf.Machine, t uint32) (before, after uint64) {
	switch m {
	case elf.EM_X86_64:
		switch elf.R_X86_64(t) {
		case elf.R_X86_64_NONE, elf.R_X86_64_COPY:
			return 0, 0
		case elf.R_X86_64_64, elf.R_X86_64_GLOB_DAT, elf.R_X86_64_JMP_SLOT, elf.R_X86_64_RELATIVE,
			elf.R_X86_64_DTPMOD64, elf.R_X86_64_DTPOFF64, elf.R_X86_64_TPOFF64, elf.R_X86_64_PC64,
			elf.R_X86_64_GOTOFF64, elf.R_X86_64_GOT64, elf.R_X86_64_GOTPCREL64, elf.R_X86_64_GOTPC64,
			elf.R_X86_64_GOTPLT64, elf.R_X86_64_PLTOFF64, elf.R_X86_64_SIZE64, elf.R_X86_64_IRELATIVE,
			elf.R_X86_64_RELATIVE64:
			return 0, 8
		case elf.R_X86_64_PC32, elf.R_X86_64_GOT32, elf.R_X86_64_PLT32,
			elf.R_X86_64_32, elf.R_X86_64_32S, elf.R_X86_64_DTPOFF32, elf.R_X86_64_TPOFF32,
			elf.R_X86_64_GOTPC32, elf.R_X86_64_SIZE32, elf.R_X86_64_PC32_BND, elf.R_X86_64_PLT32_BND:
			return 0, 4
		case elf.R_X86_64_16, elf.R_X86_64_PC16, elf.R_X86_64_TLSDESC_CALL:
			return 0, 2
		case elf.R_X86_64_8, elf.R_X86_64_PC8:
			return 0, 1
		case elf.R_X86_64_GOTPCREL, elf.R_X86_64_GOTPCRELX, elf.R_X86_64_REX_GOTPCRELX, elf.R_X86_64_GOTTPOFF, elf.R_X86_64_GOTPC32_TLSDESC:
			// GNU ld 2.40 rewrites a plain GOTPCREL load too (rustc's `mov sym@GOTPCREL(%rip), %rax`
			// became `lea sym(%rip), %rax` in a C program linking a Rust staticlib: opcode 8b → 8d).
			return 3, 4
		case elf.R_X86_64_TLSGD, elf.R_X86_64_TLSLD:
			return 4, 12
		case elf.R_X86_64_TLSDESC:
			return 0, 16
		case 43, 44, 45: // R_X86_64_CODE_4_GOTPCRELX, CODE_4_GOTTPOFF, CODE_4_GOTPC32_TLSDESC (APX)
			return 4, 4
		case 46, 47, 48: // CODE_5_*
			return 5, 4
		case 49, 50, 51: // CODE_6_*
			return 6, 4
		}
	case elf.EM_386:
		switch elf.R_386(t) {
		case elf.R_386_NONE, elf.R_386_COPY:
			return 0, 0
		case elf.R_386_32, elf.R_386_PC32, elf.R_386_PLT32, elf.R_386_GLOB_DAT, elf.R_386_JMP_SLOT,
			elf.R_386_RELATIVE, elf.R_386_GOTOFF, elf.R_386_GOTPC, elf.R_386_TLS_TPOFF, elf.R_386_TLS_LE,
			elf.R_386_TLS_LDO_32, elf.R_386_TLS_DTPMOD32, elf.R_386_TLS_DTPOFF32, elf.R_386_TLS_TPOFF32,
			elf.R_386_SIZE32, elf.R_386_IRELATIVE, elf.R_386_TLS_LE_32:
			return 0, 4
		case elf.R_386_GOT32, elf.R_386_GOT32X, elf.R_386_TLS_IE, elf.R_386_TLS_GOTIE, elf.R_386_TLS_GOTDESC, elf.R_386_TLS_IE_32:
			return 2, 4
		case elf.R_386_TLS_GD, elf.R_386_TLS_LDM:
			return 3, 9
		case elf.R_386_TLS_DESC_CALL, elf.R_386_16, elf.R_386_PC16:
			return 0, 2
		case elf.R_386_8, elf.R_386_PC8:
			return 0, 1
		case elf.R_386_TLS_DESC:
			return 0, 8
		}
	case elf.EM_AARCH64:
		switch elf.R_AARCH64(t) {
		case elf.R_AARCH64_NONE, elf.R_AARCH64_COPY:
			return 0, 0
		case elf.R_AARCH64_ABS64, elf.R_AARCH64_PREL64, elf.R_AARCH64_GLOB_DAT, elf.R_AARCH64_JUMP_SLOT,
			elf.R_AARCH64_RELATIVE, elf.R_AARCH64_TLS_DTPMOD64, elf.R_AARCH64_TLS_DTPREL64,
			elf.R_AARCH64_TLS_TPREL64, elf.R_AARCH64_IRELATIVE:
			return 0, 8
		case elf.R_AARCH64_ABS16, elf.R_AARCH64_PREL16:
			return 0, 2
		case elf.R_AARCH64_TLSDESC:
			return 0, 16
		case elf.R_AARCH64_TLSGD_ADD_LO12_NC:
			return 0, 12 // add, bl __tls_get_addr, nop are rewritten together
		}
		if t >= 257 && t < 1024 {
			return 0, 4 // ABS32, PREL32, PLT32 and every instruction relocation
		}
	case elf.EM_CUDA:
		return 0, 8
	}
	return 8, 8
}

// MaskedSection is one section's contents with every byte that a relocation
// (or a linker relaxation around it) may change set to zero.
type MaskedSection struct {
	Index  int             // section header index
	Name   string          // section name
	Flags  elf.SectionFlag // sh_flags
	Addr   uint64          // sh_addr (0 in ET_REL objects)
	Align  uint64          // sh_addralign in bytes
	Size   uint64          // section size in bytes
	Data   []byte          // contents with masked bytes zeroed; nil for SHT_NOBITS
	Mask   []ByteRange     // masked ranges relative to the section start: sorted, disjoint, within [0, Size)
	Relocs int             // relocation entries that fell inside the section
}

// MaskedBytes returns how many bytes of the section are masked.
func (m *MaskedSection) MaskedBytes() uint64 {
	var n uint64
	for _, r := range m.Mask {
		n += r.End - r.Start
	}
	return n
}

// ApplyMask zeroes the bytes of b inside each range of mask (ranges beyond
// len(b) are clipped). Apply an object section's Mask to the bytes found at
// that section's place in a linked file, then compare with Data.
func ApplyMask(b []byte, mask []ByteRange) {
	n := uint64(len(b))
	for _, r := range mask {
		s, e := r.Start, r.End
		if s >= n {
			continue
		}
		if e > n {
			e = n
		}
		clear(b[s:e])
	}
}

// maxMaskedSection bounds the section size MaskedSection reads into memory.
const maxMaskedSection = 1 << 30

// MaskedSection returns section idx's contents with relocation fields
// masked, for comparing an object's section with the bytes the linker placed
// in a linked file. In relocatable objects (ET_REL) the relocations are those
// of the SHT_REL/SHT_RELA sections whose sh_info is idx; in executables and
// shared libraries every REL, RELA and RELR section's entries that fall
// inside the section's addresses are used (dynamic relocations, or static
// ones kept by ld -q). Widths are those of RelocWindow.
//
// Data is a copy of the whole section (sections over 1 GiB are refused).
// Errors: a *FormatError naming the file and the offset of the bad section or
// relocation entry; an error for an index out of range.
func (f *ELFFile) MaskedSection(idx int) (*MaskedSection, error) {
	if idx <= 0 || idx >= len(f.File.Sections) {
		return nil, fmt.Errorf("%s: no ELF section with index %d", f.Name, idx)
	}
	s := f.File.Sections[idx]
	m := &MaskedSection{Index: idx, Name: s.Name, Flags: s.Flags, Addr: s.Addr, Align: s.Addralign, Size: s.Size}
	if s.Type != elf.SHT_NOBITS {
		if s.Size > maxMaskedSection {
			return nil, f.secErr(s, nil, fmt.Sprintf("%d bytes is too large to mask in memory", s.Size))
		}
		var data []byte
		err := f.scanSection(s, func(r *bufio.Reader) error {
			var err error
			data, err = io.ReadAll(io.LimitReader(r, int64(s.Size)))
			return err
		})
		if err != nil {
			return nil, err
		}
		if uint64(len(data)) != s.Size {
			return nil, f.secErr(s, io.ErrUnexpectedEOF, fmt.Sprintf("section data has %d of %d bytes", len(data), s.Size))
		}
		m.Data = data
	}
	exec := s.Flags&elf.SHF_EXECINSTR != 0
	var ranges []ByteRange
	if f.Type == elf.ET_REL {
		rels, err := f.Relocations(idx)
		if err != nil {
			return nil, err
		}
		for _, r := range rels {
			if r.Offset >= s.Size {
				continue
			}
			m.Relocs++
			a, b := RelocWindow(f.Machine, r.Type, r.Offset, exec)
			if a == b {
				continue
			}
			ranges = append(ranges, ByteRange{a, min(b, s.Size)})
		}
	} else if s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 {
		if err := f.buildDynMask(); err != nil {
			return nil, err
		}
		lo, hi := s.Addr, s.Addr+s.Size
		i := sort.Search(len(f.dynMask), func(i int) bool { return f.dynMask[i].end > lo })
		for ; i < len(f.dynMask) && f.dynMask[i].start < hi; i++ {
			a, b := max(f.dynMask[i].start, lo), min(f.dynMask[i].end, hi)
			if a < b {
				m.Relocs++
				ranges = append(ranges, ByteRange{a - lo, b - lo})
			}
		}
	}
	m.Mask = mergeRanges(ranges)
	if m.Data != nil {
		ApplyMask(m.Data, m.Mask)
	}
	return m, nil
}

// buildDynMask collects, once, the address ranges patched by all
// relocation sections of a linked file (r_offset is a virtual address there).
func (f *ELFFile) buildDynMask() error {
	if f.dynDone {
		return nil
	}
	var rs []addrRange
	word := uint64(8)
	if f.Class == elf.ELFCLASS32 {
		word = 4
	}
	for _, sec := range f.File.Sections {
		switch sec.Type {
		case elf.SHT_REL, elf.SHT_RELA:
			exec := false
			if sec.Info > 0 && int(sec.Info) < len(f.File.Sections) {
				exec = f.File.Sections[sec.Info].Flags&elf.SHF_EXECINSTR != 0
			}
			err := f.readRelocs(sec, func(r Relocation) {
				a, b := RelocWindow(f.Machine, r.Type, r.Offset, exec)
				if a < b {
					rs = append(rs, addrRange{a, b})
				}
			})
			if err != nil {
				return err
			}
		case shtRELR:
			var base uint64
			err := f.scanSection(sec, func(r *bufio.Reader) error {
				buf := make([]byte, word)
				for {
					if _, err := io.ReadFull(r, buf); err != nil {
						if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
							return nil
						}
						return err
					}
					var e uint64
					if word == 8 {
						e = f.ByteOrder.Uint64(buf)
					} else {
						e = uint64(f.ByteOrder.Uint32(buf))
					}
					if e&1 == 0 {
						rs = append(rs, addrRange{e, e + word})
						base = e + word
						continue
					}
					for i := uint64(0); i < word*8-1; i++ {
						if e>>(i+1)&1 != 0 {
							a := base + i*word
							rs = append(rs, addrRange{a, a + word})
						}
					}
					base += (word*8 - 1) * word
				}
			})
			if err != nil {
				return err
			}
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].start < rs[j].start })
	// Merge so that ends are monotonic, which the binary search relies on.
	var merged []addrRange
	for _, r := range rs {
		if n := len(merged); n > 0 && r.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, r.end)
			continue
		}
		merged = append(merged, r)
	}
	f.dynMask, f.dynDone = merged, true
	return nil
}

func mergeRanges(rs []ByteRange) []ByteRange {
	if len(rs) == 0 {
		return nil
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.Start <= last.End {
			last.End = max(last.End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}

// MaskedSectionByName is MaskedSection for the first section called name in
// the ELF data r (name of the data: file, for errors).
func MaskedSectionByName(r io.ReaderAt, file, section string) (*MaskedSection, error) {
	f, err := NewELF(r, file)
	if err != nil {
		return nil, err
	}
	for i, s := range f.File.Sections {
		if s.Name == section {
			return f.MaskedSection(i)
		}
	}
	return nil, fmt.Errorf("%s: no ELF section %q", file, section)
}
