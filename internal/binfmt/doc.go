// Package binfmt reads the native build artifacts that stalecheck takes
// evidence from, straight from their bytes:
//
//   - Unix ar archives (ar.go): GNU/SysV and BSD member names, the "/",
//     "/SYM64/" and "__.SYMDEF" symbol tables, thin archives, Rust .rlib
//     files. OpenArchive reads headers only and seeks over member bodies;
//     Archive.Open gives one member's bytes as an io.SectionReader.
//   - ELF objects, executables and shared libraries (elf.go, through
//     debug/elf): section list, defined symbols with sizes, STT_FILE names,
//     merged string literals, printable .rodata strings, the GNU build-id
//     note, .comment, and section contents with the bytes that relocations
//     patch masked out (MaskedSection), for comparing an object's sections
//     with the bytes a linker placed in a linked file.
//   - DWARF compile units (dwarf.go, through debug/dwarf): name, compilation
//     folder, producer (compiler and flags) and every source and header file
//     of the line table, made absolute.
//   - CUDA fatbinaries (fatbin.go) in the .nv_fatbin and __nv_relfatbin
//     sections: containers, entries (cubin or PTX, SM architecture, flags,
//     zstd or LZ4-style compression) and a BLAKE3-256 digest of each
//     entry's decompressed payload.
//
// Readers work from an io.ReaderAt and stream section data through bounded
// buffers; sizes and offsets are in bytes. Malformed input gives a
// *FormatError naming the file and the byte offset of the bad structure,
// never a panic (the fuzz targets FuzzArchive, FuzzFatbin and
// FuzzELFFeatures check this).
//
// Format sources: ar(5) and the archives written by GNU ar 2.40 and llvm-ar
// 14; the ELF gABI and the x86-64, i386 and AArch64 psABIs; DWARF 4 and 5;
// for CUDA, the layout observed in nvcc 13.0.88 output (the fixtures under
// shared/fixtures/cuda, whose cuobjdump listings the tests compare against)
// and the open-source decoders named in docs/binary-formats.md §3.
package binfmt
