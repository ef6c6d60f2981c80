package makefile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Database is GNU make's data base as `make -p` prints it (GNU make 4.3 observed; the layout is
// print_data_base and print_file in make's src/rule.c, file.c, variable.c): the makefiles read, the
// global variables and every file make knows, with its rule and make's own verdict under -q.
type Database struct {
	// Makefile is the makefile make was asked to read (absolute path); errors name it.
	Makefile string
	// Version is the first line of the header ("GNU Make 4.3"), "" if absent.
	Version string
	// MakefilesRead is MAKEFILE_LIST minus stalecheck's own guard makefile: the Makefile and every file
	// it included (depfiles included with `-include $(DEPS)` appear here), as make names them (relative
	// to the make folder unless written absolute).
	MakefilesRead []string
	// Variables holds the global variables (values as printed: recursive ones unexpanded).
	Variables map[string]Variable
	// Files is every file entry of the "# Files" section, by name as make spells it.
	Files map[string]*File
	// Order lists Files' names in the order make printed them.
	Order []string
	// PatternVars holds the pattern-specific variables: pattern → variables.
	PatternVars map[string][]Variable
}

// Variable is one variable of the data base.
type Variable struct {
	Name   string
	Value  string // as printed: a recursive (=) variable's value is not expanded
	Simple bool   // ":=" (simply expanded) rather than "=" (recursive)
	// Origin is make's comment above the definition: "makefile", "default", "environment", "automatic",
	// "command line", "override", "environment under -e".
	Origin string
	// From is the "file, line N" of a makefile definition ("Makefile:12"), "" if not from a makefile.
	From string
	// Append: a target-specific "+=", which adds to the value the variable has elsewhere.
	Append bool
}

// File is one entry of the "# Files" section.
type File struct {
	Name string
	// Prereqs are the normal prerequisites; OrderOnly those after '|'.
	Prereqs   []string
	OrderOnly []string
	// NotATarget: make printed "# Not a target:" (the file is only mentioned as a prerequisite, or is a
	// built-in suffix entry); such a file has no rule of its own.
	NotATarget   bool
	DoubleColon  bool
	Phony        bool
	Precious     bool
	Intermediate bool
	// ImplicitSearched: "# Implicit rule search has been done."; Stem is the pattern stem make matched
	// ("Implicit/static pattern stem: 'a'"), "" when none.
	ImplicitSearched bool
	Stem             string
	// Exists is false when make printed "# File does not exist."; MTimeChecked is false for
	// "# Modification time never checked." (make never looked at it).
	Exists       bool
	MTimeChecked bool
	// NeedsUpdate: "# Needs to be updated (-q is set)." — under -q this is make's verdict that its next
	// run would remake the file. Updated: "# Successfully updated." (up to date, or remade).
	NeedsUpdate bool
	Updated     bool
	// Failed: "# Failed to be updated." (a recipe stalecheck's guard refused, or an error).
	Failed bool
	// Recipe is the recipe lines (leading tab removed, unexpanded); RecipeFrom says where the rule comes
	// from: "/abs/Makefile:5" (make names the makefile as given: stalecheck passes it absolute), or "built-in".
	Recipe     []string
	RecipeFrom string
	// TargetVars are the target-specific variables of this file.
	TargetVars []Variable
	// Rules are a double-colon target's rules, each printed as an entry of its own; Prereqs, Recipe
	// and NeedsUpdate above are then those of the rules whose recipe writes the target (rewrites).
	Rules []DoubleColonRule
}

// HasRule reports whether make has a rule that can remake the file: a recipe (its own or from an
// implicit rule) or, for a target, prerequisites.
func (f *File) HasRule() bool {
	return len(f.Recipe) > 0 || (!f.NotATarget && len(f.Prereqs) > 0)
}

// ParseError is bad `make -p` output: it names the Makefile whose data base it was and the line.
type ParseError struct {
	Makefile string
	Line     int // 1-based line of make's stdout, 0 when the whole output is at fault
	What     string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: make -p data base, line %d: %s", e.Makefile, e.Line, e.What)
	}
	return fmt.Sprintf("%s: make -p data base: %s", e.Makefile, e.What)
}

