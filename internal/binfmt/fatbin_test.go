package binfmt

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zeebo/blake3"
)

// listedEntry is one line of a cuobjdump listing: "ELF file 2: kernel.2.sm_90.cubin".
type listedEntry struct {
	Kind string // "ELF" or "PTX"
	Arch uint32
}

func (e listedEntry) String() string { return fmt.Sprintf("%s/sm_%d", e.Kind, e.Arch) }

// listing is cuobjdump's view of one file: its entries, per archive member
// for archives ("" for a plain file).
type listing struct {
	file    string // absolute path of the listed file
	all     bool   // listed with -all (both fatbin sections)
	members map[string][]listedEntry
	order   []string // member order
}

var (
	listLineRE   = regexp.MustCompile(`^(ELF|PTX) file\s+\d+: (.+)\.\d+\.sm_(\d+)[a-z]?\.(cubin|ptx)$`)
	listHeaderRE = regexp.MustCompile(`^== cuobjdump (-all )?-lelf -lptx (\S+)$`)
	listMemberRE = regexp.MustCompile(`^member (.+):([^:]+):$`)
)

// parseListings reads one cuobjdump listing file. Files with "== cuobjdump
// …" headers hold several listings; the per-file ones (cuobjdump-list*.txt)
// hold plain listings whose entry names (kernel_compress_all.1.sm_90.ptx)
// say which file of the folder they describe.
func parseListings(t *testing.T, path string) []*listing {
	t.Helper()
	dir := filepath.Dir(path)
	resolve := func(name string) string {
		for _, c := range []string{filepath.Join(dir, name), filepath.Join(filepath.Dir(dir), name)} {
			if st, err := os.Stat(c); err == nil && !st.IsDir() {
				return c
			}
		}
		return ""
	}
	byPrefix := func(prefix string) string {
		for _, c := range []string{prefix, prefix + ".o", prefix + ".a"} {
			if p := resolve(c); p != "" {
				return p
			}
		}
		t.Fatalf("%s: no file for listing prefix %q", path, prefix)
		return ""
	}
	var out []*listing
	var cur *listing
	member := ""
	headered := false
	for _, line := range lines(readFile(t, path)) {
		line = strings.TrimRight(line, " \r")
		if m := listHeaderRE.FindStringSubmatch(line); m != nil {
			headered = true
			p := resolve(m[2])
			if p == "" {
				t.Fatalf("%s: listed file %q not found", path, m[2])
			}
			cur = &listing{file: p, all: m[1] != "", members: map[string][]listedEntry{}}
			member = ""
			out = append(out, cur)
			continue
		}
		if m := listMemberRE.FindStringSubmatch(line); m != nil && cur != nil {
			member = m[2]
			if _, ok := cur.members[member]; !ok {
				cur.order = append(cur.order, member)
			}
			cur.members[member] = cur.members[member][:0:0]
			continue
		}
		m := listLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		arch, _ := strconv.Atoi(m[3])
		e := listedEntry{Kind: m[1], Arch: uint32(arch)}
		if !headered {
			file := byPrefix(m[2])
			if cur == nil || cur.file != file {
				cur = &listing{file: file, members: map[string][]listedEntry{}}
				out = append(out, cur)
			}
		}
		if _, ok := cur.members[member]; !ok {
			cur.order = append(cur.order, member)
		}
		cur.members[member] = append(cur.members[member], e)
	}
	return out
}

func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// cuobjdumpView lists what cuobjdump shows for one ELF: with -all, the
// .nv_fatbin entries then the __nv_relfatbin ones; without it, the
// .nv_fatbin entries, or the __nv_relfatbin ones when there are none
// (cuobjdump's documented default).
func cuobjdumpView(fb *ELFFatbins, all bool) []listedEntry {
	conv := func(s *FatbinSection) []listedEntry {
		var out []listedEntry
		for _, e := range s.Entries() {
			out = append(out, listedEntry{Kind: e.Kind.String(), Arch: e.Arch})
		}
		return out
	}
	nv, rel := conv(fb.NvFatbin), conv(fb.RelFatbin)
	if all {
		return append(nv, rel...)
	}
	if len(nv) > 0 {
		return nv
	}
	return rel
}

