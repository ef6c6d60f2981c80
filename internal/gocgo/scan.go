package gocgo

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Bounds of the include scan of one package: header chain depth and distinct headers reached.
const (
	maxIncludeDepth = 40
	maxIncludeFiles = 20000
)

// scanner scans cgo packages; each file's #include lines are read once per Read.
type scanner struct {
	includes map[string][]includeLine
	fset     *token.FileSet
	// cgoEnv are the CGO_* environment flags the build saw (prepended to the package's, as
	// cmd/go/internal/work's (*Builder).CFlags does), with the setting's name for clues.
	cgoEnv Flags
}

func newScanner() *scanner {
	return &scanner{includes: map[string][]includeLine{}, fset: token.NewFileSet()}
}

// includeLine is one #include (or #import) directive.
type includeLine struct {
	name  string
	angle bool
	line  int // 1-based, in the file
}

// fileLists are a package's file lists as go list names them, with the kind each holds.
func fileLists(lp *listPackage) []struct {
	field string
	kind  FileKind
	files []string
} {
	return []struct {
		field string
		kind  FileKind
		files []string
	}{
		{"GoFiles", KindGo, lp.GoFiles}, {"CgoFiles", KindCgo, lp.CgoFiles}, {"CFiles", KindC, lp.CFiles},
		{"CXXFiles", KindC, lp.CXXFiles}, {"MFiles", KindC, lp.MFiles}, {"FFiles", KindC, lp.FFiles},
		{"SFiles", KindC, lp.SFiles}, {"SwigFiles", KindC, lp.SwigFiles}, {"SwigCXXFiles", KindC, lp.SwigCXXFiles},
		{"HFiles", KindHeader, lp.HFiles}, {"SysoFiles", KindSyso, lp.SysoFiles}, {"EmbedFiles", KindEmbed, lp.EmbedFiles},
	}
}

// scanPackage fills Declared (the files Go hashes), the search folders, and Discovered (headers reached
// through #include outside the declared files, libraries named by LDFLAGS).
func (sc *scanner) scanPackage(p *Package, lp *listPackage) {
	declared := map[string]bool{}
	for _, l := range fileLists(lp) {
		for _, f := range l.files {
			path := filepath.Join(p.Dir, f)
			in := Input{Path: path, Kind: l.kind, Watched: true,
				Clues: []Clue{{How: HowGoList, Detail: fmt.Sprintf("%s of %s (Go hashes its content)", l.field, p.ImportPath)}}}
			statInput(&in)
			p.Declared = append(p.Declared, in)
			declared[path] = true
		}
	}
	// Header search order of a cgo compile (exec.go, GccCmd(p.Dir, …) then CFlags): -I <package
	// folder> first, then CGO_CPPFLAGS, the package's CPPFLAGS, CGO_CFLAGS/CXXFLAGS, the package's
	// CFLAGS/CXXFLAGS, then -I <objdir> (generated files only, not followed).
	var words []string
	words = append(words, sc.cgoEnv.CPPFLAGS...)
	words = append(words, p.Flags.CPPFLAGS...)
	words = append(words, sc.cgoEnv.CFLAGS...)
	words = append(words, p.Flags.CFLAGS...)
	words = append(words, sc.cgoEnv.CXXFLAGS...)
	words = append(words, p.Flags.CXXFLAGS...)
	sp := parseSearchFlags(words, p.Dir)
	sp.dirs = append([]string{p.Dir}, sp.dirs...)
	p.IncludeDirs = sp.all()
	for _, d := range sp.all() {
		if st, err := os.Stat(d); err != nil {
			p.Problems = append(p.Problems, fmt.Sprintf("include folder %s: %v", d, err))
		} else if !st.IsDir() {
			p.Problems = append(p.Problems, fmt.Sprintf("include folder %s is not a folder", d))
		}
	}
	if len(p.Flags.PkgConfig) > 0 {
		p.Problems = append(p.Problems, fmt.Sprintf("#cgo pkg-config: %s: the flags pkg-config adds are not read (pkg-config is not run)", strings.Join(p.Flags.PkgConfig, " ")))
	}

	// Roots of the scan: the cgo preambles and the package's C-family files and headers.
	type root struct {
		path  string
		lines []includeLine
	}
	var roots []root
	for _, f := range lp.CgoFiles {
		path := filepath.Join(p.Dir, f)
		lines, err := sc.preambleIncludes(path)
		if err != nil {
			p.Problems = append(p.Problems, err.Error())
			continue
		}
		roots = append(roots, root{path, lines})
	}
	for _, l := range [][]string{lp.CFiles, lp.CXXFiles, lp.MFiles, lp.HFiles, lp.SFiles} {
		for _, f := range l {
			path := filepath.Join(p.Dir, f)
			roots = append(roots, root{path, sc.fileIncludes(path)})
		}
	}
	found := map[string]*Input{}
	var order []string
	unresolved := map[string]bool{}
	seen := map[string]bool{}
	var walk func(from string, lines []includeLine, depth int)
	walk = func(from string, lines []includeLine, depth int) {
		if depth > maxIncludeDepth || len(seen) > maxIncludeFiles {
			return
		}
		for _, inc := range lines {
			path, via := sp.resolve(inc, filepath.Dir(from))
			if path == "" {
				if !unresolved[inc.name] {
					unresolved[inc.name] = true
					p.Unresolved = append(p.Unresolved, fmt.Sprintf("#include %s at %s:%d (in no search folder: a system header, or missing)", quoted(inc), from, inc.line))
				}
				continue
			}
			if cargo.IsSystemHeader(path) {
				continue
			}
			if !declared[path] {
				in := found[path]
				if in == nil {
					in = &Input{Path: path, Kind: KindHeader}
					statInput(in)
					found[path] = in
					order = append(order, path)
				}
				if len(in.Clues) < 4 {
					in.Clues = append(in.Clues, Clue{How: HowIncludeScan, Detail: fmt.Sprintf("#include %s at %s:%d through %s", quoted(inc), from, inc.line, via)})
				}
			}
			if !seen[path] {
				seen[path] = true
				walk(path, sc.fileIncludes(path), depth+1)
			}
		}
	}
	for _, r := range roots {
		seen[r.path] = true
	}
	for _, r := range roots {
		walk(r.path, r.lines, 0)
	}
	if len(seen) > maxIncludeFiles {
		p.Problems = append(p.Problems, fmt.Sprintf("include scan stopped after %d headers", maxIncludeFiles))
	}
	for _, path := range order {
		p.Discovered = append(p.Discovered, *found[path])
	}
	p.LibDirs, p.Discovered, p.Unresolved = resolveLibs(p, sc.cgoEnv.LDFLAGS, p.Discovered, p.Unresolved)
}

