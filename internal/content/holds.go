package content

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/kvfile"
)

// HoldsCacheFile is the holdings cache in the state folder.
const HoldsCacheFile = "content-holds.v1.kv"

type holdEntry struct {
	Verdict string `json:"verdict"`
	Detail  string `json:"detail"`
}

// HeldPairsFile keeps, per (root, library) pair, the digests of both files the last time the root was
// shown to hold the library's content.
const HeldPairsFile = "held-pairs.v1.kv"

type heldPair struct {
	Root, Lib  string // "blake3:<hex>"
	RecordedNS int64
}

// byHeldPair settles what the features alone left open (strings of the library missing from the root
// that the linker may have dropped, LTO members): when the root's bytes are exactly those it had when
// it was last seen linked after the library was written, and the library's bytes changed since, the
// root holds the library's older content, whatever the mtimes say now (a Go build that refreshed the
// program without linking again). A root whose bytes are new (linked again) and not older than the
// library records the pair. The record presumes that a root linked after its library holds it; a root
// already stale when stalecheck first saw it holds content older still, so the answer stays right.
func byHeldPair(held *kvfile.Cache[heldPair], dig *digest.Cache, root, lib string, rootNS, libNS int64, verdict, detail string) (string, string) {
	if dig == nil || verdict == graph.DiffersContent {
		return verdict, detail
	}
	rd, err1 := dig.File(root)
	ld, err2 := dig.File(lib)
	if err1 != nil || err2 != nil {
		return verdict, detail
	}
	sum := sha256.Sum256([]byte(root + "\x00" + lib)) // JSON keys must be UTF-8; paths need not be
	key := hex.EncodeToString(sum[:])
	p, ok := held.Get(key)
	if ok && p.Root == rd.String() {
		if p.Lib == ld.String() || verdict == graph.HoldsContent {
			return verdict, detail
		}
		return graph.DiffersContent, fmt.Sprintf("%s; its bytes (%s) are those it had at %s, when it was linked after %s was written as %s, and that library is now %s: it holds the older content",
			detail, rd, time.Unix(0, p.RecordedNS).UTC().Format(time.RFC3339Nano), filepath.Base(lib), p.Lib, ld)
	}
	if verdict == graph.HoldsContent || rootNS >= libNS {
		held.Put(key, heldPair{Root: rd.String(), Lib: ld.String(), RecordedNS: time.Now().UnixNano()})
	}
	return verdict, detail
}

// annotateHoldings judges every (root, newer linked library) pair the way binary-older-than-input finds
// them (graph.Root.NewerLinked): archives of script runs, and libraries the root's own step links (a Go
// binary's -l libraries), by content; Rust libraries of dependency units are not compared.
func annotateHoldings(g *graph.Graph, opt Options, dig *digest.Cache) {
	cache := loadJSON[holdEntry](opt.StateDir, HoldsCacheFile)
	defer cache.Save()
	held := loadJSON[heldPair](opt.StateDir, HeldPairsFile)
	defer held.Save()
	for _, r := range g.Roots {
		pairs := r.NewerLinked()
		for _, f := range r.UnwatchedLinked() {
			pairs = append(pairs, graph.LinkedInput{File: f, Step: r.Step})
		}
		for _, li := range pairs {
			h := graph.Holding{Root: r, Input: li.File.Path}
			switch {
			case opt.SkipNative:
				h.Verdict, h.Detail = graph.UnknownContent, "--no-native: the root and the library were not opened, so their content was not compared"
			case li.Step.Kind != graph.ScriptRun && li.Step != r.Step:
				h.Verdict, h.Detail = graph.UnknownContent, "a Rust library of a dependency unit: its content is not compared (Cargo relinks the root on the next build)"
			default:
				key, ok := holdKey(r.File.Path, li.File.Path)
				if e, hit := cache.Get(key); ok && hit {
					h.Verdict, h.Detail = e.Verdict, e.Detail
				} else {
					v, detail, err := judgeHolding(r.File.Path, li.File.Path)
					if err != nil {
						g.AddProblem(li.File.Path, fmt.Errorf("comparing its content with %s: %w", r.File.Path, err))
						v, detail = graph.UnknownContent, "its content could not be compared: "+err.Error()
					} else if ok {
						cache.Put(key, holdEntry{v, detail})
					}
					h.Verdict, h.Detail = v, detail
				}
				h.Verdict, h.Detail = byHeldPair(held, dig, r.File.Path, li.File.Path, r.File.MTimeNS, li.File.MTimeNS, h.Verdict, h.Detail)
			}
			g.Holdings = append(g.Holdings, h)
		}
	}
}

// judgeHolding compares a root with the library it links: an rlib or static library root by its bundled
// objects, any other root (an ELF executable or shared object) by evidence.Holds.
func judgeHolding(root, lib string) (verdict, detail string, err error) {
	libc, err := evidence.ReadCandidate(lib)
	if err != nil {
		return "", "", err
	}
	var h *evidence.Holding
	isAr, err := binfmt.IsArchive(root)
	if err != nil {
		return "", "", err
	}
	if isAr {
		rc, err := evidence.ReadCandidate(root)
		if err != nil && !strings.Contains(err.Error(), "holds no ELF object") {
			return "", "", err
		}
		if rc == nil || len(rc.Members) == 0 {
			// Linked with -bundle (or as a dylib): the library goes into the final link, not into this
			// archive, so its mtime says nothing about this root (the binaries are judged themselves).
			return graph.HoldsContent, filepath.Base(root) + " bundles no native object: the library is linked at the final link, not carried by it", nil
		}
		if h, err = evidence.Bundles(rc, libc); err != nil {
			return "", "", err
		}
	} else {
		b, err := evidence.OpenBinary(root)
		if err != nil {
			return "", "", err
		}
		defer b.Close()
		if h, err = evidence.Holds(b, libc); err != nil {
			return "", "", err
		}
	}
	switch h.Verdict {
	case evidence.HoldsAll:
		return graph.HoldsContent, h.Why, nil
	case evidence.HoldsOther:
		return graph.DiffersContent, h.Why, nil
	}
	return graph.UnknownContent, h.Why, nil
}

// holdKey identifies both files' versions (path, device, inode, size, mtime, ctime).
func holdKey(root, lib string) (string, bool) {
	s := sha256.New()
	for _, p := range []string{root, lib} {
		k, ok, err := digest.StatKey(p)
		if err != nil || !ok {
			return "", false
		}
		fmt.Fprintf(s, "%s\x00%d %d %d %d %d\n", p, k.Dev, k.Ino, k.Size, k.MtimeNS, k.CtimeNS)
	}
	return hex.EncodeToString(s.Sum(nil)), true
}
