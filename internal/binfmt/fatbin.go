package binfmt

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/blake3"
)

// CUDA fatbinary layout, as observed in nvcc 13.0.88 output (the fixtures'
// nvcc-version.txt) and described in docs/binary-formats.md §3.2. All fields
// are little-endian.
//
//	container header, 16 bytes, 8-aligned:
//	  u32 magic 0xBA55ED50, u16 version (1), u16 header size (16), u64 payload bytes after the header
//	entry header, 64 bytes or more (header size field):
//	  u16 kind (1 PTX, 2 ELF cubin, 8 LTO-IR), u16 0x0101, u32 header size, u64 stored payload bytes,
//	  u32 compressed bytes, u32 options offset, u16 minor, u16 major, u32 SM arch,
//	  u32 object-name offset, u32 object-name length, u64 flags, u64 reserved, u64 decompressed bytes
//	  (PTX headers are 80 bytes, 96 with ptxas options such as "--compile-only" under -rdc)
//	payload: stored bytes, padded to 8
const (
	// FatbinMagic is the container magic (bytes 50 ED 55 BA in the file).
	FatbinMagic = 0xBA55ED50

	fatbinHeaderLen = 16
	fatbinEntryLen  = 64
)

// Fatbin entry flags (fatbinary.h names in comments).
const (
	FatbinFlag64Bit          = 0x1    // FATBIN_FLAG_64BIT: 64-bit device code
	FatbinFlagDebug          = 0x2    // FATBIN_FLAG_DEBUG: built with -G
	FatbinFlagProducerCUDA   = 0x4    // producer is CUDA
	FatbinFlagProducerOpenCL = 0x8    // producer is OpenCL
	FatbinFlagHostLinux      = 0x10   // host is Linux
	FatbinFlagHostMac        = 0x20   // host is macOS
	FatbinFlagHostWindows    = 0x40   // host is Windows
	FatbinFlagOptLevel       = 0xf00  // optimisation level bits
	FatbinFlagCompress       = 0x1000 // older compression flag (same LZ4-style scheme assumed)
	FatbinFlagCompressLZ4    = 0x2000 // LZ4-block compressed payload (CUDA 11/12)
	FatbinFlagCompressZstd   = 0x8000 // zstd-compressed payload (CUDA 13)
)

// FatbinKind is the kind of a fatbinary entry.
type FatbinKind uint16

// Entry kinds.
const (
	FatbinPTX    FatbinKind = 1 // PTX assembly text (cuobjdump "PTX file")
	FatbinCubin  FatbinKind = 2 // cubin: an ELF with e_machine EM_CUDA (cuobjdump "ELF file")
	FatbinOldELF FatbinKind = 4 // old-style cubin
	FatbinLTOIR  FatbinKind = 8 // NVVM IR for link-time optimisation (-dlto)
)

func (k FatbinKind) String() string {
	switch k {
	case FatbinPTX:
		return "PTX"
	case FatbinCubin:
		return "ELF"
	case FatbinOldELF:
		return "OLDELF"
	case FatbinLTOIR:
		return "LTOIR"
	}
	return fmt.Sprintf("kind%d", uint16(k))
}

// FatbinCompression says how an entry's payload is stored.
type FatbinCompression uint8

// Compression schemes.
const (
	CompressNone FatbinCompression = iota
	CompressZstd                   // flag 0x8000, zstd frame (nvcc 13 default for PTX, --compress-mode / -compress-all for cubins)
	CompressLZ4                    // flag 0x2000 (or 0x1000): one LZ4 block, as decoded by n-eiling/cuda-fatbin-decompression
)

func (c FatbinCompression) String() string {
	switch c {
	case CompressNone:
		return "none"
	case CompressZstd:
		return "zstd"
	case CompressLZ4:
		return "lz4"
	}
	return fmt.Sprintf("compression%d", uint8(c))
}

