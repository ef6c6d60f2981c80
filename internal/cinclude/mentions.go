package cinclude

import (
	"path/filepath"
	"sync"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// defaultSystemDirs are the folders a compiler searches after the command's own, for the mention scan:
// a macro given with -D may change what a system header declares (NDEBUG in <assert.h>), so the
// headers a compile reaches there are read too. The compiler's own folders are found by their
// well-known places; one that is not found makes the scan uncertain.
var defaultSystemDirs = sync.OnceValue(func() []string {
	dirs := []string{"/usr/local/include"}
	for _, pat := range []string{"/usr/lib/gcc/*/*/include", "/usr/include/*-linux-gnu*"} {
		m, _ := filepath.Glob(pat)
		dirs = append(dirs, m...)
	}
	return append(dirs, "/usr/include")
})

// Mentions reports whether any of the macro names appears, as an identifier, in the compile's sources
// or in any file they reach through #include (project and system headers, computed includes expanded,
// conditional ones followed too). where is the first file that mentions one; certain is false when
// an unconditional #include could not be resolved or a file could not be read, so that a "no" cannot
// be trusted. #include_next is not followed (a system header's own chain; its mentions go unseen).
func (c *Cache) Mentions(sp SearchPath, defines []Define, names []string, sources ...string) (where string, certain bool) {
	full := sp
	full.After = append(append([]string(nil), sp.After...), defaultSystemDirs()...)
	w := c.NewWalk(sp, defines, sources...)
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	certain = true
	seen := map[string]bool{}
	var queue []string
	for _, s := range sources {
		if s = filepath.Clean(s); !seen[s] {
			seen[s] = true
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		if len(seen) > 20000 {
			return "", false
		}
		f := queue[0]
		queue = queue[1:]
		data, err := safeio.ReadFile(f, safeio.MaxRecord)
		if err != nil {
			return "", false
		}
		if mentions(data, want) {
			return f, true
		}
		if len(c.file(f).computed) > len(w.expandAll(f)) {
			certain = false // a computed include no definition resolves
		}
		for _, inc := range w.Includes(f) {
			p, _, _ := full.ResolveIn(c, inc, filepath.Dir(f), false)
			if p == "" {
				// The compile succeeded, so a conditional #include found nowhere lay in a branch it
				// did not take; an unconditional one means the search path here is not the compiler's.
				if !inc.Cond {
					certain = false
				}
				continue
			}
			if p = filepath.Clean(p); !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return "", certain
}

// expandAll is the computed includes of the file that some definition resolves (one per include).
func (w *Walk) expandAll(path string) []Include {
	w.gather()
	var out []Include
	for _, ci := range w.cache.file(path).computed {
		if e := w.expand(ci); len(e) > 0 {
			out = append(out, e[0])
		}
	}
	return out
}

// mentions reports whether data holds one of the names as a whole identifier (in code, a string or a
// comment alike: a mention anywhere counts, which errs on the side of "it may matter").
func mentions(data []byte, names map[string]bool) bool {
	for i := 0; i < len(data); {
		if !identByte(data[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(data) && identByte(data[j]) {
			j++
		}
		// A word starting with a digit is a number (1ULL, 0x1F), not an identifier.
		if c := data[i]; !(c >= '0' && c <= '9') && names[string(data[i:j])] {
			return true
		}
		i = j
	}
	return false
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
