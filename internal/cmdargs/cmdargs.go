// Package cmdargs finds the files a build step's command line names as arguments, and adds the ones
// no record declares to the step as inputs its build system does not watch (graph.CommandArg).
//
// A build system knows a step's inputs from what the build description declares (a Make
// prerequisite, a Ninja edge's inputs, CMake's DEPENDS) and from depfiles the compiler writes. A
// generator run by a custom command (`sh gen.sh table.in table.h`) writes no depfile, and a file its
// command names but the rule does not declare is read on every run and watched by nothing: editing
// it never regenerates the output. The command's own text names such files, whatever system runs it.
//
// The command is read as the shell reads it, without running anything: each line is its own shell (as
// Make runs a recipe), words are split at blanks and at the shell's operators, quotes are removed, and
// a `cd DIR` moves the folder later words are resolved against. A word is an argument unless the
// command line says it is written: the word after an output flag (-o, -MF, -MT, -MQ, --output, -Map),
// the target of a `>` redirection, the destination of cp, mv, install and ln (also `cmake -E copy`),
// every argument of touch, rm, mkdir and tee. A word whose value only the shell decides (a variable, a
// glob, a command substitution, `~`) names nothing here; nor does a flag with its value attached
// (-Iinc, --file=x), an assignment (NAME=value) or a response file (@file).
//
// A copy's source (cp, install, `cmake -E copy_if_different`) copied over one of the step's outputs
// says when the command last ran (graph.Step.Ran, ranBy): a command that copies a temporary file over
// its output only when they differ leaves the output's mtime behind its inputs'.
//
// What the text cannot say is whether the program reads or writes a plain argument: a generator's
// second argument is usually its output. Annotate keeps only regular files that exist, that no step of
// the graph makes, outside the system's folders; the rules judge such an input by its content baseline
// (an edit differs from the content it had when the step last ran) and, with none, take a file changed
// before a later step of the same build ran as written by the step (internal/check).
package cmdargs

import (
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/sysdirs"
)

// Role says what a command line does with a file it names.
type Role uint8

const (
	// Argument: named as an argument; the program may read it (or write it: the text does not say).
	Argument Role = iota
	// Program: the program run, named by a path (a script or tool of the project): it is read.
	Program
	// Written: an output by the command line's own syntax (see the package comment).
	Written
	// CopySource: what a copy (cp, mv, install, ln, rsync, `cmake -E copy...`) reads; the Line's
	// Written word is where it goes.
	CopySource
)

// Word is a file a command line names.
type Word struct {
	Path string // absolute, cleaned
	Role Role
	// Line is the command line (one line of the command) that names it.
	Line string
}

// outputFlags take the next word as a file the program writes.
var outputFlags = map[string]bool{
	"-o": true, "-MF": true, "-MT": true, "-MQ": true, "--output": true, "-Map": true, "--output-file": true,
	"-out": true, "--out": true, "--depfile": true, "-dependency-file": true,
}

// lastWritten: programs whose last argument is where they write (a destination).
var lastWritten = map[string]bool{"cp": true, "mv": true, "install": true, "ln": true, "rsync": true}

// allWritten: programs that write (or remove) every file they name.
var allWritten = map[string]bool{"touch": true, "rm": true, "mkdir": true, "rmdir": true, "tee": true, "truncate": true,
	"chmod": true, "chown": true, "unlink": true}

// cmakeE: `cmake -E` subcommands and which of their arguments they write.
var cmakeE = map[string]string{
	"copy": "last", "copy_if_different": "last", "copy_directory": "last", "copy_directory_if_different": "last",
	"rename": "last", "create_symlink": "last", "create_hardlink": "last",
	"touch": "all", "touch_nocreate": "all", "rm": "all", "remove": "all", "remove_directory": "all",
	"make_directory": "all", "cmake_symlink_library": "all", "cmake_symlink_executable": "all", "true": "all", "false": "all",
}

// wrappers run the program that follows them (their own flags and assignments skipped).
var wrappers = map[string]bool{"env": true, "exec": true, "command": true, "nice": true, "time": true, "nohup": true}