// fatbinsOf parses the fatbins of a file: one entry for an ELF file, one per
// member for an archive.
func fatbinsOf(t *testing.T, path string) (map[string]*ELFFatbins, []string) {
	t.Helper()
	out := map[string]*ELFFatbins{}
	if ok, _ := IsArchive(path); ok {
		a, err := OpenArchive(path)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, m := range a.Members {
			sr, c, err := a.Open(m)
			if err != nil {
				t.Fatal(err)
			}
			fb, err := ReadELFFatbins(sr, path+"("+m.Name+")", nil)
			c.Close()
			if err != nil {
				t.Fatal(err)
			}
			out[m.Name] = fb
			order = append(order, m.Name)
		}
		return out, order
	}
	fb, err := ReadELFFatbins(openReader(t, path), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	out[""] = fb
	return out, []string{""}
}

func sha(t *testing.T, path string) [32]byte {
	return sha256.Sum256(readFile(t, path))
}

// TestFatbinMatchesCuobjdump checks every fixture object, archive and
// executable against cuobjdump's listings: same entries, kinds and SM
// architectures, in cuobjdump's order. Files without a listing of their
// own must be byte-identical to a listed file (the linkorder apps, per the
// fixture README) or, for archives, have members byte-identical to listed
// objects; otherwise the test fails, so no fixture goes unchecked.
func TestFatbinMatchesCuobjdump(t *testing.T) {
	fx := fixtureDir(t)
	var listings []*listing
	listFiles, _ := filepath.Glob(filepath.Join(fx, "*", "cuobjdump-*.txt"))
	top, _ := filepath.Glob(filepath.Join(fx, "cuobjdump-*.txt"))
	for _, lf := range append(listFiles, top...) {
		if strings.Contains(lf, "cuobjdump-elf-") { // section dumps, not entry lists
			continue
		}
		listings = append(listings, parseListings(t, lf)...)
	}
	if len(listings) < 10 {
		t.Fatalf("only %d listings parsed", len(listings))
	}
	checked := map[string]int{}
	for _, l := range listings {
		got, order := fatbinsOf(t, l.file)
		rel, _ := filepath.Rel(fx, l.file)
		name := fmt.Sprintf("%s (all=%v)", rel, l.all)
		if len(l.order) != len(order) && !(len(l.order) == 1 && l.order[0] == "") {
			t.Errorf("%s: cuobjdump lists members %q, archive has %q", name, l.order, order)
		}
		for _, m := range l.order {
			want := l.members[m]
			fb, ok := got[m]
			if !ok {
				t.Errorf("%s: no member %q", name, m)
				continue
			}
			if g := cuobjdumpView(fb, l.all); !slices.Equal(g, want) {
				t.Errorf("%s member %q: entries %v, cuobjdump lists %v", name, m, g, want)
			}
		}
		checked[l.file]++
	}

	// Every other fixture file with ELF or ar magic.
	listedObj := map[[32]byte]*listing{}
	for _, l := range listings {
		if !l.all {
			listedObj[sha(t, l.file)] = l
		}
	}
	filepath.WalkDir(fx, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || checked[p] > 0 {
			return err
		}
		head := make([]byte, 8)
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		n, _ := io.ReadFull(f, head)
		f.Close()
		isELF := n >= 4 && string(head[:4]) == "\x7fELF"
		isAr, _ := IsArchive(p)
		if !isELF && !isAr {
			return nil
		}
		rel, _ := filepath.Rel(fx, p)
		if l, ok := listedObj[sha(t, p)]; ok && isELF {
			fb, _ := fatbinsOf(t, p)
			if g := cuobjdumpView(fb[""], false); !slices.Equal(g, l.members[""]) {
				t.Errorf("%s (identical to %s): entries %v, cuobjdump lists %v", rel, l.file, g, l.members[""])
			}
			checked[p]++
			return nil
		}
		if isAr {
			a, err := OpenArchive(p)
			if err != nil {
				t.Fatal(err)
			}
			fbs, _ := fatbinsOf(t, p)
			for _, m := range a.Members {
				sr, c, _ := a.Open(m)
				b, _ := io.ReadAll(sr)
				c.Close()
				l, ok := listedObj[sha256.Sum256(b)]
				if !ok {
					t.Errorf("%s(%s): no cuobjdump listing for this member", rel, m.Name)
					continue
				}
				if g := cuobjdumpView(fbs[m.Name], false); !slices.Equal(g, l.members[""]) {
					t.Errorf("%s(%s): entries %v, cuobjdump lists %v", rel, m.Name, g, l.members[""])
				}
			}
			checked[p]++
			return nil
		}
		t.Errorf("%s: ELF fixture without a cuobjdump listing", rel)
		return nil
	})
	for p, n := range checked {
		rel, _ := filepath.Rel(fx, p)
		t.Logf("checked %s against %d listing(s) or identical files", rel, n)
	}
	for _, must := range []string{"v1/app", "v2/app", "linkorder/app_a_first", "linkorder/app_b_first", "linkorder/a/libgroth16_cuda.a",
		"linkorder/b/libgroth16_cuda.a", "multi/kernel.o", "compressed/kernel_compress_all.o", "compressed/kernel_compress_none.o",
		"compressed/kernel_compress_size.o", "rdc/app", "rdc/kernel.o", "rdc/dlink.o", "rdc/libgroth16_cuda.a", "v1/kernel.o", "v1/libgroth16_cuda.a"} {
		if checked[filepath.Join(fx, must)] == 0 {
			t.Errorf("%s was not checked against cuobjdump", must)
		}
	}
}

