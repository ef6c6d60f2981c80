package binfmt

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureFiles returns the bytes of the named fixture files that exist.
func fixtureFiles(f *testing.F, names ...string) [][]byte {
	fx := fixtureDir(f)
	var out [][]byte
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(fx, n))
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// compiledSeeds compiles the test C sources (DWARF 4 and 5) and archives
// them (GNU, thin, BSD), returning object and archive bytes; nothing when cc
// or ar is missing.
func compiledSeeds(f *testing.F) (objs, archives [][]byte) {
	for _, tool := range []string{"cc", "ar"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, nil
		}
	}
	dir := f.TempDir()
	names := buildCObjects(f, dir)
	for _, n := range names[:2] {
		objs = append(objs, readFile(f, filepath.Join(dir, n)))
	}
	sh(f, dir, nil, "cc", "-gdwarf-4", "-O1", "-fPIC", "-c", "foo.c", "-o", "foo4.o")
	objs = append(objs, readFile(f, filepath.Join(dir, "foo4.o")))
	sh(f, dir, nil, "ar", append([]string{"rcs", "libgnu.a"}, names...)...)
	sh(f, dir, nil, "ar", append([]string{"rcsT", "libthin.a"}, names...)...)
	archives = append(archives, readFile(f, filepath.Join(dir, "libgnu.a")), readFile(f, filepath.Join(dir, "libthin.a")))
	if _, err := exec.LookPath("llvm-ar"); err == nil {
		sh(f, dir, nil, "llvm-ar", append([]string{"--format=bsd", "rcs", "libbsd.a"}, names[:2]...)...)
		sh(f, dir, []string{"SYM64_THRESHOLD=0"}, "llvm-ar", append([]string{"--format=gnu", "rcs", "lib64.a"}, names[:2]...)...)
		archives = append(archives, readFile(f, filepath.Join(dir, "libbsd.a")), readFile(f, filepath.Join(dir, "lib64.a")))
	}
	return objs, archives
}

func checkErrNames(t *testing.T, err error, name string) {
	t.Helper()
	if err != nil && !strings.Contains(err.Error(), name) {
		t.Fatalf("error does not name %q: %v", name, err)
	}
}

func FuzzArchive(f *testing.F) {
	for _, b := range fixtureFiles(f, "v1/libgroth16_cuda.a", "rdc/libgroth16_cuda.a") {
		f.Add(b)
	}
	_, archives := compiledSeeds(f)
	for _, b := range archives {
		f.Add(b)
	}
	f.Add(bsdArchive(map[string][]byte{"a.o": []byte("odd"), "a long name.o": []byte("xy")}, []string{"a.o", "a long name.o"}))
	f.Add([]byte("!<arch>\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadArchive(bytes.NewReader(data), int64(len(data)), "fuzz.a")
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a *FormatError: %v", err)
			}
			checkErrNames(t, err, "fuzz.a")
			if fe.Offset < 0 || fe.Offset > int64(len(data)) {
				t.Fatalf("error offset %d outside %d bytes: %v", fe.Offset, len(data), err)
			}
			return
		}
		for _, s := range a.Symbols {
			if s.Member < 0 || s.Member >= len(a.Members) {
				t.Fatalf("symbol %q names member %d of %d", s.Name, s.Member, len(a.Members))
			}
		}
		for _, m := range a.Members {
			if m.Name == "" || m.Size < 0 {
				t.Fatalf("member %+v", m)
			}
			if a.Thin {
				if m.Path == "" || m.Offset != 0 {
					t.Fatalf("thin member %+v", m)
				}
				continue
			}
			if m.Offset < 8 || m.Offset+m.Size > int64(len(data)) {
				t.Fatalf("member %+v outside %d bytes", m, len(data))
			}
			sr, err := a.MemberReader(bytes.NewReader(data), m)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := io.Copy(io.Discard, sr); err != nil || n != m.Size {
				t.Fatalf("member %q: read %d of %d: %v", m.Name, n, m.Size, err)
			}
		}
	})
}

