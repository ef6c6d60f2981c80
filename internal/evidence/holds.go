package evidence

import (
	"debug/elf"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zeebo/blake3"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// HoldVerdict is what Holds and Bundles conclude about one library's current content.
type HoldVerdict string

const (
	HoldsAll    HoldVerdict = "holds"   // every feature of the library that was linked is inside, unchanged
	HoldsOther  HoldVerdict = "differs" // the linked file holds other content where the library's is expected
	HoldUnknown HoldVerdict = "unknown" // nothing decides (stripped binary with machine code, LTO, nothing inside)
)

// Holding is the answer of Holds or Bundles.
type Holding struct {
	Verdict HoldVerdict
	// Present counts the library's features found inside; Dropped those whose symbol is not in the
	// binary at all (unused sections removed by --gc-sections: they cannot make it stale).
	Present, Dropped int
	// Contradicted names (at most 4) features the binary holds in another form: a code section whose
	// symbol is inside with other bytes, a symbol of another size, a fatbinary entry missing from an
	// object that is otherwise inside.
	Contradicted []string
	// Why says, for HoldUnknown, what could not be compared; for the others, what was.
	Why string
}

// Holds judges whether the linked file b holds the current content of library c (an archive, an object
// or an rlib's bundled objects), for a binary older than c's file: every feature must be present, or
// belong to code the link dropped (its symbol is not in b). A fatbinary entry of an object counts as
// dropped only when nothing else of that object is inside; a missing string literal of an object that is
// inside leaves the answer HoldUnknown (lld drops unreferenced pieces of merged string sections). Constant data other than
// string literals is compared through symbol sizes only. Without a .symtab, machine code cannot be
// compared, so a library with code sections is HoldUnknown unless something is contradicted.
// Errors are those of reading b (corrupt symbol or fatbinary data), naming it.
func Holds(b *Binary, c *Candidate) (*Holding, error) {
	if c.LTO {
		// The members without LTO code (a C object in a Rust staticlib whose std objects embed
		// bitcode) can still contradict the binary; nothing else can decide.
		plain := *c
		plain.LTO, plain.Features = false, nil
		for _, f := range c.Features {
			if !c.ltoMembers[f.Member] {
				plain.Features = append(plain.Features, f)
			}
		}
		if len(plain.Features) > 0 {
			if h, err := Holds(b, &plain); err == nil && h.Verdict == HoldsOther {
				h.Why += " (judged on the members without LTO intermediate code; others carry it)"
				return h, nil
			}
		}
		return &Holding{Verdict: HoldUnknown, Why: "the library carries LTO intermediate code: its machine code is made at link time"}, nil
	}
	b.fatbinMu.Lock()
	b.wantFatbin, b.fatbinDone = map[[2]uint32][]uint64{}, false
	b.prep = nil // the fatbinary entries looked for change
	b.fatbinMu.Unlock()
	var wanted []string
	for _, f := range c.Features {
		switch f.Kind {
		case String:
			wanted = append(wanted, f.value)
		case Fatbin:
			k := [2]uint32{uint32(f.fatbin.kind), f.fatbin.arch}
			b.wantFatbin[k] = append(b.wantFatbin[k], f.fatbin.size)
		}
	}
	strs := b.presentStrings(wanted)
	if err := b.loadSymbols(); err != nil {
		return nil, err
	}
	h := &Holding{}
	type judged struct {
		f Feature
		p Presence
	}
	var all []judged
	linked := map[string]bool{} // members with some feature inside
	seen := map[string]bool{}
	for _, f := range c.Features {
		if f.Kind == Code || seen[f.Member+"\x00"+f.Key] {
			continue // code is compared below, with data and sections of any size
		}
		seen[f.Member+"\x00"+f.Key] = true
		p, err := b.presence(f, strs)
		if err != nil {
			return nil, err
		}
		if p == Present {
			linked[f.Member] = true
		}
		all = append(all, judged{f, p})
	}
	placed, err := c.placedSections()
	if err != nil {
		return nil, err
	}
	for _, ps := range placed {
		kind := Code
		if !ps.exec {
			kind = "data"
		}
		f := Feature{Kind: kind, Label: ps.label, Member: ps.member, code: &ps.sec}
		found, known, err := b.hasCode(&ps.sec)
		if err != nil {
			return nil, err
		}
		p := Unknown
		switch {
		case found:
			p = Present
			linked[ps.member] = true
		case known:
			p = Absent
		}
		all = append(all, judged{f, p})
	}
	unknownCode, unexplained, example := 0, 0, ""
	kinds := map[FeatureKind]int{}
	for _, j := range all {
		switch {
		case j.p == Present:
			h.Present++
			kinds[j.f.Kind]++
		case j.p == Unknown:
			if j.f.code != nil {
				unknownCode++
			}
		case j.f.Kind == String && linked[j.f.Member]:
			// An edited literal, or a literal of unused code: linkers that split merged string
			// sections (lld) drop unreferenced pieces, so this proves nothing either way.
			unexplained++
			if example == "" {
				example = j.f.Label
			}
		case j.f.code != nil && len(b.symbols[j.f.code.symbol]) > 0,
			j.f.Kind == Symbol && len(b.symbols[j.f.value]) > 0,
			j.f.Kind == Fatbin && linked[j.f.Member]:
			if len(h.Contradicted) < 4 {
				h.Contradicted = append(h.Contradicted, j.f.Label)
			}
		default:
			h.Dropped++
		}
	}
	switch {
	case len(h.Contradicted) > 0:
		h.Verdict = HoldsOther
		h.Why = fmt.Sprintf("the binary holds other content where the library's is expected: %s not inside in this form", strings.Join(h.Contradicted, ", "))
	case h.Present == 0:
		h.Verdict = HoldUnknown
		h.Why = "none of the library's content is inside (it may be unused), so nothing proves which version was linked"
	case unexplained > 0:
		h.Verdict = HoldUnknown
		h.Why = fmt.Sprintf("%d string literal(s) of the library are not inside although their objects are (e.g. %s): an edit, or literals of unused code the linker dropped", unexplained, example)
	case unknownCode > 0:
		h.Verdict = HoldUnknown
		h.Why = fmt.Sprintf("the binary has no .symtab (stripped): %d code or data section(s) of the library cannot be located to compare", unknownCode)
	default:
		h.Verdict = HoldsAll
		var parts []string
		for _, k := range []FeatureKind{Code, "data", String, Symbol, Fatbin} {
			if kinds[k] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
			}
		}
		h.Why = fmt.Sprintf("every feature of the library that was linked is inside unchanged (%s; sections compared with relocation fields masked)", strings.Join(parts, ", "))
		if h.Dropped > 0 {
			h.Why += fmt.Sprintf("; %d belong to code the link dropped", h.Dropped)
		}
	}
	return h, nil
}

