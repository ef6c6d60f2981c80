package binfmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/stalecheck/stalecheck/internal/safeio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FormatError reports malformed input: the file (or the name given to a
// parser for in-memory data), the byte offset of the structure that is bad,
// and what is wrong with it. Err, when not nil, is the underlying cause (for
// example io.ErrUnexpectedEOF or a decompressor's error).
type FormatError struct {
	Path   string // file name as given by the caller
	Offset int64  // byte offset of the bad structure, from the start of the file (or of the data parsed)
	What   string // what is wrong
	Err    error  // underlying cause, may be nil
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("%s: at byte offset %d (0x%x): %s", e.Path, e.Offset, e.Offset, e.What)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

func formatErr(path string, off int64, err error, format string, args ...any) *FormatError {
	return &FormatError{Path: path, Offset: off, What: fmt.Sprintf(format, args...), Err: err}
}

const (
	arMagic     = "!<arch>\n"
	thinMagic   = "!<thin>\n"
	arHeaderLen = 60
)

// Member is one archive member (an object file, lib.rmeta, …) as listed by an
// ar archive's member headers. Symbol tables and the long-name table are not
// members.
type Member struct {
	Name   string // resolved long name (GNU "//" table and BSD "#1/NN" names)
	Offset int64  // byte offset of the member's data in the archive file (0 for thin members)
	Size   int64  // bytes
	MTime  int64  // seconds as written in the header (often 0 with deterministic ar)
	Path   string // thin archives: the member's file path resolved against the archive's folder; else ""
}

// ArchiveSymbol is one entry of an archive's symbol table (armap): a global
// symbol name and the index in Archive.Members of the member that defines it.
type ArchiveSymbol struct {
	Name   string
	Member int // index into Archive.Members
}

// Archive is the table of contents of a Unix ar archive: its members in file
// order and its symbol table. Member bodies are not read; use Open.
type Archive struct {
	Path    string          // as given to OpenArchive
	Thin    bool            // "!<thin>\n" archive: members are external files named by Member.Path
	Members []Member        // in archive order, symbol and name tables excluded
	Symbols []ArchiveSymbol // from the "/" and "/SYM64/" (GNU) or "__.SYMDEF*" (BSD) symbol tables, in table order

	size int64 // archive file size in bytes when it was read
}

// IsArchive reports whether the file at path starts with the ar magic
// "!<arch>\n" or the thin-archive magic "!<thin>\n". A file shorter than 8
// bytes is not an archive. The error is only for failures to open or read.
func IsArchive(path string) (bool, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var b [8]byte
	n, err := io.ReadFull(f, b[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	s := string(b[:n])
	return s == arMagic || s == thinMagic, nil
}

// OpenArchive reads the member headers, long-name table and symbol tables of
// the ar archive at path, seeking over member bodies. It understands GNU/SysV
// names ("name/", "/123" into the "//" table), BSD names ("#1/NN"), the
// 32-bit "/" and 64-bit "/SYM64/" GNU symbol tables, the BSD "__.SYMDEF"
// tables and thin archives ("!<thin>\n", whose member paths are resolved
// against the archive's folder). Rust .rlib files are ordinary archives.
//
// Malformed input yields a *FormatError naming path and the byte offset of
// the bad header; I/O failures are returned wrapped with the path.
func OpenArchive(path string) (*Archive, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ReadArchive(f, st.Size(), path)
}

// ReadArchive is OpenArchive over size bytes of r; path names the data in
// errors and is the base against which thin-archive member names are resolved.
func ReadArchive(r io.ReaderAt, size int64, path string) (*Archive, error) {
	var magic [8]byte
	if err := readFullAt(r, magic[:], 0); err != nil {
		return nil, formatErr(path, 0, err, "not an ar archive: cannot read the 8-byte magic")
	}
	a := &Archive{Path: path, size: size}
	switch string(magic[:]) {
	case arMagic:
	case thinMagic:
		a.Thin = true
	default:
		return nil, formatErr(path, 0, nil, "not an ar archive: magic %q", magic[:])
	}

	type symtab struct {
		kind    string // "gnu32", "gnu64", "bsd32", "bsd64"
		dataOff int64
		size    int64
	}
	var (
		tables    []symtab
		longNames []byte
		longOff   int64 = -1
		hdrIndex        = map[int64]int{} // member header offset -> index in a.Members
		seenTable       = map[string]bool{}
		hdr       [arHeaderLen]byte
	)

	off := int64(len(arMagic))
	for off < size {
		if size-off < arHeaderLen {
			// Some writers pad the end; accept trailing newlines only.
			if tail, err := readN(r, off, size-off); err == nil && len(bytes.Trim(tail, "\n")) == 0 {
				break
			}
			return nil, formatErr(path, off, io.ErrUnexpectedEOF, "truncated ar member header (%d of %d bytes)", size-off, arHeaderLen)
		}
		if err := readFullAt(r, hdr[:], off); err != nil {
			return nil, formatErr(path, off, err, "reading ar member header")
		}
		if hdr[58] != '`' || hdr[59] != '\n' {
			return nil, formatErr(path, off, nil, "bad ar member header terminator %q (want \"`\\n\")", hdr[58:60])
		}
		rawName := string(hdr[0:16])
		msize, err := parseDec(hdr[48:58])
		if err != nil {
			return nil, formatErr(path, off, err, "bad ar member size field %q", hdr[48:58])
		}
		mtime, err := parseDec(hdr[16:28])
		if err != nil {
			return nil, formatErr(path, off, err, "bad ar member date field %q", hdr[16:28])
		}
		dataOff := off + arHeaderLen
		name := strings.TrimRight(rawName, " ")

		special := ""
		switch {
		case name == "/" || name == "/SYM64/":
			special = "symtab"
		case name == "//":
			special = "longnames"
		case strings.HasPrefix(name, "/<") || name == "/SYM64": // COFF "/<ECSYMBOLS>/" etc.
			special = "skip"
		}
		// Special members always have their data in the archive, even thin ones.
		hasData := !a.Thin || special != ""
		if hasData && msize > size-dataOff {
			return nil, formatErr(path, off, io.ErrUnexpectedEOF, "ar member %q: size %d runs past end of file (%d bytes left)", name, msize, size-dataOff)
		}

		switch special {
		case "symtab":
			kind := "gnu32"
			if name == "/SYM64/" {
				kind = "gnu64"
			}
			// COFF import libraries carry a second "/" member in another
			// layout; only the first table of each kind is read.
			if !seenTable[kind] {
				seenTable[kind] = true
				tables = append(tables, symtab{kind: kind, dataOff: dataOff, size: msize})
			}
		case "longnames":
			if msize > 1<<30 {
				return nil, formatErr(path, off, nil, "ar long-name table of %d bytes is implausibly large", msize)
			}
			b, err := readN(r, dataOff, msize)
			if err != nil {
				return nil, formatErr(path, dataOff, err, "reading ar long-name table")
			}
			longNames, longOff = b, dataOff
		case "skip":
		default:
			m := Member{Size: msize, MTime: mtime}
			switch {
			case strings.HasPrefix(name, "#1/"):
				// BSD: the name is the first n bytes of the data.
				n, err := parseDec([]byte(name[3:]))
				if err != nil || n > msize || n > 4096 {
					return nil, formatErr(path, off, err, "bad BSD ar name length %q (member size %d)", name, msize)
				}
				if a.Thin {
					return nil, formatErr(path, off, nil, "BSD name %q in a thin archive", name)
				}
				b, err := readN(r, dataOff, n)
				if err != nil {
					return nil, formatErr(path, dataOff, err, "reading BSD ar member name")
				}
				m.Name = string(bytes.TrimRight(b, "\x00"))
				m.Offset = dataOff + n
				m.Size = msize - n
			case len(name) > 1 && name[0] == '/' && name[1] >= '0' && name[1] <= '9':
				// GNU long name: "/123" (thin archives of archives may add ":456").
				ref := name[1:]
				if i := strings.IndexByte(ref, ':'); i >= 0 {
					ref = ref[:i]
				}
				idx, err := strconv.ParseInt(ref, 10, 64)
				if err != nil {
					return nil, formatErr(path, off, err, "bad ar long-name reference %q", name)
				}
				if longOff < 0 {
					return nil, formatErr(path, off, nil, "ar long-name reference %q before any \"//\" table", name)
				}
				if idx < 0 || idx >= int64(len(longNames)) {
					return nil, formatErr(path, off, nil, "ar long-name reference %q outside the %d-byte \"//\" table at offset %d", name, len(longNames), longOff)
				}
				rest := longNames[idx:]
				end := bytes.IndexByte(rest, '\n')
				if end < 0 {
					end = len(rest)
				}
				n := string(rest[:end])
				n = strings.TrimSuffix(n, "/") // GNU terminates entries with "/\n"
				if n == "" {
					return nil, formatErr(path, off, nil, "ar long-name reference %q names an empty string", name)
				}
				m.Name = n
				m.Offset = dataOff
			default:
				m.Name = strings.TrimSuffix(name, "/")
				m.Offset = dataOff
			}
			if isBSDSymdef(m.Name) {
				kind := "bsd32"
				if strings.HasPrefix(m.Name, "__.SYMDEF_64") {
					kind = "bsd64"
				}
				tables = append(tables, symtab{kind: kind, dataOff: m.Offset, size: m.Size})
				break
			}
			if m.Name == "" {
				return nil, formatErr(path, off, nil, "ar member with an empty name")
			}
			if a.Thin {
				m.Offset = 0
				p := m.Name
				if !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(path), p)
				}
				m.Path = p
			}
			hdrIndex[off] = len(a.Members)
			a.Members = append(a.Members, m)
		}

		next := dataOff
		if hasData {
			next += msize + msize&1
		}
		if next <= off { // cannot happen with msize >= 0, but never loop
			return nil, formatErr(path, off, nil, "ar member header does not advance")
		}
		off = next
	}

	for _, t := range tables {
		syms, err := readSymtab(r, path, t.kind, t.dataOff, t.size, hdrIndex)
		if err != nil {
			return nil, err
		}
		a.Symbols = append(a.Symbols, syms...)
	}
	return a, nil
}

func isBSDSymdef(name string) bool {
	switch name {
	case "__.SYMDEF", "__.SYMDEF SORTED", "__.SYMDEF_64", "__.SYMDEF_64 SORTED":
		return true
	}
	return false
}

// readSymtab decodes a GNU ("/", "/SYM64/") or BSD ("__.SYMDEF") armap.
func readSymtab(r io.ReaderAt, path, kind string, off, size int64, hdrIndex map[int64]int) ([]ArchiveSymbol, error) {
	if size > 1<<31 {
		return nil, formatErr(path, off, nil, "ar symbol table of %d bytes is implausibly large", size)
	}
	b, err := readN(r, off, size)
	if err != nil {
		return nil, formatErr(path, off, err, "reading ar symbol table")
	}
	lookup := func(hoff uint64, at int) (int, error) {
		i, ok := hdrIndex[int64(hoff)]
		if !ok || hoff > 1<<62 {
			return 0, formatErr(path, off+int64(at), nil, "ar symbol table entry points at offset %d, which is no member header", hoff)
		}
		return i, nil
	}
	var syms []ArchiveSymbol
	switch kind {
	case "gnu32", "gnu64":
		w := 4
		if kind == "gnu64" {
			w = 8
		}
		get := func(p int) uint64 {
			if w == 4 {
				return uint64(binary.BigEndian.Uint32(b[p:]))
			}
			return binary.BigEndian.Uint64(b[p:])
		}
		if len(b) < w {
			return nil, formatErr(path, off, io.ErrUnexpectedEOF, "ar symbol table too short for its count")
		}
		n := get(0)
		if n > uint64(len(b)-w)/uint64(w) {
			return nil, formatErr(path, off, nil, "ar symbol table count %d does not fit its %d bytes", n, len(b))
		}
		strs := b[w+int(n)*w:]
		syms = make([]ArchiveSymbol, 0, n)
		for i := 0; i < int(n); i++ {
			at := w + i*w
			idx, err := lookup(get(at), at)
			if err != nil {
				return nil, err
			}
			e := bytes.IndexByte(strs, 0)
			if e < 0 {
				return nil, formatErr(path, off+int64(len(b)-len(strs)), io.ErrUnexpectedEOF, "ar symbol table: name %d of %d is not NUL-terminated", i+1, n)
			}
			syms = append(syms, ArchiveSymbol{Name: string(strs[:e]), Member: idx})
			strs = strs[e+1:]
		}
	case "bsd32", "bsd64":
		// struct ranlib { strx, off } array preceded by its byte size,
		// then the string table preceded by its byte size; little-endian
		// as written by llvm-ar for x86-64.
		w := 4
		if kind == "bsd64" {
			w = 8
		}
		get := func(p int) uint64 {
			if w == 4 {
				return uint64(binary.LittleEndian.Uint32(b[p:]))
			}
			return binary.LittleEndian.Uint64(b[p:])
		}
		if len(b) < w {
			return nil, formatErr(path, off, io.ErrUnexpectedEOF, "BSD ar symbol table too short")
		}
		rsize := get(0)
		if rsize > uint64(len(b)-w) || rsize%uint64(2*w) != 0 {
			return nil, formatErr(path, off, nil, "BSD ar symbol table: ranlib size %d does not fit %d bytes", rsize, len(b))
		}
		sp := w + int(rsize)
		if len(b)-sp < w {
			return nil, formatErr(path, off+int64(sp), io.ErrUnexpectedEOF, "BSD ar symbol table: missing string table size")
		}
		ssize := get(sp)
		if ssize > uint64(len(b)-sp-w) {
			return nil, formatErr(path, off+int64(sp), nil, "BSD ar symbol table: string table size %d does not fit", ssize)
		}
		strs := b[sp+w : sp+w+int(ssize)]
		n := int(rsize) / (2 * w)
		syms = make([]ArchiveSymbol, 0, n)
		for i := 0; i < n; i++ {
			at := w + i*2*w
			strx := get(at)
			idx, err := lookup(get(at+w), at+w)
			if err != nil {
				return nil, err
			}
			if strx >= uint64(len(strs)) {
				return nil, formatErr(path, off+int64(at), nil, "BSD ar symbol table: name offset %d outside %d-byte string table", strx, len(strs))
			}
			s := strs[strx:]
			if e := bytes.IndexByte(s, 0); e >= 0 {
				s = s[:e]
			}
			syms = append(syms, ArchiveSymbol{Name: string(s), Member: idx})
		}
	}
	return syms, nil
}

// Open returns a reader over member m's bytes (m.Size bytes from m.Offset in
// the archive file) and the io.Closer that releases the file behind it. For a
// thin archive it opens m.Path instead and the reader covers that file as it
// is now; when its size differs from m.Size the archive header is out of date
// and the returned reader still covers the whole current file (that is what a
// linker would read). The caller must Close the closer.
func (a *Archive) Open(m Member) (*io.SectionReader, io.Closer, error) {
	if a.Thin || m.Path != "" {
		if m.Path == "" {
			return nil, nil, fmt.Errorf("%s: thin archive member %q has no path", a.Path, m.Name)
		}
		f, err := safeio.Open(m.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: thin archive member %q: %w", a.Path, m.Name, err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: thin archive member %q: %w", a.Path, m.Name, err)
		}
		return io.NewSectionReader(f, 0, st.Size()), f, nil
	}
	if m.Offset < arHeaderLen || m.Size < 0 {
		return nil, nil, fmt.Errorf("%s: member %q has an invalid offset %d or size %d", a.Path, m.Name, m.Offset, m.Size)
	}
	f, err := safeio.Open(a.Path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", a.Path, err)
	}
	if m.Offset+m.Size > st.Size() {
		f.Close()
		return nil, nil, formatErr(a.Path, m.Offset, io.ErrUnexpectedEOF, "member %q (%d bytes) runs past the end of the %d-byte file; the archive changed since it was read", m.Name, m.Size, st.Size())
	}
	return io.NewSectionReader(f, m.Offset, m.Size), f, nil
}

// wholeMember is the largest member EachMember reads into memory in one read; a larger one is parsed
// through the file.
const wholeMember = 64 << 20

// EachMember calls fn with a reader over each member that want accepts (by index and header), in archive order, until fn
// returns an error (which EachMember returns). The archive file is opened once, and each member of at
// most wholeMember bytes is read whole in one read: a parser's many small reads (ELF header, section
// headers, each section) then cost no system call each. A thin archive's members are opened as Open
// does.
func (a *Archive) EachMember(want func(i int, m Member) bool, fn func(Member, *io.SectionReader) error) error {
	var f *os.File
	var size int64
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for i, m := range a.Members {
		if !want(i, m) {
			continue
		}
		if a.Thin || m.Path != "" || m.Size > wholeMember {
			sr, closer, err := a.Open(m)
			if err != nil {
				return err
			}
			err = fn(m, sr)
			closer.Close()
			if err != nil {
				return err
			}
			continue
		}
		if f == nil {
			var err error
			if f, err = safeio.Open(a.Path); err != nil {
				return err
			}
			st, err := f.Stat()
			if err != nil {
				return fmt.Errorf("%s: %w", a.Path, err)
			}
			size = st.Size()
		}
		if m.Offset < arHeaderLen || m.Size < 0 {
			return fmt.Errorf("%s: member %q has an invalid offset %d or size %d", a.Path, m.Name, m.Offset, m.Size)
		}
		if m.Offset+m.Size > size {
			return formatErr(a.Path, m.Offset, io.ErrUnexpectedEOF, "member %q (%d bytes) runs past the end of the %d-byte file; the archive changed since it was read", m.Name, m.Size, size)
		}
		buf := make([]byte, m.Size)
		if err := readFullAt(f, buf, m.Offset); err != nil {
			return formatErr(a.Path, m.Offset, err, "member %q (%d bytes) could not be read whole; the archive changed since it was read", m.Name, m.Size)
		}
		if err := fn(m, io.NewSectionReader(bytes.NewReader(buf), 0, m.Size)); err != nil {
			return err
		}
	}
	return nil
}

// MemberReader is Open for an archive whose bytes are already open as r (for
// example ReadArchive over memory). Thin members are not supported here.
func (a *Archive) MemberReader(r io.ReaderAt, m Member) (*io.SectionReader, error) {
	if a.Thin {
		return nil, fmt.Errorf("%s: thin archive member %q lives in %s", a.Path, m.Name, m.Path)
	}
	if m.Offset < arHeaderLen || m.Size < 0 || (a.size > 0 && m.Offset+m.Size > a.size) {
		return nil, fmt.Errorf("%s: member %q has an invalid offset %d or size %d", a.Path, m.Name, m.Offset, m.Size)
	}
	return io.NewSectionReader(r, m.Offset, m.Size), nil
}

// parseDec parses a space-padded decimal ar header field; an all-blank field is 0.
func parseDec(b []byte) (int64, error) {
	s := strings.TrimRight(string(b), " ")
	s = strings.TrimLeft(s, " ")
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, errors.New("a decimal number too large for a file")
	}
	if err != nil {
		return 0, errors.New("not a decimal number") // strconv's own words name its function
	}
	if v < 0 {
		return 0, fmt.Errorf("negative value %d", v)
	}
	return v, nil
}

// readN reads exactly n bytes at off; n must already be checked against the
// data size by the caller.
func readN(r io.ReaderAt, off, n int64) ([]byte, error) {
	if n < 0 || n > 1<<31 {
		return nil, fmt.Errorf("read of %d bytes refused", n)
	}
	b := make([]byte, n)
	if err := readFullAt(r, b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// readFullAt fills b from r at off. A short read is io.ErrUnexpectedEOF; an
// io.EOF that comes with a full buffer (allowed by io.ReaderAt) is success.
func readFullAt(r io.ReaderAt, b []byte, off int64) error {
	if off < 0 {
		return fmt.Errorf("negative offset %d", off)
	}
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
