package evidence

import (
	"bytes"
	"debug/elf"
	"encoding/binary"

	"github.com/stalecheck/stalecheck/internal/binfmt"
)

type elfSymbol = binfmt.ELFSymbol

// wants are what a set of candidates looks for in a binary: their strings, the symbols their symbol
// features and code anchors name, and the fatbinary entries (kind and SM architecture → hashed sizes).
type wants struct {
	strings []string
	symbols []string
	fatbin  map[[2]uint32][]uint64
}

func wantsOf(cands []*Candidate) wants {
	w := wants{fatbin: map[[2]uint32][]uint64{}}
	seenStr, seenSym := map[string]bool{}, map[string]bool{}
	sym := func(n string) {
		if !seenSym[n] {
			seenSym[n] = true
			w.symbols = append(w.symbols, n)
		}
	}
	for _, c := range cands {
		for _, f := range c.Features {
			switch f.Kind {
			case String:
				if !seenStr[f.value] {
					seenStr[f.value] = true
					w.strings = append(w.strings, f.value)
				}
			case Symbol:
				sym(f.value)
			case Fatbin:
				k := [2]uint32{uint32(f.fatbin.kind), f.fatbin.arch}
				w.fatbin[k] = append(w.fatbin[k], f.fatbin.size)
			case Code, Data:
				sym(f.code.symbol)
			}
		}
	}
	return w
}

// prepared is what Prepare found: the strings looked for and those present, and the symbol names and
// fatbinary entries looked for (b.symbols and b.fatbins hold the answers).
type prepared struct {
	strings map[string]bool
	found   map[string]bool
	symbols map[string]bool
	fatbin  map[[2]uint32][]uint64
}

// covers reports whether Prepare looked for everything w wants.
func (p *prepared) covers(w wants) bool {
	for _, s := range w.strings {
		if !p.strings[s] {
			return false
		}
	}
	for _, s := range w.symbols {
		if !p.symbols[s] {
			return false
		}
	}
	for k, sizes := range w.fatbin {
		have := map[uint64]bool{}
		for _, n := range p.fatbin[k] {
			have[n] = true
		}
		for _, n := range sizes {
			if !have[n] {
				return false
			}
		}
	}
	return true
}

// Prepare looks for the features of all the given candidates (of every library a binary links) at
// once: one pass over the read-only sections for their strings, one over the symbol table for the
// symbols they name, one parse of the fatbinary sections for their entries, side by side. A later
// Match whose candidates are among them answers from these results instead of scanning the binary
// again (without Prepare, `which` on a binary of ten libraries scanned it ten times). Answers are the
// same either way: each feature's presence does not depend on what else is looked for.
func (b *Binary) Prepare(cands []*Candidate) {
	w := wantsOf(cands)
	b.fatbinMu.Lock()
	b.wantFatbin, b.fatbinDone = w.fatbin, false
	b.fatbinMu.Unlock()
	fatbinDone, symsDone := make(chan struct{}), make(chan struct{})
	go func() { b.hasFatbin(fatbinKey{}); close(fatbinDone) }()
	go func() { b.needSymbols(w.symbols); close(symsDone) }() // errors are seen again by presence
	found := b.presentStrings(w.strings)
	<-fatbinDone
	<-symsDone
	p := &prepared{strings: map[string]bool{}, found: found, symbols: map[string]bool{}, fatbin: w.fatbin}
	for _, s := range w.strings {
		p.strings[s] = true
	}
	for _, s := range w.symbols {
		p.symbols[s] = true
	}
	b.prep = p
}

