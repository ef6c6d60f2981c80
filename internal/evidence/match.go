package evidence

import (
	"fmt"
	"sort"
	"strings"
)

// Outcome is Match's answer for one library.
type Outcome string

const (
	Matched    Outcome = "matched"     // one candidate's distinguishing content is inside
	Identical  Outcome = "identical"   // the candidates do not differ in content; their common content is inside
	NoneInside Outcome = "none-inside" // no candidate's content is inside
	Unprovable Outcome = "unprovable"  // the copies differ, but what tells them apart is not in the binary (LTO, gc)
)

// Presence is what the binary says about one feature.
type Presence string

const (
	Present Presence = "present"
	Absent  Presence = "absent"
	Unknown Presence = "unknown" // cannot be told (a symbol or code feature in a binary without .symtab)
)

// FeatureResult is one feature and its presence in the binary.
type FeatureResult struct {
	Feature
	Presence Presence
}

// CandidateResult is one candidate's evidence.
type CandidateResult struct {
	Path    string
	Matched bool // true for the copy found inside; for every copy when the outcome is Identical
	// Distinct are the features no other candidate has, with their presence in the binary.
	Distinct []FeatureResult
	// CommonPresent counts the features shared by all candidates that are present.
	CommonPresent int
	LTO           bool
}

// Result is Match's answer.
type Result struct {
	Outcome    Outcome
	Confidence string // "certain", "likely", "weak"; "" for NoneInside
	Candidates []CandidateResult
	Notes      []string
}

// MatchedPaths returns the paths of the matched candidates.
func (r *Result) MatchedPaths() []string {
	var out []string
	for _, c := range r.Candidates {
		if c.Matched {
			out = append(out, c.Path)
		}
	}
	return out
}

// weight ranks how strongly one present feature proves a copy: device code and machine code are
// proofs, a string literal nearly so, a symbol size a hint.
func weight(k FeatureKind) int {
	switch k {
	case Fatbin, Code:
		return 4
	case String:
		return 3
	}
	return 1
}

