package evidence

import (
	"bytes"
	"fmt"
	"index/suffixarray"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/binfmt"
)

// Outcome is Match's answer for one library.
type Outcome string

const (
	Matched    Outcome = "matched"     // one candidate's distinguishing content is inside
	Identical  Outcome = "identical"   // the candidates do not differ in content; their common content is inside
	NoneInside Outcome = "none-inside" // no candidate's content is inside
	Unprovable Outcome = "unprovable"  // the copies differ, but what tells them apart is not in the binary (LTO, gc)
	// CannotTell ("unknown"): nothing that could decide can be checked in this binary (symbols and
	// code of a stripped binary), or no candidate holds native content to compare.
	CannotTell Outcome = "unknown"
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
	// NoNative is true for a candidate that holds no native object (a Rust-only rlib, the rlib of a
	// -sys crate that links a system library): it has nothing to compare and is never matched.
	NoNative bool
}

// Result is Match's answer.
type Result struct {
	Outcome    Outcome
	Confidence string // "certain", "likely", "weak"; "" for NoneInside and Unknown
	Candidates []CandidateResult
	Notes      []string
	// Groups counts the content versions among the candidates with native content (copies of the
	// same content, an OUT_DIR archive and the rlib that bundles it, are one).
	Groups int
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
	case String, Data:
		return 3
	}
	return 1
}

