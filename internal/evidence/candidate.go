// Package evidence proves from a binary's own bytes which copy of a native library went into it.
//
// A candidate (a static archive, a single object, or a Rust rlib that bundles native objects) is
// reduced to features: string literals of its merged string sections, defined symbols with their sizes,
// CUDA fatbinary entries (kind, SM architecture, digest of the decompressed payload, per section) and
// code sections with relocation fields masked (docs/binary-formats.md §2.4, §3.5). Match
// keeps, for each candidate, only the features no other candidate has, and looks for each of them in
// the binary. Whole-file digests are never compared: nvcc embeds a temporary file name, so two builds of
// the same source differ byte-wise while their sections do not (§3.6).
package evidence

import (
	"debug/elf"
	"encoding/hex"
	"fmt"
	"github.com/stalecheck/stalecheck/internal/safeio"
	"io"
	"path/filepath"
	"strings"

	"github.com/zeebo/blake3"

	"github.com/stalecheck/stalecheck/internal/binfmt"
)

// FeatureKind names what a feature is.
type FeatureKind string

const (
	String FeatureKind = "string" // a NUL-terminated literal of a merged string section, or a text run of plain .rodata
	Symbol FeatureKind = "symbol" // a defined function or object symbol with its size
	Fatbin FeatureKind = "fatbin" // one CUDA fatbinary entry, by section, kind, SM architecture and payload digest
	Code   FeatureKind = "code"   // one executable section of one member, relocation fields masked
	Data   FeatureKind = "data"   // one allocated data section (.rodata.*, .data.*) of one member, relocation fields masked
)

// Feature is one distinguishing fact about a candidate.
type Feature struct {
	Kind  FeatureKind
	Key   string // identity used to compare candidates
	Label string // for people: `string "CUZK_TIMING msm"`, `sm_90 cubin in .nv_fatbin, digest 1a2b…`
	// Member is the archive member the feature comes from ("" for a single object).
	Member string

	value   string // string bytes or symbol name
	off     uint64 // a string's byte offset in its section
	size    uint64 // symbol size
	fatbin  fatbinKey
	code    *codeSection
	Section string
}

type fatbinKey struct {
	section string
	kind    binfmt.FatbinKind
	arch    uint32
	digest  [32]byte
	size    uint64 // bytes hashed (decompressed, trailing NULs trimmed); not part of the identity
}

// codeSection is a member's executable section, masked, with a symbol that locates it in a linked file.
type codeSection struct {
	data   []byte
	mask   []binfmt.ByteRange
	symbol string // a defined symbol in the section
	symOff uint64 // its offset in the section
	// refs are the sections of the member its relocations point into, by name, with the offsets
	// (symbol value + addend): what a link that kept this section kept with it.
	refs map[string][]int64
}

// Candidate is one copy of a library and its features.
type Candidate struct {
	Path     string
	Features []Feature
	// LTO is true when a member carries LTO intermediate code (.gnu.lto_*, .llvmbc, bitcode members):
	// its machine code is made at link time, so only strings and names can match.
	LTO bool
	// Members are the native object members read (rlibs: only the bundled native objects).
	Members []string
	// Native is true when at least one native ELF object was read. A candidate without one (an rlib
	// of a -sys crate that links a system library, a Rust-only rlib) has nothing to compare.
	Native bool
	// RustMembers counts an rlib's own members (lib.rmeta, codegen units) that were skipped.
	RustMembers int
	// ltoMembers are the ELF members that carry LTO sections (their features are not machine code's).
	ltoMembers map[string]bool
	// file and member are set for a candidate of one archive member (members.go): the archive, and the
	// member's index plus one; member 0 means the whole file at Path.
	file   string
	member int
}

// minString is the shortest string literal used as a feature (shorter ones collide by chance).
const minString = 6