// FatbinEntry is one device-code image of a fatbinary container.
type FatbinEntry struct {
	Container int        // index of its container in the parsed data
	Index     int        // index within the container
	Offset    int64      // byte offset of the entry header from the start of the parsed data (the ELF section)
	Kind      FatbinKind // PTX or cubin (ELF)
	Arch      uint32     // SM architecture number: 80 for sm_80, 90 for sm_90, 100 for sm_100
	Major     uint16     // code version major (cubin 1.8, PTX 9.0 with nvcc 13.0)
	Minor     uint16     // code version minor
	Flags     uint64     // FatbinFlag* bits
	HeaderLen uint32     // entry header bytes (64, 80 or 96 observed)

	Compression    FatbinCompression
	PayloadOffset  int64  // byte offset of the stored payload from the start of the parsed data
	StoredSize     uint64 // stored payload bytes (padded to 8)
	CompressedSize uint64 // compressed bytes (0 when not compressed)
	Size           uint64 // payload bytes after decompression (for uncompressed entries, StoredSize)

	Options string // ptxas options recorded in the header ("--compile-only" under -rdc); "" if none
	ObjName string // object name recorded in the header; "" if none (nvcc 13 writes none)

	// Digest is the BLAKE3-256 of the decompressed payload with its trailing
	// NUL bytes removed, and DigestLen the number of bytes hashed. Trailing
	// NULs are dropped because uncompressed entries are stored padded to 8
	// bytes while compressed ones decompress to their exact length (a PTX of
	// 923 bytes is stored as 928 uncompressed), so the digest of the same
	// code is the same however it was stored. Zero when digests were not
	// requested (FatbinOptions.NoDigest).
	Digest    [32]byte
	DigestLen uint64
}

// FatbinContainer is one fatbinary container (header plus entries). Several
// containers are concatenated in a section, one per translation unit (and
// one for a device-link object).
type FatbinContainer struct {
	Index      int      // position in the parsed data
	Offset     int64    // byte offset of the container header from the start of the parsed data
	Version    uint16   // header version (1 in every nvcc 13 sample)
	HeaderLen  uint16   // container header bytes (16)
	PayloadLen uint64   // bytes after the header
	Size       int64    // HeaderLen + PayloadLen: the container's bytes
	Digest     [32]byte // BLAKE3-256 of the container's Size bytes exactly as stored (containers are copied verbatim by linkers)
	Entries    []FatbinEntry
}

// FatbinOptions tunes fatbinary parsing. The zero value is the default.
type FatbinOptions struct {
	// NoDigest skips decompressing and hashing payloads (Digest, DigestLen
	// stay zero and Size is taken from the header), and container digests.
	NoDigest bool
	// DigestEntry, when set, limits decompressing and hashing to the entries
	// for which it returns true (the others keep a zero Digest); container
	// digests are then skipped too. A matcher uses it to hash only the entries
	// of a large binary that could equal a wanted one (same kind, architecture
	// and size).
	DigestEntry func(e *FatbinEntry) bool
	// OnlyDigested, with DigestEntry, keeps in Entries only the entries DigestEntry accepted, reads no
	// option or name string of the others, leaves out the containers left with none, and takes a
	// container's bytes after an all-zero entry header as padding unread: a 1.1 GiB fat
	// binary holds 112,000 containers of 336,000 entries, of which a matcher wants a handful (their
	// values cost 67 MB and half of the parse).
	OnlyDigested bool
	// MaxDecompressed bounds one entry's decompressed bytes; larger
	// entries are an error. 0 means 4 GiB.
	MaxDecompressed int64
}

func (o *FatbinOptions) maxOut() int64 {
	if o == nil || o.MaxDecompressed <= 0 {
		return 4 << 30
	}
	return o.MaxDecompressed
}

// ParseFatbin parses the fatbinary containers in the first size bytes of r:
// the contents of a .nv_fatbin or __nv_relfatbin section, or a .fatbin file
// written by nvcc -fatbin. Containers are read one after the other; zero
// bytes between them (alignment padding) are skipped. Each entry's payload is
// decompressed (zstd or LZ4-style) in a stream and hashed; memory stays
// bounded by the buffers and the zstd window. opts may be nil.
//
// Errors are *FormatError values naming name and the byte offset (from the
// start of r) of the bad container or entry header, or of the payload that
// failed to decompress.
func ParseFatbin(r io.ReaderAt, size int64, name string, opts *FatbinOptions) ([]FatbinContainer, error) {
	p := &fatbinParser{r: r, size: size, name: name, opts: opts}
	defer p.close()
	return p.parse()
}

