package cli

import (
	"encoding/json"
	"fmt"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/vcache"
	"github.com/stalecheck/stalecheck/internal/which"
)

// whichPlan is what the verdict cache keeps of `which`'s search for the copies: the libraries and their
// copies (each copy's configuration already described, in Found, since the graph that described it
// is not read on a hit) and the notes. The copies' bytes and the binary's are read on every call: the
// answer always comes from them.
type whichPlan struct {
	Libraries []whichPlanLib `json:"libraries"`
	Notes     []string       `json:"notes"`
}

type whichPlanLib struct {
	Name   string          `json:"name"`
	Copies []whichPlanCopy `json:"copies"`
}

type whichPlanCopy struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	MTimeNS int64  `json:"mtime_ns"`
	Bundled bool   `json:"bundled"`
	Config  string `json:"config"`
}

func planOf(libs []evidence.Library, notes []string) []byte {
	p := whichPlan{Libraries: []whichPlanLib{}, Notes: notes}
	for _, l := range libs {
		pl := whichPlanLib{Name: l.Name, Copies: []whichPlanCopy{}}
		for _, c := range l.Copies {
			pl.Copies = append(pl.Copies, whichPlanCopy{Path: c.Path, Size: c.Size, MTimeNS: c.MTimeNS, Bundled: c.Bundled, Config: which.CopyConfig(c)})
		}
		p.Libraries = append(p.Libraries, pl)
	}
	b, _ := json.Marshal(p)
	return b
}

func (p *whichPlan) libraries() []evidence.Library {
	var out []evidence.Library
	for _, pl := range p.Libraries {
		l := evidence.Library{Name: pl.Name}
		for _, c := range pl.Copies {
			l.Copies = append(l.Copies, evidence.Copy{Path: c.Path, Size: c.Size, MTimeNS: c.MTimeNS, Bundled: c.Bundled, Found: c.Config})
		}
		out = append(out, l)
	}
	return out
}

// whichCache is the verdict cache of which's search in the build folder for one binary and its flags.
type whichCache struct {
	vc     *vcache.Cache // nil: no cache (off, --candidate, no state folder)
	key    vcache.Key
	binary string
	fl     whichFlags
}

func openWhichCache(st Streams, binary string, fl whichFlags) *whichCache {
	wc := &whichCache{binary: binary, fl: fl}
	if len(fl.candidates) > 0 || vcache.ModeFromEnv(fl.noCache) == vcache.Off {
		return wc
	}
	stateDir, _ := digest.DefaultDir()
	key, err := vcache.MakeKey("which", Version, []string{fmt.Sprintf("%q lib=%q target-dir=%q build-dir=%q", binary, fl.lib, fl.targetDir, fl.buildDir)})
	if err == nil {
		wc.vc, wc.key = vcache.Open(stateDir, st.Err), key
	}
	return wc
}

// search is whichLibraries, recorded and stored (a Make, Ninja or Go search, which runs make -n or go
// list, is never stored).
func (wc *whichCache) search() ([]evidence.Library, []string, error) {
	rec := wc.vc.Begin()
	libs, notes, err := which.Find(wc.binary, wc.fl.options())
	if err != nil || wc.vc == nil {
		rec.End()
		return libs, notes, err
	}
	if rec.Reused() > 0 && vcache.ModeFromEnv(wc.fl.noCache) == vcache.Verify {
		// The search reused memos of the last one (internal/vcache's memo.go): the same search with
		// none must find the same copies.
		rec.End()
		again, againNotes, err := which.Find(wc.binary, wc.fl.options())
		if err != nil {
			return nil, nil, &ExitError{exitVerifyDiffers, fmt.Errorf("verdict cache (verify): the search with memos found the copies, the search without failed: %v", err)}
		}
		if a, b := planOf(libs, notes), planOf(again, againNotes); string(a) != string(b) {
			return nil, nil, &ExitError{exitVerifyDiffers, fmt.Errorf("verdict cache (verify): the search with memos differs from the search without: %s, now %s", a, b)}
		}
	}
	wc.vc.Store(wc.key, rec, &vcache.Result{Extra: planOf(libs, notes)})
	return libs, notes, nil
}

// libraries is whichLibraries through the verdict cache (internal/vcache): keyed by the binary's path
// and the flags (with the working folder, environment and executable MakeKey adds), valid while every
// path the search consulted (the Cargo records, the build folders, the binary's own stat through
// FindRoot) keeps its signature. --candidate needs no search and is not cached.
//
// On a stored search it returns at once with pending set: the caller answers from these copies while
// pending stats the recorded paths, and must call it before it prints; false means the search no
// longer holds, and the caller searches again (search) and answers again. Under verify mode a hit is
// searched again at once, and an *ExitError (3) returned when the two differ.
func (wc *whichCache) libraries() (libs []evidence.Library, notes []string, pending func() bool, err error) {
	if wc.vc == nil {
		libs, notes, err = which.Find(wc.binary, wc.fl.options())
		return libs, notes, nil, err
	}
	res, valid := wc.vc.Peek(wc.key)
	var p whichPlan
	if res == nil || json.Unmarshal(res.Extra, &p) != nil {
		libs, notes, err = wc.search()
		return libs, notes, nil, err
	}
	if vcache.ModeFromEnv(wc.fl.noCache) == vcache.Verify {
		if !valid() {
			libs, notes, err = wc.search()
			return libs, notes, nil, err
		}
		libs, notes, err := which.Find(wc.binary, wc.fl.options())
		if err != nil {
			return nil, nil, nil, &ExitError{exitVerifyDiffers, fmt.Errorf("verdict cache (verify): the cache answered the copies, the search failed: %v", err)}
		}
		if fresh := planOf(libs, notes); string(fresh) != string(res.Extra) {
			return nil, nil, nil, &ExitError{exitVerifyDiffers, fmt.Errorf("verdict cache (verify): the cached copies differ from the search: cached %s, now %s", res.Extra, fresh)}
		}
		libs, notes = p.libraries(), p.Notes
		return libs, notes, nil, nil
	}
	// The stats run beside the caller's reading of the copies and the binary.
	done := make(chan bool, 1)
	go func() { done <- valid() }()
	return p.libraries(), p.Notes, func() bool { return <-done }, nil
}