// Match decides which candidate copy's content is inside the binary. For each candidate it keeps the
// features unique to it among the candidates and tests each in the binary; a missing section is never
// counted against a copy (--gc-sections drops unused ones), only presence decides.
func Match(b *Binary, cands []*Candidate) (*Result, error) {
	// Copies with the same content (an OUT_DIR archive and the rlib that bundles it, two identical
	// builds) form one group: features are distinctive between groups, never within one.
	keysOf := make([]map[string]bool, len(cands))
	groupOf := make([]int, len(cands))
	var groupKeys []string
	for i, c := range cands {
		keysOf[i] = map[string]bool{}
		var ks []string
		for _, f := range c.Features {
			if !keysOf[i][f.Key] {
				keysOf[i][f.Key] = true
				ks = append(ks, f.Key)
			}
		}
		sort.Strings(ks)
		id := strings.Join(ks, "\x00")
		groupOf[i] = -1
		for g, k := range groupKeys {
			if k == id {
				groupOf[i] = g
			}
		}
		if groupOf[i] < 0 {
			groupOf[i] = len(groupKeys)
			groupKeys = append(groupKeys, id)
		}
	}
	ngroups := len(groupKeys)
	count := map[string]int{} // feature key → number of groups holding it
	for g := range groupKeys {
		for i := range cands {
			if groupOf[i] == g {
				for k := range keysOf[i] {
					count[k]++
				}
				break
			}
		}
	}
	// All strings to look for, in one pass over the binary.
	var wanted []string
	seenStr := map[string]bool{}
	for _, c := range cands {
		for _, f := range c.Features {
			if f.Kind == String && !seenStr[f.value] {
				seenStr[f.value] = true
				wanted = append(wanted, f.value)
			}
		}
	}
	// Entries are hashed per Match (only those that could equal a wanted one), so reparse each time;
	// the fatbin parse runs beside the string scan.
	b.fatbinMu.Lock()
	b.wantFatbin, b.fatbinDone = map[[2]uint32][]uint64{}, false
	b.fatbinMu.Unlock()
	for _, c := range cands {
		for _, f := range c.Features {
			if f.Kind == Fatbin {
				k := [2]uint32{uint32(f.fatbin.kind), f.fatbin.arch}
				b.wantFatbin[k] = append(b.wantFatbin[k], f.fatbin.size)
			}
		}
	}
	fatbinDone, symsDone := make(chan struct{}), make(chan struct{})
	go func() { b.hasFatbin(fatbinKey{}); close(fatbinDone) }()
	go func() { b.loadSymbols(); close(symsDone) }() // errors are seen again by presence
	strs := b.presentStrings(wanted)
	<-fatbinDone
	<-symsDone
	memo := map[string]Presence{}
	presence := func(f Feature) (Presence, error) {
		if p, ok := memo[f.Key]; ok {
			return p, nil
		}
		p, err := b.presence(f, strs)
		if err == nil {
			memo[f.Key] = p
		}
		return p, err
	}
	res := &Result{}
	scores := make([]int, ngroups)
	anyLTO := false
	for i, c := range cands {
		cr := CandidateResult{Path: c.Path, LTO: c.LTO}
		anyLTO = anyLTO || c.LTO
		seen := map[string]bool{}
		for _, f := range c.Features {
			if seen[f.Key] {
				continue
			}
			seen[f.Key] = true
			p, err := presence(f)
			if err != nil {
				return nil, err
			}
			switch count[f.Key] {
			case ngroups:
				if p == Present {
					cr.CommonPresent++
				}
			case 1:
				cr.Distinct = append(cr.Distinct, FeatureResult{f, p})
				if p == Present && (i == firstOf(groupOf, groupOf[i])) {
					scores[groupOf[i]] += weight(f.Kind)
				}
			}
		}
		sort.SliceStable(cr.Distinct, func(a, b int) bool { return weight(cr.Distinct[a].Kind) > weight(cr.Distinct[b].Kind) })
		res.Candidates = append(res.Candidates, cr)
	}
	if !b.hasSymtab {
		res.Notes = append(res.Notes, "the binary has no .symtab (stripped): strings and fatbinary entries decide; symbol and code features are unknown")
	}
	if anyLTO {
		res.Notes = append(res.Notes, "a candidate carries LTO intermediate code: its machine code is made at link time, so only strings and names can match")
	}
	common := 0
	for _, cr := range res.Candidates {
		if cr.CommonPresent > common {
			common = cr.CommonPresent
		}
	}
	if ngroups == 1 {
		// Nothing tells the copies apart (or there is one copy): their shared content decides.
		if common == 0 {
			res.Outcome = NoneInside
			return res, nil
		}
		if kind, ok := missingKind(b, cands[0], memo); ok {
			// Some content matches by chance (common strings, names), but the copy's device code or
			// machine code is not inside: the binary holds other code.
			res.Outcome = NoneInside
			res.Notes = append(res.Notes, "none of the copy's "+kind+" is inside, although some strings or names are: the binary holds other code")
			return res, nil
		}
		if missing := absentStrings(cands[0], memo); len(missing) > 0 {
			// Nothing to compare against, so every string literal the copy carries must be inside: a
			// version that differs only in a literal (a log line, a version tag) has identical code.
			res.Outcome = Unprovable
			res.Confidence = "weak"
			res.Notes = append(res.Notes, fmt.Sprintf("%d of the copy's string literals are not inside (e.g. %s): another version of this library, or strings dropped with unused sections; give the other copies as candidates to decide", len(missing), missing[0]))
			return res, nil
		}
		res.Outcome = Matched
		if len(cands) > 1 {
			res.Outcome = Identical
		}
		res.Confidence = confidenceOf(common * 3)
		for i := range res.Candidates {
			res.Candidates[i].Matched = true
		}
		return res, nil
	}
	best, second := -1, 0
	for g, s := range scores {
		if s > 0 && (best < 0 || s > scores[best]) {
			if best >= 0 {
				second = scores[best]
			}
			best = g
		} else if s > second {
			second = s
		}
	}
	switch {
	case best >= 0:
		res.Outcome = Matched
		for i := range res.Candidates {
			res.Candidates[i].Matched = groupOf[i] == best
		}
		res.Confidence = confidenceOf(scores[best])
		if second > 0 {
			res.Confidence = "weak"
			res.Notes = append(res.Notes, fmt.Sprintf("distinguishing content of more than one copy is present (scores %v); the highest wins", scores))
		}
		absentOwn := 0
		for _, f := range res.Candidates[firstOf(groupOf, best)].Distinct {
			if f.Presence == Absent {
				absentOwn++
			}
		}
		if absentOwn > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%d distinguishing feature(s) of the matched copy are absent (unused sections are dropped by --gc-sections; this is not evidence against it)", absentOwn))
		}
	case common > 0:
		res.Outcome = Unprovable
		res.Confidence = "weak"
		res.Notes = append(res.Notes, "content shared by the copies is inside, but none of what tells them apart is (LTO, inlining or --gc-sections left too little)")
	default:
		res.Outcome = NoneInside
	}
	return res, nil
}

// missingKind reports a feature kind (fatbin entries, code sections) of which the candidate has some,
// the binary can be checked for, and none is present. Unused sections may be dropped by --gc-sections,
// so one present feature of a kind clears it.
func missingKind(b *Binary, c *Candidate, memo map[string]Presence) (string, bool) {
	for _, k := range []FeatureKind{Fatbin, Code} {
		have, present, known := 0, 0, 0
		for _, f := range c.Features {
			if f.Kind != k {
				continue
			}
			have++
			switch memo[f.Key] {
			case Present:
				present++
				known++
			case Absent:
				known++
			}
		}
		if have > 0 && known > 0 && present == 0 {
			if k == Fatbin {
				return "CUDA fatbinary entries", true
			}
			return "code sections", true
		}
	}
	return "", false
}

// absentStrings returns the labels of a candidate's string features known to be absent.
func absentStrings(c *Candidate, memo map[string]Presence) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range c.Features {
		if f.Kind == String && memo[f.Key] == Absent && !seen[f.Key] {
			seen[f.Key] = true
			out = append(out, f.Label)
		}
	}
	return out
}

func firstOf(groupOf []int, g int) int {
	for i, x := range groupOf {
		if x == g {
			return i
		}
	}
	return -1
}

// confidenceOf turns a score (sum of present feature weights) into words.
func confidenceOf(score int) string {
	switch {
	case score >= 4:
		return "certain"
	case score >= 3:
		return "likely"
	}
	return "weak"
}