// ParseFatbinBytes is ParseFatbin over data in memory (a mapped ELF section): headers and padding are
// looked at where they lie instead of being copied out (a 1.1 GiB fat binary: 336,000 entry headers).
func ParseFatbinBytes(data []byte, name string, opts *FatbinOptions) ([]FatbinContainer, error) {
	p := &fatbinParser{r: bytes.NewReader(data), data: data, size: int64(len(data)), name: name, opts: opts}
	defer p.close()
	return p.parse()
}

type fatbinParser struct {
	r    io.ReaderAt
	data []byte // the whole input when it is in memory (ParseFatbinBytes), else nil
	size int64
	name string
	base int64 // added to offsets in errors (the section's file offset)
	opts *FatbinOptions
	zd   *zstd.Decoder
	buf  []byte
}

func (p *fatbinParser) close() {
	if p.zd != nil {
		p.zd.Close()
	}
}

func (p *fatbinParser) errAt(off int64, err error, format string, args ...any) error {
	return formatErr(p.name, p.base+off, err, format, args...)
}

func (p *fatbinParser) parse() ([]FatbinContainer, error) {
	var out []FatbinContainer
	var hdr [fatbinHeaderLen]byte
	index := 0 // containers seen (OnlyDigested leaves some out of out)
	for off := int64(0); off < p.size; {
		// Skip zero padding between containers.
		var zb [8]byte
		n := min(p.size-off, 8)
		z, err := p.header(zb[:n], off)
		if err != nil {
			return out, p.errAt(off, err, "reading fatbin data")
		}
		if lead := int64(len(z) - len(bytes.TrimLeft(z, "\x00"))); lead > 0 {
			off += lead
			continue
		}
		if p.size-off < fatbinHeaderLen {
			return out, p.errAt(off, io.ErrUnexpectedEOF, "truncated fatbin container header (%d of %d bytes)", p.size-off, fatbinHeaderLen)
		}
		if err := readFullAt(p.r, hdr[:], off); err != nil {
			return out, p.errAt(off, err, "reading fatbin container header")
		}
		magic := binary.LittleEndian.Uint32(hdr[0:])
		if magic != FatbinMagic {
			return out, p.errAt(off, nil, "bad fatbin container magic 0x%08x (want 0x%08x)", magic, uint32(FatbinMagic))
		}
		c := FatbinContainer{
			Index:      index,
			Offset:     off,
			Version:    binary.LittleEndian.Uint16(hdr[4:]),
			HeaderLen:  binary.LittleEndian.Uint16(hdr[6:]),
			PayloadLen: binary.LittleEndian.Uint64(hdr[8:]),
		}
		if c.HeaderLen < fatbinHeaderLen {
			return out, p.errAt(off, nil, "fatbin container header size %d is below %d", c.HeaderLen, fatbinHeaderLen)
		}
		avail := p.size - off - int64(c.HeaderLen)
		if avail < 0 || c.PayloadLen > uint64(avail) {
			return out, p.errAt(off, io.ErrUnexpectedEOF, "fatbin container of %d payload bytes runs past the end of the data (%d bytes left)", c.PayloadLen, max(avail, 0))
		}
		c.Size = int64(c.HeaderLen) + int64(c.PayloadLen)
		if err := p.entries(&c); err != nil {
			return out, err
		}
		if p.opts == nil || !p.opts.NoDigest && p.opts.DigestEntry == nil {
			d, err := p.hashRange(off, c.Size)
			if err != nil {
				return out, p.errAt(off, err, "reading fatbin container")
			}
			c.Digest = d
		}
		if len(c.Entries) > 0 || p.opts == nil || !p.opts.OnlyDigested || p.opts.DigestEntry == nil {
			out = append(out, c)
		}
		index++
		off += c.Size
	}
	return out, nil
}