// Match decides which candidate copy's content is inside the binary. For each candidate it keeps the
// features that tell it apart: those no other copy has and no other copy's content implies (a string
// that is a substring of another copy's string is present whenever that one is, because linkers
// tail-merge string sections; a code or data section that lies inside another copy's section at the
// same symbol). Each is tested in the binary; a missing section is never counted against a copy
// (--gc-sections drops unused ones), only presence decides, with one exception: a copy whose
// distinguishing string is absent while a string that would come with it (from the same section of the
// same member, or a substring of it) is present is ruled out, and when every other copy is ruled out
// so, the remaining copy whose content is present is matched ("likely"). Candidates without native
// content (NoNative) take no part. The outcome is CannotTell when nothing that could decide can be checked
// (a stripped binary) or no candidate has native content.
func Match(b *Binary, cands []*Candidate) (*Result, error) {
	cands = bundledPart(cands)
	// Copies with the same content (an OUT_DIR archive and the rlib that bundles it, two identical
	// builds) form one group: features are distinctive between groups, never within one.
	keysOf := make([]map[string]bool, len(cands))
	groupOf := make([]int, len(cands))
	var groupKeys []string
	var reps []int // a representative candidate per group
	for i, c := range cands {
		keysOf[i] = map[string]bool{}
		groupOf[i] = -1
		if !c.Native && len(c.Features) == 0 {
			continue // nothing to compare
		}
		var ks []string
		for _, f := range c.Features {
			if !keysOf[i][f.Key] {
				keysOf[i][f.Key] = true
				ks = append(ks, f.Key)
			}
		}
		sort.Strings(ks)
		id := strings.Join(ks, "\x00")
		for g, k := range groupKeys {
			if k == id {
				groupOf[i] = g
			}
		}
		if groupOf[i] < 0 {
			groupOf[i] = len(groupKeys)
			groupKeys = append(groupKeys, id)
			reps = append(reps, i)
		}
	}
	ngroups := len(groupKeys)
	count := map[string]int{} // feature key → number of groups holding it
	for _, i := range reps {
		for k := range keysOf[i] {
			count[k]++
		}
	}
	imp := newImplier(cands, reps)
	// All strings to look for, in one pass over the binary, unless Prepare looked for them already.
	w := wantsOf(cands)
	var strs map[string]bool
	if b.prep != nil && b.prep.covers(w) {
		strs = b.prep.found
	} else {
		// Entries are hashed per Match (only those that could equal a wanted one), so reparse each
		// time; the fatbin parse runs beside the string scan.
		b.fatbinMu.Lock()
		b.wantFatbin, b.fatbinDone, b.prep = w.fatbin, false, nil
		b.fatbinMu.Unlock()
		fatbinDone, symsDone := make(chan struct{}), make(chan struct{})
		go func() { b.hasFatbin(fatbinKey{}); close(fatbinDone) }()
		go func() { b.needSymbols(w.symbols); close(symsDone) }() // errors are seen again by presence
		strs = b.presentStrings(w.strings)
		<-fatbinDone
		<-symsDone
	}
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
	res := &Result{Groups: ngroups}
	scores := make([]int, ngroups)
	ownPresent := make([]int, ngroups) // present features of the group's representative, of any kind
	anyLTO, anyUnknown := false, false
	var noNative []string
	for i, c := range cands {
		cr := CandidateResult{Path: c.Path, LTO: c.LTO, NoNative: groupOf[i] < 0}
		anyLTO = anyLTO || c.LTO
		if cr.NoNative {
			noNative = append(noNative, filepath.Base(c.Path))
			res.Candidates = append(res.Candidates, cr)
			continue
		}
		g := groupOf[i]
		rep := reps[g] == i
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
			if p == Unknown {
				anyUnknown = true
			}
			if p == Present && rep {
				ownPresent[g]++
			}
			switch {
			case count[f.Key] == ngroups:
				if p == Present {
					cr.CommonPresent++
				}
			case count[f.Key] == 1 && !imp.implied(f, g):
				cr.Distinct = append(cr.Distinct, FeatureResult{f, p})
				if p == Present && rep {
					scores[g] += weight(f.Kind)
				}
			}
		}
		sort.SliceStable(cr.Distinct, func(a, b int) bool { return weight(cr.Distinct[a].Kind) > weight(cr.Distinct[b].Kind) })
		res.Candidates = append(res.Candidates, cr)
	}
	if !b.hasSymtab {
		res.Notes = append(res.Notes, "the binary has no .symtab (stripped): strings and fatbinary entries decide; symbol, code and data features are unknown")
	}
	if anyLTO {
		res.Notes = append(res.Notes, "a candidate carries LTO intermediate code: its machine code is made at link time, so only strings and names can match")
	}
	if len(noNative) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: no native object to compare (the rlib of a -sys crate that links a shared system library, or Rust code only)", strings.Join(noNative, ", ")))
	}
	if ngroups == 0 {
		res.Outcome = CannotTell
		return res, nil
	}
	common := 0
	for _, cr := range res.Candidates {
		if cr.CommonPresent > common {
			common = cr.CommonPresent
		}
	}
	if ngroups == 1 {
		first := reps[0]
		// Nothing tells the copies apart (or there is one copy): their shared content decides.
		if common == 0 {
			res.Outcome = NoneInside
			if len(cands[first].Features) == 0 {
				// Nothing of the copy could be looked for: absence is not shown.
				res.Outcome = CannotTell
				res.Notes = append(res.Notes, "cannot tell: the copy has no string, symbol, code or data feature to look for")
				return res, nil
			}
			if anyUnknown {
				res.Outcome = CannotTell
				res.Notes = append(res.Notes, "cannot tell: none of the copy's strings or fatbinary entries is inside, and its symbols and code cannot be checked")
			}
			return res, nil
		}
		if kind, ok := missingKind(b, cands[first], memo); ok {
			// Some content matches by chance (common strings, names), but the copy's device code or
			// machine code is not inside: the binary holds other code.
			res.Outcome = NoneInside
			res.Notes = append(res.Notes, "none of the copy's "+kind+" is inside, although some strings or names are: the binary holds other code")
			return res, nil
		}
		if kept, _ := absentStrings(cands[first], memo, b.hasSymtab); len(kept) > 0 {
			// A literal is absent where the link kept its section or its function: the binary holds
			// another version of this member.
			res.Outcome = NoneInside
			res.Notes = append(res.Notes, fmt.Sprintf("%d of the copy's string literals are not inside where the link kept them with the code that uses them (e.g. %s): the binary holds another version of this library", len(kept), kept[0]))
			return res, nil
		}
		if _, missing := absentStrings(cands[first], memo, b.hasSymtab); len(missing) > 0 {
			// Nothing to compare against, so every string literal the copy carries must be inside: a
			// version that differs only in a literal (a log line, a version tag) has identical code.
			res.Outcome = Unprovable
			res.Confidence = "weak"
			res.Notes = append(res.Notes, fmt.Sprintf("%d of the copy's string literals are not inside (e.g. %s): another version of this library, or strings dropped with unused sections; give the other copies as candidates to decide", len(missing), missing[0]))
			return res, nil
		}
		res.Outcome = Matched
		if countNative(groupOf) > 1 {
			res.Outcome = Identical
		}
		res.Confidence = confidenceOf(common * 3)
		for i := range res.Candidates {
			res.Candidates[i].Matched = groupOf[i] == 0
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
	if best >= 0 && second == scores[best] {
		// A tie between copies: neither is proven, whatever the order of the candidates.
		res.Outcome = Unprovable
		res.Confidence = "weak"
		res.Notes = append(res.Notes, fmt.Sprintf("distinguishing content of more than one copy is present in equal measure (scores %v): cannot tell which", scores))
		return res, nil
	}
	if best >= 0 {
		// The copy with the most distinguishing content inside may still hold other code where the
		// binary has the same name: a symbol of another size, a code section other bytes. Then its
		// shared strings came from an older version of another copy, not from it (a copy rewritten in
		// place since): it is not proven inside.
		for _, f := range res.Candidates[reps[best]].Distinct {
			if f.Presence == Absent && b.otherForm(f.Feature) {
				res.Outcome = Unprovable
				res.Confidence = "weak"
				res.Notes = append(res.Notes, fmt.Sprintf("the copy whose distinguishing content is most present holds other code where the binary has the same name (%s): none of the copies on disk is proven inside; an older content of one may be", f.Label))
				return res, nil
			}
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
		for _, f := range res.Candidates[reps[best]].Distinct {
			if f.Presence == Absent {
				absentOwn++
			}
		}
		if absentOwn > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("%d distinguishing feature(s) of the matched copy are absent (unused sections are dropped by --gc-sections; this is not evidence against it)", absentOwn))
		}
		return res, nil
	}
	// No copy has distinguishing content inside. A copy whose distinguishing string is absent while
	// content that would come with it is present is ruled out; if all but one are, that one is inside.
	var left []int // groups not ruled out
	var why []string
	for _, i := range reps {
		if r, out := ruledOut(cands[i], res.Candidates[i], memo); out {
			why = append(why, r)
			continue
		}
		left = append(left, groupOf[i])
	}
	if len(left) == 1 && ownPresent[left[0]] > 0 {
		g := left[0]
		res.Outcome = Matched
		res.Confidence = "likely"
		for i := range res.Candidates {
			res.Candidates[i].Matched = groupOf[i] == g
		}
		res.Notes = append(res.Notes, fmt.Sprintf("nothing inside is unique to this copy, but every other copy is ruled out: %s", strings.Join(why, "; ")))
		return res, nil
	}
	anyPresent := common > 0
	for _, n := range ownPresent {
		anyPresent = anyPresent || n > 0
	}
	switch {
	case anyPresent:
		res.Outcome = Unprovable
		res.Confidence = "weak"
		res.Notes = append(res.Notes, "content shared by the copies is inside, but none of what tells them apart is (LTO, inlining or --gc-sections left too little)")
	case anyUnknown:
		res.Outcome = CannotTell
		res.Notes = append(res.Notes, "cannot tell: no copy's strings or fatbinary entries are inside, and symbols and code cannot be checked")
	default:
		res.Outcome = NoneInside
	}
	return res, nil
}

