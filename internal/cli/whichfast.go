package cli

import (
	"runtime"
	"sync"

	"github.com/stalecheck/stalecheck/internal/evidence"
)

// libraryCopies are one library's copies as readLibrary read them: the candidates and their copies
// (those that could be read), and the answer so far (notes on the copies left out).
type libraryCopies struct {
	wl     whichLibrary
	cands  []*evidence.Candidate
	copies []evidence.Copy
}

// answerLibraries answers every library of a binary: each copy's file is read once (an rlib that
// bundles two libraries' archives is a copy of both) and the files are read side by side, then the
// features of all the copies are looked for in one pass over the binary (evidence.Binary.Prepare) and
// each library is matched from there. The answers are answerLibrary's, library by library.
func answerLibraries(b *evidence.Binary, libs []evidence.Library) ([]whichLibrary, error) {
	read := readCandidatesOnce(libs)
	var all []libraryCopies
	var cands []*evidence.Candidate
	for _, lib := range libs {
		lc, err := readLibrary(lib, read)
		if err != nil {
			return nil, err
		}
		all = append(all, lc)
		cands = append(cands, lc.cands...)
	}
	b.Prepare(cands)
	var out []whichLibrary
	for i, lib := range libs {
		wl, err := matchLibrary(b, lib, all[i])
		if err != nil {
			return nil, err
		}
		out = append(out, wl)
	}
	return out, nil
}

// readCandidatesOnce reads every copy's file of libs with evidence.ReadCandidate, each path once, on
// all cores, and returns the lookup of the results (a path not among them is read when asked).
func readCandidatesOnce(libs []evidence.Library) func(string) (*evidence.Candidate, error) {
	type result struct {
		c   *evidence.Candidate
		err error
	}
	var paths []string
	seen := map[string]bool{}
	for _, l := range libs {
		for _, c := range l.Copies {
			if !seen[c.Path] {
				seen[c.Path] = true
				paths = append(paths, c.Path)
			}
		}
	}
	results := make(map[string]*result, len(paths))
	for _, p := range paths {
		results[p] = &result{}
	}
	var wg sync.WaitGroup
	next := make(chan string)
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				r := results[p]
				r.c, r.err = evidence.ReadCandidate(p)
			}
		}()
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
	return func(p string) (*evidence.Candidate, error) {
		if r, ok := results[p]; ok {
			return r.c, r.err
		}
		return evidence.ReadCandidate(p)
	}
}