// zeroFrom reports whether bytes [q, end) of the input are all zero (false with the read error).
func (p *fatbinParser) zeroFrom(q, end int64) (bool, error) {
	if p.data != nil {
		if q < 0 || end > int64(len(p.data)) || q > end {
			return false, io.ErrUnexpectedEOF
		}
		return allZero(p.data[q:end]), nil
	}
	rest := make([]byte, min(end-q, 1<<16))
	for r := q; r < end; r += int64(len(rest)) {
		n := min(end-r, int64(len(rest)))
		if err := readFullAt(p.r, rest[:n], r); err != nil {
			return false, err
		}
		if !allZero(rest[:n]) {
			return false, nil
		}
	}
	return true, nil
}

// header returns the n bytes at off: a slice of the input in memory, else read into buf.
func (p *fatbinParser) header(buf []byte, off int64) ([]byte, error) {
	if p.data != nil {
		if off < 0 || off+int64(len(buf)) > int64(len(p.data)) {
			return nil, io.ErrUnexpectedEOF
		}
		return p.data[off : off+int64(len(buf))], nil
	}
	return buf, readFullAt(p.r, buf, off)
}

func (p *fatbinParser) entries(c *FatbinContainer) error {
	start := c.Offset + int64(c.HeaderLen)
	end := start + int64(c.PayloadLen)
	var hb [fatbinEntryLen]byte
	for q := start; q < end; {
		if end-q < fatbinEntryLen {
			// Tolerate zero padding at the end of a container.
			if zero, err := p.zeroFrom(q, end); err == nil && zero {
				break
			}
			return p.errAt(q, io.ErrUnexpectedEOF, "truncated fatbin entry header (%d of %d bytes left in the container at offset %d)", end-q, fatbinEntryLen, c.Offset)
		}
		h, err := p.header(hb[:], q)
		if err != nil {
			return p.errAt(q, err, "reading fatbin entry header")
		}
		if allZero(h) {
			// Zero padding inside the container (seen after compressed
			// payloads by n-eiling); everything left must be zero too. A
			// matcher (OnlyDigested) does not read it: a third of a 1.1 GiB
			// fat binary can be such padding.
			if p.opts != nil && p.opts.OnlyDigested && p.opts.DigestEntry != nil {
				break
			}
			if zero, err := p.zeroFrom(q, end); err != nil || !zero {
				return p.errAt(q, err, "fatbin entry header of zeros followed by data")
			}
			break
		}
		le := binary.LittleEndian
		e := FatbinEntry{
			Container:      c.Index,
			Index:          len(c.Entries),
			Offset:         q,
			Kind:           FatbinKind(le.Uint16(h[0:])),
			HeaderLen:      le.Uint32(h[4:]),
			StoredSize:     le.Uint64(h[8:]),
			CompressedSize: uint64(le.Uint32(h[16:])),
			Minor:          le.Uint16(h[24:]),
			Major:          le.Uint16(h[26:]),
			Arch:           le.Uint32(h[28:]),
			Flags:          le.Uint64(h[40:]),
		}
		optOff := le.Uint32(h[20:])
		nameOff, nameLen := le.Uint32(h[32:]), le.Uint32(h[36:])
		decompressed := le.Uint64(h[56:])
		if e.HeaderLen < fatbinEntryLen {
			return p.errAt(q, nil, "fatbin entry header size %d is below %d", e.HeaderLen, fatbinEntryLen)
		}
		if uint64(e.HeaderLen) > uint64(end-q) || e.StoredSize > uint64(end-q)-uint64(e.HeaderLen) {
			return p.errAt(q, io.ErrUnexpectedEOF, "fatbin entry (header %d + payload %d bytes) runs past the end of its container (%d bytes left)", e.HeaderLen, e.StoredSize, end-q)
		}
		e.PayloadOffset = q + int64(e.HeaderLen)
		if err := p.sizes(&e, q, decompressed); err != nil {
			return err
		}
		want := p.opts == nil || !p.opts.NoDigest && (p.opts.DigestEntry == nil || p.opts.DigestEntry(&e))
		if !want && p.opts != nil && p.opts.OnlyDigested && p.opts.DigestEntry != nil {
			q = e.PayloadOffset + int64(e.StoredSize)
			continue
		}
		if optOff != 0 {
			s, err := p.headerString(q, e.HeaderLen, optOff)
			if err != nil {
				return err
			}
			e.Options = strings.TrimRight(s, " \x00")
		}
		if nameOff != 0 && nameLen != 0 {
			if uint64(nameOff)+uint64(nameLen) > uint64(e.HeaderLen) || nameLen > 4096 {
				return p.errAt(q, nil, "fatbin entry object name (offset %d, %d bytes) is outside the %d-byte header", nameOff, nameLen, e.HeaderLen)
			}
			b := make([]byte, nameLen)
			if err := readFullAt(p.r, b, q+int64(nameOff)); err != nil {
				return p.errAt(q, err, "reading fatbin entry object name")
			}
			e.ObjName = string(bytes.TrimRight(b, "\x00"))
		}

		if want {
			if err := p.digest(&e, decompressed); err != nil {
				return err
			}
		}
		c.Entries = append(c.Entries, e)
		q = e.PayloadOffset + int64(e.StoredSize)
	}
	return nil
}

