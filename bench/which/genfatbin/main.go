// Command genfatbin writes a large .nv_fatbin payload for the which benchmark: copies of the real nvcc 13
// containers of a fixture object, each copy's entries relabelled with another SM architecture (never
// sm_80 or sm_90, which the fixtures carry), as a fat binary built for many GPUs and kernels looks to a
// matcher: many entries, few that could equal a wanted one.
//
// Usage: genfatbin -from OBJECT.o -bytes N -o OUT
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"

	"github.com/stalecheck/stalecheck/internal/binfmt"
)

func main() {
	from := flag.String("from", "", "an object with a .nv_fatbin section")
	size := flag.Int64("bytes", 256<<20, "bytes to write at least")
	out := flag.String("o", "big.fatbin", "output file")
	flag.Parse()
	f, err := binfmt.OpenELF(*from)
	if err != nil {
		fail(err)
	}
	sec := f.Section(binfmt.SectionNvFatbin)
	if sec == nil {
		fail(fmt.Errorf("%s has no %s", *from, binfmt.SectionNvFatbin))
	}
	data, err := sec.Data()
	if err != nil {
		fail(err)
	}
	fb, err := f.Fatbins(&binfmt.FatbinOptions{NoDigest: true})
	if err != nil {
		fail(err)
	}
	w, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	archs := []uint32{50, 52, 60, 61, 70, 72, 75, 86, 87, 89, 100, 101, 120}
	buf := make([]byte, len(data))
	var written int64
	for i := 0; written < *size; i++ {
		copy(buf, data)
		for _, e := range fb.NvFatbin.Entries() {
			binary.LittleEndian.PutUint32(buf[e.Offset+28:], archs[i%len(archs)])
		}
		n, err := w.Write(buf)
		if err != nil {
			fail(err)
		}
		written += int64(n)
	}
	if err := w.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "genfatbin:", err)
	os.Exit(1)
}