// ReadCandidate reads the features of an archive, rlib or object. An rlib's own Rust code (lib.rmeta,
// the *.rcgu.o codegen units, whether machine code or LTO bitcode) is not the library's copy: only the
// native objects it bundles are read. A candidate with no native object at all (an rlib of a -sys crate
// that links a system library, a Rust-only rlib, an archive of bitcode) is returned with Native false and
// no features; Match reports it as having nothing to compare. Errors name the file (and for corrupt
// data the byte offset): a file that is neither an archive nor an ELF object is an error.
func ReadCandidate(path string) (*Candidate, error) {
	c := &Candidate{Path: path}
	isAr, err := binfmt.IsArchive(path)
	if err != nil {
		return nil, err
	}
	if !isAr {
		f, err := safeio.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := c.addObject(f, filepath.Base(path), path); err != nil {
			return nil, err
		}
		if len(c.Members) == 0 && !c.LTO {
			return nil, fmt.Errorf("%s: not an archive, rlib or ELF object", path)
		}
		c.Native = len(c.Members) > 0
		return c, nil
	}
	a, err := binfmt.OpenArchive(path)
	if err != nil {
		return nil, err
	}
	rlib := strings.HasSuffix(path, ".rlib")
	for _, m := range a.Members {
		if m.Name == "lib.rmeta" {
			rlib = true
		}
	}
	err = a.EachMember(func(_ int, m binfmt.Member) bool {
		if rlib && isRustMember(m.Name) {
			c.RustMembers++
			return false // the Rust code of the rlib: only the bundled native objects are the library's copy
		}
		return true
	}, func(m binfmt.Member, sr *io.SectionReader) error {
		err := c.addObject(sr, m.Name, path+"("+m.Name+")")
		if err != nil && strings.HasPrefix(m.Name, "__.SYMDEF") {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	c.Native = len(c.Members) > 0
	return c, nil
}

// isRustMember reports whether an rlib member is rustc's own output: the crate metadata (lib.rmeta) or
// a codegen unit (<crate>-<hash>.<crate>.<hash>-cgu.N.rcgu.o; also with -C lto, -C embed-bitcode and
// -C linker-plugin-lto, when it holds LLVM bitcode or an .llvmbc section).
func isRustMember(name string) bool {
	return name == "lib.rmeta" || strings.HasSuffix(name, ".rcgu.o") || strings.HasSuffix(name, ".rcgu.bc") ||
		strings.HasSuffix(name, ".rmeta")
}

func (c *Candidate) addObject(r io.ReaderAt, member, name string) error {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		return nil // an empty member carries nothing
	}
	if string(magic[:]) == "BC\xc0\xde" || string(magic[:]) == "\xde\xc0\x17\x0b" { // LLVM bitcode, raw or wrapped
		c.LTO = true
		return nil
	}
	if string(magic[:]) != "\x7fELF" {
		return nil // not an object (e.g. a text member)
	}
	f, err := binfmt.NewELF(r, name)
	if err != nil {
		return err
	}
	c.Members = append(c.Members, member)
	seen := map[string]bool{}
	addString := func(sec string, off uint64, s []byte) error {
		if len(s) < minString || seen[string(s)] {
			return nil
		}
		seen[string(s)] = true
		c.Features = append(c.Features, Feature{Kind: String, Key: "string:" + string(s), Label: fmt.Sprintf("string %q", s),
			Member: member, value: string(s), Section: sec, off: off})
		return nil
	}
	// String literals: merged-string sections, and the text runs of plain .rodata, where gcc -O0 puts
	// literals without a symbol (copies that differ in one literal differ nowhere else there).
	if err := f.MergedStrings(addString); err != nil {
		return err
	}
	if err := f.RodataStrings(addString); err != nil {
		return err
	}
	syms, _, err := f.DefinedSymbols()
	if err != nil {
		return err
	}
	for _, s := range syms {
		if (s.Type == elf.STT_FUNC || s.Type == elf.STT_OBJECT) && s.Size > 0 && s.Bind != elf.STB_LOCAL {
			c.Features = append(c.Features, Feature{Kind: Symbol, Key: fmt.Sprintf("symbol:%s:%d", s.Name, s.Size),
				Label: fmt.Sprintf("symbol %s (%d bytes)", s.Name, s.Size), Member: member, value: s.Name, size: s.Size, Section: s.Section})
		}
	}
	for _, sec := range f.File.Sections {
		if strings.HasPrefix(sec.Name, ".gnu.lto_") || sec.Name == ".llvmbc" || sec.Name == ".llvm.lto" {
			c.LTO = true
			if c.ltoMembers == nil {
				c.ltoMembers = map[string]bool{}
			}
			c.ltoMembers[member] = true
		}
	}
	fb, err := f.Fatbins(nil)
	if err != nil {
		return err
	}
	for _, s := range []*binfmt.FatbinSection{fb.NvFatbin, fb.RelFatbin} {
		for _, e := range s.Entries() {
			k := fatbinKey{section: s.Name, kind: e.Kind, arch: e.Arch, digest: e.Digest, size: e.DigestLen}
			c.Features = append(c.Features, Feature{Kind: Fatbin, Key: fatbinKeyString(k),
				Label:  fmt.Sprintf("sm_%d %s in %s, payload digest %s", e.Arch, e.Kind, s.Name, hex.EncodeToString(e.Digest[:6])),
				Member: member, fatbin: k, Section: s.Name})
		}
	}
	return c.addCode(f, syms, member)
}

func fatbinKeyString(k fatbinKey) string {
	return fmt.Sprintf("fatbin:%s:%s:%d:%x", k.section, k.kind, k.arch, k.digest)
}

// addCode adds one feature per non-empty executable section that holds a global or local function
// symbol to locate it by (however short: a `lea; ret` of 8 bytes differs from its other version only in
// an immediate, and the symbol fixes where its bytes must be), and one per allocated data section (PROGBITS, not merged strings,
// not CUDA or unwind tables) of at least 4 bytes that holds a named object symbol: copies that differ
// only in a constant table differ there and nowhere else.
func (c *Candidate) addCode(f *binfmt.ELFFile, syms []binfmt.ELFSymbol, member string) error {
	for i, sec := range f.File.Sections {
		if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_ALLOC == 0 || sec.Size > 64<<20 {
			continue
		}
		exec := sec.Flags&elf.SHF_EXECINSTR != 0
		kind, want := Code, elf.STT_FUNC
		if !exec {
			if sec.Size < 4 || sec.Flags&(elf.SHF_MERGE|elf.SHF_STRINGS) == elf.SHF_MERGE|elf.SHF_STRINGS || !dataFeatureSection(sec.Name) {
				continue
			}
			kind, want = Data, elf.STT_OBJECT
		} else if sec.Size == 0 {
			continue
		}
		// The anchor: a symbol of the section's kind (global first); else a global label without a
		// type, as hand-written assembly defines them (`sym:` with no .type directive).
		var anchor *binfmt.ELFSymbol
		rank := func(s *binfmt.ELFSymbol) int {
			r := 0
			if s.Type == want {
				r += 2
			}
			if s.Bind == elf.STB_GLOBAL {
				r++
			}
			return r
		}
		for j := range syms {
			s := &syms[j]
			if int(s.SectionIndex) != i || s.Name == "" || !(s.Type == want || s.Type == elf.STT_NOTYPE && s.Bind == elf.STB_GLOBAL) {
				continue
			}
			if anchor == nil || rank(s) > rank(anchor) {
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
		targets, err := f.RelocTargets(i)
		if err != nil {
			return err
		}
		var refs map[string][]int64
		for _, t := range targets {
			if t.Section > 0 && t.Section < len(f.File.Sections) && t.Section != i {
				if refs == nil {
					refs = map[string][]int64{}
				}
				n := f.File.Sections[t.Section].Name
				refs[n] = append(refs[n], t.Offset)
			}
		}
		h := blake3.Sum256(m.Data)
		what := "code"
		if kind == Data {
			what = "data"
		}
		// The anchor is part of the identity: its presence is looked up at that symbol, and two
		// functions of identical masked code (return one literal or another) are two features.
		c.Features = append(c.Features, Feature{Kind: kind, Key: fmt.Sprintf("%s:%s:%s:%x", what, sec.Name, anchor.Name, h),
			Label:  fmt.Sprintf("%s section %s of %s (%d bytes, %d masked)", what, sec.Name, member, m.Size, m.MaskedBytes()),
			Member: member, Section: sec.Name,
			code: &codeSection{data: m.Data, mask: m.Mask, symbol: anchor.Name, symOff: anchor.Value, refs: refs}})
	}
	return nil
}

// dataFeatureSection reports whether an allocated non-executable section holds the member's own data:
// not CUDA registration or fatbinary sections (nvcc writes a per-compile module id there), unwind and
// exception tables, notes, or constructor arrays.
func dataFeatureSection(name string) bool {
	for _, p := range []string{".nv", "__nv", ".eh_frame", ".gcc_except_table", ".note", ".init_array", ".fini_array", ".ctors", ".dtors", ".comment", ".tm_clone"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return strings.HasPrefix(name, ".rodata") || strings.HasPrefix(name, ".data") || strings.HasPrefix(name, ".lrodata") || strings.HasPrefix(name, ".ldata")
}
