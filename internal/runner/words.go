package runner

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// What a command executes is found before it runs from its text, not by tracing it:
//
//   - every argument is split into words at white space and the characters that delimit words in shells
//     and in the usual script languages (;|&()<>[]{},=` ; quotes are dropped), so that a path inside a
//     `sh -c "./target/debug/app 5"` string, a hyperfine command string, a `--bin=PATH` option or a
//     Python list literal is found;
//   - a script is read too (at most maxScriptBytes, regular files only, through internal/safeio): the
//     program when its first line is `#!`, and every argument that is a small regular file when the
//     command runs an interpreter (shells, python, perl, ruby, node…) or when the file starts with `#!`;
//     scripts named by a script are read in turn, maxScriptDepth deep;
//   - a word containing "/" names a file relative to the working folder (and, for a word read from a
//     script, to the script's folder); `~/` is $HOME.
//
// What only the command's execution decides is not seen: a path built from a variable ($DIR/app), a
// `cd` before a relative path, a binary chosen by another program (`cargo run`, which builds first), a
// script longer than maxScriptBytes. Such words are reported in Plan.Notes when they hold a $.

const (
	maxScriptBytes = 256 << 10
	maxScriptDepth = 3
)

// wordSeparators end a word (besides white space and control characters).
const wordSeparators = "`;|&()<>[]{},="

// dropQuotes removes quote characters, which shells remove from words ("$OUT"/app is $OUT/app).
var dropQuotes = strings.NewReplacer(`"`, "", `'`, "")

// splitWords splits s into words at white space and wordSeparators, with quotes dropped.
func splitWords(s string) []string {
	return strings.FieldsFunc(dropQuotes.Replace(s), func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune(wordSeparators, r)
	})
}

// interpreters are the base names of programs whose file arguments are scripts they run.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "ash": true, "busybox": true, "fish": true,
	"python": true, "python3": true, "perl": true, "ruby": true, "node": true, "lua": true, "tclsh": true,
	"make": true, "just": true, "nu": true, "pwsh": true,
}

// isInterpreter reports an interpreter's base name, also versioned (python3.11, bash5).
func isInterpreter(path string) bool {
	b := filepath.Base(path)
	return interpreters[b] || interpreters[strings.TrimRight(b, "0123456789.")]
}

// candidate is a file a command may execute, found in its text.
type candidate struct {
	path string // absolute
	// from is "" for a path named as a whole argument (or the program), else where it was found: "an
	// argument string" or the script's absolute path.
	from string
}

// scanner collects the candidates of one command.
type scanner struct {
	dir, home string
	out       []candidate
	seen      map[string]bool // candidate paths
	scripts   map[string]bool // scripts read
	vars      []string        // words holding a $ (known only when the command runs)
}

// commandCandidates returns every file the command names, in order, without repeats: the program, the
// arguments, the words inside argument strings and inside the scripts it runs (see the comment above);
// vars are the words that hold a variable reference, whose value only the command's execution decides.
func commandCandidates(prog string, argv []string, dir, home string) (cands []candidate, vars []string) {
	s := &scanner{dir: dir, home: home, seen: map[string]bool{}, scripts: map[string]bool{}}
	s.add(prog, "")
	interp := isInterpreter(prog)
	for _, a := range argv[1:] {
		if isInterpreter(a) {
			interp = true // env bash x.sh, nice python3 bench.py
		}
	}
	for _, a := range argv[1:] {
		// An argument without white space is a word of the command line itself (--bin=PATH included).
		from := ""
		if strings.ContainsFunc(a, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			from = "an argument string"
		}
		for _, w := range splitWords(a) {
			s.word(w, dir, from)
		}
		if p := s.resolve(a, dir); p != "" && (interp || startsWithShebang(p)) {
			s.script(p, 1)
		}
	}
	if startsWithShebang(prog) {
		s.script(prog, 1)
	}
	return s.out, s.vars
}

// word adds the file a word names, relative to base.
func (s *scanner) word(w, base, from string) {
	if strings.ContainsRune(w, '$') {
		s.vars = append(s.vars, w)
		return
	}
	if !strings.ContainsRune(w, '/') && from != "" {
		return // a bare name inside a string is a PATH lookup or plain text, not a workspace binary
	}
	if p := s.resolve(w, base); p != "" {
		s.add(p, from)
	}
}

// resolve makes a word absolute ("" when it cannot name a file).
func (s *scanner) resolve(w, base string) string {
	if w == "" || strings.HasPrefix(w, "-") && !strings.ContainsRune(w, '/') {
		return ""
	}
	if rest, ok := strings.CutPrefix(w, "~/"); ok {
		if s.home == "" {
			return ""
		}
		return filepath.Join(s.home, rest)
	}
	return absIn(base, w)
}

func (s *scanner) add(p, from string) {
	if !s.seen[p] {
		s.seen[p] = true
		s.out = append(s.out, candidate{path: p, from: from})
	}
}

// script reads the script at path (when it is a small regular file of text) and adds the files its
// words name, relative to the working folder and to the script's folder; the scripts it names are read
// in turn, up to maxScriptDepth.
func (s *scanner) script(path string, depth int) {
	if depth > maxScriptDepth || s.scripts[path] {
		return
	}
	s.scripts[path] = true
	fi, err := fsrec.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxScriptBytes {
		return
	}
	b, err := safeio.ReadFile(path, maxScriptBytes)
	if err != nil || bytes.IndexByte(b, 0) >= 0 {
		return // unreadable, or a binary (an ELF executable is no script)
	}
	sdir := filepath.Dir(path)
	for _, line := range strings.Split(string(b), "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") {
			continue // a comment (the #! line included)
		}
		for _, w := range splitWords(line) {
			for _, base := range []string{s.dir, sdir} {
				if strings.ContainsRune(w, '$') {
					s.vars = append(s.vars, w)
					break
				}
				if !strings.ContainsRune(w, '/') {
					break
				}
				p := s.resolve(w, base)
				if p == "" {
					break
				}
				if _, err := fsrec.Stat(p); err != nil {
					continue // try the script's folder
				}
				s.add(p, path)
				if startsWithShebang(p) || strings.HasSuffix(p, ".sh") {
					s.script(p, depth+1)
				}
				break
			}
		}
	}
}

// startsWithShebang reports a regular file whose first two bytes are "#!".
func startsWithShebang(path string) bool {
	f, err := safeio.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [2]byte
	n, _ := f.Read(b[:])
	return n == 2 && b[0] == '#' && b[1] == '!'
}
