package gocgo

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/cinclude"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
	"github.com/stalecheck/stalecheck/internal/subproc"
)

// Bounds of the include scan of one package: header chain depth and distinct headers reached.
const (
	maxIncludeDepth = 40
	maxIncludeFiles = 20000
)

// scanner scans cgo packages; each file's #include lines are read once per Read.
type scanner struct {
	includes *cinclude.Cache
	fset     *token.FileSet
	// cgoEnv are the CGO_* environment flags the build saw (prepended to the package's, as
	// cmd/go/internal/work's (*Builder).CFlags does), with the setting's name for clues.
	cgoEnv Flags
}

func newScanner() *scanner {
	return &scanner{includes: cinclude.NewCache(), fset: token.NewFileSet()}
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

// declareFiles fills Declared: the files Go hashes, stat'ed; it returns their paths.
func declareFiles(p *Package, lp *listPackage) map[string]bool {
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
	return declared
}

// scanPackage fills Declared (the files Go hashes), the search folders, and Discovered (headers reached
// through #include outside the declared files, libraries named by LDFLAGS).
func (sc *scanner) scanPackage(p *Package, lp *listPackage) {
	declared := declareFiles(p, lp)
	// Header search order of a cgo compile (exec.go, GccCmd(p.Dir, …) then CFlags): -I <package
	// folder> first, then CGO_CPPFLAGS, the package's CPPFLAGS, CGO_CFLAGS/CXXFLAGS, the package's
	// CFLAGS/CXXFLAGS, then -I <objdir> (generated files only, not followed).
	var words []string
	words = append(words, sc.cgoEnv.CPPFLAGS...)
	words = append(words, p.Flags.CPPFLAGS...)
	if len(p.Flags.PkgConfig) > 0 {
		// go build appends what `pkg-config --cflags` prints to the cgo CPPFLAGS (cmd/go's cgo step).
		pc, err := pkgConfigCflags(p.Dir, p.Flags.PkgConfig)
		if err != nil {
			p.Problems = append(p.Problems, fmt.Sprintf("#cgo pkg-config: %s: %v: the include folders it adds are not known", strings.Join(p.Flags.PkgConfig, " "), err))
		}
		words = append(words, pc...)
	}
	words = append(words, sc.cgoEnv.CFLAGS...)
	words = append(words, p.Flags.CFLAGS...)
	words = append(words, sc.cgoEnv.CXXFLAGS...)
	words = append(words, p.Flags.CXXFLAGS...)
	sp := cinclude.ParseSearchFlags(words, p.Dir)
	sp.Dirs = append([]string{p.Dir}, sp.Dirs...)
	p.IncludeDirs = sp.All()
	for _, d := range sp.All() {
		if st, err := fsrec.Stat(d); err != nil {
			p.Problems = append(p.Problems, fmt.Sprintf("include folder %s: %v", d, err))
		} else if !st.IsDir() {
			p.Problems = append(p.Problems, fmt.Sprintf("include folder %s is not a folder", d))
		}
	}

	// Roots of the scan: the cgo preambles and the package's C-family files and headers.
	type root struct {
		path  string
		lines []cinclude.Include
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
			roots = append(roots, root{path, nil})
		}
	}
	// One walk for the package's compiles: a computed #include in its C files is expanded with the
	// definitions its sources and the headers they reach hold (cinclude.Walk).
	var walkRoots []string
	for _, r := range roots {
		if strings.HasSuffix(r.path, ".go") {
			for _, inc := range r.lines {
				if path, _ := resolve(sp, inc, filepath.Dir(r.path)); path != "" {
					walkRoots = append(walkRoots, path)
				}
			}
			continue
		}
		walkRoots = append(walkRoots, r.path)
	}
	cwalk := sc.includes.NewWalk(sp, cinclude.CommandDefines(words), walkRoots...)
	found := map[string]*Input{}
	var order []string
	unresolved := map[string]bool{}
	seen := map[string]bool{}
	var walk func(from string, lines []cinclude.Include, depth int)
	walk = func(from string, lines []cinclude.Include, depth int) {
		if depth > maxIncludeDepth || len(seen) > maxIncludeFiles {
			return
		}
		for _, inc := range lines {
			path, via := resolve(sp, inc, filepath.Dir(from))
			if path == "" {
				if !unresolved[inc.Name] {
					unresolved[inc.Name] = true
					p.Unresolved = append(p.Unresolved, fmt.Sprintf("#include %s at %s:%d (in no search folder: a system header, or missing)", inc.Text(), from, inc.Line))
				}
				continue
			}
			if cinclude.IsSystemHeader(path) {
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
					in.Clues = append(in.Clues, Clue{How: HowIncludeScan, Detail: fmt.Sprintf("#include %s at %s:%d through %s", inc.Text(), from, inc.Line, via)})
				}
			}
			if !seen[path] {
				seen[path] = true
				walk(path, cwalk.Includes(path), depth+1)
			}
		}
	}
	for _, r := range roots {
		seen[r.path] = true
	}
	for _, r := range roots {
		if r.lines == nil && !strings.HasSuffix(r.path, ".go") {
			r.lines = cwalk.Includes(r.path)
		}
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

// resolve finds an #include in cgo's search path (cinclude.SearchPath.Resolve, system folders
// searched too: a header found there is a system header, not an unresolved one) and returns the path
// and a phrase naming the folder that had it.
func resolve(sp cinclude.SearchPath, inc cinclude.Include, ownDir string) (path, via string) {
	path, flag, dir := sp.Resolve(inc, ownDir, false)
	switch {
	case path == "":
		return "", ""
	case flag == "absolute":
		return path, "its absolute path"
	case flag == "":
		return path, "the including file's folder"
	}
	return path, flag + " " + dir
}

// statInput fills size and mtime (nanoseconds), or Err.
func statInput(in *Input) {
	st, err := fsrec.Stat(in.Path)
	if err != nil {
		in.Err = err.Error()
		return
	}
	in.Size, in.MTimeNS = st.Size(), st.ModTime().UnixNano()
}

// preambleIncludes returns the #include lines of a cgo file's preamble: the comment right before
// `import "C"` (cmd/cgo's rule: the import's own doc comment, or its declaration's when not grouped).
// Line numbers are those of the .go file.
func (sc *scanner) preambleIncludes(path string) ([]cinclude.Include, error) {
	data, err := safeio.ReadFile(path, safeio.MaxRecord)
	if err != nil {
		return nil, fmt.Errorf("cgo file %s: %w", path, err)
	}
	f, err := parser.ParseFile(sc.fset, path, data, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("cgo file %s does not parse: %w", path, err)
	}
	var out []cinclude.Include
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
				for _, inc := range cinclude.Parse([]byte(text)) {
					inc.Line += start.Line - 1
					out = append(out, inc)
				}
			}
		}
	}
	return out, nil
}

// pkgConfigCflags runs `pkg-config --cflags -- NAMES` as go build does (the program $PKG_CONFIG names,
// else pkg-config; the environment's PKG_CONFIG_PATH), in dir, and returns its words.
func pkgConfigCflags(dir string, names []string) ([]string, error) {
	prog := os.Getenv("PKG_CONFIG")
	if prog == "" {
		prog = "pkg-config"
	}
	fsrec.Uncacheable("ran pkg-config for " + dir) // it reads .pc files wherever its path points
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := subproc.Query(exec.CommandContext(ctx, prog, append([]string{"--cflags", "--"}, names...)...))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("%s: %v: %s", prog, err, firstLine(msg))
		}
		return nil, fmt.Errorf("%s: %v", prog, err)
	}
	return splitQuoted(strings.TrimSpace(string(out))), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