func quoted(inc includeLine) string {
	if inc.angle {
		return "<" + inc.name + ">"
	}
	return `"` + inc.name + `"`
}

// statInput fills size and mtime (nanoseconds), or Err.
func statInput(in *Input) {
	st, err := os.Stat(in.Path)
	if err != nil {
		in.Err = err.Error()
		return
	}
	in.Size, in.MTimeNS = st.Size(), st.ModTime().UnixNano()
}

// fileIncludes returns a C file's #include lines (nil when it cannot be read).
func (sc *scanner) fileIncludes(path string) []includeLine {
	if lines, ok := sc.includes[path]; ok {
		return lines
	}
	data, err := safeio.ReadFile(path, safeio.MaxRecord)
	var lines []includeLine
	if err == nil {
		lines = parseIncludes(data, 0)
	}
	sc.includes[path] = lines
	return lines
}

// preambleIncludes returns the #include lines of a cgo file's preamble: the comment right before
// `import "C"` (cmd/cgo's rule: the import's own doc comment, or its declaration's when not grouped).
// Line numbers are those of the .go file.
func (sc *scanner) preambleIncludes(path string) ([]includeLine, error) {
	data, err := safeio.ReadFile(path, safeio.MaxRecord)
	if err != nil {
		return nil, fmt.Errorf("cgo file %s: %w", path, err)
	}
	f, err := parser.ParseFile(sc.fset, path, data, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("cgo file %s does not parse: %w", path, err)
	}
	var out []includeLine
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		for _, s := range gd.Specs {
			is := s.(*ast.ImportSpec)
			if is.Path.Value != `"C"` {
				continue
			}
			doc := is.Doc
			if doc == nil && !gd.Lparen.IsValid() {
				doc = gd.Doc
			}
			if doc == nil {
				continue
			}
			for _, c := range doc.List {
				start := sc.fset.Position(c.Pos())
				text := c.Text
				if strings.HasPrefix(text, "//") {
					text = text[2:]
				} else {
					text = strings.TrimSuffix(strings.TrimPrefix(text, "/*"), "*/")
				}
				out = append(out, parseIncludes([]byte(text), start.Line-1)...)
			}
		}
	}
	return out, nil
}

