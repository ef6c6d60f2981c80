package cargo

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/cinclude"
	"github.com/stalecheck/stalecheck/internal/fsrec"
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
	// SearchPath holds the -iquote, -I, -isystem and -idirafter folders.
	cinclude.SearchPath
	// forced are -include files: read as if the source's first line included them.
	forced []string
	// defines are the -D options whose body may name a header (a computed #include's macro).
	defines []cinclude.Define
	// from says where the command was found ("running: line in …/output", "…/flags.make").
	from string
	// inferred: no command line recorded the search folders (DWARF's header folders, the folders a
	// build script names): good enough to find headers, not to say which of two a search finds first.
	inferred bool
}

// includeScanner reads each file's #include lines once per check (the cache is shared by every run,
// and safe for the runs cargo.Parallel scans at once).
type includeScanner struct{ files *cinclude.Cache }

func newIncludeScanner(store *cinclude.Store) *includeScanner {
	return &includeScanner{files: cinclude.NewCacheIn(store)}
}

// includeHit is one header an include scan reached and how.
type includeHit struct {
	path string
	why  hitWhy
	cond bool
}

// hitWhy is how a header was reached, put in words only for the headers a run keeps (detail): a
// header that most compiles of a package include is reached once per compile, and kept once.
type hitWhy struct {
	forced       string // the -include option's file, for a forced include
	file         string // the including file
	inc          cinclude.Include
	flag, dir    string // where it was found (ResolveIn)
	source, from string // the compile: its source and where its command came from
}

// detail is the input's detail: the including line and where the header was found (and whether only
// through a conditional #include), or the forced -include option.
func (h includeHit) detail(display func(string) string) string {
	w := h.why
	if w.forced != "" {
		return fmt.Sprintf("forced -include %s of %s (%s)", w.forced, display(w.source), w.from)
	}
	via := "beside the including file"
	switch w.flag {
	case "":
	case "absolute":
		via = "by its absolute path"
	default:
		via = "in " + w.flag + " " + display(w.dir)
	}
	d := fmt.Sprintf("%s line %d includes %s, found %s; compiled %s (%s)", display(w.file), w.inc.Line, w.inc.Text(), via, display(w.source), w.from)
	if h.cond {
		d += "; reached through a conditional #include (inside #if/#ifdef), so the scan over-approximates"
	}
	return d
}

// scanCompile follows the #include lines of one compile transitively and returns every header it
// reaches outside the system folders. A header reached both conditionally and unconditionally counts
// as unconditional. truncated is true when the scan stopped at maxIncludeFiles.
func (sc *includeScanner) scanCompile(c compileCmd) (hits []includeHit, truncated bool) {
	type state struct {
		cond bool
		why  hitWhy
	}
	seen := map[string]*state{}
	var order []string
	roots := []string{c.source}
	for _, f := range c.forced {
		roots = append(roots, absIn(c.dir, f))
	}
	walk := sc.files.NewWalk(c.SearchPath, c.defines, roots...)
	var visit func(file string, depth int, cond bool)
	visit = func(file string, depth int, cond bool) {
		if depth > maxIncludeDepth || truncated {
			return
		}
		for _, inc := range walk.Includes(file) {
			found, flag, dir := c.ResolveIn(sc.files, inc, filepath.Dir(file), true)
			if found == "" || cinclude.IsSystemHeader(found) {
				continue
			}
			ic := cond || inc.Cond
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
			st.cond = ic
			st.why = hitWhy{file: file, inc: inc, flag: flag, dir: dir, source: c.source, from: c.from}
			visit(found, depth+1, ic)
		}
	}
	for _, f := range c.forced {
		p := absIn(c.dir, f)
		if cinclude.IsSystemHeader(p) || !isFile(p) {
			continue
		}
		if seen[p] == nil {
			seen[p] = &state{why: hitWhy{forced: f, source: c.source, from: c.from}}
			order = append(order, p)
		}
		visit(p, 1, false)
	}
	visit(c.source, 0, false)
	for _, p := range order {
		hits = append(hits, includeHit{path: p, why: seen[p].why, cond: seen[p].cond})
	}
	return hits, truncated
}