// sizes fills the entry's compression and decompressed size from its header (at q) and, for a
// compressed size without a known flag, the first bytes of its payload.
func (p *fatbinParser) sizes(e *FatbinEntry, q int64, decompressed uint64) error {
	compressed := e.CompressedSize != 0 || e.Flags&(FatbinFlagCompress|FatbinFlagCompressLZ4|FatbinFlagCompressZstd) != 0
	if !compressed {
		e.Size = e.StoredSize
		return nil
	}
	if e.CompressedSize == 0 || e.CompressedSize > e.StoredSize {
		return p.errAt(q, nil, "fatbin entry compressed size %d does not fit its %d stored bytes", e.CompressedSize, e.StoredSize)
	}
	e.Compression = CompressLZ4
	if e.Flags&FatbinFlagCompressZstd != 0 {
		e.Compression = CompressZstd
	} else if e.Flags&(FatbinFlagCompress|FatbinFlagCompressLZ4) == 0 {
		// A compressed size without a known flag: sniff.
		var m [4]byte
		if readFullAt(p.r, m[:], e.PayloadOffset) == nil && binary.LittleEndian.Uint32(m[:]) == zstdMagic {
			e.Compression = CompressZstd
		}
	}
	e.Size = decompressed
	return nil
}

const zstdMagic = 0xFD2FB528

// headerString reads the {u32 offset, u32 length} pair at optOff within the
// entry header and the string it points to (also within the header).
func (p *fatbinParser) headerString(q int64, hlen, optOff uint32) (string, error) {
	if uint64(optOff)+8 > uint64(hlen) {
		return "", p.errAt(q, nil, "fatbin entry options offset %d is outside the %d-byte header", optOff, hlen)
	}
	var b [8]byte
	if err := readFullAt(p.r, b[:], q+int64(optOff)); err != nil {
		return "", p.errAt(q, err, "reading fatbin entry options")
	}
	so, sl := binary.LittleEndian.Uint32(b[:]), binary.LittleEndian.Uint32(b[4:])
	if so == 0 || sl == 0 {
		return "", nil
	}
	if uint64(so)+uint64(sl) > uint64(hlen) {
		return "", p.errAt(q, nil, "fatbin entry options string (offset %d, %d bytes) is outside the %d-byte header", so, sl, hlen)
	}
	s := make([]byte, sl)
	if err := readFullAt(p.r, s, q+int64(so)); err != nil {
		return "", p.errAt(q, err, "reading fatbin entry options")
	}
	return string(s), nil
}

// digest decompresses e's payload in a stream and hashes it.
func (p *fatbinParser) digest(e *FatbinEntry, declared uint64) error {
	h := blake3.New()
	tw := &trimZeroWriter{w: h}
	n, err := p.decode(e, declared, tw)
	if err != nil {
		return err
	}
	e.Size = uint64(n)
	e.DigestLen = tw.n
	h.Sum(e.Digest[:0])
	return nil
}