// ruledOut reports whether a copy cannot be the one inside: one of its distinguishing strings or
// fatbinary entries is absent while content that a link of it would carry along is present: a string
// or entry of the same section of the same member (the linker keeps or drops an input section whole),
// or a string that is a substring of the absent one. Copies with LTO code are never ruled out (LTO
// drops single literals).
func ruledOut(c *Candidate, cr CandidateResult, memo map[string]Presence) (string, bool) {
	if c.LTO {
		return "", false
	}
	for _, d := range cr.Distinct {
		if d.Presence != Absent || (d.Kind != String && d.Kind != Fatbin) {
			continue
		}
		for _, f := range c.Features {
			if f.Kind != d.Kind || f.Key == d.Key || memo[f.Key] != Present || f.Member != d.Member || f.Section != d.Section {
				continue
			}
			return fmt.Sprintf("%s of %s is absent although %s of the same section is present", d.Label, filepath.Base(c.Path), f.Label), true
		}
		if d.Kind == String {
			for k, p := range memo {
				if v, ok := strings.CutPrefix(k, "string:"); ok && p == Present && v != d.value && strings.Contains(d.value, v) {
					return fmt.Sprintf("%s of %s is absent although its part %q is present", d.Label, filepath.Base(c.Path), v), true
				}
			}
		}
	}
	return "", false
}

