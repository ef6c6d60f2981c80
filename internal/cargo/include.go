package cargo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Bounds of the include scan: how deep a chain of headers is followed, and how many distinct headers
// one build-script run may reach (a runaway scan stops there and says so in a problem).
const (
	maxIncludeDepth = 40
	maxIncludeFiles = 20000
)

// compileCmd is one compile that a build-script run's records show: the source, the folder the
// compiler ran in, and its header search folders in the compiler's order (absolute, cleaned).
type compileCmd struct {
	source string
	dir    string
	// quote are -iquote folders (searched for #include "…" only); dirs are -I folders; system are
	// -isystem folders; after are -idirafter folders (searched last).
	quote, dirs, system, after []string
	// forced are -include files: read as if the source's first line included them.
	forced []string
	// from says where the command was found ("running: line in …/output", "…/flags.make").
	from string
}

// includeLine is one #include of a file.
type includeLine struct {
	name  string
	angle bool // #include <…>
	line  int  // 1-based
	// cond is true when the line lies inside an #if/#ifdef/#ifndef block other than the file's
	// include guard: whether the compiler read it depends on macros the scan does not evaluate.
	cond bool
}

// includeScanner reads each file's #include lines once per check (the cache is shared by every run).
type includeScanner struct {
	mu    sync.Mutex
	files map[string][]includeLine
}

func newIncludeScanner() *includeScanner { return &includeScanner{files: map[string][]includeLine{}} }

// includes returns the #include lines of a file; nil when it cannot be read (not a regular file,
// missing, over the record limit).
func (sc *includeScanner) includes(p string) []includeLine {
	sc.mu.Lock()
	lines, ok := sc.files[p]
	sc.mu.Unlock()
	if ok {
		return lines
	}
	data, err := safeio.ReadFile(p, safeio.MaxRecord)
	if err == nil {
		lines = parseIncludes(data)
	}
	sc.mu.Lock()
	sc.files[p] = lines
	sc.mu.Unlock()
	return lines
}

// parseIncludes lists the #include directives of C/C++/CUDA text. Comments are skipped (a commented
// out #include is not one); #if, #ifdef and #ifndef blocks are tracked so that includes inside them
// are marked conditional, except a whole-file include guard (#ifndef X / #define X first).
func parseIncludes(data []byte) []includeLine {
	var out []includeLine
	type frame struct{ guard bool }
	var stack []frame
	inComment := false
	directives := 0 // directives seen so far (to recognise an include guard)
	guardMacro := ""
	lines := bytes.Split(data, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		text := string(lines[i])
		// Join continued lines.
		for strings.HasSuffix(text, "\\") && i+1 < len(lines) {
			i++
			text = strings.TrimSuffix(text, "\\") + string(lines[i])
		}
		text = stripComments(text, &inComment)
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
				out = append(out, includeLine{name: name, angle: angle, line: i + 1, cond: conditional()})
			}
		}
	}
	return out
}

// stripComments removes /* … */ and // comments from one line, carrying an open block comment over.
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

// systemIncludeDirs are the folders whose headers are never reported: the C library's, the compiler's
// own and the usual toolkit locations. A search folder under one of them is not followed either.
var systemIncludeDirs = []string{"/usr/include", "/usr/local/include", "/usr/lib/gcc", "/usr/lib/gcc-cross",
	"/usr/lib/clang", "/usr/lib/llvm", "/usr/lib/cuda", "/usr/local/cuda", "/opt/cuda", "/usr/lib/nvidia-cuda-toolkit",
	"/usr/share/gcc", "/usr/libexec/gcc"}

// IsSystemHeader reports whether a path lies in a system header folder (README "Rules": such headers are
// never reported). Versioned folders count too: /usr/lib/llvm-16, /usr/local/cuda-12.2.
func IsSystemHeader(p string) bool {
	for _, d := range systemIncludeDirs {
		if p == d || strings.HasPrefix(p, d+"/") || strings.HasPrefix(p, d+"-") {
			return true
		}
	}
	return false
}

// includeHit is one header an include scan reached and how.
type includeHit struct {
	path   string
	detail string
	cond   bool
}

