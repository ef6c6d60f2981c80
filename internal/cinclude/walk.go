package cinclude

import (
	"path/filepath"
	"sort"
	"strings"
)

// A Walk is one compile's view of a Cache: the #include lines of each file it reaches, with its computed
// includes (#include MACRO) expanded. A computed include names a macro that some header defines
// (#define LIB_IMPL "impl.h" in lib.h, then #include LIB_IMPL in a.c), so its file is a real input of
// the compile that no literal #include names: without it, an edit of impl.h in a build whose records
// name no header is invisible.
//
// The preprocessor expands the macro with the definitions in force at that line. A Walk approximates
// that with every definition of the macro in the files the compile reaches (from the command's -D
// options, then its sources, through literal and expanded includes, system folders passed over): one
// definition names one header; several (an #ifdef choosing between two) name each, marked Cond, since
// the scan cannot say which the compiler took. Function-like macros and token pasting are not expanded.
type Walk struct {
	cache  *Cache
	sp     SearchPath
	roots  []string
	macros map[string][]Define
	found  bool // the reachable files' definitions have been gathered
}

// NewWalk returns a walk of the compile of roots (the source, and any -include files) with search path
// sp; defines are the command's -D options as NAME=BODY or NAME words (see CommandDefines).
func (c *Cache) NewWalk(sp SearchPath, defines []Define, roots ...string) *Walk {
	w := &Walk{cache: c, sp: sp, roots: roots, macros: map[string][]Define{}}
	for _, d := range defines {
		w.macros[d.Name] = append(w.macros[d.Name], d)
	}
	return w
}

// Includes lists the file's #include lines, literal ones as Cache.Includes does, and each computed one
// as the headers its macro can name (Macro set, Cond when more than one or a definition is conditional),
// in line order. A computed include whose macro no reached file defines is left out.
func (w *Walk) Includes(path string) []Include {
	p := w.cache.file(path)
	if len(p.computed) == 0 {
		return p.includes
	}
	w.gather()
	out := append([]Include(nil), p.includes...)
	for _, ci := range p.computed {
		out = append(out, w.expand(ci)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// expand is the header names a computed include's macro can reach, following a macro whose body is
// another macro's name (at most 8 steps, so a cycle ends).
func (w *Walk) expand(ci Include) []Include {
	var out []Include
	seen := map[string]bool{}
	var follow func(name string, cond bool, depth int)
	follow = func(name string, cond bool, depth int) {
		if depth > 8 {
			return
		}
		for _, d := range w.macros[name] {
			c := cond || d.Cond
			switch {
			case strings.HasPrefix(d.Body, `"`):
				n := strings.Trim(d.Body, `"`)
				if !seen[`"`+n] {
					seen[`"`+n] = true
					out = append(out, Include{Name: n, Line: ci.Line, Cond: c, Macro: ci.Macro})
				}
			case strings.HasPrefix(d.Body, "<"):
				n := strings.TrimSuffix(strings.TrimPrefix(d.Body, "<"), ">")
				if !seen["<"+n] {
					seen["<"+n] = true
					out = append(out, Include{Name: n, Angle: true, Line: ci.Line, Cond: c, Macro: ci.Macro})
				}
			default:
				follow(d.Body, c, depth+1)
			}
		}
	}
	follow(ci.Macro, ci.Cond, 0)
	if len(out) > 1 {
		for i := range out {
			out[i].Cond = true
		}
	}
	return out
}

// gather reads, once, the definitions of every project file the compile reaches. A computed include is
// expanded with the definitions met so far; the files with one are expanded again once the queue is
// empty, since a definition may sit in a header read later in breadth-first order.
func (w *Walk) gather() {
	if w.found {
		return
	}
	w.found = true
	seen := map[string]bool{}
	var queue, withComputed []string
	add := func(inc Include, from string) {
		found, _, _ := w.sp.ResolveIn(w.cache, inc, filepath.Dir(from), true)
		if found == "" || IsSystemHeader(found) {
			return
		}
		if found = filepath.Clean(found); !seen[found] {
			seen[found] = true
			queue = append(queue, found)
		}
	}
	for _, r := range w.roots {
		if r = filepath.Clean(r); !seen[r] {
			seen[r] = true
			queue = append(queue, r)
		}
	}
	for round := 0; round < 4 && len(queue) > 0; round++ {
		for len(queue) > 0 && len(seen) < 20000 {
			f := queue[0]
			queue = queue[1:]
			p := w.cache.file(f)
			for _, d := range p.defines {
				w.macros[d.Name] = append(w.macros[d.Name], d)
			}
			if len(p.computed) > 0 {
				withComputed = append(withComputed, f)
			}
			for _, inc := range p.includes {
				add(inc, f)
			}
		}
		for _, f := range withComputed {
			for _, ci := range w.cache.file(f).computed {
				for _, inc := range w.expand(ci) {
					add(inc, f)
				}
			}
		}
	}
}

// CommandDefines reads the -D options of a compiler's words (-DNAME=BODY, -D NAME=BODY, -DNAME) as
// definitions; only those whose body may name a header are kept.
func CommandDefines(words []string) []Define {
	var out []Define
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-D") {
			continue
		}
		def := w[2:]
		if def == "" && i+1 < len(words) {
			i++
			def = words[i]
		}
		name, body, ok := strings.Cut(def, "=")
		if !ok {
			continue
		}
		if d, ok := headerDefine(name + " " + body); ok {
			out = append(out, d)
		}
	}
	return out
}