// TestFatbinHeaderFields checks the fields cuobjdump -elf prints for the
// apps (code version, host, 64-bit, compressed) and the cubin's own ELF
// header and section table against cuobjdump-elf-app.txt.
func TestFatbinHeaderFields(t *testing.T) {
	fx := fixtureDir(t)
	secRE := regexp.MustCompile(`^\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)$`)
	for _, v := range []string{"v1", "v2"} {
		text := lines(readFile(t, filepath.Join(fx, v, "cuobjdump-elf-app.txt")))
		fb, err := ReadELFFatbins(openReader(t, filepath.Join(fx, v, "app")), v+"/app", nil)
		if err != nil {
			t.Fatal(err)
		}
		entries := fb.NvFatbin.Entries()
		if len(entries) != 2 {
			t.Fatalf("%s: %d entries", v, len(entries))
		}
		// Blocks start with "Fatbin ptx code:" / "Fatbin elf code:".
		var blocks [][]string
		for _, l := range text {
			if strings.HasPrefix(l, "Fatbin ") {
				blocks = append(blocks, nil)
			}
			if len(blocks) > 0 {
				blocks[len(blocks)-1] = append(blocks[len(blocks)-1], l)
			}
		}
		if len(blocks) != len(entries) {
			t.Fatalf("%s: %d blocks for %d entries", v, len(blocks), len(entries))
		}
		for i, e := range entries {
			b := strings.Join(blocks[i], "\n")
			kind := map[FatbinKind]string{FatbinPTX: "ptx", FatbinCubin: "elf"}[e.Kind]
			for _, want := range []string{
				"Fatbin " + kind + " code:",
				fmt.Sprintf("arch = sm_%d", e.Arch),
				fmt.Sprintf("code version = [%d,%d]", e.Major, e.Minor),
			} {
				if !strings.Contains(b, want) {
					t.Errorf("%s entry %d: %q not in cuobjdump block", v, i, want)
				}
			}
			if (e.Flags&FatbinFlagHostLinux != 0) != strings.Contains(b, "host = linux") ||
				(e.Flags&FatbinFlag64Bit != 0) != strings.Contains(b, "compile_size = 64bit") ||
				(e.Compression != CompressNone) != slices.Contains(blocks[i], "compressed") {
				t.Errorf("%s entry %d: flags %#x compression %v vs\n%s", v, i, e.Flags, e.Compression, b)
			}
			if e.Kind != FatbinCubin {
				continue
			}
			// The decompressed cubin: its ELF header and section table.
			rc, err := fb.NvFatbin.OpenEntry(e)
			if err != nil {
				t.Fatal(err)
			}
			cubin, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			if uint64(len(cubin)) != e.Size {
				t.Errorf("OpenEntry gave %d bytes, Size %d", len(cubin), e.Size)
			}
			cf, err := elf.NewFile(bytes.NewReader(cubin))
			if err != nil {
				t.Fatal(err)
			}
			if cf.Machine != elf.EM_CUDA || cf.Type != elf.ET_EXEC || !strings.Contains(b, "type=ET_EXEC") {
				t.Errorf("cubin machine %v type %v", cf.Machine, cf.Type)
			}
			n := 0
			for _, l := range blocks[i] {
				m := secRE.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				idx, _ := strconv.ParseInt(m[1], 16, 64)
				off, _ := strconv.ParseUint(m[2], 16, 64)
				size, _ := strconv.ParseUint(m[3], 16, 64)
				s := cf.Sections[idx]
				if s.Name != m[4] || s.Offset != off || s.Size != size {
					t.Errorf("%s cubin section %d: %s %x %x, cuobjdump %s %x %x", v, idx, s.Name, s.Offset, s.Size, m[4], off, size)
				}
				n++
			}
			if n < 5 {
				t.Errorf("%s: only %d cubin sections compared", v, n)
			}
		}
	}
}

