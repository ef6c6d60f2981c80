package gocgo

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// BaselinesFile is the Go content-baseline store in stalecheck's state folder, next to
// internal/content's baselines.v1.kv. Its key is "<binary path>@<Go build ID>": the build ID changes
// exactly when the binary is linked again, while its mtime also moves when an up-to-date `go build`
// only touches it (so a key by mtime, as internal/content uses for Cargo, would record an edit the
// binary lacks as its baseline).
const BaselinesFile = "go-baselines.v1.json"

// maxBaselines bounds the store: past it, the entries this process did not use are dropped.
const maxBaselines = 2000

type goBaseline struct {
	RecordedNS int64 `json:"recorded_ns"` // when the first input was recorded (ns since the epoch)
	// Inputs maps an absolute path to "blake3:<hex>".
	Inputs map[string]string `json:"inputs"`
}

type baselineFile struct {
	Version int                    `json:"version"`
	Entries map[string]*goBaseline `json:"entries"`
}

type baselineStore struct {
	path  string
	m     map[string]*goBaseline
	used  map[string]bool
	dirty bool
	dig   *digest.Cache
}

// openBaselines loads the store (a missing, unreadable or corrupt file is an empty store) and the
// digest cache of the state folder; dir "" keeps both in memory.
func openBaselines(dir string) *baselineStore {
	st := &baselineStore{m: map[string]*goBaseline{}, used: map[string]bool{}}
	if dir == "" {
		return st
	}
	st.path = filepath.Join(dir, BaselinesFile)
	st.dig, _ = digest.OpenCache(dir)
	if data, err := safeio.ReadFile(st.path, safeio.MaxCache); err == nil {
		var f baselineFile
		if json.Unmarshal(data, &f) == nil && f.Version == 1 && f.Entries != nil {
			for k, v := range f.Entries {
				if v != nil && v.Inputs != nil {
					st.m[k] = v
				}
			}
		}
	}
	return st
}

func (st *baselineStore) hash(p string) (digest.Digest, error) {
	if st.dig != nil {
		return st.dig.File(p)
	}
	return digest.HashFile(p)
}

// judge records, under the binary's build ID, the digest of every input of its package steps whose
// mtime and ctime are not newer than the binary (so it is provably what the last link used, or an edit
// an earlier baseline of the same build ID already shows), and sets Content on every input that has a
// baseline entry or is newer than the binary: ContentSame or ContentDiffers with Build = the build ID,
// or ContentUnknown saying why. Libraries are left to internal/content's holdings.
func (st *baselineStore) judge(g *graph.Graph, link *graph.Step, b *Binary) {
	if b.BuildID == "" {
		g.Notes = append(g.Notes, fmt.Sprintf("%s has no Go build ID (.note.go.buildid): its inputs are judged by mtime only", b.Path))
		return
	}
	key := b.Path + "@" + b.BuildID
	bl := st.m[key]
	if bl == nil {
		bl = &goBaseline{Inputs: map[string]string{}}
	}
	st.used[key] = true
	ref := link.Written() // when go build last wrote the binary (a no-op build only moves its mtime)
	recorded := false
	for _, s := range link.Deps {
		if s.System != System {
			continue
		}
		for _, in := range s.Inputs {
			if !in.File.Exists {
				continue
			}
			p := in.File.Path
			k, ok, err := digest.StatKey(p)
			if err != nil || !ok {
				continue
			}
			base, has := bl.Inputs[p]
			untouched := k.MtimeNS <= ref && k.CtimeNS <= ref
			if !has && untouched {
				if d, err := st.hash(p); err == nil {
					bl.Inputs[p] = d.String()
					recorded = true
				}
				continue
			}
			if !has {
				if k.MtimeNS > ref {
					in.Content = &graph.InputContent{Verdict: graph.ContentUnknown, CTimeNS: k.CtimeNS, Build: b.BuildID,
						Why: "no content baseline was recorded under build ID " + b.BuildID + " of " + filepath.Base(b.Path) + " (stalecheck had not checked it since it was linked, before the file changed)"}
				}
				continue
			}
			ic := &graph.InputContent{Verdict: graph.ContentUnknown, CTimeNS: k.CtimeNS, Baseline: base, BaselineNS: bl.RecordedNS, Build: b.BuildID}
			d, err := st.hash(p)
			if err != nil {
				ic.Why = "it could not be hashed: " + err.Error()
				in.Content = ic
				continue
			}
			ic.Digest = d.String()
			switch {
			case ic.Digest == base:
				ic.Verdict = graph.ContentSame
				if untouched {
					continue // nothing moved: no verdict needed
				}
			case in.Watched && k.MtimeNS <= b.MTimeNS && k.CtimeNS <= b.MTimeNS:
				// A go build of this binary ran after the change (it moves the binary's mtime even when it
				// has nothing to link) and kept the build ID: Go hashes this file, so that build compiled
				// the new content, and what it would link is what the binary holds (a comment edit).
				ic.Verdict = graph.ContentSame
				ic.Why = fmt.Sprintf("go build ran after it changed (the binary's mtime, %s) and kept build ID %s: Go hashes this file, so the new content was compiled, and the code it makes is what the binary holds",
					time.Unix(0, b.MTimeNS).UTC().Format(time.RFC3339Nano), b.BuildID)
			default:
				ic.Verdict = graph.ContentDiffers
			}
			in.Content = ic
		}
	}
	if recorded {
		if bl.RecordedNS == 0 {
			bl.RecordedNS = time.Now().UnixNano()
		}
		st.m[key] = bl
		st.dirty = true
	}
}

// save writes the store back when something was recorded (a temporary file renamed over the old one;
// failures only cost the baselines of this call), and the digest cache.
func (st *baselineStore) save() {
	if st.dig != nil {
		st.dig.Save()
	}
	if st.path == "" || !st.dirty {
		return
	}
	if len(st.m) > maxBaselines {
		for k := range st.m {
			if !st.used[k] {
				delete(st.m, k)
			}
		}
	}
	data, err := json.Marshal(baselineFile{Version: 1, Entries: st.m})
	if err != nil {
		return
	}
	safeio.WriteBytesAtomic(st.path, safeio.WriteOptions{Replace: true, Perm: 0o600, MkdirPerm: 0o700}, data) // a failure costs speed next time
}
