package runner

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/zeebo/blake3"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// FingerprintPrefix starts every content fingerprint Fingerprint returns.
const FingerprintPrefix = "sections:blake3:"

// Fingerprint returns the content fingerprint of a native library copy (a static archive, an object or a
// shared library): BLAKE3-256 over the allocated sections of every ELF object in it, with the bytes that
// relocations patch masked out (binfmt.MaskedSection), in order: for each member its name, then for each
// allocated section its name, type, flags, size, alignment, masked ranges and masked contents (SHT_NOBITS
// sections contribute their size only). Members that are not ELF contribute their whole bytes.
//
// Non-allocated sections (symbol and string tables, .comment, DWARF) are left out: nvcc names a temporary
// file after its process ID in the symbol table, so two compiles of identical code give archives with
// different file digests and the same fingerprint (docs/binary-formats.md §3.6). An edit that changes code,
// data, string literals or CUDA device code (.nv_fatbin, __nv_relfatbin) changes it.
//
// The result is FingerprintPrefix followed by 64 hex digits. Errors name the file: not an archive or ELF
// file, or a malformed one.
func Fingerprint(path string) (string, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var magic [8]byte
	n, _ := io.ReadFull(f, magic[:])
	h := blake3.New()
	switch m := string(magic[:n]); {
	case m == "!<arch>\n" || m == "!<thin>\n":
		ar, err := binfmt.OpenArchive(path)
		if err != nil {
			return "", err
		}
		for _, mem := range ar.Members {
			if err := fingerprintMember(h, f, ar, mem); err != nil {
				return "", err
			}
		}
	case n >= 4 && m[:4] == "\x7fELF":
		st, err := f.Stat()
		if err != nil {
			return "", err
		}
		if err := fingerprintELF(h, io.NewSectionReader(f, 0, st.Size()), path); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("%s: neither an ar archive nor an ELF file", path)
	}
	return FingerprintPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

func fingerprintMember(h *blake3.Hasher, f *os.File, ar *binfmt.Archive, m binfmt.Member) error {
	writeString(h, "member")
	writeString(h, m.Name)
	var r *io.SectionReader
	if ar.Thin || m.Path != "" {
		mf, err := safeio.Open(m.Path)
		if err != nil {
			return fmt.Errorf("%s: thin archive member %q: %w", ar.Path, m.Name, err)
		}
		defer mf.Close()
		st, err := mf.Stat()
		if err != nil {
			return err
		}
		r = io.NewSectionReader(mf, 0, st.Size())
	} else {
		r = io.NewSectionReader(f, m.Offset, m.Size)
	}
	var magic [4]byte
	if n, _ := r.ReadAt(magic[:], 0); n == 4 && string(magic[:]) == "\x7fELF" {
		return fingerprintELF(h, r, ar.Path+"("+m.Name+")")
	}
	writeString(h, "raw")
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, r.Size())); err != nil {
		return fmt.Errorf("%s(%s): %w", ar.Path, m.Name, err)
	}
	return nil
}

func fingerprintELF(h *blake3.Hasher, r io.ReaderAt, name string) error {
	ef, err := binfmt.NewELF(r, name)
	if err != nil {
		return err
	}
	defer ef.Close()
	writeString(h, "elf")
	for _, s := range ef.SectionList() {
		if s.Index == 0 || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		writeString(h, s.Name)
		writeUint(h, uint64(s.Type), uint64(s.Flags), s.Size, s.Align)
		if s.Type == elf.SHT_NOBITS {
			continue
		}
		ms, err := ef.MaskedSection(s.Index)
		if err != nil {
			return err
		}
		writeUint(h, uint64(len(ms.Mask)))
		for _, m := range ms.Mask {
			writeUint(h, m.Start, m.End)
		}
		writeUint(h, uint64(len(ms.Data)))
		h.Write(ms.Data)
	}
	return nil
}

func writeString(h *blake3.Hasher, s string) {
	writeUint(h, uint64(len(s)))
	h.WriteString(s)
}

func writeUint(h *blake3.Hasher, vs ...uint64) {
	var b [8]byte
	for _, v := range vs {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
}
