package evidence

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/stalecheck/stalecheck/internal/binfmt"
)

// Binary is a linked file opened for matching. Its bytes are memory-mapped, never copied whole, so
// memory stays bounded for binaries of any size.
type Binary struct {
	Path string
	data []byte // the mmap
	elf  *binfmt.ELFFile
	// roSections are the loaded read-only data sections (SHF_ALLOC, not writable, not executable).
	roSections []*elf.Section
	symbols    map[string][]binfmt.ELFSymbol // nil until needed; empty when the file has no .symtab
	// symsFor are the names symbols holds every symbol of (needSymbols); nil when it holds all.
	symsFor    map[string]bool
	prep       *prepared // what Prepare found; nil without it (or after a Match or Holds of other features)
	hasSymtab  bool
	fatbins    map[string]bool // fatbinKeyString → present
	fatbinErr  error
	fatbinDone bool
	fatbinMu   sync.Mutex
	symMu      sync.Mutex
	// wantFatbin are the (kind, architecture) pairs and hashed sizes of the entries looked for: only
	// binary entries that could equal one are decompressed and hashed.
	wantFatbin map[[2]uint32][]uint64
	stringIdx  map[string][]string // last ≤8 bytes → candidate strings ending so; built per match
}

// OpenBinary maps the file and reads its ELF headers (binfmt.MapELF). Errors name the file.
func OpenBinary(path string) (*Binary, error) {
	ef, err := binfmt.MapELF(path)
	if err != nil {
		return nil, err
	}
	data := ef.Mapped()
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
	b := &Binary{Path: path, data: data, elf: ef}
	for _, s := range ef.File.Sections {
		if s.Type != elf.SHT_NOBITS && s.Flags&elf.SHF_ALLOC != 0 && s.Flags&(elf.SHF_WRITE|elf.SHF_EXECINSTR) == 0 && s.Flags&elf.SHF_COMPRESSED == 0 {
			b.roSections = append(b.roSections, s)
		}
	}
	b.hasSymtab = ef.Section(".symtab") != nil
	return b, nil
}

// Close unmaps the file.
func (b *Binary) Close() error {
	if b.data == nil {
		return nil
	}
	b.data = nil
	return b.elf.Close()
}

// HasSymtab reports whether the binary keeps a .symtab (it is not stripped of symbols).
func (b *Binary) HasSymtab() bool { return b.hasSymtab }

// sectionBytes returns a section's bytes within the mapping (nil when out of range).
func (b *Binary) sectionBytes(s *elf.Section) []byte {
	end := s.Offset + s.FileSize
	if s.Type == elf.SHT_NOBITS || end > uint64(len(b.data)) || s.Offset > end {
		return nil
	}
	return b.data[s.Offset:end]
}

// Contains reports whether s occurs in the loaded read-only sections (`.rodata` and friends; never
// debug info or `.comment`).
func (b *Binary) Contains(s []byte) bool {
	for _, sec := range b.roSections {
		if bytes.Contains(b.sectionBytes(sec), s) {
			return true
		}
	}
	return false
}

// DefinesSymbol reports whether a symbol of that name is defined (.symtab, else .dynsym). known is
// false when it is not found and the binary has no .symtab (stripped), so the answer cannot be told.
func (b *Binary) DefinesSymbol(name string) (found, known bool, err error) {
	if err := b.needSymbols([]string{name}); err != nil {
		return false, false, err
	}
	if len(b.symbols[name]) > 0 {
		return true, true, nil
	}
	// Without .symtab only exported symbols remain (.dynsym): absence there proves nothing.
	return false, b.hasSymtab, nil
}

func (b *Binary) loadSymbols() error {
	b.symMu.Lock()
	defer b.symMu.Unlock()
	if b.symbols != nil && b.symsFor == nil {
		return nil
	}
	syms, _, err := b.elf.DefinedSymbols()
	if err != nil {
		return err
	}
	b.symsFor = nil
	b.symbols = make(map[string][]binfmt.ELFSymbol, len(syms))
	for _, s := range syms {
		b.symbols[s.Name] = append(b.symbols[s.Name], s)
	}
	return nil
}

