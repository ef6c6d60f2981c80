package gocgo

import (
	"fmt"
	"sort"

	"github.com/stalecheck/stalecheck/internal/digest"
)

// Baseline holds the content digests (BLAKE3, internal/digest) of a binary's unwatched inputs while
// the binary had a given Go build ID. Because an up-to-date `go build` touches the binary without
// linking it, mtimes cannot show a header edited before such a build; the build ID can: while it
// stays the same the binary was not linked again, so an input whose digest moved is an edit the binary
// lacks. The caller keeps baselines (e.g. in stalecheck's state folder); JSON-encodable.
type Baseline struct {
	Binary  string                   `json:"binary"`
	BuildID string                   `json:"build_id"`
	Digests map[string]digest.Digest `json:"digests"`
}

// TakeBaseline records the digests of the report's unwatched inputs. It refuses (an error saying why)
// when the binary has no Go build ID, or when an unwatched input is newer than the binary: then the
// binary may already lack that input's content, and a baseline would hide it.
func TakeBaseline(r *Report) (*Baseline, error) {
	b := r.Link.Binary
	if b.BuildID == "" {
		return nil, fmt.Errorf("gocgo: %s has no Go build ID (.note.go.buildid)", b.Path)
	}
	if m := r.Missed(); len(m) > 0 {
		return nil, fmt.Errorf("gocgo: no baseline for %s: %s (mtime %d ns) is newer than the binary (written at %d ns)", b.Path, m[0].Input.Path, m[0].Input.MTimeNS, b.WrittenNS)
	}
	bl := &Baseline{Binary: b.Path, BuildID: b.BuildID, Digests: map[string]digest.Digest{}}
	_, inputs := r.Unwatched()
	for _, x := range inputs {
		if x.Err != "" {
			continue
		}
		d, err := digest.HashFile(x.Path)
		if err != nil {
			return nil, fmt.Errorf("gocgo: baseline of %s: %w", b.Path, err)
		}
		bl.Digests[x.Path] = d
	}
	return bl, nil
}

func (r *Report) compareBaseline(bl *Baseline) {
	b := r.Link.Binary
	if bl.BuildID != b.BuildID {
		r.Notes = append(r.Notes, fmt.Sprintf("the baseline was taken under build ID %s; %s now has %s (linked again since): it no longer applies", bl.BuildID, b.Path, b.BuildID))
		return
	}
	pkgs, inputs := r.Unwatched()
	var unknown []string
	for i, x := range inputs {
		old, ok := bl.Digests[x.Path]
		if !ok {
			unknown = append(unknown, x.Path)
			continue
		}
		d, err := digest.HashFile(x.Path)
		if err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("baseline comparison: %v", err))
			continue
		}
		if d != old {
			r.Changed = append(r.Changed, Changed{Package: pkgs[i], Input: x, Old: old, New: d, BuildID: b.BuildID})
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		r.Notes = append(r.Notes, fmt.Sprintf("%d unwatched input(s) have no baseline digest (e.g. %s)", len(unknown), unknown[0]))
	}
}