const (
	dbStart  = "# Make data base, printed on "
	dbFinish = "# Finished Make data base on "
)

// ParseDatabase parses the stdout of `make -p` (with -q or -n: any recipe lines make echoes before
// the data base are skipped) for makefile (used in errors and the Database). It needs make's C-locale
// wording (LC_ALL=C). Output without the "# Make data base, printed on" or the "# Finished Make data
// base on" line, a file entry line with no ':' or a section it cannot follow gives a *ParseError.
//
// File names are printed by make unescaped ("sp ace.o: sp ace.c"), so a prerequisite list is split
// into names that make knows (every prerequisite has an entry of its own); see splitNames.
func ParseDatabase(r io.Reader, makefile string) (*Database, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{Makefile: makefile, What: err.Error()}
	}
	start, finish := -1, -1
	for i, l := range lines {
		if strings.HasPrefix(l, dbStart) {
			start = i // the last one: echoed recipe text never starts a line with '#' at column 0 here
		}
		if strings.HasPrefix(l, dbFinish) {
			finish = i
		}
	}
	if start < 0 {
		return nil, &ParseError{Makefile: makefile, What: "no \"" + strings.TrimSpace(dbStart) + "\" line (not GNU make, or make stopped before printing)"}
	}
	if finish < start {
		return nil, &ParseError{Makefile: makefile, What: "truncated: no \"" + strings.TrimSpace(dbFinish) + "\" line"}
	}
	db := &Database{Makefile: makefile, Variables: map[string]Variable{}, Files: map[string]*File{}, PatternVars: map[string][]Variable{}}
	for i := 0; i < start; i++ {
		if v, ok := strings.CutPrefix(lines[i], "# GNU Make "); ok {
			db.Version = "GNU Make " + v
		}
	}
	p := &dbParser{db: db, lines: lines, i: start + 1, end: finish}
	if err := p.run(); err != nil {
		return nil, err
	}
	if v, ok := db.Variables["MAKEFILE_LIST"]; ok {
		for _, m := range strings.Fields(v.Value) {
			if !strings.HasPrefix(baseName(m), guardPrefix) {
				db.MakefilesRead = append(db.MakefilesRead, m)
			}
		}
	}
	// Split prerequisite lists now that every file name is known.
	known := map[string]bool{}
	for n := range db.Files {
		known[n] = true
	}
	for _, f := range db.Files {
		for i := range f.Rules {
			f.Rules[i].Prereqs = splitNames(f.Rules[i].Prereqs, known)
		}
		if len(f.Rules) > 1 {
			f.joinRules()
		} else {
			f.Prereqs = splitNames(f.Prereqs, known)
		}
		f.OrderOnly = splitNames(f.OrderOnly, known)
	}
	if ph, ok := db.Files[".PHONY"]; ok {
		for _, n := range ph.Prereqs {
			if f, ok := db.Files[n]; ok {
				f.Phony = true
			}
		}
	}
	return db, nil
}

type dbParser struct {
	db    *Database
	lines []string
	i     int
	end   int
}

func (p *dbParser) errf(line int, format string, args ...any) error {
	return &ParseError{Makefile: p.db.Makefile, Line: line + 1, What: fmt.Sprintf(format, args...)}
}

func (p *dbParser) run() error {
	section := ""
	for p.i < p.end {
		l := p.lines[p.i]
		switch {
		case l == "# Variables":
			section = "vars"
		case l == "# Files":
			section = "files"
		case l == "# Directories", l == "# Implicit Rules", l == "# VPATH Search Paths":
			section = "skip"
		case l == "# Pattern-specific Variable Values":
			section = "pvars"
		case strings.HasPrefix(l, "# files hash-table stats"), strings.HasPrefix(l, "# strcache"):
			section = "skip"
		}
		var err error
		switch section {
		case "vars":
			err = p.variable(l, &p.db.Variables, "")
		case "pvars":
			err = p.patternVar(l)
		case "files":
			err = p.file()
			continue
		}
		if err != nil {
			return err
		}
		p.i++
	}
	return nil
}