// presentStrings returns which of the wanted strings occur NUL-terminated in the read-only sections,
// possibly as the tail of a longer string (linkers tail-merge string sections). One pass over the data,
// split at NUL boundaries over the available cores: for every NUL-terminated run at least minString
// bytes long, its last minString bytes are looked up in an index of the wanted strings' tails, and only
// those candidates are compared in full.
func (b *Binary) presentStrings(wanted []string) map[string]bool {
	found := map[string]bool{}
	idx := map[string][]string{}
	for _, w := range wanted {
		if len(w) >= minString {
			idx[w[len(w)-minString:]] = append(idx[w[len(w)-minString:]], w)
		}
	}
	if len(idx) == 0 {
		return found
	}
	const chunk = 32 << 20
	var parts [][]byte
	for _, sec := range b.roSections {
		if !holdsHostStrings(sec) {
			continue
		}
		data := b.sectionBytes(sec)
		for len(data) > 0 {
			n := min(chunk, len(data))
			if n < len(data) {
				// End the part just after a NUL so no run is split.
				if k := bytes.IndexByte(data[n:], 0); k >= 0 {
					n += k + 1
				} else {
					n = len(data)
				}
			}
			parts = append(parts, data[:n])
			data = data[n:]
		}
	}
	// The last two bytes of every wanted string, as a 65,536-bit set: most runs (a bulk string table,
	// 3 million of them in 212 MB) end in no wanted pair and cost no map look-up.
	var tails tailSet
	for t := range idx {
		tails.add(t[len(t)-2:])
	}
	results := make([]map[string]bool, len(parts))
	onCores(len(parts), func(i int) { results[i] = scanStrings(parts[i], idx, &tails) })
	for _, r := range results {
		for w := range r {
			found[w] = true
		}
	}
	return found
}

// tailSet is a set of two-byte strings (a bit per value).
type tailSet [1 << 16 / 64]uint64

func (t *tailSet) add(s string) {
	v := uint16(s[0])<<8 | uint16(s[1])
	t[v>>6] |= 1 << (v & 63)
}

func (t *tailSet) has(a, b byte) bool {
	v := uint16(a)<<8 | uint16(b)
	return t[v>>6]&(1<<(v&63)) != 0
}

// scanStrings returns the wanted strings (idx: tail of minString bytes → strings) that end a
// NUL-terminated run of data; tails holds the last two bytes of each (a run ending otherwise is skipped
// before the look-up).
func scanStrings(data []byte, idx map[string][]string, tails *tailSet) map[string]bool {
	var found map[string]bool
	start := 0 // start of the current NUL-terminated run
	for start < len(data) {
		j := bytes.IndexByte(data[start:], 0)
		if j < 0 {
			break
		}
		end := start + j
		if j >= minString && tails.has(data[end-2], data[end-1]) {
			// string(bytes) in a map index does not allocate.
			for _, w := range idx[string(data[end-minString:end])] {
				if len(w) <= j && string(data[end-len(w):end]) == w {
					if found == nil {
						found = map[string]bool{}
					}
					found[w] = true
				}
			}
		}
		start = end + 1
	}
	return found
}

// hasFatbin reports whether the binary carries the fatbinary entry k.
func (b *Binary) hasFatbin(k fatbinKey) (bool, error) {
	b.fatbinMu.Lock()
	defer b.fatbinMu.Unlock()
	if !b.fatbinDone {
		b.fatbinDone = true
		b.fatbins, b.fatbinErr = b.readFatbins()
	}
	return b.fatbins[fatbinKeyString(k)], b.fatbinErr
}

