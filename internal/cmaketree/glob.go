package cmaketree

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// A CMakeLists.txt that collects its sources with file(GLOB) or file(GLOB_RECURSE) and no
// CONFIGURE_DEPENDS is evaluated when CMake configures, not when the build runs: a source added to the
// folder later is compiled by nobody until CMake configures again, which nothing the build watches
// makes it do (CMake's own documentation advises against globbing sources for this reason). The program
// a fresh configure and build would make has the new file; the one on disk does not.
//
// AnnotateGlobs gives each step that has a CMakeLists.txt as an input (CMake's configure step: the Make
// reader's cmake-configure, Ninja's RERUN_CMAKE edge) the sources its globs match now that no step of
// the graph reads or makes: inputs with the graph.Glob clue, not watched, Via the CMakeLists.txt. One
// added after the configure step ran is newer than its reference: untracked-input-changed.

// globCall matches file(GLOB ...) and file(GLOB_RECURSE ...) up to the closing parenthesis.
var globCall = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)\bfile\s*\(\s*(GLOB|GLOB_RECURSE)\s+([^)]*)\)`) })

// sourceExt are the file kinds a glob of sources is for: what a compile reads on its command line.
var sourceExt = map[string]bool{".c": true, ".cc": true, ".cpp": true, ".cxx": true, ".c++": true, ".C": true, ".cu": true,
	".m": true, ".mm": true, ".s": true, ".S": true, ".asm": true, ".f": true, ".f90": true, ".F90": true}

// Glob is one file(GLOB...) call of a CMakeLists.txt.
type Glob struct {
	File     string   // the CMakeLists.txt
	Line     int      // its line
	Recurse  bool     // GLOB_RECURSE
	Patterns []string // absolute
	Text     string   // the call, for people
}

// Globs returns the file(GLOB) calls of the CMakeLists.txt at path that have no CONFIGURE_DEPENDS and
// whose patterns it can resolve (relative, or under ${CMAKE_CURRENT_SOURCE_DIR} or ${CMAKE_SOURCE_DIR}
// or ${PROJECT_SOURCE_DIR}, top the source tree's top folder); others are left out.
func Globs(path, text, top string) []Glob {
	dir := filepath.Dir(path)
	var out []Glob
	for _, m := range globCall().FindAllStringSubmatchIndex(text, -1) {
		args := splitArgs(text[m[4]:m[5]])
		if len(args) < 2 {
			continue
		}
		g := Glob{File: path, Line: 1 + strings.Count(text[:m[0]], "\n"), Recurse: strings.EqualFold(text[m[2]:m[3]], "GLOB_RECURSE"),
			Text: strings.Join(strings.Fields(text[m[0]:m[1]]), " ")}
		skip := false
		for i := 1; i < len(args); i++ { // args[0] is the variable
			a := args[i]
			switch a {
			case "CONFIGURE_DEPENDS":
				skip = true
			case "FOLLOW_SYMLINKS":
			case "LIST_DIRECTORIES", "RELATIVE":
				i++
			default:
				a = strings.NewReplacer("${CMAKE_CURRENT_SOURCE_DIR}", dir, "${CMAKE_CURRENT_LIST_DIR}", dir,
					"${CMAKE_SOURCE_DIR}", top, "${PROJECT_SOURCE_DIR}", top).Replace(a)
				if strings.Contains(a, "${") || strings.Contains(a, "$ENV{") {
					continue // a value only CMake knows
				}
				if !filepath.IsAbs(a) {
					a = filepath.Join(dir, a)
				}
				g.Patterns = append(g.Patterns, filepath.Clean(a))
			}
		}
		if !skip && len(g.Patterns) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// splitArgs splits CMake arguments at blanks, one quoted argument at a time; comments are dropped.
func splitArgs(s string) []string {
	var out []string
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t\r\n")
		switch {
		case s == "":
		case s[0] == '#':
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[i:]
			} else {
				s = ""
			}
		case s[0] == '"':
			j := strings.IndexByte(s[1:], '"')
			if j < 0 {
				return append(out, s[1:])
			}
			out = append(out, s[1:1+j])
			s = s[2+j:]
		default:
			j := strings.IndexAny(s, " \t\r\n")
			if j < 0 {
				j = len(s)
			}
			out = append(out, s[:j])
			s = s[j:]
		}
	}
	return out
}

// Match returns the regular files the glob matches now: each pattern's folder (the part before the
// first wildcard element), its name pattern on the files there, and with Recurse in every folder under it.
func (g Glob) Match() []string {
	var out []string
	for _, p := range g.Patterns {
		dir, pat := filepath.Dir(p), filepath.Base(p)
		if strings.ContainsAny(dir, "*?[") {
			continue
		}
		if !g.Recurse {
			ents, err := fsrec.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if ok, _ := filepath.Match(pat, e.Name()); ok && e.Type().IsRegular() {
					out = append(out, filepath.Join(dir, e.Name()))
				}
			}
			continue
		}
		n := 0
		fsrec.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if n++; n > 20000 {
				return filepath.SkipAll
			}
			if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if ok, _ := filepath.Match(pat, d.Name()); ok && d.Type().IsRegular() {
				out = append(out, path)
			}
			return nil
		})
	}
	return out
}

// AnnotateGlobs adds to each live step with a CMakeLists.txt input the sources its globs match that no
// step of g reads or makes (see the comment above Glob).
func AnnotateGlobs(g *graph.Graph) {
	var known map[string]bool
	for _, s := range g.Steps {
		if !s.Live() {
			continue
		}
		var lists []string
		for _, in := range s.Inputs {
			if filepath.Base(in.File.Path) == "CMakeLists.txt" && in.File.Exists {
				lists = append(lists, in.File.Path)
			}
		}
		if len(lists) == 0 {
			continue
		}
		top := lists[0]
		for _, l := range lists {
			if len(l) < len(top) {
				top = l
			}
		}
		top = filepath.Dir(top)
		if known == nil {
			known = map[string]bool{}
			for _, t := range g.Steps {
				for _, in := range t.Inputs {
					known[in.File.Path] = true
				}
				for _, o := range t.Outputs {
					known[o.Path] = true
				}
			}
		}
		for _, l := range lists {
			data, err := safeio.ReadFile(l, safeio.MaxRecord)
			if err != nil {
				continue
			}
			for _, gl := range Globs(l, string(data), top) {
				for _, p := range gl.Match() {
					if known[p] || !sourceExt[filepath.Ext(p)] {
						continue
					}
					fi, err := fsrec.Stat(p)
					if err != nil || !fi.Mode().IsRegular() {
						continue
					}
					known[p] = true
					s.Inputs = append(s.Inputs, &graph.Input{
						File: graph.FileInfo{Path: p, Size: fi.Size(), MTimeNS: fi.ModTime().UnixNano(), Exists: true},
						How:  []graph.How{graph.Glob}, Via: l,
						Detail: []string{fmt.Sprintf("matched by %s at %s:%d, which CMake evaluates only when it configures (no CONFIGURE_DEPENDS); no step of the build compiles it", gl.Text, l, gl.Line)}})
				}
			}
		}
	}
}
