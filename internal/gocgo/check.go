package gocgo

import (
	"fmt"
	"slices"
	"sort"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/evidence"
)

// Link is the link step of one Go binary: its reference time (the binary's mtime, nanoseconds), the
// package main it was built from, the non-standard cgo packages and local ones it contains (steps, in go list's
// order) and every library and object their link flags name (deduplicated by path, first package's
// clues first).
type Link struct {
	Binary      *Binary    `json:"binary"`
	ReferenceNS int64      `json:"reference_ns"`
	Main        *Package   `json:"-"`
	Packages    []*Package `json:"packages"`
	Libraries   []Input    `json:"libraries"`
}

// Newer is one input of a cgo package newer than the binary. Missed is true when Go's cache does not
// hash it (a header reached through the include scan, S10; a library, S11): `go build` reuses its
// cache and, for an up-to-date binary, only touches it, so the binary keeps the old code. A watched
// input (Missed false) is one the next `go build` will notice.
type Newer struct {
	Package string `json:"package"`
	Input   Input  `json:"input"`
	Missed  bool   `json:"missed"`
	// BinaryMTimeNS is the reference (Binary.WrittenNS); ByNS = Input.MTimeNS - BinaryMTimeNS (> 0).
	BinaryMTimeNS int64 `json:"binary_mtime_ns"`
	ByNS          int64 `json:"by_ns"`
}

// LibraryHolding is evidence.Holds's answer for one static library the binary links: does the binary
// hold the archive's current code? Err is set when either file could not be read.
type LibraryHolding struct {
	Library      string               `json:"library"`
	Verdict      evidence.HoldVerdict `json:"verdict"`
	Why          string               `json:"why"`
	Present      int                  `json:"present"`
	Dropped      int                  `json:"dropped"`
	Contradicted []string             `json:"contradicted,omitempty"`
	Err          string               `json:"error,omitempty"`
}

// Changed is an unwatched input whose content digest differs from the baseline taken under the same Go
// build ID: the binary was not linked again since, so it lacks the edit whatever the mtimes say.
type Changed struct {
	Package string        `json:"package"`
	Input   Input         `json:"input"`
	Old     digest.Digest `json:"old"`
	New     digest.Digest `json:"new"`
	BuildID string        `json:"build_id"`
}

// Report is what Check found for one binary.
type Report struct {
	Link     Link             `json:"link"`
	Newer    []Newer          `json:"newer,omitempty"`
	Holdings []LibraryHolding `json:"holdings,omitempty"`
	Changed  []Changed        `json:"changed,omitempty"`
	Notes    []string         `json:"notes,omitempty"`
}

// CheckOptions tune Check.
type CheckOptions struct {
	// Content runs evidence.Holds for every static library the binary links (whatever the mtimes:
	// an up-to-date `go build` touches the binary, so a library rebuilt before it looks older).
	Content bool
	// Baseline, when set, is compared with the current digests of the unwatched inputs.
	Baseline *Baseline
}

// Check joins a binary to the module it was built from (its main package's import path among the
// module's packages) and reports the inputs newer than it, the holdings of its static libraries and,
// with a baseline, the unwatched inputs whose content changed. Errors: a binary built from files
// (command-line-arguments) or from a package the module does not list.
func Check(m *Module, b *Binary, opt CheckOptions) (*Report, error) {
	main := m.Package(b.MainPackage)
	if b.MainPackage == "command-line-arguments" {
		return nil, fmt.Errorf("gocgo: %s was built from files (go build file.go), not a package: its packages cannot be listed", b.Path)
	}
	if main == nil {
		return nil, fmt.Errorf("gocgo: %s was built from package %s, which go list in %s does not list", b.Path, b.MainPackage, m.Dir)
	}
	r := &Report{Link: Link{Binary: b, ReferenceNS: b.WrittenNS, Main: main}}
	in := map[string]bool{main.ImportPath: true}
	for _, d := range main.Deps {
		in[d] = true
	}
	libIdx := map[string]int{}
	for _, p := range m.Packages {
		if !in[p.ImportPath] || !(p.Cgo || p.Local) || p.Standard {
			continue
		}
		r.Link.Packages = append(r.Link.Packages, p)
		for _, lists := range [][]Input{p.Declared, p.Discovered} {
			for _, x := range lists {
				if x.MTimeNS > b.WrittenNS {
					r.Newer = append(r.Newer, Newer{Package: p.ImportPath, Input: x, Missed: !x.Watched, BinaryMTimeNS: b.WrittenNS, ByNS: x.MTimeNS - b.WrittenNS})
				}
				if x.Clues[0].How != HowLDFlags {
					continue
				}
				if i, ok := libIdx[x.Path]; ok {
					r.Link.Libraries[i].Clues = append(r.Link.Libraries[i].Clues, x.Clues...)
					continue
				}
				libIdx[x.Path] = len(r.Link.Libraries)
				r.Link.Libraries = append(r.Link.Libraries, x)
			}
		}
	}
	if v, ok := b.Setting("CGO_ENABLED"); ok && v != "1" && slices.ContainsFunc(r.Link.Packages, func(p *Package) bool { return p.Cgo }) {
		r.Notes = append(r.Notes, fmt.Sprintf("the binary was built with CGO_ENABLED=%s but the listing has cgo packages: list with ListOptionsFor(binary)", v))
	}
	if opt.Content {
		var eb *evidence.Binary
		var openErr error
		for _, l := range r.Link.Libraries {
			if l.Kind != KindArchive || l.Err != "" {
				continue
			}
			if eb == nil && openErr == nil {
				eb, openErr = evidence.OpenBinary(b.Path)
				if eb != nil {
					defer eb.Close()
				}
			}
			r.Holdings = append(r.Holdings, holding(eb, openErr, l.Path))
		}
	}
	if opt.Baseline != nil {
		r.compareBaseline(opt.Baseline)
	}
	sort.SliceStable(r.Newer, func(i, j int) bool {
		if r.Newer[i].Missed != r.Newer[j].Missed {
			return r.Newer[i].Missed
		}
		return r.Newer[i].Input.Path < r.Newer[j].Input.Path
	})
	return r, nil
}

func holding(eb *evidence.Binary, openErr error, lib string) LibraryHolding {
	lh := LibraryHolding{Library: lib, Verdict: evidence.HoldUnknown}
	if openErr != nil {
		lh.Err = openErr.Error()
		return lh
	}
	c, err := evidence.ReadCandidate(lib)
	if err != nil {
		lh.Err = err.Error()
		return lh
	}
	h, err := evidence.Holds(eb, c)
	if err != nil {
		lh.Err = err.Error()
		return lh
	}
	lh.Verdict, lh.Why, lh.Present, lh.Dropped, lh.Contradicted = h.Verdict, h.Why, h.Present, h.Dropped, h.Contradicted
	return lh
}

// Missed returns the Newer entries Go's cache will not notice.
func (r *Report) Missed() []Newer {
	var out []Newer
	for _, n := range r.Newer {
		if n.Missed {
			out = append(out, n)
		}
	}
	return out
}

// Unwatched returns every unwatched input of the binary's cgo packages, with the package's import path.
func (r *Report) Unwatched() (pkgs []string, inputs []Input) {
	seen := map[string]bool{}
	for _, p := range r.Link.Packages {
		for _, x := range p.Discovered {
			if !x.Watched && !seen[x.Path] {
				seen[x.Path] = true
				pkgs, inputs = append(pkgs, p.ImportPath), append(inputs, x)
			}
		}
	}
	return pkgs, inputs
}