// Files returns the files cmd names, in order, resolved against dir (a relative word is skipped when
// dir is "" or a `cd` went somewhere only the shell knows). cmd is one shell command per line.
func Files(cmd, dir string) []Word {
	out, _ := parse(cmd, dir)
	return out
}

// Link is a library a command links by name (`-lz`, `-l:libz.a`): the linker takes the first
// lib<name>.so or lib<name>.a (only .a while -static or -Bstatic is in effect) in the -L folders, in
// order, then in its own folders (which are the system's: left out here).
type Link struct {
	Name   string   // as written after -l
	Dirs   []string // the -L folders of the command, absolute, in order
	Static bool     // -static or -Bstatic in effect at this -l
	Line   string
}

// Candidates returns the files the linker would look for, in its order.
func (l Link) Candidates() []string {
	var out []string
	for _, d := range l.Dirs {
		if exact, ok := strings.CutPrefix(l.Name, ":"); ok {
			out = append(out, filepath.Join(d, exact))
			continue
		}
		if !l.Static {
			out = append(out, filepath.Join(d, "lib"+l.Name+".so"))
		}
		out = append(out, filepath.Join(d, "lib"+l.Name+".a"))
	}
	return out
}

// Links returns the libraries cmd links by name with -l, each with the -L folders of its command.
func Links(cmd, dir string) []Link {
	_, links := parse(cmd, dir)
	return links
}

func parse(cmd, dir string) (words []Word, links []Link) {
	for _, line := range strings.Split(cmd, "\n") {
		// Make's recipe prefixes: @ (silent), - (ignore errors), + (run under -n).
		line = strings.TrimLeft(line, "@-+ \t")
		if line == "" {
			continue
		}
		cwd := dir
		for _, sc := range lex(line) {
			links = append(links, sc.links(cwd, line)...)
			cwd = sc.files(cwd, line, &words)
		}
	}
	return words, links
}

// links returns the -l libraries of one simple command with its -L folders (relative ones against
// dir; none when dir is unknown).
func (sc simple) links(dir, line string) []Link {
	var dirs []string
	type name struct {
		n      string
		static bool
	}
	var names []name
	static := false
	for i := 0; i < len(sc); i++ {
		w := sc[i]
		if w.dynamic || w.redirect != 0 {
			continue
		}
		t := w.text
		next := func() (string, bool) {
			if i+1 < len(sc) && !sc[i+1].dynamic && sc[i+1].redirect == 0 {
				i++
				return sc[i].text, true
			}
			return "", false
		}
		switch {
		case t == "-static" || t == "-Bstatic" || t == "-Wl,-Bstatic" || t == "-Wl,-static":
			static = true
		case t == "-Bdynamic" || t == "-Wl,-Bdynamic" || t == "-Wl,-dy":
			static = false
		case t == "-L":
			if d, ok := next(); ok {
				dirs = append(dirs, d)
			}
		case strings.HasPrefix(t, "-L"):
			dirs = append(dirs, t[2:])
		case t == "-l":
			if n, ok := next(); ok {
				names = append(names, name{n, static})
			}
		case strings.HasPrefix(t, "-l") && len(t) > 2:
			names = append(names, name{t[2:], static})
		}
	}
	if len(names) == 0 || len(dirs) == 0 {
		return nil
	}
	var abs []string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			if dir == "" {
				continue
			}
			d = filepath.Join(dir, d)
		}
		abs = append(abs, filepath.Clean(d))
	}
	var out []Link
	for _, n := range names {
		out = append(out, Link{Name: n.n, Dirs: abs, Static: n.static, Line: line})
	}
	return out
}

// word is one shell word: its text with quotes removed, and whether only the shell can tell its value.
type word struct {
	text    string
	dynamic bool
	// redirect: the word is the target of a redirection ('>' written, '<' read), 0 when none.
	redirect byte
}

// simple is one simple command: its words in order.
type simple []word