// isFile reports whether p is a regular file (stat follows symlinks; a FIFO or folder is not one).
func isFile(p string) bool {
	st, err := fsrec.Stat(p)
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
	c.defines = cinclude.CommandDefines(words)
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch w {
		case "-o", "-MF", "-MT", "-MQ", "--output-file", "-odir", "-x", "-Xcompiler", "-Xlinker", "-ccbin", "--compiler-bindir":
			i++
			continue
		}
		if next, ok := c.ParseFlag(words, i, dir); ok {
			i = next
			continue
		}
		if v, ok := take(&i, w, "-include"); ok {
			c.forced = append(c.forced, v)
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
// separated by blanks, with '…' and "…" quoting and backslash escapes. It is not internal/ninja's
// splitShell, on purpose: a backslash escapes any character inside "…" too (clang's
// JSONCompilationDatabase unescapeCommandLine reads "command" so), and ; & | are word characters
// (a compile database entry is one command).
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
	c := compileCmd{source: source, dir: filepath.Dir(source), from: from, inferred: true}
	seen := map[string]bool{}
	for _, f := range files {
		d := filepath.Dir(f)
		if f == source || seen[d] || cinclude.IsSystemHeader(d) {
			continue
		}
		seen[d] = true
		c.Dirs = append(c.Dirs, d)
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
		k := key{c.source, strings.Join(c.Quote, "\x00") + "\x01" + strings.Join(c.Dirs, "\x00") + "\x01" +
			strings.Join(c.System, "\x00") + "\x01" + strings.Join(c.After, "\x00") + "\x01" + strings.Join(c.forced, "\x00")}
		if done[k] || !isFile(c.source) {
			continue
		}
		done[k] = true
		hits, truncated := r.inc.scanCompile(c)
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
		add(p, graph.IncludeScan, reached[p].detail(display))
	}
}

// scriptSourceCompile is the compile of a source that no command line records (cc-rs ≥ 1.0.80 logs none):
// run in the package root, searching the package folders the build script names as a whole word
// (`.include("native/include")`, or a hand-written `"-Inative/include"` argument), in the order the
// script names them (as an -I argument or an include call first, else as any word): the order its
// compiler searches them in, for the scripts that name each folder once.
func scriptSourceCompile(s *graph.Step, src string, dirs []string) compileCmd {
	c := compileCmd{source: src, dir: s.PackageRoot, from: "no command line logged; search folders named in " + s.Script().ScriptSource, inferred: true}
	c.Dirs = append([]string(nil), dirs...)
	return c
}

// scriptSearchDirs are the package folders a run's build script names, in scriptSourceCompile's order.
func (r *reader) scriptSearchDirs(s *graph.Step, script []byte, words *textWords) []string {
	if script == nil || s.PackageRoot == "" {
		return nil
	}
	scan := r.pkgScan[s.PackageRoot]
	if scan == nil {
		return nil
	}
	var dirs []string
	seen := map[string]bool{}
	for _, f := range scan.native {
		d := filepath.Dir(f)
		if seen[d] || d == s.PackageRoot {
			continue
		}
		seen[d] = true
		if rel, err := filepath.Rel(s.PackageRoot, d); err == nil && (words.mentions(rel) || words.mentions("-I"+rel) || words.mentions("-I./"+rel)) {
			dirs = append(dirs, d)
		}
	}
	at := func(d string) int {
		rel, _ := filepath.Rel(s.PackageRoot, d)
		text := string(script)
		for _, w := range []string{"-I" + rel, "-I./" + rel} {
			if i := mentionAt(text, w); i >= 0 {
				return i
			}
		}
		if i := strings.Index(text, `include("`+rel+`")`); i >= 0 {
			return i
		}
		if i := mentionAt(text, rel); i >= 0 {
			return i + len(text) // a bare mention says less than an argument
		}
		return 2 * len(text)
	}
	// Each folder's place is found once, not at every comparison (a scan of the script each).
	pos := make(map[string]int, len(dirs))
	for _, d := range dirs {
		pos[d] = at(d)
	}
	sort.SliceStable(dirs, func(i, j int) bool { return pos[dirs[i]] < pos[dirs[j]] })
	return dirs
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
		c.Quote, c.Dirs, c.System, c.After, c.forced = mvAll(c.Quote), mvAll(c.Dirs), mvAll(c.System), mvAll(c.After), mvAll(c.forced)
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
