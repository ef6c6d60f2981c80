// Package cinclude reads the #include lines of C, C++, Objective-C and CUDA files and resolves them
// the way GCC searches its header folders. It is the one include scanner of the Cargo, Ninja and Go
// cgo readers (internal/cargo/include.go, internal/ninja/compile.go, internal/gocgo/scan.go): each
// keeps its own walk and wording, and shares the parse, the per-check cache of parsed files, the
// search path with its option parser and resolution order, and the system-header test.
//
// What it does not do: evaluate conditions (a header inside #if 0 is listed, marked Cond), expand
// function-like macros, or search the compiler's built-in folders (their headers are system headers,
// never reported). A computed include (#include MACRO) is followed through a Walk, which knows the
// object-like macros naming a header that the compile's project headers define (walk.go). Sources: GCC 12's manual, "Search Path" and "Directory Options"
// (cpp.texi, invoke.texi), checked here against gcc 12's own choice in the tests.
package cinclude

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"

	"github.com/stalecheck/stalecheck/internal/fsrec"
)

// Include is one #include or #import directive of a file.
type Include struct {
	// Name is the header as written between the quotes or angle brackets.
	Name string
	// Angle is true for #include <…>, false for #include "…".
	Angle bool
	// Line is the 1-based line of the directive's first physical line (before continued lines are
	// joined), counted from the start of the parsed text.
	Line int
	// Cond is true when the directive lies inside an #if/#ifdef/#ifndef block other than the file's
	// include guard: whether the compiler read it depends on macros the scan does not evaluate.
	Cond bool
	// Macro is the macro a computed include (#include MACRO) names; Name is then what a Walk expanded
	// it to ("" in the parse).
	Macro string
}

// A Define is an object-like macro whose body may name a header: "x.h", <x.h>, or another macro's
// name (#define IMPL "impl.h"). Other macros are not kept.
type Define struct {
	Name, Body string
	// Cond: the definition lies inside a conditional block (see Include.Cond).
	Cond bool
}

// parsed is what one file's parse keeps: its #include lines, its computed includes and the macros
// that may name a header.
type parsed struct {
	includes []Include
	computed []Include
	defines  []Define
}

// Text is the directive's operand as written, with what a computed include expanded to:
// "x.h", <x.h>, or LIB_IMPL (= "impl.h").
func (inc Include) Text() string {
	if inc.Macro != "" {
		return inc.Macro + " (= " + inc.Quoted() + ")"
	}
	return inc.Quoted()
}

// Quoted is the name as the directive writes it: "x.h" or <x.h>.
func (inc Include) Quoted() string {
	if inc.Angle {
		return "<" + inc.Name + ">"
	}
	return `"` + inc.Name + `"`
}

// Parse lists the #include and #import directives of C/C++/CUDA text. Lines ending in a backslash
// are joined; /* … */ and // comments are skipped (a commented-out #include is not one); #if, #ifdef
// and #ifndef blocks are tracked so that directives inside them are marked Cond, except a whole-file
// include guard (#ifndef X then #define X as the first two directives). Computed includes
// (#include MACRO) and #include_next are not listed.
func Parse(data []byte) []Include { return parse(data, true) }

// parse is Parse; fast lets skippable pass over lines without a directive (the tests compare both).
func parse(data []byte, fast bool) []Include { return parseAll(data, fast).includes }