// Commands splits one shell line into its simple commands' words, as the shell reads them (quotes
// removed, a quoted `-DFLAGS="-g -O3"` one word), leaving out the targets of redirections; a word only
// the shell can evaluate ($X, a glob) stays as written.
func Commands(line string) [][]string {
	var out [][]string
	for _, sc := range lex(line) {
		var words []string
		for _, w := range sc {
			if w.redirect == 0 {
				words = append(words, w.text)
			}
		}
		if len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// lex splits one line into simple commands at ; & | && || ( ) and newlines.
func lex(line string) []simple {
	var cmds []simple
	var cur simple
	var b strings.Builder
	inWord, dynamic := false, false
	var pending byte // a redirection whose target is the next word
	end := func() {
		if !inWord {
			return
		}
		w := word{text: b.String(), dynamic: dynamic, redirect: pending}
		pending = 0
		b.Reset()
		inWord, dynamic = false, false
		cur = append(cur, w)
	}
	flush := func() {
		end()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
		}
		cur, pending = nil, 0
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			end()
		case c == '\'':
			inWord = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				b.WriteString(line[i+1:])
				dynamic = true // unbalanced: not what a shell would run
				i = len(line)
				break
			}
			b.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				switch line[i] {
				case '\\':
					if i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
						i++
					}
				case '$', '`':
					dynamic = true
				}
				b.WriteByte(line[i])
			}
			if i >= len(line) {
				dynamic = true
			}
		case c == '\\':
			inWord = true
			if i+1 < len(line) {
				i++
				b.WriteByte(line[i])
			}
		case c == '$' || c == '`' || c == '*' || c == '?' || c == '[' || c == '{' || (c == '~' && !inWord):
			inWord, dynamic = true, true
			b.WriteByte(c)
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			if c == '&' && i+1 < len(line) && line[i+1] == '>' { // &> file: stdout and stderr
				end()
				i++
				if i+1 < len(line) && line[i+1] == '>' {
					i++
				}
				pending = '>'
				break
			}
			flush()
			if i+1 < len(line) && (line[i+1] == c && (c == '&' || c == '|') || c == '|' && line[i+1] == '&') {
				i++
			}
		case c == '>' || c == '<':
			// A word of digits right before it is a file descriptor (2>err).
			if inWord && !dynamic && isDigits(b.String()) {
				b.Reset()
				inWord = false
			}
			end()
			j := i + 1
			for j < len(line) && (line[j] == '>' || line[j] == '|' || line[j] == '<') {
				j++
			}
			if j < len(line) && line[j] == '&' { // 2>&1, >&2: a descriptor, no file
				j++
				for j < len(line) && (line[j] >= '0' && line[j] <= '9' || line[j] == '-') {
					j++
				}
				i = j - 1
				break
			}
			if c == '<' && j == i+2 && line[i+1] == '<' { // a here-document: its words are no files
				pending = 0
				i = len(line)
				break
			}
			pending = c
			i = j - 1
		default:
			inWord = true
			b.WriteByte(c)
		}
	}
	flush()
	return cmds
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// files appends the files sc names to out and returns the folder the next command runs in (a `cd`
// changes it; "" when only the shell knows it).
func (sc simple) files(dir, line string, out *[]Word) string {
	add := func(w word, role Role) {
		if w.dynamic || w.text == "" {
			return
		}
		p := w.text
		if !filepath.IsAbs(p) {
			if dir == "" {
				return
			}
			p = filepath.Join(dir, p)
		}
		*out = append(*out, Word{Path: filepath.Clean(p), Role: role, Line: line})
	}
	var args []word
	for _, w := range sc {
		switch w.redirect {
		case '>':
			add(w, Written)
		case '<':
			add(w, Argument)
		default:
			args = append(args, w)
		}
	}
	// Assignments before the program, and wrappers with their own flags and assignments.
	for len(args) > 0 {
		w := args[0]
		switch {
		case isAssignment(w.text):
			args = args[1:]
			continue
		case !w.dynamic && wrappers[w.text]:
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0].text, "-") {
				args = args[1:]
			}
			continue
		}
		break
	}
	if len(args) == 0 {
		return dir
	}
	prog := args[0]
	args = args[1:]
	if prog.dynamic {
		return dir
	}
	base := filepath.Base(prog.text)
	if prog.text == "cd" {
		if len(args) == 0 {
			return "" // $HOME
		}
		t := args[0]
		if t.dynamic || t.text == "-" {
			return ""
		}
		if filepath.IsAbs(t.text) {
			return filepath.Clean(t.text)
		}
		if dir == "" {
			return ""
		}
		return filepath.Join(dir, t.text)
	}
	if strings.ContainsRune(prog.text, '/') {
		add(prog, Program)
	}
	if base == "cmake" && len(args) >= 2 && args[0].text == "-E" && args[1].text == "env" {
		rest := args[2:] // cmake -E env [--unset=X] [NAME=value]... program args: a wrapper
		for len(rest) > 0 && (strings.HasPrefix(rest[0].text, "-") || isAssignment(rest[0].text)) {
			rest = rest[1:]
		}
		return simple(rest).files(dir, line, out)
	}
	// Plain arguments: flags and their attached values dropped, an output flag's value written.
	var plain []word
	for i := 0; i < len(args); i++ {
		w := args[i]
		t := w.text
		switch {
		case base == "install" && (t == "-m" || t == "-g" || t == "-o"):
			i++ // install's mode, group and owner
		case outputFlags[t]:
			if i+1 < len(args) {
				i++
				add(args[i], Written)
			}
		case strings.HasPrefix(t, "-") && len(t) > 1, t == "--":
		case strings.HasPrefix(t, "@"), isAssignment(t), strings.ContainsRune(t, '='):
		default:
			plain = append(plain, w)
		}
	}
	written := "" // "last" or "all"
	switch {
	case lastWritten[base]:
		written = "last"
	case allWritten[base]:
		written = "all"
	case base == "cmake" && len(args) >= 2 && args[0].text == "-E":
		written = cmakeE[args[1].text]
		if len(plain) > 0 && plain[0].text == args[1].text {
			plain = plain[1:] // the subcommand's name
		}
		if written == "" {
			written = "all" // a subcommand not listed: nothing to read from its words
		}
	}
	for i, w := range plain {
		role := Argument
		switch {
		case written == "all" || written == "last" && i == len(plain)-1 && len(plain) > 1:
			role = Written
		case written == "last" && len(plain) > 1:
			role = CopySource
		}
		add(w, role)
	}
	return dir
}