// decode writes e's decompressed payload to w and returns its length.
func (p *fatbinParser) decode(e *FatbinEntry, declared uint64, w io.Writer) (int64, error) {
	limit := p.opts.maxOut()
	if p.buf == nil {
		p.buf = make([]byte, 64<<10)
	}
	switch e.Compression {
	case CompressNone:
		n, err := io.CopyBuffer(w, io.NewSectionReader(p.r, e.PayloadOffset, int64(e.StoredSize)), p.buf)
		if err == nil && n != int64(e.StoredSize) {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return n, p.errAt(e.PayloadOffset, err, "reading fatbin entry payload")
		}
		return n, nil
	case CompressZstd:
		if declared > uint64(limit) {
			return 0, p.errAt(e.Offset, nil, "fatbin entry declares %d decompressed bytes, over the %d-byte limit", declared, limit)
		}
		src := io.NewSectionReader(p.r, e.PayloadOffset, int64(e.CompressedSize))
		if p.zd == nil {
			zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxMemory(uint64(limit)), zstd.WithDecoderMaxWindow(uint64(min(limit, 1<<30))))
			if err != nil {
				return 0, err
			}
			p.zd = zd
		}
		if err := p.zd.Reset(src); err != nil {
			return 0, p.errAt(e.PayloadOffset, err, "zstd payload of fatbin entry")
		}
		n, err := io.CopyBuffer(w, io.LimitReader(struct{ io.Reader }{p.zd}, limit+1), p.buf)
		if err != nil {
			return n, p.errAt(e.PayloadOffset, err, "decompressing zstd payload of fatbin entry")
		}
		if n > limit {
			return n, p.errAt(e.Offset, nil, "fatbin entry decompresses to more than the %d-byte limit", limit)
		}
		if declared != 0 && uint64(n) != declared {
			return n, p.errAt(e.Offset, nil, "fatbin entry decompressed to %d bytes, header says %d", n, declared)
		}
		return n, nil
	case CompressLZ4:
		if declared == 0 {
			return 0, p.errAt(e.Offset, nil, "LZ4-compressed fatbin entry without a decompressed size")
		}
		if declared > uint64(limit) {
			return 0, p.errAt(e.Offset, nil, "fatbin entry declares %d decompressed bytes, over the %d-byte limit", declared, limit)
		}
		src := bufio.NewReaderSize(io.NewSectionReader(p.r, e.PayloadOffset, int64(e.CompressedSize)), 64<<10)
		n, err := lz4BlockDecode(src, int64(declared), w)
		if err != nil {
			var le *lz4Error
			if errors.As(err, &le) {
				return n, p.errAt(e.PayloadOffset+le.in, err, "decompressing LZ4 payload of fatbin entry at offset %d", e.Offset)
			}
			return n, p.errAt(e.PayloadOffset, err, "decompressing LZ4 payload of fatbin entry at offset %d", e.Offset)
		}
		return n, nil
	}
	return 0, p.errAt(e.Offset, nil, "unknown fatbin compression %v", e.Compression)
}

func (p *fatbinParser) hashRange(off, n int64) ([32]byte, error) {
	h := blake3.New()
	if p.buf == nil {
		p.buf = make([]byte, 64<<10)
	}
	var d [32]byte
	m, err := io.CopyBuffer(h, io.NewSectionReader(p.r, off, n), p.buf)
	if err == nil && m != n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return d, err
	}
	h.Sum(d[:0])
	return d, nil
}

// trimZeroWriter forwards bytes to w but holds back a trailing run of NUL
// bytes until a non-NUL byte follows, so that w never sees the final run.
type trimZeroWriter struct {
	w       io.Writer
	pending uint64 // NUL bytes held back
	n       uint64 // bytes forwarded
}

var zeroBlock [4096]byte

func (t *trimZeroWriter) Write(b []byte) (int, error) {
	last := len(b) - 1
	for last >= 0 && b[last] == 0 {
		last--
	}
	if last < 0 {
		t.pending += uint64(len(b))
		return len(b), nil
	}
	for t.pending > 0 {
		k := min(t.pending, uint64(len(zeroBlock)))
		if _, err := t.w.Write(zeroBlock[:k]); err != nil {
			return 0, err
		}
		t.pending -= k
		t.n += k
	}
	if _, err := t.w.Write(b[:last+1]); err != nil {
		return 0, err
	}
	t.n += uint64(last + 1)
	t.pending = uint64(len(b) - last - 1)
	return len(b), nil
}

