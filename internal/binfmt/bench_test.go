package binfmt

import (
	"os"
	"path/filepath"
	"testing"
)

var benchFiles = []string{"v1/app", "v2/app", "rdc/app", "v1/kernel.o", "multi/kernel.o", "compressed/kernel_compress_all.o", "rdc/kernel.o"}

func openBenchFiles(b *testing.B) ([]*os.File, int64) {
	fx := fixtureDir(b)
	var files []*os.File
	var total int64
	for _, n := range benchFiles {
		f, err := os.Open(filepath.Join(fx, n))
		if err != nil {
			b.Fatal(err)
		}
		st, _ := f.Stat()
		total += st.Size()
		files = append(files, f)
		b.Cleanup(func() { f.Close() })
	}
	return files, total
}

// BenchmarkFatbin parses and hashes every fatbin entry of the fixture
// executables and objects (bytes/s counts whole files).
func BenchmarkFatbin(b *testing.B) {
	files, total := openBenchFiles(b)
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			if _, err := ReadELFFatbins(f, f.Name(), nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkELFFeatures gathers symbols, strings, build-id and .comment of
// the fixture executables and objects.
func BenchmarkELFFeatures(b *testing.B) {
	files, total := openBenchFiles(b)
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			if _, err := ReadELFFeatures(f, f.Name()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkMaskedSections masks every section of the fixture objects and
// executables.
func BenchmarkMaskedSections(b *testing.B) {
	files, total := openBenchFiles(b)
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			ef, err := NewELF(f, f.Name())
			if err != nil {
				b.Fatal(err)
			}
			for i := 1; i < len(ef.File.Sections); i++ {
				if _, err := ef.MaskedSection(i); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}