// WithoutPrinting returns cmd (one shell command per line) without the lines that only print to the
// terminal: every simple command of the line is echo, printf, true or `:` with no redirection, or
// CMake's `cmake -E echo`, `echo_append` or `cmake_echo_color` (its progress lines, whose numbers
// move when a target gains a source). Such a line cannot change what the command writes.
func WithoutPrinting(cmd string) string {
	var keep []string
	for _, line := range strings.Split(cmd, "\n") {
		if !printsOnly(strings.TrimLeft(strings.TrimSpace(line), "@+-")) {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func printsOnly(line string) bool {
	cmds := lex(line)
	if len(cmds) == 0 {
		return false
	}
	for _, sc := range cmds {
		if len(sc) == 0 {
			return false
		}
		for _, w := range sc {
			if w.redirect != 0 {
				return false
			}
		}
		switch prog := filepath.Base(sc[0].text); {
		case sc[0].dynamic:
			return false
		case prog == "echo" || prog == "printf" || prog == "true" || prog == ":":
		case prog == "cmake" && len(sc) >= 3 && sc[1].text == "-E" && (sc[2].text == "echo" || sc[2].text == "echo_append" || sc[2].text == "cmake_echo_color"):
		default:
			return false
		}
	}
	return true
}

// isAssignment reports a shell variable assignment (NAME=value).
func isAssignment(s string) bool {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Annotate adds to each live step with a command (graph.Step.Command, run in Step.CommandDir) the
// files its command names as arguments or as the program run, that are regular files, that neither the
// step nor any other step of g makes, that the step has no other record of, and that lie outside the
// system's folders and the folders the build writes wholesale (graph.Graph.GeneratedDirs: an
// out-of-source CMake or Meson build folder, whose link.txt and temporary files are the build's):
// inputs with the graph.CommandArg clue, not watched.
func Annotate(g *graph.Graph) {
	var produced map[string]*graph.Step // output path -> the step that makes it
	for _, s := range g.Steps {
		if s.Command == "" || s.Cmd().CommandDir == "" || !s.Live() || s.Failed != "" {
			continue
		}
		if produced == nil {
			produced = map[string]*graph.Step{}
			for _, t := range g.Steps {
				if t.Reference.Path != "" && produced[t.Reference.Path] == nil {
					produced[t.Reference.Path] = t
				}
				for _, o := range t.Outputs {
					if produced[o.Path] == nil {
						produced[o.Path] = t
					}
				}
			}
		}
		have := make(map[string]bool, len(s.Inputs))
		for _, in := range s.Inputs {
			have[in.File.Path] = true
		}
		words, links := parse(s.Command, s.Cmd().CommandDir)
		for _, l := range links {
			p := l.find(g)
			if p == "" || have[p] {
				continue
			}
			have[p] = true
			fi, err := fsrec.Stat(p)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			s.Inputs = append(s.Inputs, &graph.Input{
				File: graph.FileInfo{Path: p, Size: fi.Size(), MTimeNS: fi.ModTime().UnixNano(), Exists: true},
				How:  []graph.How{graph.CommandLine}, Detail: []string{"-l" + l.Name + " found in the -L folders of the command: " + cut(l.Line, 240)}})
			if d := produced[p]; d != nil {
				g.AddDep(s, d) // what the link takes is made by that step: its pending rebuild reaches s's programs
			}
		}
		ranBy(g, s, words, produced, have)
		for _, w := range words {
			if w.Role == Written {
				have[w.Path] = true // written first, then perhaps read: the step's own file
				continue
			}
			if have[w.Path] || produced[w.Path] != nil || sysdirs.System(w.Path, g.Workspace, g.TargetDir, g.BuildDir) || generatedDir(g, w.Path) {
				continue
			}
			have[w.Path] = true
			fi, err := fsrec.Stat(w.Path)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			detail := "named by the command: " + cut(w.Line, 240)
			if w.Role == Program {
				detail = "the program the command runs: " + cut(w.Line, 240)
			}
			s.Inputs = append(s.Inputs, &graph.Input{
				File: graph.FileInfo{Path: w.Path, Size: fi.Size(), MTimeNS: fi.ModTime().UnixNano(), Exists: true},
				How:  []graph.How{graph.CommandArg}, Detail: []string{detail}})
		}
	}
}

// ranBy sets s.Ran: the newest file that a line of s's command copies over one of s's outputs (the
// word after it on that line is the output), that no step makes and s does not declare as an input,
// when it is newer than s's reference. A command that writes a temporary file and copies it over its
// output only when they differ leaves the output's mtime alone; the temporary file's mtime says the
// command ran after the inputs older than it.
func ranBy(g *graph.Graph, s *graph.Step, words []Word, produced map[string]*graph.Step, declared map[string]bool) {
	outs := map[string]bool{s.Reference.Path: true}
	for _, o := range s.Outputs {
		outs[o.Path] = true
	}
	for i, w := range words {
		if w.Role != CopySource || produced[w.Path] != nil || declared[w.Path] || outs[w.Path] {
			continue
		}
		to := -1
		for j := i + 1; j < len(words) && words[j].Line == w.Line; j++ {
			if words[j].Role == Written {
				to = j
				break
			}
		}
		if to < 0 || !outs[words[to].Path] {
			continue
		}
		fi, err := fsrec.Stat(w.Path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if t := fi.ModTime().UnixNano(); t > s.Reference.MTimeNS && t > s.Cmd().Ran.MTimeNS {
			s.OwnCmd().Ran = graph.FileInfo{Path: w.Path, Size: fi.Size(), MTimeNS: t, Exists: true}
		}
	}
}

// find returns the file the linker takes for l among the -L folders ("" when none holds one, or it is
// a system folder's).
func (l Link) find(g *graph.Graph) string {
	for _, c := range l.Candidates() {
		if sysdirs.System(c, g.Workspace, g.TargetDir, g.BuildDir) {
			continue
		}
		if fi, err := fsrec.Stat(c); err == nil && fi.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// generatedDir reports whether p lies in one of the folders the build writes wholesale.
func generatedDir(g *graph.Graph, p string) bool { return g.InGeneratedDir(p) }

// cut shortens s to at most n bytes, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