// lz4Error is a decoding error at input byte offset in.
type lz4Error struct {
	in  int64
	msg string
}

func (e *lz4Error) Error() string { return fmt.Sprintf("%s (compressed byte %d)", e.msg, e.in) }

// lz4BlockDecode decodes one LZ4 block (the scheme of fatbin flag 0x2000) from
// src into w, producing exactly want bytes. Sequences are: a token (high
// nibble literal length, low nibble match length minus 4; 15 means more
// length bytes follow, each 255 meaning another), the literals, a 2-byte
// little-endian back offset, then the extra match-length bytes. The block
// ends after the literals that complete want bytes, or at the end of src.
// Back references reach at most 65535 bytes, so only that much output is
// kept: memory is bounded whatever want is.
func lz4BlockDecode(src *bufio.Reader, want int64, w io.Writer) (int64, error) {
	const window = 1 << 16
	buf := make([]byte, 0, 4*window)
	var flushed, in int64 // output bytes written to w; input bytes consumed
	total := func() int64 { return flushed + int64(len(buf)) }
	fail := func(at int64, format string, args ...any) (int64, error) {
		return total(), &lz4Error{at, fmt.Sprintf(format, args...)}
	}
	// compact writes out all but the last window bytes.
	compact := func() error {
		if len(buf) <= window {
			return nil
		}
		k := len(buf) - window
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		flushed += int64(k)
		buf = buf[:copy(buf, buf[k:])]
		return nil
	}
	readByte := func() (byte, bool) {
		c, err := src.ReadByte()
		if err != nil {
			return 0, false
		}
		in++
		return c, true
	}
	readLen := func(n int64) (int64, bool) {
		for {
			c, ok := readByte()
			if !ok {
				return 0, false
			}
			n += int64(c)
			if n > want {
				return n, true // caught by the caller's bound check
			}
			if c != 255 {
				return n, true
			}
		}
	}
	for total() < want {
		token, ok := readByte()
		if !ok {
			return fail(in, "LZ4 block ends after %d of %d bytes", total(), want)
		}
		lit := int64(token >> 4)
		if lit == 15 {
			if lit, ok = readLen(lit); !ok {
				return fail(in, "truncated LZ4 literal length")
			}
		}
		if lit > want-total() {
			return fail(in, "LZ4 literals run past the decompressed size %d", want)
		}
		for lit > 0 {
			k := int(min(lit, window))
			if len(buf)+k > cap(buf) {
				if err := compact(); err != nil {
					return total(), err
				}
			}
			n := len(buf)
			if _, err := io.ReadFull(src, buf[n:n+k]); err != nil {
				return fail(in, "truncated LZ4 literals")
			}
			buf = buf[:n+k]
			in += int64(k)
			lit -= int64(k)
		}
		if total() >= want {
			break
		}
		lo, ok1 := readByte()
		hi, ok2 := readByte()
		if !ok1 || !ok2 {
			return fail(in, "truncated LZ4 match offset")
		}
		off := int(lo) | int(hi)<<8
		if off == 0 || int64(off) > total() {
			return fail(in-2, "LZ4 back offset %d reaches outside the %d bytes decoded so far", off, total())
		}
		ml := int64(token&15) + 4
		if ml == 19 {
			if ml, ok = readLen(ml); !ok {
				return fail(in, "truncated LZ4 match length")
			}
		}
		if ml > want-total() {
			return fail(in, "LZ4 match runs past the decompressed size %d", want)
		}
		for ml > 0 {
			k := int(min(ml, window))
			if len(buf)+k > cap(buf) {
				if err := compact(); err != nil {
					return total(), err
				}
			}
			s := len(buf) - off
			if off >= k {
				buf = append(buf, buf[s:s+k]...)
			} else {
				for i := 0; i < k; i++ {
					buf = append(buf, buf[s+i])
				}
			}
			ml -= int64(k)
		}
	}
	if _, err := w.Write(buf); err != nil {
		return total(), err
	}
	flushed += int64(len(buf))
	return flushed, nil
}

// FatbinSection is the fatbinary content of one ELF section.
type FatbinSection struct {
	Name       string // ".nv_fatbin" or "__nv_relfatbin"
	Offset     int64  // byte offset of the section in the ELF file (container and entry offsets are relative to it)
	Size       int64  // section bytes
	Containers []FatbinContainer

	r    io.ReaderAt
	opts *FatbinOptions
	file string
}