func countNative(groupOf []int) int {
	n := 0
	for _, g := range groupOf {
		if g >= 0 {
			n++
		}
	}
	return n
}

// implier answers whether another group's content implies a feature: a string contained in one of
// its strings, or a code or data section found inside one of its sections at the same symbol.
type implier struct {
	cands   []*Candidate
	reps    []int
	strIdx  []*suffixarray.Index        // per group, over its strings joined by NUL; nil until needed
	codeIdx []map[string][]*codeSection // per group: anchor symbol → sections
	done    []bool
}

func newImplier(cands []*Candidate, reps []int) *implier {
	return &implier{cands: cands, reps: reps, strIdx: make([]*suffixarray.Index, len(reps)),
		codeIdx: make([]map[string][]*codeSection, len(reps)), done: make([]bool, len(reps))}
}

func (m *implier) build(g int) {
	if m.done[g] {
		return
	}
	m.done[g] = true
	var buf []byte
	m.codeIdx[g] = map[string][]*codeSection{}
	for _, f := range m.cands[m.reps[g]].Features {
		switch f.Kind {
		case String:
			buf = append(append(buf, f.value...), 0)
		case Code, Data:
			m.codeIdx[g][f.code.symbol] = append(m.codeIdx[g][f.code.symbol], f.code)
		}
	}
	if len(buf) > 0 {
		m.strIdx[g] = suffixarray.New(buf)
	}
}

// implied reports whether a feature of group g is implied by the content of another group.
func (m *implier) implied(f Feature, g int) bool {
	for h := range m.reps {
		if h == g {
			continue
		}
		switch f.Kind {
		case String:
			m.build(h)
			if m.strIdx[h] != nil && len(m.strIdx[h].Lookup([]byte(f.value), 1)) > 0 {
				return true
			}
		case Code, Data:
			m.build(h)
			for _, o := range m.codeIdx[h][f.code.symbol] {
				if contains(o, f.code) {
					return true
				}
			}
		}
	}
	return false
}