// scanCompile follows the #include lines of one compile transitively and returns every header it
// reaches outside the system folders. A header reached both conditionally and unconditionally counts
// as unconditional. truncated is true when the scan stopped at maxIncludeFiles.
func (sc *includeScanner) scanCompile(c compileCmd, display func(string) string) (hits []includeHit, truncated bool) {
	type state struct {
		cond   bool
		detail string
	}
	seen := map[string]*state{}
	var order []string
	var visit func(file string, depth int, cond bool)
	visit = func(file string, depth int, cond bool) {
		if depth > maxIncludeDepth || truncated {
			return
		}
		for _, inc := range sc.includes(file) {
			found, flag, dir := c.resolve(inc, filepath.Dir(file))
			if found == "" || IsSystemHeader(found) {
				continue
			}
			ic := cond || inc.cond
			st := seen[found]
			if st != nil && (st.cond == false || ic) {
				continue // already reached at least as surely
			}
			if st == nil {
				if len(seen) >= maxIncludeFiles {
					truncated = true
					return
				}
				st = &state{}
				seen[found] = st
				order = append(order, found)
			}
			q := "\"" + inc.name + "\""
			if inc.angle {
				q = "<" + inc.name + ">"
			}
			st.cond = ic
			via := "beside the including file"
			switch flag {
			case "":
			case "absolute":
				via = "by its absolute path"
			default:
				via = "in " + flag + " " + display(dir)
			}
			st.detail = fmt.Sprintf("%s line %d includes %s, found %s; compiled %s (%s)", display(file), inc.line, q, via, display(c.source), c.from)
			if ic {
				st.detail += "; reached through a conditional #include (inside #if/#ifdef), so the scan over-approximates"
			}
			visit(found, depth+1, ic)
		}
	}
	for _, f := range c.forced {
		p := absIn(c.dir, f)
		if IsSystemHeader(p) || !isFile(p) {
			continue
		}
		if seen[p] == nil {
			seen[p] = &state{detail: fmt.Sprintf("forced -include %s of %s (%s)", f, display(c.source), c.from)}
			order = append(order, p)
		}
		visit(p, 1, false)
	}
	visit(c.source, 0, false)
	for _, p := range order {
		hits = append(hits, includeHit{path: p, detail: seen[p].detail, cond: seen[p].cond})
	}
	return hits, truncated
}

// resolve finds the file an #include names the way GCC searches: for "…" the including file's own
// folder, then -iquote folders; then (both forms) -I, -isystem and -idirafter folders. The compiler's
// built-in folders are not searched (their headers are never reported). flag is the option whose
// folder dir held it ("" for the including file's folder, "absolute" for an absolute name); found is
// "" when no folder holds it.
func (c compileCmd) resolve(inc includeLine, ownDir string) (found, flag, dir string) {
	if filepath.IsAbs(inc.name) {
		if isFile(inc.name) {
			return filepath.Clean(inc.name), "absolute", ""
		}
		return "", "", ""
	}
	in := func(d string) bool {
		return d != "" && !IsSystemHeader(d) && isFile(filepath.Join(d, inc.name))
	}
	if !inc.angle {
		if in(ownDir) {
			return filepath.Join(ownDir, inc.name), "", ownDir
		}
		for _, d := range c.quote {
			if in(d) {
				return filepath.Join(d, inc.name), "-iquote", d
			}
		}
	}
	for _, group := range []struct {
		flag string
		dirs []string
	}{{"-I", c.dirs}, {"-isystem", c.system}, {"-idirafter", c.after}} {
		for _, d := range group.dirs {
			if in(d) {
				return filepath.Join(d, inc.name), group.flag, d
			}
		}
	}
	return "", "", ""
}

