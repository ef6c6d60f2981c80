package ninja

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

// MaxManifest is the largest build.ninja (or included file) read, in bytes.
const MaxManifest = 256 << 20

// ManifestEdge is one `build` statement of a Ninja manifest, its paths canonicalized as ninja does
// (relative to the build folder, `./` and `a/../` removed) and its bindings evaluated in ninja's
// scoping order (edge bindings, then the rule's, then the file and its parents; `$in` and `$out` are
// the shell-escaped explicit inputs and outputs).
type ManifestEdge struct {
	Rule string
	// Outputs are the explicit outputs; ImplicitOutputs follow `|` before the colon.
	Outputs, ImplicitOutputs []string
	// Explicit, Implicit (after `|`), OrderOnly (after `||`) and Validations (after `|@`) inputs.
	Explicit, Implicit, OrderOnly, Validations []string
	// Command is the evaluated `command`; Description the evaluated `description`.
	Command, Description string
	// Depfile is the evaluated `depfile` ("" when the edge has none); Deps is `deps` ("gcc", "msvc" or "").
	Depfile, Deps string
	// Dyndep is the evaluated `dyndep` path, if any; Rspfile the evaluated `rspfile` (a file ninja
	// writes before running the command, also under -n) and RspfileContent the evaluated
	// `rspfile_content` it writes there.
	Dyndep, Rspfile, RspfileContent string
	Restat, Generator               bool
	// File and Line locate the `build` line.
	File string
	Line int
}

// HashedCommand is the command as ninja hashes it into .ninja_log (src/graph.cc, Edge::EvaluateCommand
// with incl_rsp_file): the command, then ";rspfile=" and the response file's content when it has one. A
// change of the content alone makes ninja redo the edge.
func (e *ManifestEdge) HashedCommand() string {
	if e.RspfileContent == "" {
		return e.Command
	}
	return e.Command + ";rspfile=" + e.RspfileContent
}

// Manifest is a parsed build.ninja with its includes and subninjas.
type Manifest struct {
	// Dir is the build folder, the folder ninja runs in; every path is relative to it.
	Dir string
	// Files lists the manifest files read, build.ninja first.
	Files []string
	Edges []*ManifestEdge
	// Rules maps each rule name (file scope of build.ninja and included files) to its raw bindings.
	Rules map[string]map[string]string
	// Builddir is the top-level `builddir` variable: where ninja keeps .ninja_log and .ninja_deps.
	Builddir string
	// Defaults are the `default` targets.
	Defaults []string
}

// ManifestError names the manifest file and line of a syntax error.
type ManifestError struct {
	File   string
	Line   int
	Reason string
}