// parseIncludes lists the #include and #import directives of C text; comments are skipped and
// continued lines joined. Directives inside #if blocks are listed too (the scan does not evaluate
// macros, so it may name a header a compile skipped). lineBase is added to line numbers.
// (internal/cargo/include.go has a scanner with conditional tracking; to be shared.)
func parseIncludes(data []byte, lineBase int) []includeLine {
	var out []includeLine
	inComment := false
	lines := bytes.Split(data, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		first := i
		text := string(lines[i])
		for strings.HasSuffix(text, "\\") && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, "\\") + string(lines[i])
		}
		text = strings.TrimSpace(stripComments(text, &inComment))
		if !strings.HasPrefix(text, "#") {
			continue
		}
		t := strings.TrimSpace(text[1:])
		var rest string
		switch {
		case strings.HasPrefix(t, "include"):
			rest = strings.TrimSpace(t[len("include"):])
		case strings.HasPrefix(t, "import"):
			rest = strings.TrimSpace(t[len("import"):])
		default:
			continue
		}
		if len(rest) < 2 {
			continue
		}
		switch rest[0] {
		case '"':
			if j := strings.IndexByte(rest[1:], '"'); j > 0 {
				out = append(out, includeLine{name: rest[1 : 1+j], line: lineBase + first + 1})
			}
		case '<':
			if j := strings.IndexByte(rest[1:], '>'); j > 0 {
				out = append(out, includeLine{name: rest[1 : 1+j], angle: true, line: lineBase + first + 1})
			}
		}
	}
	return out
}

func stripComments(s string, in *bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case *in:
			if strings.HasPrefix(s[i:], "*/") {
				*in = false
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			*in = true
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

// searchPath is a compile's header search folders (absolute, cleaned), by gcc's kinds.
type searchPath struct {
	quote, dirs, system, after []string
}

func (sp searchPath) all() []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range [][]string{sp.quote, sp.dirs, sp.system, sp.after} {
		for _, d := range l {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// parseSearchFlags reads -I, -iquote, -isystem, -idirafter (joined or separate) from compiler words;
// relative folders are taken from base (cgo runs the compiler in the package folder).
func parseSearchFlags(words []string, base string) searchPath {
	var sp searchPath
	abs := func(d string) string {
		if !filepath.IsAbs(d) {
			d = filepath.Join(base, d)
		}
		return filepath.Clean(d)
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		for _, k := range []struct {
			flag string
			dst  *[]string
		}{{"-iquote", &sp.quote}, {"-isystem", &sp.system}, {"-idirafter", &sp.after}, {"-I", &sp.dirs}} {
			if !strings.HasPrefix(w, k.flag) {
				continue
			}
			v := w[len(k.flag):]
			if v == "" && i+1 < len(words) {
				i++
				v = words[i]
			}
			if v != "" {
				*k.dst = append(*k.dst, abs(v))
			}
			break
		}
	}
	return sp
}

// resolve finds an #include the way gcc does: for "…", the including file's folder, then -iquote;
// then -I, -isystem, -idirafter. It returns the path and a phrase naming the folder that had it.
func (sp searchPath) resolve(inc includeLine, ownDir string) (path, via string) {
	try := func(dir, how string) bool {
		p := filepath.Join(dir, inc.name)
		if filepath.IsAbs(inc.name) {
			p = filepath.Clean(inc.name)
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			path, via = p, how
			return true
		}
		return false
	}
	if filepath.IsAbs(inc.name) {
		try("", "its absolute path")
		return
	}
	if !inc.angle {
		if try(ownDir, "the including file's folder") {
			return
		}
		for _, d := range sp.quote {
			if try(d, "-iquote "+d) {
				return
			}
		}
	}
	for _, l := range []struct {
		flag string
		dirs []string
	}{{"-I", sp.dirs}, {"-isystem", sp.system}, {"-idirafter", sp.after}} {
		for _, d := range l.dirs {
			if try(d, l.flag+" "+d) {
				return
			}
		}
	}
	return "", ""
}