// contains reports whether section c lies inside section o at the same anchor symbol, both masks
// applied: then c's bytes are in any binary that holds o.
func contains(o, c *codeSection) bool {
	if o.symOff < c.symOff {
		return false
	}
	start := o.symOff - c.symOff
	if start+uint64(len(c.data)) > uint64(len(o.data)) {
		return false
	}
	win := append([]byte(nil), o.data[start:start+uint64(len(c.data))]...)
	own := append([]byte(nil), c.data...)
	binfmt.ApplyMask(win, c.mask)
	var shifted []binfmt.ByteRange
	for _, r := range o.mask {
		if r.End > start && r.Start < start+uint64(len(c.data)) {
			shifted = append(shifted, binfmt.ByteRange{Start: max(r.Start, start) - start, End: min(r.End, start+uint64(len(c.data))) - start})
		}
	}
	binfmt.ApplyMask(own, shifted)
	binfmt.ApplyMask(win, shifted)
	return bytes.Equal(win, own)
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

// absentStrings returns the labels of a candidate's string features known to be absent where the
// linker would have kept them had this copy gone in. kept: a literal that present code or data of its
// member points at through a relocation (the link that kept that section kept what it points at; in a
// merged section, the entry itself), or one beside a present feature of the same non-merged section
// (the linker keeps or drops an input section whole). likely: in a binary without a symbol table
// (code cannot be located), any literal of a member with something present. A present neighbour in a
// merged section vouches for nothing: it may be another object's entry. A literal that --gc-sections dropped with
// the code using it (std's unused parts in a staticlib), or any literal of a member the link never
// took, is no evidence against the copy.
func absentStrings(c *Candidate, memo map[string]Presence, symtab bool) (kept, likely []string) {
	type place struct{ member, section string }
	presentIn := map[place]bool{}
	memberIn := map[string]bool{}
	refs := map[place][]int64{}
	for _, f := range c.Features {
		if memo[f.Key] != Present {
			continue
		}
		presentIn[place{f.Member, f.Section}] = true
		memberIn[f.Member] = true
		if f.code != nil {
			for sec, offs := range f.code.refs {
				refs[place{f.Member, sec}] = append(refs[place{f.Member, sec}], offs...)
			}
		}
	}
	seen := map[string]bool{}
	for _, f := range c.Features {
		if f.Kind != String || memo[f.Key] != Absent || seen[f.Key] {
			continue
		}
		seen[f.Key] = true
		at := place{f.Member, f.Section}
		// Merged sections (.rodata.str1.1, .rodata.cst16) pool entries that other objects share and
		// that a linker may keep one by one: only a relocation to the entry itself vouches.
		merged := strings.Contains(f.Section, ".str") || strings.Contains(f.Section, ".cst")
		pointed := false
		for _, t := range refs[at] {
			// x86-64's PC-relative forms carry the target minus 4.
			lo, hi := int64(f.off), int64(f.off)+int64(len(f.value))
			if !merged || t >= lo && t <= hi || t+4 >= lo && t+4 <= hi {
				pointed = true
				break
			}
		}
		switch {
		case pointed || !merged && presentIn[at]:
			kept = append(kept, f.Label)
		case !symtab && memberIn[f.Member]:
			likely = append(likely, f.Label)
		}
	}
	return kept, likely
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

// bundledPart narrows each rlib among the candidates to the members named as those of the plain
// archives among them: an rlib bundles every static library its crate links (Debian's blake3 bundles
// two archives of one build script), and only one library's members are a copy of that library. The
// candidates given are not changed; an rlib sharing no member name keeps all of its features.
func bundledPart(cands []*Candidate) []*Candidate {
	names := map[string]bool{}
	for _, c := range cands {
		if !strings.HasSuffix(c.Path, ".rlib") {
			for _, m := range c.Members {
				names[m] = true
			}
		}
	}
	if len(names) == 0 {
		return cands
	}
	out := append([]*Candidate(nil), cands...)
	for i, c := range out {
		if !strings.HasSuffix(c.Path, ".rlib") {
			continue
		}
		var fs []Feature
		for _, f := range c.Features {
			if names[f.Member] {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 || len(fs) == len(c.Features) {
			continue
		}
		part := *c
		part.Features, part.Members = fs, nil
		for _, m := range c.Members {
			if names[m] {
				part.Members = append(part.Members, m)
			}
		}
		out[i] = &part
	}
	return out
}
