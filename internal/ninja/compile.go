package ninja

import (
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cinclude"
)

// IncludeDir is one include search folder from a compile command.
type IncludeDir struct {
	// Path is absolute (resolved against the command's working folder).
	Path string
	// Flag is the option that named it: "-I", "-isystem", "-iquote", "--include-path".
	Flag string
}

// Compile is what an edge's command line says about one compile: the compiler, the source, the
// working folder, the include folders and whether it asks the compiler for a depfile.
type Compile struct {
	Compiler string
	// Source is the compiled file, absolute; Dir the working folder (the build folder, or a `cd`).
	Source, Dir string
	Includes    []IncludeDir
	// DepFlags are the options that make the compiler write a depfile or print includes
	// (-MD, -MMD, -MF, -M, -MM, -Wp,-MD, nvcc's --generate-dependencies-with-compile, cl's /showIncludes).
	DepFlags []string
	// Object is the -o argument, as written.
	Object string
}

// WritesDeps reports whether the command asks the compiler for dependency information.
func (c *Compile) WritesDeps() bool { return len(c.DepFlags) > 0 }

var compileExts = map[string]bool{".c": true, ".cc": true, ".cpp": true, ".cxx": true, ".c++": true, ".C": true,
	".cu": true, ".m": true, ".mm": true, ".S": true, ".s": false}

func isCompiler(w string) bool {
	b := filepath.Base(w)
	switch b {
	case "cc", "gcc", "g++", "c++", "clang", "clang++", "nvcc", "cl", "cl.exe", "clang-cl", "icc", "icpx", "icx":
		return true
	}
	for _, s := range []string{"-gcc", "-g++", "-clang", "-clang++", "-cc", "-c++"} {
		if strings.HasSuffix(b, s) {
			return true
		}
	}
	// gcc-12, clang-16, g++-12
	for _, p := range []string{"gcc-", "g++-", "clang-", "clang++-"} {
		if strings.HasPrefix(b, p) {
			return true
		}
	}
	return false
}

// splitShell splits a POSIX shell command line into words (quotes and backslashes honoured) and
// breaks it into simple commands at `&&`, `||`, `;` and `|`. It is not internal/cargo's
// splitCommandLine, on purpose: ninja runs commands through /bin/sh -c, where a backslash inside
// "…" escapes only " \ $ ` (POSIX 2.2.3), and a command may chain several.
func splitShell(s string) [][]string {
	var cmds [][]string
	var cur []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			cur = append(cur, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		// Fast path: a plain word is sliced, not copied byte by byte.
		if !inWord {
			j := i
			for j < len(s) && strings.IndexByte(" \t\n'\"\\;&|", s[j]) < 0 {
				j++
			}
			if j > i && (j == len(s) || strings.IndexByte(" \t\n;&|", s[j]) >= 0) {
				cur = append(cur, s[i:j])
				i = j - 1
				continue
			}
		}
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
				i++
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			end()
		case c == ';' || c == '&' || c == '|':
			end()
			for i+1 < len(s) && (s[i+1] == '&' || s[i+1] == '|') {
				i++
			}
			if len(cur) > 0 {
				cmds = append(cmds, cur)
			}
			cur = nil
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	end()
	if len(cur) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}

// ParseCompile finds a compile in an edge's command (run in buildDir): the first simple command
// whose program is a C, C++ or CUDA compiler with -c (or /c, or another flag of cinclude.ReadsSource:
// -E, a generator running the preprocessor) and a source argument. It returns nil when the command
// compiles nothing.
func ParseCompile(command, buildDir string) *Compile {
	dir := buildDir
	for _, words := range splitShell(command) {
		if words[0] == "cd" && len(words) == 2 {
			dir = absIn(dir, words[1])
			continue
		}
		prog := 0
		for prog < len(words) && (filepath.Base(words[prog]) == "ccache" || filepath.Base(words[prog]) == "sccache" || strings.Contains(words[prog], "=") && !strings.HasPrefix(words[prog], "-")) {
			prog++
		}
		if prog >= len(words) || !isCompiler(words[prog]) {
			continue
		}
		c := &Compile{Compiler: words[prog], Dir: dir}
		compileOnly := false
		args := words[prog+1:]
		for i := 0; i < len(args); i++ {
			a := args[i]
			if flag, p, n, ok := cinclude.Flag(args, i, dir); ok {
				i = n
				if p != "" {
					c.Includes = append(c.Includes, IncludeDir{Path: p, Flag: flag})
				}
				continue
			}
			next := func() string {
				if i+1 < len(args) {
					i++
					return args[i]
				}
				return ""
			}
			switch {
			case cinclude.ReadsSource(a):
				compileOnly = true
			case a == "-o":
				c.Object = next()
			case a == "-MD" || a == "-MMD" || a == "-M" || a == "-MM" || a == "--generate-dependencies-with-compile" ||
				a == "--generate-nonsystem-dependencies-with-compile" || a == "/showIncludes" || a == "-showIncludes" ||
				strings.HasPrefix(a, "-Wp,-MD") || strings.HasPrefix(a, "-Wp,-MMD"):
				c.DepFlags = append(c.DepFlags, a)
			case a == "-MF" || a == "--dependency-output" || a == "-MT" || a == "-MQ" || a == "-x" || a == "-include" ||
				a == "-ccbin" || a == "--compiler-bindir" || a == "-Xcompiler" || a == "-arch" || a == "-gencode" ||
				a == "-target" || a == "-Xclang" || a == "--options-file" || a == "-odir" || a == "-rdc" || a == "-std":
				v := next()
				if a == "-MF" || a == "--dependency-output" {
					c.DepFlags = append(c.DepFlags, a+" "+v)
				}
				if a == "-Xcompiler" {
					for _, x := range strings.Split(v, ",") {
						if x == "-MD" || x == "-MMD" {
							c.DepFlags = append(c.DepFlags, "-Xcompiler "+x)
						}
					}
				}
			case !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "/") || strings.HasPrefix(a, "/") && compileExts[filepath.Ext(a)]:
				if compileExts[filepath.Ext(a)] && c.Source == "" {
					c.Source = absIn(dir, a)
				}
			}
		}
		if compileOnly && c.Source != "" {
			return c
		}
	}
	return nil
}

func absIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// scanner follows #include lines; the parsed files come from a cache shared by every edge of a Read.
type scanner struct {
	files *cinclude.Cache
	// maxFiles bounds the files one scan visits.
	maxFiles int
}

func newScanner(files *cinclude.Cache) *scanner { return &scanner{files: files, maxFiles: 20000} }

// scanHit is one header reached by the include scan.
type scanHit struct {
	path, via string
}

// scan follows the includes of c's source transitively and returns each project header found (system
// folders are not entered), with the folder or file that led to it.
func (s *scanner) scan(c *Compile) []scanHit {
	sp := c.searchPath()
	seen := map[string]bool{c.Source: true}
	var hits []scanHit
	queue := []string{c.Source}
	walk := s.files.NewWalk(sp, nil, c.Source)
	for len(queue) > 0 && len(seen) < s.maxFiles {
		f := queue[0]
		queue = queue[1:]
		for _, inc := range walk.Includes(f) {
			p, via := c.resolve(sp, inc, filepath.Dir(f))
			if p == "" || seen[p] || cinclude.IsSystemHeader(p) {
				continue
			}
			seen[p] = true
			hits = append(hits, scanHit{path: p, via: via})
			queue = append(queue, p)
		}
	}
	return hits
}

// searchPath sorts the command's include folders by GCC's kinds.
func (c *Compile) searchPath() cinclude.SearchPath {
	var sp cinclude.SearchPath
	for _, d := range c.Includes {
		sp.Add(d.Flag, d.Path)
	}
	return sp
}

// resolve looks an include up the way gcc does (cinclude.SearchPath.Resolve: a quoted name in the
// including file's folder, then -iquote folders; then -I, -isystem and -idirafter folders, system
// folders searched too) and says how it was found, naming the option as the command wrote it.
func (c *Compile) resolve(sp cinclude.SearchPath, inc cinclude.Include, own string) (string, string) {
	p, flag, dir := sp.Resolve(inc, own, false)
	switch {
	case p == "":
		return "", ""
	case flag == "absolute":
		return p, "absolute #include"
	case flag == "":
		return p, "#include \"" + inc.Name + "\" beside " + own
	}
	for _, d := range c.Includes {
		if d.Path == dir && cinclude.Kind(d.Flag) == flag {
			return p, d.Flag + " " + dir
		}
	}
	return p, flag + " " + dir
}