// needSymbols makes b.symbols hold every defined symbol of the given names (all symbols once
// loadSymbols has run). With a little-endian ELF64 symbol table it reads the table in place from the
// mapping and keeps only those names (a 58 MB debug binary has 31,000 symbols; the names a match asks
// for are a few hundred); otherwise, or when the table does not parse, it loads them all as
// loadSymbols does (and reports that path's errors).
func (b *Binary) needSymbols(names []string) error {
	b.symMu.Lock()
	if b.symbols != nil && b.symsFor == nil {
		b.symMu.Unlock()
		return nil // all loaded
	}
	var want map[string]bool
	for _, n := range names {
		if !b.symsFor[n] {
			if want == nil {
				want = map[string]bool{}
			}
			want[n] = true
		}
	}
	if len(want) == 0 && b.symbols != nil {
		b.symMu.Unlock()
		return nil
	}
	found, ok := b.scanSymbols(want)
	if ok {
		if b.symbols == nil {
			b.symbols, b.symsFor = map[string][]elfSymbol{}, map[string]bool{}
		}
		for n := range want {
			b.symsFor[n] = true
		}
		for n, s := range found {
			b.symbols[n] = append(b.symbols[n], s...)
		}
		b.symMu.Unlock()
		return nil
	}
	b.symMu.Unlock()
	return b.loadSymbols()
}

// scanSymbols reads the defined symbols of the wanted names from .symtab (else .dynsym), as
// binfmt.ELFFile.DefinedSymbols selects them (not undefined, not section or file symbols; the null
// symbol skipped), straight from the mapping. ok is false where it cannot (not little-endian ELF64,
// a table or string table outside the file or of an odd size): the caller falls back to debug/elf.
func (b *Binary) scanSymbols(want map[string]bool) (map[string][]elfSymbol, bool) {
	f := b.elf.File
	if f.Class != elf.ELFCLASS64 || f.ByteOrder != binary.LittleEndian {
		return nil, false
	}
	tab := f.SectionByType(elf.SHT_SYMTAB)
	if tab == nil {
		tab = f.SectionByType(elf.SHT_DYNSYM)
	}
	out := map[string][]elfSymbol{}
	if tab == nil {
		return out, true // no symbols: DefinedSymbols returns none
	}
	if tab.Flags&elf.SHF_COMPRESSED != 0 || int(tab.Link) <= 0 || int(tab.Link) >= len(f.Sections) {
		return nil, false
	}
	data, strs := b.sectionBytes(tab), b.sectionBytes(f.Sections[tab.Link])
	if data == nil || strs == nil || len(data)%elf.Sym64Size != 0 || f.Sections[tab.Link].Flags&elf.SHF_COMPRESSED != 0 {
		return nil, false
	}
	if len(want) == 0 {
		return out, true
	}
	for i := elf.Sym64Size; i+elf.Sym64Size <= len(data); i += elf.Sym64Size {
		e := data[i : i+elf.Sym64Size]
		shndx := elf.SectionIndex(binary.LittleEndian.Uint16(e[6:]))
		t := elf.ST_TYPE(e[4])
		if shndx == elf.SHN_UNDEF || t == elf.STT_SECTION || t == elf.STT_FILE {
			continue
		}
		off := int(binary.LittleEndian.Uint32(e[0:]))
		name := ""
		if off < len(strs) {
			if end := bytes.IndexByte(strs[off:], 0); end >= 0 {
				if !want[string(strs[off:off+end])] { // no allocation for the lookup
					continue
				}
				name = string(strs[off : off+end])
			}
		}
		if name == "" && !want[""] {
			continue
		}
		s := elfSymbol{Name: name, SectionIndex: shndx, Value: binary.LittleEndian.Uint64(e[8:]), Size: binary.LittleEndian.Uint64(e[16:]),
			Bind: elf.ST_BIND(e[4]), Type: t}
		switch {
		case shndx == elf.SHN_ABS:
			s.Section = "*ABS*"
		case shndx == elf.SHN_COMMON:
			s.Section = "*COM*"
		case int(shndx) < len(f.Sections):
			s.Section = f.Sections[shndx].Name
		}
		out[name] = append(out[name], s)
	}
	return out, true
}
