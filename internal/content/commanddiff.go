package content

import (
	"fmt"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/cinclude"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// inertCommandChange reports whether a step's command changed only in ways that cannot change what its
// compiles make: every word added or removed is a -D or -U option, and no file the compiles read (their
// sources and every header they reach, system headers included) mentions one of those macros. A Makefile
// that adds -DTRUTH_DESC to every compile while one source tests it changes that object only; the others
// hold the same code. why says what differs and why it does not matter.
func inertCommandChange(headers *cinclude.Cache, s *graph.Step, old, now string) (why string, inert bool) {
	if len(s.Cmd().Compiles) == 0 {
		return "", false
	}
	added, removed := wordDiff(strings.Fields(old), strings.Fields(now))
	if len(added)+len(removed) == 0 {
		return "", false // the same words, in another order or spacing: not judged here
	}
	var names, changed []string
	for _, l := range [][]string{removed, added} {
		for i := 0; i < len(l); i++ {
			w := l[i]
			if !strings.HasPrefix(w, "-D") && !strings.HasPrefix(w, "-U") {
				return "", false
			}
			def := w[2:]
			if def == "" {
				return "", false // -D NAME as two words: the diff cannot pair them
			}
			name, _, _ := strings.Cut(def, "=")
			names = append(names, name)
			changed = append(changed, w)
		}
	}
	var sources []string
	for _, c := range s.Cmd().Compiles {
		sources = append(sources, c.Source)
	}
	for _, c := range s.Cmd().Compiles {
		sp := cinclude.SearchPath{Quote: c.Quote, Dirs: c.Dirs, System: c.System, After: c.After}
		defs := cinclude.CommandDefines(strings.Fields(now))
		where, certain := headers.Mentions(sp, defs, names, c.Source)
		if where != "" || !certain {
			return "", false
		}
	}
	sort.Strings(changed)
	return fmt.Sprintf("the command differs only in %s, which no file the compile of %s reads mentions (its source and every header it reaches): the object holds the same code",
		strings.Join(changed, " "), strings.Join(sources, ", ")), true
}

// wordDiff is the multiset difference of two word lists: the words only now has (added) and only old
// has (removed).
func wordDiff(old, now []string) (added, removed []string) {
	count := map[string]int{}
	for _, w := range old {
		count[w]++
	}
	for _, w := range now {
		count[w]--
	}
	for _, w := range now {
		if count[w] < 0 {
			added = append(added, w)
			count[w]++
		}
	}
	for _, w := range old {
		if count[w] > 0 {
			removed = append(removed, w)
			count[w]--
		}
	}
	return added, removed
}
