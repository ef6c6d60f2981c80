package evidence

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/testutil/fixtures"
)

// A large fatbinary section is parsed from guessed container starts; a guess that lands on the magic
// inside a payload is caught (the part before it does not parse to its end) and the section is parsed
// again from a walk over its headers: the entries found are those of one serial parse either way.
func TestFatbinGuessedParts(t *testing.T) {
	f, err := elf.Open(filepath.Join(fixtures.CUDA(t), "multi/kernel.o"))
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section(binfmt.SectionNvFatbin)
	one, err := sec.Data()
	f.Close()
	if err != nil || len(one) == 0 {
		t.Fatalf("the fixture's %s: %v", binfmt.SectionNvFatbin, err)
	}
	// 403 copies of the object's real containers, as a fat binary linked from many objects.
	const copies = 403 // not a multiple of 4: the first cut falls inside a container
	data := bytes.Repeat(one, copies)
	defer func(m int) { guessMin = m }(guessMin)
	guessMin = len(data) / 2
	digestAll := &binfmt.FatbinOptions{OnlyDigested: true, DigestEntry: func(*binfmt.FatbinEntry) bool { return true }}
	serial := func(d []byte) []string {
		cs, err := binfmt.ParseFatbinBytes(d, "serial", digestAll)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, c := range cs {
			for _, e := range c.Entries {
				keys = append(keys, fatbinKeyString(fatbinKey{section: binfmt.SectionNvFatbin, kind: e.Kind, arch: e.Arch, digest: e.Digest}))
			}
		}
		slices.Sort(keys)
		return keys
	}
	check := func(d []byte, what string) {
		t.Helper()
		if parts := guessContainers(d, 4); len(parts) < 2 {
			t.Fatalf("%s: %d part(s), want the section cut", what, len(parts))
		}
		got, err := sectionFatbinKeys(d, binfmt.SectionNvFatbin, "bin", digestAll)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		slices.Sort(got)
		if want := serial(d); !slices.Equal(got, want) || len(want) != copies*len(serial(one)) {
			t.Errorf("%s: %d keys, a serial parse %d", what, len(got), len(want))
		}
	}
	check(data, "real container starts")

	// A container header planted inside an entry's payload just after the first cut: the guess takes it.
	bad := bytes.Clone(data)
	cut := (len(bad)/4 + 7) &^ 7
	var starts []int
	for off := 0; off+16 <= len(bad); off += int(binary.LittleEndian.Uint16(bad[off+6:])) + int(binary.LittleEndian.Uint64(bad[off+8:])) {
		starts = append(starts, off)
	}
	i, _ := slices.BinarySearch(starts, cut)
	if i >= len(starts) || starts[i] == cut || starts[i]-cut < 128 {
		t.Fatalf("the premise fails: no payload room after the cut at %d (next container at %v)", cut, starts[min(i, len(starts)-1)])
	}
	fake := cut + 64
	binary.LittleEndian.PutUint32(bad[fake:], binfmt.FatbinMagic)
	binary.LittleEndian.PutUint16(bad[fake+4:], 1)
	binary.LittleEndian.PutUint16(bad[fake+6:], 16)
	binary.LittleEndian.PutUint64(bad[fake+8:], 8)
	if parts := guessContainers(bad, 4); parts[0][1] != fake {
		t.Fatalf("the premise fails: the first guessed cut is %d, not the planted header at %d", parts[0][1], fake)
	}
	if _, err := parseFatbinParts(bad, guessContainers(bad, 4), binfmt.SectionNvFatbin, "bin", digestAll); err == nil {
		t.Fatal("the guessed parts parsed: the planted header went unnoticed")
	}
	check(bad, "a planted container header")
}