// digestSet returns kind/arch -> digest of a file's .nv_fatbin or, when
// rel, __nv_relfatbin entries.
func digestSet(t *testing.T, path string, rel bool) map[string][32]byte {
	t.Helper()
	fb, err := ReadELFFatbins(openReader(t, path), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := fb.NvFatbin
	if rel {
		s = fb.RelFatbin
	}
	out := map[string][32]byte{}
	for _, e := range s.Entries() {
		out[fmt.Sprintf("%v/sm_%d", e.Kind, e.Arch)] = e.Digest
	}
	return out
}

func TestFatbinDigests(t *testing.T) {
	fx := fixtureDir(t)
	none := digestSet(t, filepath.Join(fx, "compressed", "kernel_compress_none.o"), false)
	for _, v := range []string{"all", "size"} {
		if got := digestSet(t, filepath.Join(fx, "compressed", "kernel_compress_"+v+".o"), false); !equalMaps(got, none) {
			t.Errorf("compress %s: digests %x differ from uncompressed %x", v, got, none)
		}
	}
	// The uncompressed cubin's digest is its stored bytes minus padding.
	fb, _ := ReadELFFatbins(openReader(t, filepath.Join(fx, "compressed", "kernel_compress_none.o")), "none", nil)
	for _, e := range fb.NvFatbin.Entries() {
		rc, _ := fb.NvFatbin.OpenEntry(e)
		b, _ := io.ReadAll(rc)
		rc.Close()
		b = bytes.TrimRight(b, "\x00")
		if blake3.Sum256(b) != e.Digest || uint64(len(b)) != e.DigestLen {
			t.Errorf("%v: digest is not BLAKE3 of the trimmed payload", e.Kind)
		}
		if e.Kind == FatbinPTX && !bytes.HasPrefix(bytes.TrimLeft(b, "\n"), []byte(".version")) && !bytes.Contains(b, []byte(".target sm_90")) {
			t.Errorf("PTX payload does not look like PTX: %q", b[:min(len(b), 60)])
		}
	}
	v1 := digestSet(t, filepath.Join(fx, "v1", "app"), false)
	v2 := digestSet(t, filepath.Join(fx, "v2", "app"), false)
	if v1["ELF/sm_90"] == v2["ELF/sm_90"] || v1["PTX/sm_90"] == v2["PTX/sm_90"] {
		t.Error("v1 and v2 apps have the same device code digests")
	}
	if !equalMaps(v1, digestSet(t, filepath.Join(fx, "v1", "kernel.o"), false)) {
		t.Error("v1/app and v1/kernel.o device code differ")
	}
	if !equalMaps(v1, digestSet(t, filepath.Join(fx, "linkorder", "app_a_first"), false)) ||
		!equalMaps(v2, digestSet(t, filepath.Join(fx, "linkorder", "app_b_first"), false)) {
		t.Error("linkorder apps do not carry the v1 / v2 device code")
	}
	// -rdc: the member's __nv_relfatbin container is copied verbatim into
	// the app; the device-link cubin is the app's .nv_fatbin.
	app, _ := ReadELFFatbins(openReader(t, filepath.Join(fx, "rdc", "app")), "rdc/app", nil)
	k, _ := ReadELFFatbins(openReader(t, filepath.Join(fx, "rdc", "kernel.o")), "rdc/kernel.o", nil)
	d, _ := ReadELFFatbins(openReader(t, filepath.Join(fx, "rdc", "dlink.o")), "rdc/dlink.o", nil)
	if k.NvFatbin != nil || d.RelFatbin != nil {
		t.Error("rdc kernel.o has .nv_fatbin or dlink.o has __nv_relfatbin")
	}
	if app.RelFatbin.Containers[0].Digest != k.RelFatbin.Containers[0].Digest ||
		app.NvFatbin.Containers[0].Digest != d.NvFatbin.Containers[0].Digest {
		t.Error("rdc/app containers are not byte-identical to the members'")
	}
	if k.RelFatbin.Entries()[0].Options != "--compile-only" {
		t.Errorf("rdc PTX options %q", k.RelFatbin.Entries()[0].Options)
	}
	// The relocatable cubin decompresses to an ET_REL cubin.
	for _, e := range k.RelFatbin.Entries() {
		if e.Kind != FatbinCubin {
			continue
		}
		rc, _ := k.RelFatbin.OpenEntry(e)
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		cf, err := elf.NewFile(bytes.NewReader(b))
		if err != nil || cf.Type != elf.ET_REL || cf.Machine != elf.EM_CUDA {
			t.Errorf("relocatable cubin: %v %v", cf, err)
		}
	}
	// Container digests are BLAKE3 of the exact section bytes.
	f := openELF(t, filepath.Join(fx, "v1", "kernel.o"))
	raw, _ := f.Section(".nv_fatbin").Data()
	fb1, _ := f.Fatbins(nil)
	if blake3.Sum256(raw) != fb1.NvFatbin.Containers[0].Digest {
		t.Error("container digest is not BLAKE3 of its bytes")
	}
	// NoDigest leaves digests zero but still lists entries.
	fb2, err := f.Fatbins(&FatbinOptions{NoDigest: true})
	if err != nil || len(fb2.NvFatbin.Entries()) != 2 || fb2.NvFatbin.Entries()[0].Digest != [32]byte{} || fb2.NvFatbin.Entries()[0].Size != 923 {
		t.Errorf("NoDigest: %+v %v", fb2.NvFatbin, err)
	}
}

func equalMaps(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// ---- synthetic fatbins: several containers, padding, LZ4 entries ----

// lz4Compress is a small greedy LZ4 block compressor written for the tests
// (no real flag-0x2000 sample exists here). It emits the standard block
// format: token, literal length continuation, literals, 2-byte offset, match
// length continuation, and ends with a literal-only sequence of at least 5
// bytes (LZ4's end-of-block rule) when the input allows.
func lz4Compress(src []byte) []byte {
	var dst []byte
	writeLen := func(n int) {
		for n >= 255 {
			dst = append(dst, 255)
			n -= 255
		}
		dst = append(dst, byte(n))
	}
	emit := func(lits []byte, off, ml int) {
		tok := byte(min(len(lits), 15)) << 4
		if ml > 0 {
			tok |= byte(min(ml-4, 15))
		}
		dst = append(dst, tok)
		if len(lits) >= 15 {
			writeLen(len(lits) - 15)
		}
		dst = append(dst, lits...)
		if ml > 0 {
			dst = append(dst, byte(off), byte(off>>8))
			if ml-4 >= 15 {
				writeLen(ml - 4 - 15)
			}
		}
	}
	table := make([]int, 1<<14)
	for i := range table {
		table[i] = -1
	}
	hash := func(v uint32) uint32 { return (v * 2654435761) >> 18 }
	anchor, i := 0, 0
	for i+12 <= len(src) {
		v := binary.LittleEndian.Uint32(src[i:])
		h := hash(v)
		cand := table[h]
		table[h] = i
		if cand >= 0 && i-cand <= 65535 && binary.LittleEndian.Uint32(src[cand:]) == v {
			ml := 4
			for i+ml < len(src)-5 && src[cand+ml] == src[i+ml] {
				ml++
			}
			emit(src[anchor:i], i-cand, ml)
			i += ml
			anchor = i
			continue
		}
		i++
	}
	emit(src[anchor:], 0, 0)
	return dst
}

type synthEntry struct {
	kind     FatbinKind
	arch     uint32
	payload  []byte // uncompressed
	compress FatbinCompression
	options  string
}

// buildFatbin writes one container the way nvcc lays it out: entry headers
// of 64 bytes (80 with an options block), payloads padded to 8.
func buildFatbin(t testing.TB, entries []synthEntry) []byte {
	var body bytes.Buffer
	for _, e := range entries {
		stored := e.payload
		var flags uint64 = FatbinFlag64Bit | FatbinFlagHostLinux
		var csize, dsize uint64
		switch e.compress {
		case CompressLZ4:
			stored = lz4Compress(e.payload)
			flags |= FatbinFlagCompressLZ4
			csize, dsize = uint64(len(stored)), uint64(len(e.payload))
		case CompressZstd:
			t.Fatal("synthetic zstd entries: use the fixtures")
		}
		padded := append(bytes.Clone(stored), make([]byte, (8-len(stored)%8)%8)...)
		hlen := 64
		var extra []byte
		if e.options != "" {
			opt := []byte(e.options)
			extra = make([]byte, 8)
			binary.LittleEndian.PutUint32(extra[0:], uint32(64+8))
			binary.LittleEndian.PutUint32(extra[4:], uint32(len(opt)))
			extra = append(extra, opt...)
			for len(extra)%8 != 0 {
				extra = append(extra, 0)
			}
			hlen += len(extra)
		}
		h := make([]byte, 64)
		le := binary.LittleEndian
		le.PutUint16(h[0:], uint16(e.kind))
		le.PutUint16(h[2:], 0x0101)
		le.PutUint32(h[4:], uint32(hlen))
		le.PutUint64(h[8:], uint64(len(padded)))
		le.PutUint32(h[16:], uint32(csize))
		if e.options != "" {
			le.PutUint32(h[20:], 64)
		}
		le.PutUint16(h[24:], 8)
		le.PutUint16(h[26:], 1)
		le.PutUint32(h[28:], e.arch)
		le.PutUint64(h[40:], flags)
		le.PutUint64(h[56:], dsize)
		body.Write(h)
		body.Write(extra)
		body.Write(padded)
	}
	hdr := make([]byte, 16)
	binary.LittleEndian.PutUint32(hdr[0:], FatbinMagic)
	binary.LittleEndian.PutUint16(hdr[4:], 1)
	binary.LittleEndian.PutUint16(hdr[6:], 16)
	binary.LittleEndian.PutUint64(hdr[8:], uint64(body.Len()))
	return append(hdr, body.Bytes()...)
}

// fixtureCubin returns the uncompressed sm_90 cubin of v1/kernel.o.
func fixtureCubin(t testing.TB) []byte {
	fx := fixtureDir(t)
	f, err := OpenELF(filepath.Join(fx, "v1", "kernel.o"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fb, err := f.Fatbins(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range fb.NvFatbin.Entries() {
		if e.Kind == FatbinCubin {
			rc, _ := fb.NvFatbin.OpenEntry(e)
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatal("no cubin in v1/kernel.o")
	return nil
}

func TestLZ4RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	random := make([]byte, 100000)
	rng.Read(random)
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog; "), 5000)
	runs := append(bytes.Repeat([]byte{0}, 300000), bytes.Repeat([]byte("ab"), 70000)...)
	mixed := make([]byte, 0, 400000)
	for len(mixed) < 390000 {
		if rng.Intn(2) == 0 {
			n := rng.Intn(600)
			b := make([]byte, n)
			rng.Read(b)
			mixed = append(mixed, b...)
		} else if len(mixed) > 0 {
			s := rng.Intn(len(mixed))
			n := min(rng.Intn(2000), len(mixed)-s)
			mixed = append(mixed, mixed[s:s+n]...)
		}
	}
	cases := map[string][]byte{"empty": nil, "tiny": []byte("abc"), "random": random, "text": text, "runs": runs, "mixed": mixed}
	cases["cubin"] = fixtureCubin(t)
	for name, src := range cases {
		comp := lz4Compress(src)
		var out bytes.Buffer
		n, err := lz4BlockDecode(bufio.NewReader(bytes.NewReader(comp)), int64(len(src)), &out)
		if err != nil || n != int64(len(src)) || !bytes.Equal(out.Bytes(), src) {
			t.Errorf("%s: %d bytes -> %d compressed -> %d (%v), equal=%v", name, len(src), len(comp), n, err, bytes.Equal(out.Bytes(), src))
		}
		if name == "text" && len(comp) > len(src)/10 {
			t.Errorf("compressor is not compressing: %d -> %d", len(src), len(comp))
		}
	}
	// Corrupt streams fail cleanly.
	comp := lz4Compress(text)
	for _, c := range []struct {
		name string
		data []byte
		want int64
	}{
		{"truncated", comp[:len(comp)/2], int64(len(text))},
		{"short want", comp, 100},
		{"long want", comp, int64(len(text)) + 10},
		{"zero offset", []byte{0x10, 'a', 0, 0}, 10},
		{"offset before start", []byte{0x10, 'a', 5, 0}, 10},
	} {
		_, err := lz4BlockDecode(bufio.NewReader(bytes.NewReader(c.data)), c.want, io.Discard)
		var le *lz4Error
		if !errors.As(err, &le) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestFatbinSyntheticLZ4(t *testing.T) {
	cubin := fixtureCubin(t)
	ptx := []byte(".version 9.0\n.target sm_80\n.address_size 64\n\x00")
	plain := buildFatbin(t, []synthEntry{{FatbinCubin, 80, cubin, CompressNone, ""}, {FatbinPTX, 80, ptx, CompressNone, "-O3"}})
	lz := buildFatbin(t, []synthEntry{{FatbinCubin, 80, cubin, CompressLZ4, ""}, {FatbinPTX, 80, ptx, CompressLZ4, "-O3"}})
	// Two containers with zero padding between them, as a section would hold.
	data := append(append(bytes.Clone(plain), make([]byte, 16)...), lz...)
	cs, err := ParseFatbin(bytes.NewReader(data), int64(len(data)), "synthetic", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || len(cs[0].Entries) != 2 || len(cs[1].Entries) != 2 {
		t.Fatalf("containers %+v", cs)
	}
	if cs[1].Offset != int64(len(plain))+16 {
		t.Errorf("second container at %d", cs[1].Offset)
	}
	for i := range 2 {
		a, b := cs[0].Entries[i], cs[1].Entries[i]
		if a.Digest != b.Digest || a.Compression != CompressNone || b.Compression != CompressLZ4 || b.Size != uint64(len(synthPayload(i, cubin, ptx))) {
			t.Errorf("entry %d: plain %v %x, lz4 %v %x size %d", i, a.Compression, a.Digest[:4], b.Compression, b.Digest[:4], b.Size)
		}
		if b.Kind != a.Kind || b.Arch != 80 || b.Major != 1 || b.Minor != 8 {
			t.Errorf("entry %d fields %+v", i, b)
		}
	}
	if cs[1].Entries[1].Options != "-O3" {
		t.Errorf("options %q", cs[1].Entries[1].Options)
	}
	// The plain cubin digest equals the fixture's own.
	fx := fixtureDir(t)
	want := digestSet(t, filepath.Join(fx, "v1", "kernel.o"), false)["ELF/sm_90"]
	if cs[1].Entries[0].Digest != want {
		t.Error("LZ4 round-tripped cubin digest differs from the fixture's")
	}
	// Reading the decompressed LZ4 payload back through a section.
	s := &FatbinSection{Name: "test", Size: int64(len(data)), Containers: cs, r: bytes.NewReader(data), file: "synthetic"}
	rc, err := s.OpenEntry(cs[1].Entries[0])
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, cubin) {
		t.Errorf("OpenEntry(lz4): %d bytes, %v", len(got), err)
	}
}

func synthPayload(i int, cubin, ptx []byte) []byte {
	if i == 0 {
		return cubin
	}
	return ptx
}

func TestFatbinBadInput(t *testing.T) {
	fx := fixtureDir(t)
	f := openELF(t, filepath.Join(fx, "compressed", "kernel_compress_all.o"))
	sec := f.Section(".nv_fatbin")
	good, _ := sec.Data()
	var fe *FormatError
	expectErr := func(name string, data []byte, wantOff int64) {
		t.Helper()
		_, err := ParseFatbin(bytes.NewReader(data), int64(len(data)), "bad.fatbin", nil)
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "bad.fatbin") {
			t.Errorf("%s: %v, want a *FormatError naming the file", name, err)
			return
		}
		if wantOff >= 0 && fe.Offset != wantOff {
			t.Errorf("%s: offset %d, want %d (%v)", name, fe.Offset, wantOff, err)
		}
	}
	// Every truncation inside the container is an error.
	for n := 1; n < len(good); n++ {
		if good[n-1] == 0 && allZero(good[:n]) {
			continue
		}
		_, err := ParseFatbin(bytes.NewReader(good[:n]), int64(n), "bad.fatbin", nil)
		if !errors.As(err, &fe) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	bad := bytes.Clone(good)
	bad[0] ^= 1
	expectErr("magic", bad, 0)
	bad = bytes.Clone(good)
	binary.LittleEndian.PutUint64(bad[8:], 1<<40)
	expectErr("container size", bad, 0)
	bad = bytes.Clone(good)
	binary.LittleEndian.PutUint32(bad[16+4:], 8)
	expectErr("entry header size", bad, 16)
	bad = bytes.Clone(good)
	// Corrupt the zstd frame of the PTX entry (payload at 16+80).
	for i := 16 + 80 + 4; i < 16+80+40; i++ {
		bad[i] ^= 0x5a
	}
	expectErr("zstd payload", bad, 16+80)
	bad = bytes.Clone(good)
	binary.LittleEndian.PutUint64(bad[16+56:], 5) // wrong decompressed size
	expectErr("decompressed size", bad, 16)
	bad = bytes.Clone(good)
	binary.LittleEndian.PutUint64(bad[16+56:], 1<<40) // over the limit
	expectErr("huge decompressed size", bad, 16)
	// Trailing garbage after a valid container.
	expectErr("garbage", append(bytes.Clone(good), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), int64(len(good)))

	// Through the ELF: offsets are file offsets.
	raw := readFile(t, filepath.Join(fx, "compressed", "kernel_compress_all.o"))
	raw[sec.Offset] ^= 1
	_, err := ReadELFFatbins(bytes.NewReader(raw), "kernel_compress_all.o", nil)
	if !errors.As(err, &fe) || fe.Offset != int64(sec.Offset) || !strings.Contains(err.Error(), "kernel_compress_all.o") {
		t.Errorf("ELF: %v", err)
	}
	// Byte flips everywhere: never a panic.
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 0xff
		ParseFatbin(bytes.NewReader(b), int64(len(b)), "x", &FatbinOptions{MaxDecompressed: 1 << 20})
	}
}
