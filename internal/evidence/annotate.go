package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/kvfile"
)

// Annotate adds content evidence to the graph where it matters to the checks: for every root and
// every library of which several OUT_DIR copies exist in its profile (duplicates) or in its link-search
// folders (shadowing), it proves from the root's bytes which copy is inside. Answers are cached in
// cacheDir ("" = no cache) keyed by device, inode, size and mtime of the binary and of every copy, so
// `check` stays fast when nothing changed. Unreadable binaries or copies become graph problems. It
// also fills g.DuplicateMembers (members.go).
func Annotate(g *graph.Graph, cacheDir string) {
	cache := loadCache(cacheDir)
	defer cache.Save()
	annotateNeeded(g)
	annotateDuplicateMembers(g) // members.go
	annotateOrphanMembers(g)    // orphans.go
	idx := outputIndex(g)
	for _, r := range g.Roots {
		if r.Step == nil || r.Kind == "lib" {
			continue
		}
		copiesByLib := rootCopies(g, r, idx)
		if len(copiesByLib) > 0 && !isELF(r.File.Path) {
			g.Notes = append(g.Notes, fmt.Sprintf("%s is not an ELF file: no content evidence for its libraries", r.File.Path))
			continue
		}
		for name, copies := range copiesByLib {
			if len(copies) < 2 {
				continue
			}
			cm := graph.ContentMatch{Root: r, Library: name, Copies: copies}
			key, ok := cacheKey(r.File.Path, copies)
			if ok {
				if hit, found := cache.Get(key); found {
					cm.Matched, cm.Outcome, cm.Confidence, cm.Evidence, cm.Members = hit.Matched, hit.Outcome, hit.Confidence, hit.Evidence, hit.Members
					g.Content = append(g.Content, cm)
					continue
				}
			}
			if err := matchCopies(&cm); err != nil {
				g.AddProblem(r.File.Path, fmt.Errorf("proving which copy of lib%s.a is inside: %w", name, err))
				continue
			}
			if ok {
				cache.Put(key, cacheEntry{cm.Matched, cm.Outcome, cm.Confidence, cm.Evidence, cm.Members})
			}
			g.Content = append(g.Content, cm)
		}
	}
	sort.SliceStable(g.Content, func(i, j int) bool {
		return g.Content[i].Root.File.Path+g.Content[i].Library < g.Content[j].Root.File.Path+g.Content[j].Library
	})
}

// outputIndex maps "<profile dir>\x00<file name>" to the build-script run outputs of that name.
func outputIndex(g *graph.Graph) map[string][]string {
	idx := map[string][]string{}
	for _, o := range g.Steps {
		if o.Kind != graph.ScriptRun {
			continue
		}
		for _, f := range o.Outputs {
			k := o.ProfileDir + "\x00" + filepath.Base(f.Path)
			idx[k] = append(idx[k], f.Path)
		}
	}
	return idx
}

// rootCopies returns, per library name, the OUT_DIR copies that compete for a root: the copies of a
// library its runs link that exist in other runs of the same profile folder (looked up in idx), and
// libraries present in several of its runs' link-search folders.
func rootCopies(g *graph.Graph, r *graph.Root, idx map[string][]string) map[string][]string {
	out := map[string]map[string]bool{}
	add := func(name, p string) {
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		out[name][p] = true
	}
	reach := r.Reach()
	var runs []*graph.Step
	for _, s := range reach {
		if s.Kind == graph.ScriptRun {
			runs = append(runs, s)
		}
	}
	for _, s := range runs {
		for _, l := range s.Script().Links {
			if l.Path == "" || !(l.Kind == "static" || l.Kind == "") {
				continue
			}
			for _, p := range idx[s.ProfileDir+"\x00"+filepath.Base(l.Path)] {
				add(l.Name, p)
			}
		}
	}
	// Shadowing: the same file name in several link-search folders of this root's runs.
	byName := map[string][]string{}
	for _, s := range runs {
		for _, dir := range s.Script().LinkSearch {
			ents, err := fsrec.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range ents {
				n := e.Name()
				if strings.HasPrefix(n, "lib") && strings.HasSuffix(n, ".a") && e.Type().IsRegular() {
					byName[n] = append(byName[n], filepath.Join(dir, n))
				}
			}
		}
	}
	for n, ps := range byName {
		if len(ps) > 1 {
			for _, p := range ps {
				add(LibName(n), p)
			}
		}
	}
	res := map[string][]string{}
	for name, set := range out {
		for p := range set {
			res[name] = append(res[name], p)
		}
		sort.Strings(res[name])
	}
	return res
}

func matchCopies(cm *graph.ContentMatch) error {
	b, err := OpenBinary(cm.Root.File.Path)
	if err != nil {
		return err
	}
	defer b.Close()
	var cands []*Candidate
	for _, p := range cm.Copies {
		c, err := ReadCandidate(p)
		if err != nil {
			return err
		}
		cands = append(cands, c)
	}
	res, err := Match(b, cands)
	if err != nil {
		return err
	}
	cm.Outcome, cm.Confidence = string(res.Outcome), res.Confidence
	for _, c := range res.Candidates {
		if !c.Matched {
			continue
		}
		cm.Matched = append(cm.Matched, c.Path)
		for _, f := range c.Distinct {
			if f.Presence != Present {
				continue
			}
			if len(cm.Evidence) < 4 {
				cm.Evidence = append(cm.Evidence, f.Label+" is present")
			}
			if f.Member != "" && !slices.Contains(cm.Members, f.Member) {
				cm.Members = append(cm.Members, f.Member)
			}
		}
	}
	slices.Sort(cm.Members)
	return nil
}

type cacheEntry struct {
	Matched    []string `json:"matched"`
	Outcome    string   `json:"outcome"`
	Confidence string   `json:"confidence"`
	Evidence   []string `json:"evidence"`
	Members    []string `json:"members,omitempty"`
}

// CacheFile is the name of the content-match cache in the state folder (an internal/kvfile file: a
// check decodes only the answers it asks for; the state folder is shared by every workspace).
const CacheFile = "content-matches.v2.kv" // v2: members

// cacheMax bounds the answers kept: past it, those this check did not use are dropped.
const cacheMax = 10000

func loadCache(dir string) *kvfile.Cache[cacheEntry] {
	if dir == "" {
		return kvfile.Open[cacheEntry]("", cacheMax, "", nil)
	}
	// An earlier build kept it as content-matches.v2.json: carried over once.
	return kvfile.Open[cacheEntry](filepath.Join(dir, CacheFile), cacheMax, filepath.Join(dir, "content-matches.v2.json"), kvfile.LegacyJSON)
}

// cacheKey hashes the identity (path, device, inode, size, mtime) of the binary and of each copy.
func cacheKey(binary string, copies []string) (string, bool) {
	h := sha256.New()
	for _, p := range append([]string{binary}, copies...) {
		k, ok := FileKey(p)
		if !ok {
			return "", false
		}
		fmt.Fprintf(h, "%s\x00%d %d %d %d\n", p, k[0], k[1], k[2], k[3])
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// isELF reports whether a file starts with the ELF magic.
func isELF(path string) bool {
	f, err := safeio.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var m [4]byte
	_, err = io.ReadFull(f, m[:])
	return err == nil && string(m[:]) == "\x7fELF"
}