func (e *ManifestError) Error() string {
	if e.Line == 0 { // the whole file (an include nested too deep)
		return fmt.Sprintf("%s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

// ParseManifest reads dir/name (normally "build.ninja") and the files it includes, as ninja 1.11 reads
// them (src/manifest_parser.cc, src/lexer.in.re): `rule`, `build`, `default`, `pool`, `include`,
// `subninja`, variables and indented bindings, `$` escapes and line continuations. It does not run
// ninja. Errors are *ManifestError naming the file and line, or the read error naming the file.
func ParseManifest(dir, name string) (*Manifest, error) {
	m := &Manifest{Dir: dir, Rules: map[string]map[string]string{}}
	top := &scope{vars: map[string]string{}, rules: map[string]*rule{"phony": {name: "phony", b: map[string]evalStr{}}}}
	if err := m.parseFile(name, top, 0); err != nil {
		return m, err
	}
	m.Builddir = top.vars["builddir"]
	for n, r := range top.rules {
		if n == "phony" {
			continue
		}
		raw := map[string]string{}
		for k, v := range r.b {
			raw[k] = v.raw
		}
		m.Rules[n] = raw
	}
	return m, nil
}

type scope struct {
	vars   map[string]string
	rules  map[string]*rule
	parent *scope
}

func (s *scope) lookup(k string) string {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[k]; ok {
			return v
		}
	}
	return ""
}

func (s *scope) rule(n string) *rule {
	for ; s != nil; s = s.parent {
		if r, ok := s.rules[n]; ok {
			return r
		}
	}
	return nil
}

type rule struct {
	name string
	b    map[string]evalStr
}

// evalStr is a parsed value: literal runs and variable references, alternating.
type evalStr struct {
	parts []evalPart
	raw   string
}

type evalPart struct {
	text  string
	isVar bool
}

func (e evalStr) eval(look func(string) string) string {
	if len(e.parts) == 1 && !e.parts[0].isVar {
		return e.parts[0].text
	}
	var b strings.Builder
	for _, p := range e.parts {
		if p.isVar {
			b.WriteString(look(p.text))
		} else {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

type logicalLine struct {
	text   string
	line   int
	indent bool
}

// splitLines joins `$`-newline continuations (dropping the next line's leading spaces) and returns
// logical lines with their first physical line number.
func splitLines(data []byte) []logicalLine {
	out := make([]logicalLine, 0, bytes.Count(data, []byte{'\n'})+1)
	var b strings.Builder
	start, ln := 1, 1
	for i := 0; i < len(data); i++ {
		// Fast path: a whole physical line without '$' is taken as it is.
		if b.Len() == 0 {
			end := bytes.IndexByte(data[i:], '\n')
			if end >= 0 && bytes.IndexByte(data[i:i+end], '$') < 0 {
				out = append(out, logicalLine{text: strings.TrimSuffix(string(data[i:i+end]), "\r"), line: start})
				i += end
				ln++
				start = ln
				continue
			}
		}
		c := data[i]
		if c == '$' && i+1 < len(data) {
			n := data[i+1]
			if n == '\n' || (n == '\r' && i+2 < len(data) && data[i+2] == '\n') {
				if n == '\r' {
					i++
				}
				i++
				ln++
				for i+1 < len(data) && data[i+1] == ' ' {
					i++
				}
				continue
			}
			b.WriteByte(c)
			b.WriteByte(n)
			i++
			continue
		}
		if c == '\n' {
			s := strings.TrimSuffix(b.String(), "\r")
			out = append(out, logicalLine{text: s, line: start})
			b.Reset()
			ln++
			start = ln
			continue
		}
		b.WriteByte(c)
	}
	if b.Len() > 0 {
		out = append(out, logicalLine{text: strings.TrimSuffix(b.String(), "\r"), line: start})
	}
	for i := range out {
		t := out[i].text
		trimmed := strings.TrimLeft(t, " ")
		out[i].indent = len(trimmed) < len(t)
		out[i].text = trimmed
	}
	return out
}

func isVarChar(c byte, dot bool) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || (dot && c == '.')
}

// parseEval parses s from i. In path mode it stops at an unescaped space, ':' or '|'. It returns the
// value and the index after it.
func parseEval(s string, i int, pathMode bool) (evalStr, int, string) {
	var e evalStr
	begin := i
	// Fast path: no '$' before the end of the value.
	j := i
	for j < len(s) && s[j] != '$' && !(pathMode && (s[j] == ' ' || s[j] == ':' || s[j] == '|')) {
		j++
	}
	if j == len(s) || s[j] != '$' {
		if j > i {
			e.parts = []evalPart{{text: s[i:j]}}
		}
		e.raw = s[i:j]
		return e, j, ""
	}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			e.parts = append(e.parts, evalPart{text: lit.String()})
			lit.Reset()
		}
	}
	for i < len(s) {
		c := s[i]
		if pathMode && (c == ' ' || c == ':' || c == '|') {
			break
		}
		if c != '$' {
			lit.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return e, i, "'$' at the end of a line"
		}
		n := s[i+1]
		switch {
		case n == '$' || n == ' ' || n == ':':
			lit.WriteByte(n)
			i += 2
		case n == '{':
			j := i + 2
			for j < len(s) && isVarChar(s[j], true) {
				j++
			}
			if j >= len(s) || s[j] != '}' || j == i+2 {
				return e, i, "bad ${name} reference"
			}
			flush()
			e.parts = append(e.parts, evalPart{text: s[i+2 : j], isVar: true})
			i = j + 1
		case isVarChar(n, false):
			j := i + 1
			for j < len(s) && isVarChar(s[j], false) {
				j++
			}
			flush()
			e.parts = append(e.parts, evalPart{text: s[i+1 : j], isVar: true})
			i = j
		default:
			return e, i, fmt.Sprintf("bad '$' escape %q", s[i:i+2])
		}
	}
	flush()
	e.raw = s[begin:i]
	return e, i, ""
}

// parseLet parses `name = value`.
func parseLet(s string) (string, evalStr, string) {
	j := 0
	for j < len(s) && isVarChar(s[j], true) {
		j++
	}
	if j == 0 {
		return "", evalStr{}, fmt.Sprintf("expected a variable name, got %q", clip([]byte(s), 24))
	}
	name := s[:j]
	rest := strings.TrimLeft(s[j:], " ")
	if !strings.HasPrefix(rest, "=") {
		return "", evalStr{}, fmt.Sprintf("expected '=' after %q", name)
	}
	rest = strings.TrimLeft(rest[1:], " ")
	v, _, bad := parseEval(rest, 0, false)
	return name, v, bad
}

// canon canonicalizes a path the way ninja's CanonicalizePath does for POSIX paths.
func canon(p string) string {
	if p == "" {
		return p
	}
	c := path.Clean(p)
	return c
}

func shellEscape(p string) string {
	safe := true
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(isVarChar(c, false) || c == '+' || c == '.' || c == '/') {
			safe = false
			break
		}
	}
	if safe {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

func (m *Manifest) parseFile(name string, sc *scope, depth int) error {
	full := name
	if !filepath.IsAbs(full) {
		full = filepath.Join(m.Dir, name)
	}
	if depth > 32 {
		return &ManifestError{File: full, Reason: "includes nested more than 32 deep (a cycle?)"}
	}
	data, err := safeio.ReadFile(full, MaxManifest)
	if err != nil {
		return err
	}
	m.Files = append(m.Files, full)
	lines := splitLines(data)
	bad := func(l logicalLine, f string, a ...any) error {
		return &ManifestError{File: full, Line: l.line, Reason: fmt.Sprintf(f, a...)}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l.text == "" || l.text[0] == '#' {
			continue
		}
		if l.indent {
			return bad(l, "indented line outside a rule, build or pool block: %q", clip([]byte(l.text), 40))
		}
		// Gather the block's indented bindings.
		var block []logicalLine
		for i+1 < len(lines) && lines[i+1].indent || i+1 < len(lines) && (lines[i+1].text == "" || lines[i+1].text[0] == '#') && i+2 < len(lines) && lines[i+2].indent {
			i++
			if lines[i].text != "" && lines[i].text[0] != '#' {
				block = append(block, lines[i])
			}
		}
		kw, rest, _ := strings.Cut(l.text, " ")
		rest = strings.TrimLeft(rest, " ")
		switch kw {
		case "rule":
			r := &rule{name: strings.TrimSpace(rest), b: map[string]evalStr{}}
			if r.name == "" {
				return bad(l, "rule without a name")
			}
			if _, dup := sc.rules[r.name]; dup {
				return bad(l, "duplicate rule %q", r.name)
			}
			for _, b := range block {
				k, v, e := parseLet(b.text)
				if e != "" {
					return bad(b, "%s", e)
				}
				r.b[k] = v
			}
			if _, ok := r.b["command"]; !ok {
				// ninja refuses such a manifest (a file cut after a rule's name, most often).
				return bad(l, "rule %q has no command (ninja: expected 'command =' line)", r.name)
			}
			sc.rules[r.name] = r
		case "build":
			if err := m.parseEdge(full, l, rest, block, sc); err != nil {
				return err
			}
		case "default":
			e, _, err := parsePaths(rest)
			if err != "" {
				return bad(l, "%s", err)
			}
			for _, p := range e {
				m.Defaults = append(m.Defaults, canon(p.eval(sc.lookup)))
			}
		case "pool":
			// pool bindings (depth) are of no concern here.
		case "include", "subninja":
			v, _, e := parseEval(rest, 0, true)
			if e != "" {
				return bad(l, "%s", e)
			}
			p := v.eval(sc.lookup)
			child := sc
			if kw == "subninja" {
				child = &scope{vars: map[string]string{}, rules: map[string]*rule{}, parent: sc}
			}
			if err := m.parseFile(p, child, depth+1); err != nil {
				return err
			}
		default:
			k, v, e := parseLet(l.text)
			if e != "" {
				return bad(l, "%s", e)
			}
			sc.vars[k] = v.eval(sc.lookup)
		}
	}
	return nil
}

// parsePaths splits a path list at unescaped spaces. It stops at ':' and returns the rest index.
func parsePaths(s string) ([]evalStr, int, string) {
	var out []evalStr
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) || s[i] == ':' || s[i] == '|' {
			return out, i, ""
		}
		v, j, e := parseEval(s, i, true)
		if e != "" {
			return out, j, e
		}
		out = append(out, v)
		i = j
	}
}

func (m *Manifest) parseEdge(file string, l logicalLine, rest string, block []logicalLine, sc *scope) error {
	bad := func(at logicalLine, f string, a ...any) error {
		return &ManifestError{File: file, Line: at.line, Reason: fmt.Sprintf(f, a...)}
	}
	groups := map[string][]evalStr{}
	s := rest
	outs, i, e := parsePaths(s)
	if e != "" {
		return bad(l, "%s", e)
	}
	groups["out"] = outs
	if i < len(s) && s[i] == '|' {
		io, j, e := parsePaths(s[i+1:])
		if e != "" {
			return bad(l, "%s", e)
		}
		groups["implout"] = io
		i += 1 + j
	}
	if i >= len(s) || s[i] != ':' {
		return bad(l, "build line without ':'")
	}
	s = strings.TrimLeft(s[i+1:], " ")
	j := 0
	for j < len(s) && isVarChar(s[j], true) {
		j++
	}
	ruleName := s[:j]
	if ruleName == "" {
		return bad(l, "build line without a rule name")
	}
	s = s[j:]
	sep := "in"
	for {
		ps, k, e := parsePaths(s)
		if e != "" {
			return bad(l, "%s", e)
		}
		groups[sep] = append(groups[sep], ps...)
		s = s[k:]
		if s == "" {
			break
		}
		switch {
		case strings.HasPrefix(s, "||"):
			sep, s = "order", s[2:]
		case strings.HasPrefix(s, "|@"):
			sep, s = "valid", s[2:]
		case strings.HasPrefix(s, "|"):
			sep, s = "implicit", s[1:]
		default:
			return bad(l, "unexpected %q in build line", clip([]byte(s), 8))
		}
	}
	r := sc.rule(ruleName)
	if r == nil {
		return bad(l, "unknown build rule %q", ruleName)
	}
	ev := map[string]string{}
	for _, b := range block {
		k, v, e := parseLet(b.text)
		if e != "" {
			return bad(b, "%s", e)
		}
		ev[k] = v.eval(sc.lookup)
	}
	edgeLook := func(k string) string {
		if v, ok := ev[k]; ok {
			return v
		}
		return sc.lookup(k)
	}
	paths := func(g string) []string {
		var out []string
		for _, p := range groups[g] {
			if c := canon(p.eval(edgeLook)); c != "" {
				out = append(out, c)
			}
		}
		return out
	}
	me := &ManifestEdge{Rule: ruleName, File: file, Line: l.line,
		Outputs: paths("out"), ImplicitOutputs: paths("implout"),
		Explicit: paths("in"), Implicit: paths("implicit"), OrderOnly: paths("order"), Validations: paths("valid")}
	if len(me.Outputs)+len(me.ImplicitOutputs) == 0 {
		return bad(l, "build line without outputs")
	}
	var look func(string) string
	busy := map[string]bool{}
	look = func(k string) string {
		switch k {
		case "in", "in_newline":
			sepc := " "
			if k == "in_newline" {
				sepc = "\n"
			}
			q := make([]string, len(me.Explicit))
			for i, p := range me.Explicit {
				q[i] = shellEscape(p)
			}
			return strings.Join(q, sepc)
		case "out":
			q := make([]string, len(me.Outputs))
			for i, p := range me.Outputs {
				q[i] = shellEscape(p)
			}
			return strings.Join(q, " ")
		}
		if v, ok := ev[k]; ok {
			return v
		}
		if rb, ok := r.b[k]; ok {
			if busy[k] {
				return ""
			}
			busy[k] = true
			v := rb.eval(look)
			busy[k] = false
			return v
		}
		return sc.lookup(k)
	}
	me.Command = look("command")
	me.Description = look("description")
	me.Depfile = look("depfile")
	if me.Depfile != "" {
		me.Depfile = canon(me.Depfile)
	}
	me.Deps = look("deps")
	me.Dyndep = look("dyndep")
	me.Rspfile = look("rspfile")
	me.RspfileContent = look("rspfile_content")
	me.Restat = look("restat") != ""
	me.Generator = look("generator") != ""
	m.Edges = append(m.Edges, me)
	return nil
}