// origins maps make's origin comments (variable.c print_variable) to Variable.Origin.
func originOf(comment string) (origin, from string, ok bool) {
	switch {
	case strings.HasPrefix(comment, "# makefile (from '"):
		return "makefile", fromOf(comment[len("# makefile (from "):]), true
	case comment == "# makefile":
		return "makefile", "", true
	case strings.HasPrefix(comment, "# 'override' directive (from '"):
		return "override", fromOf(comment[len("# 'override' directive (from "):]), true
	case comment == "# 'override' directive":
		return "override", "", true
	}
	for _, o := range []string{"default", "environment", "environment under -e", "automatic", "command line"} {
		if comment == "# "+o {
			return o, "", true
		}
	}
	return "", "", false
}

// fromOf turns "'Makefile', line 12)" into "Makefile:12".
func fromOf(s string) string {
	s = strings.TrimSuffix(s, ")")
	name, line, ok := strings.Cut(s, "', line ")
	if !ok {
		return strings.Trim(s, "'")
	}
	return strings.TrimPrefix(name, "'") + ":" + line
}

var assignOps = []string{" ::= ", " := ", " += ", " ?= ", " != ", " = "}

// assignment splits "NAME := value" (value may be empty, then the line ends "NAME := ").
func assignment(l string) (name, op, value string, ok bool) {
	best := -1
	for _, o := range assignOps {
		if k := strings.Index(l+" ", o); k >= 0 && (best < 0 || k < best) {
			best, op = k, o
		}
	}
	if best <= 0 {
		return "", "", "", false
	}
	name = l[:best]
	if strings.ContainsAny(name, " \t") {
		return "", "", "", false
	}
	rest := (l + " ")[best+len(op):]
	return name, strings.TrimSpace(op), strings.TrimSuffix(rest, " "), true
}

// variable reads one variable definition when l is an origin comment; define...endef blocks included.
func (p *dbParser) variable(l string, into *map[string]Variable, _ string) error {
	origin, from, ok := originOf(l)
	if !ok || p.i+1 >= p.end {
		return nil
	}
	next := p.lines[p.i+1]
	if strings.HasPrefix(next, "define ") {
		name := strings.TrimSpace(strings.TrimPrefix(next, "define "))
		var body []string
		j := p.i + 2
		for ; j < p.end && p.lines[j] != "endef"; j++ {
			body = append(body, p.lines[j])
		}
		if j >= p.end {
			return p.errf(p.i+1, "define %s without endef", name)
		}
		(*into)[name] = Variable{Name: name, Value: strings.Join(body, "\n"), Origin: origin, From: from}
		p.i = j
		return nil
	}
	name, op, value, ok := assignment(next)
	if !ok {
		return nil // a comment we do not use (hash-table stats and the like)
	}
	(*into)[name] = Variable{Name: name, Value: value, Simple: op == ":=" || op == "::=", Origin: origin, From: from}
	p.i++
	return nil
}

func (p *dbParser) patternVar(l string) error {
	pat, ok := strings.CutSuffix(l, " :")
	if !ok || strings.HasPrefix(l, "#") {
		return nil
	}
	m := map[string]Variable{}
	for p.i+1 < p.end && p.lines[p.i+1] != "" {
		p.i++
		l := p.lines[p.i]
		// make prints each as its origin, then "# NAME := value" (GNU make 4.3), whether it was set
		// with = or appended with +=: the value is what the pattern adds or sets, which is not told.
		if origin, from, ok := originOf(l); ok && p.i+1 < p.end {
			if name, _, value, ok := assignment(strings.TrimPrefix(p.lines[p.i+1], "# ")); ok {
				m[name] = Variable{Name: name, Value: value, Origin: origin, From: from}
				p.i++
				continue
			}
		}
		if err := p.variable(l, &m, ""); err != nil {
			return err
		}
	}
	for _, v := range m {
		p.db.PatternVars[pat] = append(p.db.PatternVars[pat], v)
	}
	sort.Slice(p.db.PatternVars[pat], func(a, b int) bool { return p.db.PatternVars[pat][a].Name < p.db.PatternVars[pat][b].Name })
	return nil
}

