package cinclude

import (
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fast path of Parse (lines without a directive skipped without allocating) lists exactly what
// the full path lists: on every C, C++ and CUDA file of Debian's crate registry (ring, blake3, zstd,
// sqlite, openssl sources) and the vendored CUDA fixtures, and on random text made of the characters
// that matter (comments, continued lines, '#', quotes, Unicode spaces).
func TestParseFastPathSame(t *testing.T) {
	n := 0
	for _, root := range []string{"/usr/share/cargo/registry", "../../testdata"} {
		filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			switch filepath.Ext(p) {
			case ".c", ".h", ".cc", ".cpp", ".hpp", ".cu", ".cuh", ".S", ".inc":
			default:
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			n++
			if diff := cmp.Diff(parse(data, false), parse(data, true)); diff != "" {
				t.Errorf("%s: fast and full parse differ:\n%s", p, diff)
			}
			return nil
		})
	}
	if n == 0 {
		t.Log("no C files found under /usr/share/cargo/registry or testdata; random text only")
	}
	t.Logf("%d files compared", n)
	pieces := []string{"#include \"a.h\"", "#include <b.h>", "# include \"c.h\"", "#if X", "#ifdef Y", "#ifndef G", "#define G", "#endif", "#else",
		"/*", "*/", "//", "\\", "\n", "\n", "\n", " ", "\t", "\r", "int x;", "\u00a0", "\u0085", "#import <d.h>", "/* #include \"e.h\" */", "\"", "x"}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := rng.Intn(40); j > 0; j-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		data := []byte(b.String())
		if diff := cmp.Diff(parse(data, false), parse(data, true)); diff != "" {
			t.Fatalf("%q: fast and full parse differ:\n%s", data, diff)
		}
	}
}

func BenchmarkParseRegistry(b *testing.B) {
	var files [][]byte
	filepath.WalkDir("/usr/share/cargo/registry", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && (strings.HasSuffix(p, ".c") || strings.HasSuffix(p, ".h")) {
			if data, err := os.ReadFile(p); err == nil {
				files = append(files, data)
			}
		}
		return nil
	})
	if len(files) == 0 {
		b.Skip("no C files under /usr/share/cargo/registry")
	}
	for _, fast := range []bool{false, true} {
		b.Run(map[bool]string{false: "full", true: "fast"}[fast], func(b *testing.B) {
			for b.Loop() {
				for _, f := range files {
					parse(f, fast)
				}
			}
		})
	}
}