// parseAll is parse, with the computed includes and the header-naming defines kept too.
func parseAll(data []byte, fast bool) parsed {
	var out []Include
	var res parsed
	type frame struct{ guard bool }
	var stack []frame
	inComment := false
	directives := 0 // directives seen so far (to recognise an include guard)
	guardMacro := ""
	lines := bytes.Split(data, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		first := i
		if fast && skippable(lines[i], &inComment) {
			continue
		}
		text := string(lines[i])
		// Join continued lines.
		for strings.HasSuffix(text, "\\") && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, "\\") + string(lines[i])
		}
		text = StripComments(text, &inComment)
		t := strings.TrimSpace(text)
		if !strings.HasPrefix(t, "#") {
			continue
		}
		t = strings.TrimSpace(t[1:])
		word, rest := t, ""
		if j := strings.IndexAny(t, " \t<\"("); j >= 0 {
			word, rest = t[:j], strings.TrimSpace(t[j:])
		}
		directives++
		conditional := func() bool {
			for _, f := range stack {
				if !f.guard {
					return true
				}
			}
			return false
		}
		switch word {
		case "if", "ifdef", "ifndef":
			g := word == "ifndef" && directives == 1 && len(stack) == 0
			if g {
				guardMacro = strings.Fields(rest + " x")[0]
			}
			stack = append(stack, frame{guard: g})
		case "define":
			// The guard holds only when its #define follows the #ifndef at once.
			if directives == 2 && len(stack) == 1 && stack[0].guard {
				if f := strings.Fields(rest + " x"); f[0] != guardMacro {
					stack[0].guard = false
				}
			}
			if d, ok := headerDefine(rest); ok {
				d.Cond = conditional()
				res.defines = append(res.defines, d)
			}
		case "elif", "else":
			if len(stack) > 0 {
				stack[len(stack)-1].guard = false
			}
		case "endif":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case "include", "import":
			if len(stack) == 1 && stack[0].guard && directives == 2 {
				stack[0].guard = false // #ifndef X then #include: not a guard
			}
			if len(rest) < 2 {
				continue
			}
			var name string
			angle := false
			switch rest[0] {
			case '"':
				if j := strings.IndexByte(rest[1:], '"'); j > 0 {
					name = rest[1 : 1+j]
				}
			case '<':
				if j := strings.IndexByte(rest[1:], '>'); j > 0 {
					name, angle = rest[1:1+j], true
				}
			}
			if name != "" {
				out = append(out, Include{Name: name, Angle: angle, Line: first + 1, Cond: conditional()})
			} else if m := identifier(rest); m != "" {
				res.computed = append(res.computed, Include{Macro: m, Line: first + 1, Cond: conditional()})
			}
		}
	}
	res.includes = out
	return res
}

// headerDefine reads the rest of a #define line: an object-like macro whose body is a header name
// form or one identifier.
func headerDefine(rest string) (Define, bool) {
	name := identifier(rest)
	if name == "" || len(rest) > len(name) && rest[len(name)] == '(' {
		return Define{}, false // no name, or a function-like macro
	}
	body := strings.TrimSpace(rest[len(name):])
	switch {
	case len(body) >= 3 && body[0] == '"' && strings.IndexByte(body[1:], '"') == len(body)-2,
		len(body) >= 3 && body[0] == '<' && strings.IndexByte(body, '>') == len(body)-1,
		body != "" && identifier(body) == body:
		return Define{Name: name, Body: body}, true
	}
	return Define{}, false
}

// identifier is the C identifier s starts with ("" when none).
func identifier(s string) string {
	for i, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return s[:i]
	}
	return s
}

// skippable reports, without allocating, whether a physical line that continues no other holds no
// directive, the way the full path (join continued lines, StripComments, TrimSpace, look for '#')
// would decide; it then also carries the block-comment state past the line. Lines it is not sure of
// (a continued line, a '#' after a comment, a non-ASCII first character) go the full way.
func skippable(line []byte, inBlock *bool) bool {
	if len(line) > 0 && line[len(line)-1] == '\\' {
		return false
	}
	if *inBlock {
		// Wholly inside the comment: StripComments gives "" and the block stays open.
		return bytes.Index(line, []byte("*/")) < 0
	}
	if bytes.IndexByte(line, '/') >= 0 {
		return false
	}
	for _, c := range line {
		switch c {
		case ' ', '\t', '\r', '\v', '\f':
			continue
		case '#':
			return false
		}
		// strings.TrimSpace also trims Unicode spaces (U+0085, U+00A0): let the full path decide.
		return c < 0x80
	}
	return true // blank
}