// fatbinSeeds returns the raw .nv_fatbin and __nv_relfatbin sections of the
// fixture objects and a synthetic LZ4 container.
func fatbinSeeds(f *testing.F) [][]byte {
	var out [][]byte
	fx := fixtureDir(f)
	for _, n := range []string{"v1/kernel.o", "multi/kernel.o", "compressed/kernel_compress_all.o", "compressed/kernel_compress_none.o", "rdc/kernel.o", "rdc/dlink.o"} {
		ef, err := OpenELF(filepath.Join(fx, n))
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range []string{SectionNvFatbin, SectionRelFatbin} {
			if sec := ef.Section(s); sec != nil {
				b, err := sec.Data()
				if err != nil {
					f.Fatal(err)
				}
				out = append(out, b)
			}
		}
		ef.Close()
	}
	ptx := []byte(".version 9.0\n.target sm_80\n.address_size 64\n\x00")
	small := bytes.Repeat([]byte("abcdefgh01234567"), 40)
	out = append(out, buildFatbin(f, []synthEntry{{FatbinCubin, 80, small, CompressLZ4, ""}, {FatbinPTX, 80, ptx, CompressLZ4, "-O3"}}))
	out = append(out, buildFatbin(f, []synthEntry{{FatbinPTX, 75, ptx, CompressNone, "--compile-only"}}))
	return out
}

func FuzzFatbin(f *testing.F) {
	for _, b := range fatbinSeeds(f) {
		f.Add(b)
	}
	opts := &FatbinOptions{MaxDecompressed: 4 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ParseFatbin(bytes.NewReader(data), int64(len(data)), "fuzz.fatbin", opts)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a *FormatError: %v", err)
			}
			checkErrNames(t, err, "fuzz.fatbin")
			if fe.Offset < 0 || fe.Offset > int64(len(data)) {
				t.Fatalf("error offset %d outside %d bytes: %v", fe.Offset, len(data), err)
			}
		}
		for _, c := range cs {
			if c.Offset < 0 || c.Offset+c.Size > int64(len(data)) {
				t.Fatalf("container %+v outside %d bytes", c, len(data))
			}
			for _, e := range c.Entries {
				if e.PayloadOffset < c.Offset || e.PayloadOffset+int64(e.StoredSize) > c.Offset+c.Size {
					t.Fatalf("entry payload [%d,+%d) outside its container", e.PayloadOffset, e.StoredSize)
				}
				if e.DigestLen > e.Size || e.Size > uint64(opts.MaxDecompressed) {
					t.Fatalf("entry sizes %+v", e)
				}
			}
		}
		// The LZ4 decoder on raw bytes, with an output bound.
		want := min(int64(len(data))*8, 1<<20)
		n, err := lz4BlockDecode(bufio.NewReader(bytes.NewReader(data)), want, io.Discard)
		if n > want || (err == nil && n != want) {
			t.Fatalf("lz4: %d bytes of %d, %v", n, want, err)
		}
	})
}

func FuzzELFFeatures(f *testing.F) {
	for _, b := range fixtureFiles(f, "v1/kernel.o", "v2/kernel.o", "multi/kernel.o", "compressed/kernel_compress_all.o", "rdc/kernel.o", "rdc/dlink.o") {
		f.Add(b)
	}
	objs, _ := compiledSeeds(f)
	for _, b := range objs {
		f.Add(b)
	}
	catchPanics = false // let the fuzzer see panics inside debug/elf and debug/dwarf too
	f.Cleanup(func() { catchPanics = true })
	opts := &FatbinOptions{MaxDecompressed: 4 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := NewELF(bytes.NewReader(data), "fuzz.o")
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error is not a *FormatError: %v", err)
			}
			checkErrNames(t, err, "fuzz.o")
			return
		}
		_, err = ef.Features()
		checkErrNames(t, err, "fuzz.o")
		for i := range ef.File.Sections {
			ms, err := ef.MaskedSection(i)
			checkErrNames(t, err, "fuzz.o")
			if err != nil || ms == nil {
				continue
			}
			if ms.Data != nil && uint64(len(ms.Data)) != ms.Size {
				t.Fatalf("section %d: %d data bytes, size %d", i, len(ms.Data), ms.Size)
			}
			var last uint64
			for j, r := range ms.Mask {
				if r.Start >= r.End || r.End > ms.Size || (j > 0 && r.Start <= last) {
					t.Fatalf("section %d: bad mask %v (size %d)", i, ms.Mask, ms.Size)
				}
				last = r.End
			}
		}
		_, err = ef.CompileUnits()
		checkErrNames(t, err, "fuzz.o")
		_, err = ef.Fatbins(opts)
		checkErrNames(t, err, "fuzz.o")
	})
}