// Bundles judges whether container (an rlib or static library, read by ReadCandidate: its bundled native
// objects) holds the current content of library lib: every object member of lib must be bundled with the
// same content (strings, symbols with sizes, fatbinary entries, and every code and data section with
// relocation fields masked), so that a rebuild that changed only embedded temporary names (nvcc) still
// holds. A member missing or with other content is HoldsOther; LTO members give HoldUnknown. Errors are
// those of reading either file's objects, naming the file.
func Bundles(container, lib *Candidate) (*Holding, error) {
	if lib.LTO || container.LTO {
		return &Holding{Verdict: HoldUnknown, Why: "LTO intermediate code: objects are compared at link time only"}, nil
	}
	sigs := func(c *Candidate) (map[string]string, error) {
		m := map[string][]string{}
		for _, f := range c.Features {
			if f.Kind != Code {
				m[f.Member] = append(m[f.Member], f.Key)
			}
		}
		placed, err := c.placedSections()
		if err != nil {
			return nil, err
		}
		for _, ps := range placed {
			sum := blake3.Sum256(ps.sec.data)
			m[ps.member] = append(m[ps.member], fmt.Sprintf("section:%s:%d:%x", ps.sec.symbol, ps.sec.symOff, sum))
		}
		out := map[string]string{}
		for k, ks := range m {
			sort.Strings(ks)
			out[k] = strings.Join(ks, "\x00")
		}
		return out, nil
	}
	have, err := sigs(container)
	if err != nil {
		return nil, err
	}
	want, err := sigs(lib)
	if err != nil {
		return nil, err
	}
	byContent := map[string]bool{}
	for _, sig := range have {
		byContent[sig] = true
	}
	h := &Holding{}
	for _, m := range lib.Members {
		if sig, ok := have[m]; ok && sig == want[m] || byContent[want[m]] {
			h.Present++
			continue
		}
		if len(h.Contradicted) < 4 {
			h.Contradicted = append(h.Contradicted, "member "+m)
		}
	}
	switch {
	case len(h.Contradicted) > 0:
		h.Verdict = HoldsOther
		h.Why = fmt.Sprintf("it does not bundle the library's objects as they are now: %s differ", strings.Join(h.Contradicted, ", "))
	case h.Present == 0:
		h.Verdict = HoldUnknown
		h.Why = "the library holds no object to compare"
	default:
		h.Verdict = HoldsAll
		h.Why = fmt.Sprintf("it bundles all %d object member(s) of the library with the same content (strings, symbols, code and data sections with relocation fields masked)", h.Present)
	}
	return h, nil
}