// file reads one entry of the Files section starting at p.i (or skips a blank or stray comment line).
func (p *dbParser) file() error {
	l := p.lines[p.i]
	if l == "" || l == "# Files" || (strings.HasPrefix(l, "#") && l != "# Not a target:") {
		if _, _, ok := originOf(l); !ok {
			p.i++
			return nil
		}
	}
	f := &File{Exists: true, MTimeChecked: true}
	var tvars []Variable
	start := p.i
	for p.i < p.end {
		l = p.lines[p.i]
		if l == "# Not a target:" {
			f.NotATarget = true
			p.i++
			continue
		}
		if origin, from, ok := originOf(l); ok && p.i+1 < p.end {
			// A target-specific variable: "target: NAME := value".
			tv := p.lines[p.i+1]
			if k := strings.Index(tv, ": "); k >= 0 {
				if name, op, value, ok := assignment(tv[k+2:]); ok {
					tvars = append(tvars, Variable{Name: name, Value: value, Simple: op == ":=", Origin: origin, From: from, Append: op == "+="})
					p.i += 2
					continue
				}
			}
		}
		break
	}
	if p.i >= p.end {
		return nil
	}
	l = p.lines[p.i]
	name, rest, dc, ok := ruleLine(l)
	if !ok {
		if p.i == start && strings.HasPrefix(l, "#") {
			p.i++
			return nil
		}
		return p.errf(p.i, "file entry %q has no ':'", l)
	}
	f.Name, f.DoubleColon, f.TargetVars = name, dc, tvars
	normal, order, _ := strings.Cut(rest, " | ")
	if strings.HasPrefix(rest, "| ") {
		normal, order = "", rest[2:]
	}
	f.Prereqs = strings.Fields(normal) // rejoined by splitNames once every name is known
	f.OrderOnly = strings.Fields(order)
	p.i++
	for p.i < p.end {
		l = p.lines[p.i]
		if l == "" {
			break
		}
		if strings.HasPrefix(l, "\t") {
			f.Recipe = append(f.Recipe, l[1:])
			p.i++
			continue
		}
		switch {
		case l == "#  Phony target (prerequisite of .PHONY).":
			f.Phony = true
		case l == "#  Precious file (prerequisite of .PRECIOUS).":
			f.Precious = true
		case l == "#  Intermediate file (prerequisite of .INTERMEDIATE).":
			f.Intermediate = true
		case l == "#  Implicit rule search has been done.":
			f.ImplicitSearched = true
		case strings.HasPrefix(l, "#  Implicit/static pattern stem: '"):
			f.Stem = strings.TrimSuffix(strings.TrimPrefix(l, "#  Implicit/static pattern stem: '"), "'")
		case l == "#  File does not exist.":
			f.Exists = false
		case l == "#  Modification time never checked.":
			f.MTimeChecked = false
		case l == "#  Needs to be updated (-q is set).":
			f.NeedsUpdate = true
		case l == "#  Successfully updated.":
			f.Updated = true
		case l == "#  Failed to be updated.":
			f.Failed = true
		case strings.HasPrefix(l, "#  recipe to execute (from '"):
			f.RecipeFrom = fromOf(strings.TrimSuffix(strings.TrimPrefix(l, "#  recipe to execute (from "), ":"))
		case l == "#  recipe to execute (built-in):":
			f.RecipeFrom = "built-in"
		}
		p.i++
	}
	if f.DoubleColon {
		f.Rules = []DoubleColonRule{{Prereqs: f.Prereqs, Recipe: f.Recipe, RecipeFrom: f.RecipeFrom, NeedsUpdate: f.NeedsUpdate}}
	}
	if old, dup := p.db.Files[f.Name]; dup && old.DoubleColon && f.DoubleColon {
		// Double-colon rules print one entry per rule: Parse joins them (joinRules).
		old.Rules = append(old.Rules, f.Rules...)
		return nil
	}
	if _, dup := p.db.Files[f.Name]; !dup {
		p.db.Order = append(p.db.Order, f.Name)
	}
	p.db.Files[f.Name] = f
	return nil
}