// Entries returns the entries of all containers, in order.
func (s *FatbinSection) Entries() []FatbinEntry {
	if s == nil {
		return nil
	}
	var out []FatbinEntry
	for _, c := range s.Containers {
		out = append(out, c.Entries...)
	}
	return out
}

// OpenEntry returns the decompressed payload of entry e of this section (a
// cubin ELF or PTX text; uncompressed entries keep their padding to 8 bytes),
// decoded in a stream as it is read. Read errors are *FormatError values.
// Close the reader when done, read to the end or not.
func (s *FatbinSection) OpenEntry(e FatbinEntry) (io.ReadCloser, error) {
	if e.PayloadOffset < 0 || e.PayloadOffset > s.Size {
		return nil, fmt.Errorf("%s: fatbin entry at offset %d is not in section %s", s.file, e.Offset, s.Name)
	}
	pr, pw := io.Pipe()
	p := &fatbinParser{r: s.r, size: s.Size, name: s.file, base: s.Offset, opts: s.opts}
	go func() {
		defer p.close()
		_, err := p.decode(&e, e.Size, pw)
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// ELFFatbins holds the CUDA fatbinaries of one ELF file, section by section.
// nvcc puts whole-program device code (and the device-link cubin of -rdc
// builds) in .nv_fatbin and relocatable device code of -rdc=true objects in
// __nv_relfatbin; a host link copies both kinds verbatim into the linked file.
type ELFFatbins struct {
	NvFatbin  *FatbinSection // .nv_fatbin; nil when absent
	RelFatbin *FatbinSection // __nv_relfatbin; nil when absent
}

// Fatbin section names (NVIDIA fatbinary_section.h, CUDA 13.0).
const (
	SectionNvFatbin  = ".nv_fatbin"
	SectionRelFatbin = "__nv_relfatbin"
)

// ReadELFFatbins parses the .nv_fatbin and __nv_relfatbin sections of the ELF
// data in r (a host object, an archive member opened with Archive.Open, an
// executable or a shared library). name is used in errors, whose offsets are
// file offsets. A file without either section gives an empty ELFFatbins.
func ReadELFFatbins(r io.ReaderAt, name string, opts *FatbinOptions) (*ELFFatbins, error) {
	f, err := NewELF(r, name)
	if err != nil {
		return nil, err
	}
	return f.Fatbins(opts)
}

// Fatbins is ReadELFFatbins for an open ELF file.
func (f *ELFFile) Fatbins(opts *FatbinOptions) (*ELFFatbins, error) {
	out := &ELFFatbins{}
	for _, s := range f.File.Sections {
		var dst **FatbinSection
		switch s.Name {
		case SectionNvFatbin:
			dst = &out.NvFatbin
		case SectionRelFatbin:
			dst = &out.RelFatbin
		default:
			continue
		}
		if s.Type == elf.SHT_NOBITS {
			continue
		}
		fs := &FatbinSection{Name: s.Name, Offset: int64(s.Offset), opts: opts, file: f.Name}
		if s.Flags&elf.SHF_COMPRESSED != 0 {
			if s.Size > 1<<31 {
				return nil, f.secErr(s, nil, "compressed fatbin section too large")
			}
			b, err := s.Data()
			if err != nil {
				return nil, f.secErr(s, err, "reading compressed section")
			}
			fs.r, fs.Size = bytes.NewReader(b), int64(len(b))
		} else {
			fs.r, fs.Size = s.ReaderAt, int64(s.FileSize)
		}
		p := &fatbinParser{r: fs.r, size: fs.Size, name: f.Name, base: fs.Offset, opts: opts}
		cs, err := p.parse()
		p.close()
		if err != nil {
			return nil, err
		}
		fs.Containers = cs
		if *dst != nil {
			// Linkers (ld -r included) merge same-named sections; two
			// of them mean a hand-made or damaged file.
			return nil, f.secErr(s, nil, "second fatbin section of this name")
		}
		*dst = fs
	}
	return out, nil
}
