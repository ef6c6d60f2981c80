// Package depfile parses Make-style dependency files: the `.d` files written by gcc, clang and nvcc
// with -MD/-MMD/-MF, and rustc's --emit=dep-info files (which add `# env-dep:` comment lines).
//
// Syntax handled (as GNU make reads what gcc writes): `target...: prerequisite...` rules, backslash-newline
// continuations, `\ ` for a space inside a name, `\#` for '#', `$$` for '$', `\\` before a space, and
// CRLF line ends. Rules with no prerequisites (gcc -MP phony targets) are kept with an empty list.
package depfile

import (
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// Rule is one `targets: prerequisites` line of a dependency file.
type Rule struct {
	Targets []string
	Prereqs []string
}

// File is a parsed dependency file.
type File struct {
	Rules []Rule
	// Env holds rustc's `# env-dep:NAME=VALUE` comments (NAME with no value maps to "").
	Env map[string]string
}

// Inputs returns every prerequisite of every rule, first occurrence order, without duplicates.
func (f *File) Inputs() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range f.Rules {
		for _, p := range r.Prereqs {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// ParseFile reads and parses the dependency file at path as GNU make reads it. Errors name the file.
func ParseFile(path string) (*File, error) {
	return parseFile(path, cutAtNUL)
}

// ParseNinjaFile is ParseFile as Ninja reads a depfile: a NUL byte separates names, as whitespace does
// (make ignores the rest of the line after one).
func ParseNinjaFile(path string) (*File, error) {
	return parseFile(path, nulSeparates)
}

func parseFile(path string, nul nulRule) (*File, error) {
	data, err := safeio.ReadFile(path, safeio.MaxRecord)
	if err != nil {
		return nil, err
	}
	f, err := parseWith(string(data), nul)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// nulRule is what a NUL byte in a line means to the tool that reads the file: no name holds one.
type nulRule int

const (
	cutAtNUL     nulRule = iota // GNU make: "NUL character seen; rest of line ignored"
	nulSeparates                // Ninja's depfile parser: a separator, like a space
)

// Parse parses a dependency file. It returns an error for a line with names but no ':' separator,
// naming the line number.
func Parse(r io.Reader) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return parse(string(data))
}

// parse parses the text of a dependency file: names are slices of it where no escape or continuation
// made a copy necessary.
func parse(text string) (*File, error) { return parseWith(text, cutAtNUL) }

func parseWith(text string, nul nulRule) (*File, error) {
	return parseLines(func(yield func(string) bool) {
		for line := range strings.Lines(text) {
			if i := strings.IndexByte(line, 0); i >= 0 {
				if nul == nulSeparates {
					line = strings.ReplaceAll(line, "\x00", " ")
				} else {
					line = line[:i] // the line end and a continuation's backslash go with the rest
				}
			}
			// A line without its end, and one CR dropped as a line scanner drops it (CRLF ends).
			if !yield(strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")) {
				return
			}
		}
	})
}

// parseLines parses the physical lines of a dependency file, each without its line end.
func parseLines(lines iter.Seq[string]) (*File, error) {
	f := &File{Env: map[string]string{}}
	var logical strings.Builder // a logical line continued over physical ones
	lineNo, startLine := 0, 0
	flush := func(s string) error {
		if strings.TrimSpace(s) == "" {
			return nil
		}
		rule, ok := parseRule(s)
		if !ok {
			return fmt.Errorf("line %d: no ':' after target names", startLine)
		}
		f.Rules = append(f.Rules, rule)
		return nil
	}
	for line := range lines {
		lineNo++
		line = strings.TrimSuffix(line, "\r") // a second CR too (the split dropped one), as Parse always has
		if logical.Len() == 0 {
			startLine = lineNo
			if strings.HasPrefix(line, "#") {
				if rest, ok := strings.CutPrefix(line, "# env-dep:"); ok {
					k, v, _ := strings.Cut(rest, "=")
					f.Env[k] = v
				}
				continue
			}
		}
		// A line ending in an odd number of backslashes continues on the next line.
		if n := trailingBackslashes(line); n%2 == 1 {
			logical.WriteString(line[:len(line)-1])
			logical.WriteByte(' ')
			continue
		}
		if logical.Len() > 0 {
			logical.WriteString(line)
			line = logical.String()
			logical.Reset()
		}
		if err := flush(line); err != nil {
			return nil, err
		}
	}
	if err := flush(logical.String()); err != nil {
		return nil, err
	}
	return f, nil
}

func trailingBackslashes(s string) int {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n
}

// parseRule splits one logical line into targets and prerequisites. The separator is the first ':'
// followed by whitespace or the end of line, so that Windows drive letters (C:\x) survive.
func parseRule(s string) (Rule, bool) {
	words := splitWords(s)
	var r Rule
	seenColon := false
	for _, w := range words {
		if !seenColon {
			if w.text == ":" && !w.escaped {
				seenColon = true
				continue
			}
			if strings.HasSuffix(w.text, ":") && !w.escaped {
				r.Targets = append(r.Targets, strings.TrimSuffix(w.text, ":"))
				seenColon = true
				continue
			}
			r.Targets = append(r.Targets, w.text)
			continue
		}
		r.Prereqs = append(r.Prereqs, w.text)
	}
	return r, seenColon
}

type word struct {
	text    string
	escaped bool // ended in an escaped character (so a trailing ':' is part of the name)
}

func splitWords(s string) []word {
	if strings.ContainsAny(s, `\$`) {
		return splitEscaped(s)
	}
	// No escape can occur: words are the runs between blanks, as substrings of s (no copies).
	var out []word
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		if j > i {
			out = append(out, word{text: s[i:j]})
		}
		i = j
	}
	return out
}

// splitEscaped is splitWords for a line with backslashes or dollars.
func splitEscaped(s string) []word {
	var out []word
	var cur strings.Builder
	escapedLast := false
	emit := func() {
		if cur.Len() > 0 {
			out = append(out, word{cur.String(), escapedLast})
			cur.Reset()
		}
		escapedLast = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '#' || s[i+1] == '\t'):
			cur.WriteByte(s[i+1])
			i++
			escapedLast = true
		case c == '\\' && i+2 < len(s) && s[i+1] == '\\' && s[i+2] == ' ':
			// "\\ " is a literal backslash followed by a separator.
			cur.WriteByte('\\')
			i++
			escapedLast = false
		case c == '$' && i+1 < len(s) && s[i+1] == '$':
			cur.WriteByte('$')
			i++
			escapedLast = false
		case c == ' ' || c == '\t':
			emit()
		default:
			cur.WriteByte(c)
			escapedLast = false
		}
	}
	emit()
	return out
}