// ruleLine splits "name: prereqs" or "name:: prereqs" (or "name:" with none). The target name ends at
// the first ": " (or a trailing ':'), so "co:lon.o: co:lon.c" keeps its colon.
func ruleLine(l string) (name, rest string, doubleColon, ok bool) {
	if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "\t") {
		return "", "", false, false
	}
	k := strings.Index(l, ": ")
	if k < 0 {
		if !strings.HasSuffix(l, ":") || len(l) < 2 {
			return "", "", false, false
		}
		k = len(l) - 1
	}
	name, rest = l[:k], strings.TrimPrefix(l[k+1:], " ")
	if strings.HasSuffix(name, ":") && !strings.HasSuffix(name, "::") {
		name, doubleColon = strings.TrimSuffix(name, ":"), true
	}
	return name, rest, doubleColon, name != ""
}

// splitNames rejoins the space-separated words of a prerequisite list into the names make knows: make
// prints "sp ace.o" unescaped, and every prerequisite has a file entry of its own, so the words are cut
// into the fewest known names (dynamic programming over word runs); a run that matches no known name
// stays as single words.
func splitNames(words []string, known map[string]bool) []string {
	if len(words) < 2 {
		return words
	}
	all := true
	for _, w := range words {
		if !known[w] {
			all = false
			break
		}
	}
	if all {
		return words
	}
	n := len(words)
	const inf = 1 << 30
	cost := make([]int, n+1) // cost[i]: unknown words left in the best cut of words[i:]
	next := make([]int, n+1)
	for i := n - 1; i >= 0; i-- {
		cost[i], next[i] = inf, i+1
		var b bytes.Buffer
		for j := i; j < n && j-i < 16; j++ {
			if j > i {
				b.WriteByte(' ')
			}
			b.WriteString(words[j])
			c := cost[j+1]
			if !known[b.String()] {
				if j > i {
					continue
				}
				c++
			}
			if c < cost[i] {
				cost[i], next[i] = c, j+1
			}
		}
	}
	var out []string
	for i := 0; i < n; i = next[i] {
		out = append(out, strings.Join(words[i:next[i]], " "))
	}
	return out
}

// DoubleColonRule is one rule of a double-colon target: make runs its recipe when one of its own
// prerequisites is newer than the target, whatever the other rules say.
type DoubleColonRule struct {
	Prereqs     []string
	Recipe      []string
	RecipeFrom  string
	NeedsUpdate bool
}

// joinRules makes a double-colon target's Prereqs, Recipe and NeedsUpdate those of the rules whose
// recipe writes the target: a rule whose recipe never names it ($@ or its name), such as one that
// only prints that notes.txt changed, runs on every build once its prerequisite is newer, but what it
// does leaves the target as it was, so its prerequisites are no inputs of the target's content. When
// no rule names the target, all of them are taken, as make would take them.
func (f *File) joinRules() {
	writes := func(r DoubleColonRule) bool { return recipeNames(r.Recipe, f.Name) }
	named := slices.ContainsFunc(f.Rules, writes)
	f.Prereqs, f.Recipe, f.NeedsUpdate, f.RecipeFrom = nil, nil, false, ""
	for _, r := range f.Rules {
		if named && !writes(r) {
			continue
		}
		f.Prereqs = append(f.Prereqs, r.Prereqs...)
		f.Recipe = append(f.Recipe, r.Recipe...)
		f.NeedsUpdate = f.NeedsUpdate || r.NeedsUpdate
		if f.RecipeFrom == "" {
			f.RecipeFrom = r.RecipeFrom
		}
	}
}

// recipeNames reports whether recipe lines (unexpanded) name the target: $@ in any spelling ($@,
// $(@), ${@}, $(@D), $(@F)) or the target's own name as a word.
func recipeNames(recipe []string, target string) bool {
	for _, l := range recipe {
		if strings.Contains(l, "$@") || strings.Contains(l, "$(@") || strings.Contains(l, "${@") {
			return true
		}
		for _, w := range strings.FieldsFunc(l, func(r rune) bool {
			return r == ' ' || r == '\t' || r == ';' || r == '>' || r == '<' || r == '\'' || r == '"'
		}) {
			if w == target || strings.TrimPrefix(w, "./") == target || filepath.Base(target) == w && w != "" && filepath.Base(target) != target {
				return true
			}
		}
	}
	return false
}