// isFile reports whether p is a regular file (stat follows symlinks; a FIFO or folder is not one).
func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func absIn(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// parseCompileWords reads a compiler command line (split into words) run in dir: the sources it
// compiles (native sources that are not headers) and its search folders. Commands that compile nothing
// (ar, cmake) give no compile.
func parseCompileWords(words []string, dir, from string) []compileCmd {
	c := compileCmd{dir: dir, from: from}
	var sources []string
	take := func(i *int, w, flag string) (string, bool) {
		if w == flag {
			if *i+1 < len(words) {
				*i++
				return words[*i], true
			}
			return "", false
		}
		if strings.HasPrefix(w, flag) && len(w) > len(flag) {
			v := strings.TrimPrefix(w[len(flag):], "=")
			return v, true
		}
		return "", false
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch w {
		case "-o", "-MF", "-MT", "-MQ", "--output-file", "-odir", "-x", "-Xcompiler", "-Xlinker", "-ccbin", "--compiler-bindir":
			i++
			continue
		}
		if v, ok := take(&i, w, "-iquote"); ok {
			c.quote = append(c.quote, absIn(dir, v))
			continue
		}
		if v, ok := take(&i, w, "-isystem"); ok {
			c.system = append(c.system, absIn(dir, v))
			continue
		}
		if v, ok := take(&i, w, "-idirafter"); ok {
			c.after = append(c.after, absIn(dir, v))
			continue
		}
		if v, ok := take(&i, w, "--include-path"); ok { // nvcc
			c.dirs = append(c.dirs, absIn(dir, v))
			continue
		}
		if v, ok := take(&i, w, "-include"); ok {
			c.forced = append(c.forced, v)
			continue
		}
		if strings.HasPrefix(w, "-I") && w != "-I-" {
			if v, ok := take(&i, w, "-I"); ok {
				c.dirs = append(c.dirs, absIn(dir, v))
			}
			continue
		}
		if strings.HasPrefix(w, "-") {
			continue
		}
		if IsNativeSource(w) && !isHeader(w) {
			sources = append(sources, absIn(dir, w))
		}
	}
	var out []compileCmd
	for _, src := range sources {
		cc := c
		cc.source = src
		out = append(out, cc)
	}
	return out
}

// splitCommandLine splits a shell command line as CMake and compile_commands.json write them: words
// separated by blanks, with '…' and "…" quoting and backslash escapes.
func splitCommandLine(s string) []string {
	var out []string
	var cur strings.Builder
	have := false
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote == '\'':
			if ch == '\'' {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '\\' && i+1 < len(s) && quote != '\'':
			i++
			cur.WriteByte(s[i])
			have = true
		case quote == '"':
			if ch == '"' {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '"' || ch == '\'':
			quote, have = ch, true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if have {
				out = append(out, cur.String())
			}
			cur.Reset()
			have = false
		default:
			cur.WriteByte(ch)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}

// runningCompiles turns a build script's `running:` lines into compiles. cc-rs runs the compiler in
// the build script's working folder, which Cargo sets to the package root; the cmake crate prefixes
// `cd "<folder>" &&`, so that folder is the working folder of the rest of the line.
func runningCompiles(cmds [][]string, pkgRoot, outputPath string) []compileCmd {
	var out []compileCmd
	for _, words := range cmds {
		dir := pkgRoot
		if len(words) >= 3 && words[0] == "cd" && words[2] == "&&" {
			dir = absIn(pkgRoot, words[1])
			words = words[3:]
			for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
				words = words[1:]
			}
		}
		if len(words) == 0 {
			continue
		}
		out = append(out, parseCompileWords(words, dir, "running: line in "+outputPath)...)
	}
	return out
}

// compileDBCompiles reads a compile_commands.json (CMake's CMAKE_EXPORT_COMPILE_COMMANDS, bear, meson).
func compileDBCompiles(path string) ([]compileCmd, error) {
	data, err := safeio.ReadFile(path, safeio.MaxRecord)
	if err != nil {
		return nil, err
	}
	var entries []struct {
		Directory string   `json:"directory"`
		File      string   `json:"file"`
		Command   string   `json:"command"`
		Arguments []string `json:"arguments"`
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("not a compilation database: %v", err)
	}
	var out []compileCmd
	for _, e := range entries {
		words := e.Arguments
		if len(words) == 0 {
			words = splitCommandLine(e.Command)
		}
		if len(words) == 0 || e.File == "" {
			continue
		}
		cmds := parseCompileWords(words, e.Directory, path)
		src := absIn(e.Directory, e.File)
		if len(cmds) == 0 {
			cmds = parseCompileWords(append(words[:1:1], e.File), e.Directory, path)
		}
		for _, c := range cmds {
			if c.source == src || len(cmds) == 1 {
				c.source = src
				out = append(out, c)
				break
			}
		}
	}
	return out, nil
}

// cmakeMakeCompiles reads what CMake's Makefile generator leaves for one target
// (CMakeFiles/<target>.dir/flags.make: <LANG>_INCLUDES and <LANG>_FLAGS; build.make: the sources
// of each object). The compiler runs in the folder above CMakeFiles.
func cmakeMakeCompiles(flagsMake string) ([]compileCmd, error) {
	data, err := safeio.ReadFile(flagsMake, safeio.MaxRecord)
	if err != nil {
		return nil, err
	}
	targetDir := filepath.Dir(flagsMake)
	top := filepath.Dir(filepath.Dir(targetDir)) // the folder that holds CMakeFiles/
	flags := map[string][]string{}               // language -> words of INCLUDES and FLAGS
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		k = strings.TrimSpace(k)
		for _, suffix := range []string{"_INCLUDES", "_FLAGS"} {
			if lang, ok := strings.CutSuffix(k, suffix); ok {
				flags[lang] = append(flags[lang], splitCommandLine(v)...)
			}
		}
	}
	bm, err := safeio.ReadFile(filepath.Join(targetDir, "build.make"), safeio.MaxRecord)
	if err != nil {
		return nil, err
	}
	var out []compileCmd
	seen := map[string]bool{}
	for _, line := range strings.Split(string(bm), "\n") {
		obj, src, ok := strings.Cut(line, ": ")
		if !ok || strings.HasPrefix(line, "\t") || !strings.HasSuffix(obj, ".o") {
			continue
		}
		src = strings.TrimSpace(src)
		if !IsNativeSource(src) || isHeader(src) || seen[src] {
			continue
		}
		seen[src] = true
		lang := "C"
		switch filepath.Ext(src) {
		case ".cc", ".cpp", ".cxx":
			lang = "CXX"
		case ".cu":
			lang = "CUDA"
		case ".s", ".S", ".asm":
			lang = "ASM"
		}
		words := append([]string{"cc"}, flags[lang]...)
		out = append(out, parseCompileWords(append(words, src), top, flagsMake)...)
	}
	return out, nil
}

// dwarfCompile turns a DWARF compile unit into a compile: its source, run in its comp_dir, searching
// the folders of the headers its line table lists (where the compiler found headers), in table order.
func dwarfCompile(source string, files []string, from string) compileCmd {
	c := compileCmd{source: source, dir: filepath.Dir(source), from: from}
	seen := map[string]bool{}
	for _, f := range files {
		d := filepath.Dir(f)
		if f == source || seen[d] || IsSystemHeader(d) {
			continue
		}
		seen[d] = true
		c.dirs = append(c.dirs, d)
	}
	return c
}

// includeScan resolves the headers of every compile the run's records show and adds them as
// include-scan inputs. Depfile-known compiles are not scanned again (the depfile is complete).
func (r *reader) includeScan(s *graph.Step, compiles []compileCmd, add func(p string, how graph.How, detail string)) {
	display := func(p string) string {
		if rel, err := filepath.Rel(r.l.Workspace, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
		return p
	}
	type key struct{ src, dirs string }
	done := map[key]bool{}
	reached := map[string]includeHit{}
	var order []string
	total := 0
	for _, c := range compiles {
		k := key{c.source, strings.Join(c.quote, "\x00") + "\x01" + strings.Join(c.dirs, "\x00") + "\x01" +
			strings.Join(c.system, "\x00") + "\x01" + strings.Join(c.after, "\x00") + "\x01" + strings.Join(c.forced, "\x00")}
		if done[k] || !isFile(c.source) {
			continue
		}
		done[k] = true
		hits, truncated := r.inc.scanCompile(c, display)
		if truncated {
			r.problem(c.source, fmt.Errorf("include scan stopped after %d headers (compiled %s)", maxIncludeFiles, c.from))
		}
		for _, h := range hits {
			prev, ok := reached[h.path]
			if !ok {
				order = append(order, h.path)
				total++
			}
			if !ok || prev.cond && !h.cond {
				reached[h.path] = h
			}
		}
		if total >= maxIncludeFiles {
			break
		}
	}
	for _, p := range order {
		add(p, graph.IncludeScan, reached[p].detail)
	}
}

// scriptCompile is the compile of a source that no command line records (cc-rs ≥ 1.0.80 logs none):
// run in the package root, searching the package folders the build script names as a whole word
// (`.include("native/include")`, or a hand-written `"-Inative/include"` argument), in the package's
// sorted order.
func (r *reader) scriptCompile(s *graph.Step, src string, script []byte) compileCmd {
	c := compileCmd{source: src, dir: s.PackageRoot, from: "no command line logged; search folders named in " + s.ScriptSource}
	if script == nil || s.PackageRoot == "" {
		return c
	}
	scan := r.pkgScan[s.PackageRoot]
	if scan == nil {
		return c
	}
	seen := map[string]bool{}
	for _, f := range scan.native {
		d := filepath.Dir(f)
		if seen[d] || d == s.PackageRoot {
			continue
		}
		seen[d] = true
		if rel, err := filepath.Rel(s.PackageRoot, d); err == nil && (mentions(script, rel) || mentions(script, "-I"+rel) || mentions(script, "-I./"+rel)) {
			c.dirs = append(c.dirs, d)
		}
	}
	return c
}

// movedCompiles maps the paths of compiles recorded before the tree was copied or moved (s.MovedFrom)
// to where they are now, as Cargo does for root-output paths.
func (r *reader) movedCompiles(s *graph.Step, cs []compileCmd) []compileCmd {
	if unit.Of(s).MovedFrom == "" {
		return cs
	}
	mv := func(p string) string { return movedPath(s, p) }
	mvAll := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = mv(p)
		}
		return out
	}
	out := make([]compileCmd, len(cs))
	for i, c := range cs {
		c.source, c.dir = mv(c.source), mv(c.dir)
		c.quote, c.dirs, c.system, c.after, c.forced = mvAll(c.quote), mvAll(c.dirs), mvAll(c.system), mvAll(c.after), mvAll(c.forced)
		out[i] = c
	}
	return out
}

// movedPath maps a path recorded before the tree was copied or moved to where it is now.
func movedPath(s *graph.Step, p string) string {
	if unit.Of(s).MovedFrom != "" && (p == unit.Of(s).MovedFrom || strings.HasPrefix(p, unit.Of(s).MovedFrom+string(filepath.Separator))) {
		return unit.Of(s).MovedTo + strings.TrimPrefix(p, unit.Of(s).MovedFrom)
	}
	return p
}