// StripComments removes /* … */ and // comments from one line; *inBlock carries an open block
// comment from line to line (true on return when the line leaves one open). A block comment becomes
// one blank, as the preprocessor makes it. String literals are not recognised.
func StripComments(s string, inBlock *bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case *inBlock:
			if strings.HasPrefix(s[i:], "*/") {
				*inBlock = false
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			*inBlock = true
			i++
			b.WriteByte(' ')
		case strings.HasPrefix(s[i:], "//"):
			return b.String()
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// Cache holds the parsed #include lines of each file for one check, so that a header many compiles
// reach is read and parsed once. It is safe for concurrent use (the Cargo reader scans build-script
// runs on several goroutines through cargo.Parallel; the Ninja reader reads edges in shares); two
// goroutines asking for the same unread file at once may both parse it, with the same result.
type Cache struct {
	mu    sync.Mutex
	files map[string]*parsed
	stats map[string]bool // IsFile's answers
	store *Store          // parses kept between checks (nil: none)
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{files: map[string]*parsed{}, stats: map[string]bool{}} }

// IsFile reports whether p is a regular file (stat follows symlinks), stat'ing each path once for the
// life of the cache (one check: the folders are read as one snapshot).
func (c *Cache) IsFile(p string) bool {
	c.mu.Lock()
	ok, known := c.stats[p]
	c.mu.Unlock()
	if known {
		return ok
	}
	ok = isFile(p)
	c.mu.Lock()
	c.stats[p] = ok
	c.mu.Unlock()
	return ok
}

// Includes returns the #include lines of the file at path (as Parse lists them); nil when it cannot
// be read: not a regular file, missing, or over safeio.MaxRecord (64 MiB). The answer, nil included,
// is kept for the life of the cache.
func (c *Cache) Includes(path string) []Include { return c.file(path).includes }

// file is the parse of the file at path, read once for the life of the cache (empty when unreadable).
func (c *Cache) file(path string) *parsed {
	c.mu.Lock()
	p, ok := c.files[path]
	c.mu.Unlock()
	if ok {
		return p
	}
	if c.store != nil {
		p = c.store.parse(path)
	} else {
		p = readParse(path)
	}
	c.mu.Lock()
	c.files[path] = p
	c.mu.Unlock()
	return p
}

// systemDirs are the folders whose headers are never reported: the C library's, the compiler's own
// and the usual toolkit locations. A search folder under one of them is not followed either.
var systemDirs = []string{"/usr/include", "/usr/local/include", "/usr/lib/gcc", "/usr/lib/gcc-cross",
	"/usr/lib/clang", "/usr/lib/llvm", "/usr/lib/cuda", "/usr/local/cuda", "/opt/cuda", "/usr/lib/nvidia-cuda-toolkit",
	"/usr/share/gcc", "/usr/libexec/gcc"}

// IsSystemHeader reports whether an absolute, cleaned path lies in a system header folder (README
// "Rules": such headers are never reported). Versioned folders count too: /usr/lib/llvm-16,
// /usr/local/cuda-12.2.
func IsSystemHeader(p string) bool {
	for _, d := range systemDirs {
		// p is d, under it or a sibling named d-… (without making d+"/" for every header).
		if strings.HasPrefix(p, d) && (len(p) == len(d) || p[len(d)] == '/' || p[len(d)] == '-') {
			return true
		}
	}
	return false
}

// SearchPath is a compile's header search folders by GCC's kinds, each list in command-line order;
// the folders are absolute and cleaned when the command's working folder was known.
type SearchPath struct {
	// Quote are -iquote folders (searched for #include "…" only), Dirs -I folders (nvcc's
	// --include-path too), System -isystem folders (nvcc's --system-include too), After -idirafter
	// folders (searched last).
	Quote, Dirs, System, After []string
}

// Kind is the GCC option kind of a search-folder option: "-iquote", "-I", "-isystem" or
// "-idirafter" (nvcc's --include-path is "-I", --system-include "-isystem"); "" for any other word.
func Kind(flag string) string {
	switch flag {
	case "-iquote", "-I", "-isystem", "-idirafter":
		return flag
	case "--include-path":
		return "-I"
	case "--system-include":
		return "-isystem"
	}
	return ""
}

// searchFlags are the options Flag reads, longest first where one is a prefix of another.
var searchFlags = []string{"-iquote", "-isystem", "-idirafter", "--include-path", "--system-include", "-I"}

// Flag reads the search-folder option at words[i], if it is one: -I, -iquote, -isystem, -idirafter,
// nvcc's --include-path and --system-include, each either with its folder in the next word or joined
// (-Ifoo, -isystem=foo: a leading '=' is dropped). "-I-" (GCC's obsolete quote/angle split) is not
// one. A relative folder is taken against base (the compiler's working folder; kept relative, only
// cleaned, when base is ""). flag is the option as written (without its value); dir is "" when the
// option ends the words or its next word is empty; next is the index of the last word the option used.
func Flag(words []string, i int, base string) (flag, dir string, next int, ok bool) {
	w := words[i]
	for _, f := range searchFlags {
		if !strings.HasPrefix(w, f) || w == "-I-" {
			continue
		}
		if w == f {
			if i+1 < len(words) && words[i+1] != "" {
				return f, abs(base, words[i+1]), i + 1, true
			}
			return f, "", min(i+1, len(words)-1), true
		}
		return f, abs(base, strings.TrimPrefix(w[len(f):], "=")), i, true
	}
	return "", "", i, false
}

// Add appends dir to the list of the option kind flag names (see Kind); other flags are ignored.
func (sp *SearchPath) Add(flag, dir string) {
	switch Kind(flag) {
	case "-iquote":
		sp.Quote = append(sp.Quote, dir)
	case "-I":
		sp.Dirs = append(sp.Dirs, dir)
	case "-isystem":
		sp.System = append(sp.System, dir)
	case "-idirafter":
		sp.After = append(sp.After, dir)
	}
}

// ParseFlag reads the search-folder option at words[i] into sp (see Flag). It returns the index of
// the last word the option used and whether words[i] was one; an option with no folder adds nothing.
func (sp *SearchPath) ParseFlag(words []string, i int, base string) (next int, ok bool) {
	flag, dir, next, ok := Flag(words, i, base)
	if ok && dir != "" {
		sp.Add(flag, dir)
	}
	return next, ok
}

// ParseSearchFlags reads every search-folder option of a compiler's words (see Flag); other words
// are skipped.
func ParseSearchFlags(words []string, base string) SearchPath {
	var sp SearchPath
	for i := 0; i < len(words); i++ {
		i, _ = sp.ParseFlag(words, i, base)
	}
	return sp
}

// All lists every folder once, in search order (quote, -I, -isystem, -idirafter).
func (sp SearchPath) All() []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range [][]string{sp.Quote, sp.Dirs, sp.System, sp.After} {
		for _, d := range l {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// Resolve finds the file an #include names the way GCC searches: for "…" the including file's own
// folder ownDir, then the -iquote folders; then, for both forms, the -I, -isystem and -idirafter
// folders, each kind in command-line order. The compiler's built-in folders are not searched. With
// skipSystem, folders for which IsSystemHeader holds are passed over (the search goes on past them).
// An absolute name is taken as it is. found is the path ("" when no folder holds a regular file of
// that name); flag is the kind of the folder dir that held it (see Kind), "" for ownDir and
// "absolute" for an absolute name (dir "" then).
func (sp SearchPath) Resolve(inc Include, ownDir string, skipSystem bool) (found, flag, dir string) {
	return sp.resolve(inc, ownDir, skipSystem, isFile)
}

// ResolveIn is Resolve with each candidate's stat answered through c (IsFile), so that a check which
// resolves the same headers for many compiles stats each candidate once.
func (sp SearchPath) ResolveIn(c *Cache, inc Include, ownDir string, skipSystem bool) (found, flag, dir string) {
	return sp.resolve(inc, ownDir, skipSystem, c.IsFile)
}

func (sp SearchPath) resolve(inc Include, ownDir string, skipSystem bool, isFile func(string) bool) (found, flag, dir string) {
	if filepath.IsAbs(inc.Name) {
		if isFile(inc.Name) {
			return filepath.Clean(inc.Name), "absolute", ""
		}
		return "", "", ""
	}
	in := func(d string) bool {
		return d != "" && !(skipSystem && IsSystemHeader(d)) && isFile(filepath.Join(d, inc.Name))
	}
	if !inc.Angle {
		if in(ownDir) {
			return filepath.Join(ownDir, inc.Name), "", ownDir
		}
		for _, d := range sp.Quote {
			if in(d) {
				return filepath.Join(d, inc.Name), "-iquote", d
			}
		}
	}
	for _, group := range []struct {
		flag string
		dirs []string
	}{{"-I", sp.Dirs}, {"-isystem", sp.System}, {"-idirafter", sp.After}} {
		for _, d := range group.dirs {
			if in(d) {
				return filepath.Join(d, inc.Name), group.flag, d
			}
		}
	}
	return "", "", ""
}

// isFile reports whether p is a regular file (stat follows symlinks; a FIFO or folder is not one).
func isFile(p string) bool {
	st, err := fsrec.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// abs is p taken against the folder base (cleaned; p as it is, cleaned, when absolute or base is "").
func abs(base, p string) string {
	if filepath.IsAbs(p) || base == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// ReadsSource reports whether a compiler flag makes a run that reads a source file with its headers and
// stops before linking: -c (an object), -E (the preprocessed source: a generator that runs the C
// preprocessor over a template), -S (assembly), and nvcc's --ptx, --cubin and --fatbin. Such a run's
// #include lines are inputs of what it writes.
func ReadsSource(flag string) bool {
	switch flag {
	case "-c", "/c", "--compile", "-dc", "--device-c", "-E", "/E", "/P", "--preprocess", "-S", "-ptx", "--ptx", "-cubin", "--cubin", "-fatbin", "--fatbin":
		return true
	}
	return false
}