// readFatbins indexes the binary's fatbinary entries that could equal a wanted one (same kind, SM
// architecture and size): only those are decompressed and hashed. A large section is cut at container
// boundaries (the 16-byte container headers give each container's size) and the parts are parsed on
// all cores.
func (b *Binary) readFatbins() (map[string]bool, error) {
	found := map[string]bool{}
	opts := &binfmt.FatbinOptions{OnlyDigested: true, DigestEntry: func(e *binfmt.FatbinEntry) bool {
		for _, n := range b.wantFatbin[[2]uint32{uint32(e.Kind), e.Arch}] {
			// Stored payloads are padded to 8 bytes and the digest drops trailing NULs.
			if e.Size >= n && e.Size <= n+64 {
				return true
			}
		}
		return false
	}}
	var firstErr error
	for _, name := range []string{binfmt.SectionNvFatbin, binfmt.SectionRelFatbin} {
		sec := b.elf.Section(name)
		if sec == nil || sec.Type == elf.SHT_NOBITS || sec.Flags&elf.SHF_COMPRESSED != 0 {
			continue
		}
		data := b.sectionBytes(sec)
		if data == nil {
			return nil, fmt.Errorf("%s: section %s lies outside the file", b.Path, name)
		}
		keys, err := sectionFatbinKeys(data, name, b.Path, opts)
		for _, k := range keys {
			found[k] = true
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return found, firstErr
}

// sectionFatbinKeys parses a fatbinary section's data on all cores and returns the keys of the entries
// it digested: first at guessed container starts (guessContainers: no walk before the parsing, so the
// page faults of a mapped 1 GiB section are taken on all cores); a part that does not parse means a
// guess was wrong, and the section is parsed again from the parts of a walk over its headers, whose
// error (damaged data) is the answer.
func sectionFatbinKeys(data []byte, section, path string, opts *binfmt.FatbinOptions) ([]string, error) {
	keys, err := parseFatbinParts(data, guessContainers(data, 4*runtime.GOMAXPROCS(0)), section, path, opts)
	if err != nil {
		var parts [][2]int
		splitContainers(data, 64<<20, func(p [2]int) { parts = append(parts, p) })
		keys, err = parseFatbinParts(data, parts, section, path, opts)
	}
	return keys, err
}

// parseFatbinParts parses parts of a fatbinary section on all cores and returns the keys
// (fatbinKeyString) of the entries it digested; the first error names the file, the section and the
// part's offset.
func parseFatbinParts(data []byte, parts [][2]int, section, path string, opts *binfmt.FatbinOptions) ([]string, error) {
	var mu sync.Mutex
	var keys []string
	var firstErr error
	onCores(len(parts), func(i int) {
		p := parts[i]
		cs, err := binfmt.ParseFatbinBytes(data[p[0]:p[1]], path, opts)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s at byte %d of section %s: %w", path, p[0], section, err)
			}
			return
		}
		for i := range cs {
			for _, e := range cs[i].Entries {
				if e.DigestLen > 0 {
					keys = append(keys, fatbinKeyString(fatbinKey{section: section, kind: e.Kind, arch: e.Arch, digest: e.Digest}))
				}
			}
		}
	})
	return keys, firstErr
}

