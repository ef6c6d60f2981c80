package makefile

import (
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cinclude"
)

// expandRecipe evaluates a step's recipe lines the way make would before running them, for what the
// reader needs of them (the compiler's source and include folders): variable references $(NAME),
// ${NAME} and one-letter $X, with the file's target-specific values first, then the data base's; the
// automatic variables $@, $<, $^, $+, $* and $?; $$. A recursive variable is expanded in turn (depth
// bounded). A function call ($(patsubst …), $(shell …)) or a substitution reference ($(X:.c=.o)) is not
// evaluated: the line is dropped, never guessed, and complete is false. Recipe prefixes (@, -, +) are
// removed.
func (r *reader) expandRecipe(f *File, target string) (lines []string, complete bool) {
	auto := map[string]string{"@": target, "*": f.Stem}
	if len(f.Prereqs) > 0 {
		auto["<"] = f.Prereqs[0]
	}
	auto["^"] = strings.Join(dedup(f.Prereqs), " ")
	auto["+"] = strings.Join(f.Prereqs, " ")
	auto["?"] = auto["^"]
	complete = true
	if r.patternVarsFor(target) {
		// A pattern-specific variable applies, and the data base does not say whether it sets or
		// appends: the command is not told exactly.
		return nil, false
	}
	for _, line := range f.Recipe {
		s, ok := r.expand(line, f, auto, 0)
		if !ok {
			complete = false
			continue
		}
		lines = append(lines, strings.TrimLeft(strings.TrimSpace(s), "@-+"))
	}
	return lines, complete
}

// patternVarsFor reports whether a pattern-specific variable's pattern (one %) matches target.
func (r *reader) patternVarsFor(target string) bool {
	for pat, vs := range r.db.PatternVars {
		if len(vs) == 0 {
			continue
		}
		pre, suf, ok := strings.Cut(pat, "%")
		if !ok {
			if pat == target {
				return true
			}
			continue
		}
		if len(target) >= len(pre)+len(suf) && strings.HasPrefix(target, pre) && strings.HasSuffix(target, suf) {
			return true
		}
	}
	return false
}

func dedup(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func (r *reader) expand(s string, f *File, auto map[string]string, depth int) (string, bool) {
	if depth > 16 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		var name string
		switch open := s[i]; open {
		case '$':
			b.WriteByte('$')
			continue
		case '(', '{':
			closer := byte(')')
			if open == '{' {
				closer = '}'
			}
			end := strings.IndexByte(s[i:], closer)
			if end < 0 {
				return "", false
			}
			name = s[i+1 : i+end]
			i += end
			if strings.ContainsAny(name, " \t:$,") {
				return "", false // a function call or a substitution reference
			}
		default:
			name = string(open)
		}
		v, ok := r.lookup(name, f, auto)
		if !ok {
			continue // an undefined variable expands to nothing
		}
		if v.expand {
			var ok bool
			if v.value, ok = r.expand(v.value, f, auto, depth+1); !ok {
				return "", false
			}
		}
		b.WriteString(v.value)
	}
	return b.String(), true
}

type value struct {
	value  string
	expand bool // the value holds references (or doubled '$') still
}

func (r *reader) lookup(name string, f *File, auto map[string]string) (value, bool) {
	if v, ok := auto[name]; ok {
		return value{value: v}, true
	}
	// make -p prints a recursive variable as written and a simple one with each '$' doubled
	// (EXTRA := -DX=$$HOME prints as $$$$HOME): either way one expansion gives the value make uses.
	for _, tv := range f.TargetVars {
		if tv.Name == name {
			if g, ok := r.db.Variables[name]; ok && tv.Append {
				return value{g.Value + " " + tv.Value, true}, true // += adds to the global value
			}
			return value{tv.Value, true}, true
		}
	}
	if v, ok := r.db.Variables[name]; ok {
		return value{v.Value, true}, true
	}
	return value{}, false
}

// compileRuns finds the compiler runs among expanded recipe lines: a simple command with -c and one C,
// C++ or CUDA source, run in the make folder; its include folders as cinclude reads them.
func compileRuns(lines []string, dir string) []compileRun {
	var out []compileRun
	for _, l := range lines {
		words := strings.Fields(l)
		src, c := "", false
		for _, w := range words {
			if cinclude.ReadsSource(w) {
				c = true
			}
			if sourceExt[filepath.Ext(w)] && !strings.HasPrefix(w, "-") && src == "" {
				src = w
			}
		}
		if !c || src == "" {
			continue
		}
		if !filepath.IsAbs(src) {
			src = filepath.Join(dir, src)
		}
		out = append(out, compileRun{source: filepath.Clean(src), sp: cinclude.ParseSearchFlags(words, dir)})
	}
	return out
}

type compileRun struct {
	source string
	sp     cinclude.SearchPath
}