// placedSection is one allocated section of a library object, masked, with the symbol that locates it in a
// linked file: every code section and every constant or initialised data section (not merged strings or
// constants, which the linker deduplicates, nor unwind tables it rewrites), whatever its size.
type placedSection struct {
	sec    codeSection
	exec   bool
	label  string
	member string
}

// placedSectionsOf reads the allocated sections of every object of the library at path (for an rlib, only
// its bundled native objects, as ReadCandidate does); of the archive member of index only alone when
// only >= 0.
func placedSectionsOf(path string, only int) ([]placedSection, error) {
	isAr, err := binfmt.IsArchive(path)
	if err != nil {
		return nil, err
	}
	var out []placedSection
	add := func(r io.ReaderAt, member string) error {
		var magic [4]byte
		if _, err := r.ReadAt(magic[:], 0); err != nil || string(magic[:]) != "\x7fELF" {
			return nil
		}
		f, err := binfmt.NewELF(r, path+"("+member+")")
		if err != nil {
			return err
		}
		syms, _, err := f.DefinedSymbols()
		if err != nil {
			return err
		}
		for i, sec := range f.File.Sections {
			if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_ALLOC == 0 || sec.Flags&elf.SHF_MERGE != 0 ||
				sec.Size == 0 || sec.Size > 64<<20 || sec.Name == ".eh_frame" || strings.HasPrefix(sec.Name, ".nv") || sec.Name == binfmt.SectionRelFatbin {
				continue
			}
			exec := sec.Flags&elf.SHF_EXECINSTR != 0
			var anchor *binfmt.ELFSymbol
			for j := range syms {
				s := &syms[j]
				ok := s.Type == elf.STT_FUNC || !exec && s.Type == elf.STT_OBJECT
				if int(s.SectionIndex) == i && ok && s.Name != "" && (anchor == nil || s.Bind == elf.STB_GLOBAL && anchor.Bind != elf.STB_GLOBAL) {
					anchor = s
				}
			}
			if anchor == nil {
				continue
			}
			m, err := f.MaskedSection(i)
			if err != nil {
				return err
			}
			what := "data"
			if exec {
				what = "code"
			}
			out = append(out, placedSection{
				sec:  codeSection{data: m.Data, mask: m.Mask, symbol: anchor.Name, symOff: anchor.Value},
				exec: exec, member: member,
				label: fmt.Sprintf("%s section %s of %s (%d bytes, %d masked)", what, sec.Name, member, m.Size, m.MaskedBytes()),
			})
		}
		return nil
	}
	if !isAr {
		fh, err := safeio.Open(path)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		return out, add(fh, filepath.Base(path))
	}
	a, err := binfmt.OpenArchive(path)
	if err != nil {
		return nil, err
	}
	rlib := strings.HasSuffix(path, ".rlib")
	err = a.EachMember(func(i int, m binfmt.Member) bool {
		return (only < 0 || i == only) &&
			!(rlib && (m.Name == "lib.rmeta" || strings.HasSuffix(m.Name, ".rcgu.o")) || strings.HasPrefix(m.Name, "__.SYMDEF"))
	}, func(m binfmt.Member, sr *io.SectionReader) error { return add(sr, m.Name) })
	if err != nil {
		return nil, err
	}
	return out, nil
}
