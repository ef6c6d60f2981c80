package check

import (
	"path/filepath"
	"strings"
)

// GroupMin is the number of findings of one cause from which Group merges them: two stay apart (each
// still reads well on its own), three or more become one finding with a count.
const GroupMin = 3

// Group merges findings of one rule and one cause into the first of them, so that 20,000 undeclared
// sources of one package give one finding with a count rather than 20,000 warnings. One cause is what
// the user does about it: the same rule, severity, build system, affected roots and fix text (a fix
// names the file to change, so findings with one fix are settled by one change). Findings without a fix
// are never merged. The merged findings' first subjects go to the head's More, in order; their
// messages and evidence are dropped (`--all` reports them one by one). Order is kept: a group sits
// where its first finding was.
func Group(fs []Finding) []Finding {
	type key struct {
		rule, sys, fix, roots string
		sev                   Severity
	}
	count := map[key]int{}
	keyOf := func(f Finding) key {
		return key{f.Rule, f.System, f.Fix, strings.Join(f.Roots, "\x00"), f.Severity}
	}
	for _, f := range fs {
		if f.Fix != "" {
			count[keyOf(f)]++
		}
	}
	head := map[key]int{} // index in out of the group's head
	var out []Finding
	for _, f := range fs {
		k := keyOf(f)
		if f.Fix == "" || count[k] < GroupMin {
			out = append(out, f)
			continue
		}
		if i, ok := head[k]; ok {
			subj := ""
			if len(f.Subjects) > 0 {
				subj = f.Subjects[0]
			}
			out[i].More = append(out[i].More, subj)
			continue
		}
		head[k] = len(out)
		f.More = make([]string, 0, count[k]-1)
		out = append(out, f)
	}
	return out
}

// Count is the number of findings f stands for: itself and those Group merged into it.
func (f Finding) Count() int { return 1 + len(f.More) }

// CommonFolder is the deepest folder holding every path of the group (the head's first subject and
// More), "" when they share none but the root.
func (f Finding) CommonFolder() string {
	var paths []string
	if len(f.Subjects) > 0 {
		paths = append(paths, f.Subjects[0])
	}
	paths = append(paths, f.More...)
	if len(paths) == 0 {
		return ""
	}
	common := filepath.Dir(paths[0])
	for _, p := range paths[1:] {
		for common != "/" && common != "." && !within(p, common) {
			common = filepath.Dir(common)
		}
	}
	if common == "/" || common == "." {
		return ""
	}
	return common
}

func within(p, dir string) bool {
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}