// onCores runs f(0..n-1), at most GOMAXPROCS at a time (CPU-bound passes over a mapped binary), and
// returns when all have.
func onCores(n int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

// guessMin is the smallest section guessContainers cuts (a variable for the tests).
var guessMin = 64 << 20

// guessContainers cuts fatbinary section data into about n parts at guessed container starts: from
// each cut, the next 8-byte-aligned offset holding a plausible container header (the magic 0xBA55ED50,
// version 1, a header of at least 16 bytes and a payload that fits). A guess can be wrong (the magic
// inside a payload); then the part before it runs past its end, or the part from it does not parse,
// and the caller walks the headers instead: the part from offset 0 starts at a real container, and a
// part that parses to its end exactly ends at one, so when every part parses every cut is a boundary.
// Small sections are one part.
func guessContainers(data []byte, n int) [][2]int {
	if n < 2 || len(data) < guessMin {
		return [][2]int{{0, len(data)}}
	}
	var parts [][2]int
	start := 0
	for k := 1; k < n; k++ {
		c := (k*len(data)/n + 7) &^ 7
		for ; c+16 <= len(data); c += 8 {
			if binary.LittleEndian.Uint32(data[c:]) == binfmt.FatbinMagic && binary.LittleEndian.Uint16(data[c+4:]) == 1 &&
				binary.LittleEndian.Uint16(data[c+6:]) >= 16 && binary.LittleEndian.Uint64(data[c+8:]) <= uint64(len(data)-c-16) {
				break
			}
		}
		if c+16 > len(data) || c <= start {
			break
		}
		parts = append(parts, [2]int{start, c})
		start = c
	}
	return append(parts, [2]int{start, len(data)})
}

// splitContainers cuts fatbinary section data into parts of about size bytes at container starts,
// handing each to part as soon as it is found. A
// container header is u32 magic 0xBA55ED50, u16 version, u16 header size, u64 payload size (fatbinary
// layout in docs/binary-formats.md §3.2); zero padding between containers is skipped. Where the walk
// cannot go on (bad magic), the rest is one part and the parser reports the error.
func splitContainers(data []byte, size int, part func([2]int)) {
	start, off := 0, 0
	for off+16 <= len(data) {
		if binary.LittleEndian.Uint32(data[off:]) != binfmt.FatbinMagic {
			if data[off] == 0 {
				off += 8
				continue
			}
			break
		}
		n := int(binary.LittleEndian.Uint16(data[off+6:])) + int(binary.LittleEndian.Uint64(data[off+8:]))
		if n <= 0 || off+n > len(data) || n < 16 {
			break
		}
		off += n
		if off-start >= size {
			part([2]int{start, off})
			start = off
		}
	}
	if start < len(data) {
		part([2]int{start, len(data)})
	}
}

// hasCode looks for a member's code section in the binary: every binary symbol of the anchor's name
// gives a candidate placement (address − offset in section); the bytes there, masked the same way,
// must equal the member's. known is false without a .symtab (a stripped binary).
func (b *Binary) hasCode(c *codeSection) (found, known bool, err error) {
	if err := b.needSymbols([]string{c.symbol}); err != nil {
		return false, false, err
	}
	if !b.hasSymtab {
		return false, false, nil
	}
	for _, s := range b.symbols[c.symbol] {
		if s.Value < c.symOff {
			continue
		}
		start := s.Value - c.symOff
		got := b.bytesAt(start, uint64(len(c.data)))
		if got == nil {
			continue
		}
		buf := append([]byte(nil), got...)
		binfmt.ApplyMask(buf, c.mask)
		if bytes.Equal(buf, c.data) {
			return true, true, nil
		}
	}
	return false, true, nil
}

// bytesAt returns n bytes at virtual address addr from the section that holds them.
func (b *Binary) bytesAt(addr, n uint64) []byte {
	for _, s := range b.elf.File.Sections {
		if s.Type == elf.SHT_NOBITS || s.Flags&elf.SHF_ALLOC == 0 || addr < s.Addr || addr+n > s.Addr+s.Size {
			continue
		}
		data := b.sectionBytes(s)
		off := addr - s.Addr
		if off+n > uint64(len(data)) {
			return nil
		}
		return data[off : off+n]
	}
	return nil
}

// otherForm reports whether the binary holds, under the name an absent feature has, something else: a
// global symbol of that name with another size, or the one symbol anchoring a code section, with other
// bytes there. It is asked after presence, so the symbols it needs are loaded.
func (b *Binary) otherForm(f Feature) bool {
	if !b.hasSymtab {
		return false
	}
	switch f.Kind {
	case Symbol:
		return len(b.symbols[f.value]) > 0
	case Code:
		return f.code != nil && len(b.symbols[f.code.symbol]) == 1
	}
	return false
}

// presence tests one feature; strs holds the strings already found by presentStrings.
func (b *Binary) presence(f Feature, strs map[string]bool) (Presence, error) {
	switch f.Kind {
	case String:
		if strs[f.value] {
			return Present, nil
		}
		return Absent, nil
	case Symbol:
		if err := b.needSymbols([]string{f.value}); err != nil {
			return Unknown, err
		}
		if !b.hasSymtab {
			return Unknown, nil
		}
		for _, s := range b.symbols[f.value] {
			if s.Size == f.size {
				return Present, nil
			}
		}
		return Absent, nil
	case Fatbin:
		ok, err := b.hasFatbin(f.fatbin)
		if err != nil {
			return Unknown, err
		}
		if ok {
			return Present, nil
		}
		return Absent, nil
	case Code, Data:
		ok, known, err := b.hasCode(f.code)
		if err != nil || !known {
			return Unknown, err
		}
		if ok {
			return Present, nil
		}
		return Absent, nil
	}
	return Unknown, nil
}

// holdsHostStrings reports whether a read-only section can hold a host object's string literals:
// PROGBITS data, not device code (fatbinaries), unwind tables or the dynamic linker's tables.
func holdsHostStrings(s *elf.Section) bool {
	if s.Type != elf.SHT_PROGBITS {
		return false
	}
	switch s.Name {
	case binfmt.SectionNvFatbin, binfmt.SectionRelFatbin, ".nvFatBinSegment", ".eh_frame", ".eh_frame_hdr", ".gcc_except_table", ".interp", ".note.gnu.property":
		return false
	}
	return true
}
