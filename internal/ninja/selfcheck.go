package ninja

import (
	"encoding/binary"
	"fmt"
)

// MurmurHash64A is the hash ninja writes in .ninja_log v5 and v6 for an edge's evaluated command
// (ninja 1.11 src/build_log.cc: MurmurHash64A with seed 0xDECAFBADDECAFBAD, 8-byte little-endian
// blocks). The command is the one `ninja -t commands` prints (an edge with an rspfile appends
// ";rspfile=" and its content; such edges are not evaluated here).
func MurmurHash64A(key []byte) uint64 {
	const seed = 0xDECAFBADDECAFBAD
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := uint64(seed) ^ uint64(len(key))*m
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	switch len(key) {
	case 7:
		h ^= uint64(key[6]) << 48
		fallthrough
	case 6:
		h ^= uint64(key[5]) << 40
		fallthrough
	case 5:
		h ^= uint64(key[4]) << 32
		fallthrough
	case 4:
		h ^= uint64(key[3]) << 24
		fallthrough
	case 3:
		h ^= uint64(key[2]) << 16
		fallthrough
	case 2:
		h ^= uint64(key[1]) << 8
		fallthrough
	case 1:
		h ^= uint64(key[0])
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// SelfCheck is Read's own evaluation of ninja's rules for the edges of the build, made instead of
// running `ninja -n` when it finds no work (see Read). Dirty counts the edges it calls dirty; when it
// is not 0, or the evaluation was not possible (Unsupported says why), `ninja -n` is asked as before.
type SelfCheck struct {
	Dirty       int
	Unsupported string
}

// canSelfCheck says why Read cannot evaluate ninja's rules itself ("" when it can): the logs must be
// read without damage, the build log of a version whose command hash is MurmurHash64A (v5, v6; v7's
// rapidhash is not implemented), the deps log v4 (or none), and no edge may name a dyndep file (its
// effect on the graph is not modelled). A response file's content is part of the command hash
// (ManifestEdge.HashedCommand).
func (b *Build) canSelfCheck() string {
	switch {
	case b.LogErr != nil || b.DepsErr != nil:
		return "a log could not be read"
	case b.Log == nil:
		return "no .ninja_log: ninja would run every edge"
	case b.Log.Version != 5 && b.Log.Version != 6:
		return fmt.Sprintf(".ninja_log v%d (command hash %s is not computed here)", b.Log.Version, b.Log.HashName())
	case b.Deps != nil && b.Deps.Version != 4:
		return fmt.Sprintf(".ninja_deps v%d", b.Deps.Version)
	}
	for _, e := range b.Manifest.Edges {
		if e.Dyndep != "" {
			return "edge " + firstOutM(e) + " names a dyndep file"
		}
	}
	return ""
}

// selfCheck evaluates, for every edge, what ninja 1.11's DependencyScan::RecomputeDirty decides
// (src/graph.cc), from what Read already holds (no subprocess, no further stat): an edge is dirty when
// an output is missing; its deps record is missing or older than the output (deps = gcc|msvc), or its
// depfile is missing or unreadable (depfile without deps); an input (explicit, implicit, or from the deps
// record or depfile) is missing, or is the output of a dirty edge; an output is older than the newest
// such input (a restat edge's output mtime from its log entry); or its .ninja_log entry is missing
// (non-generator edges), records another command hash (MurmurHash64A of HashedCommand) or an mtime older than the
// newest input. Order-only inputs do not make an edge dirty. Each dirty edge gets SelfDirty, the first
// reason found.
func (b *Build) selfCheck() *SelfCheck {
	sc := &SelfCheck{}
	state := map[*Edge]int8{} // 0 unvisited, 1 visiting, 2 clean, 3 dirty
	phony := map[string]*ManifestEdge{}
	for _, me := range b.Manifest.Edges {
		if me.Rule == "phony" {
			for _, o := range me.Outputs {
				phony[o] = me
			}
		}
	}
	var dirty func(e *Edge) bool
	var phonyDirty func(me *ManifestEdge, depth int) (string, bool)
	inputDirty := func(p string, depth int) (string, bool) {
		if e := b.ByOutput[p]; e != nil {
			if dirty(e) {
				return "input " + p + " is the output of a dirty edge", true
			}
			return "", false
		}
		if me := phony[p]; me != nil {
			return phonyDirty(me, depth+1)
		}
		return "", false
	}
	phonyDirty = func(me *ManifestEdge, depth int) (string, bool) {
		if depth > 64 {
			return "phony chain too deep", true
		}
		for _, list := range [][]string{me.Explicit, me.Implicit} {
			for _, p := range list {
				if why, d := inputDirty(p, depth); d {
					return why, true
				}
			}
		}
		return "", false
	}
	dirty = func(e *Edge) bool {
		switch state[e] {
		case 1:
			e.SelfDirty = "dependency cycle"
			return true
		case 2:
			return false
		case 3:
			return true
		}
		state[e] = 1
		why := b.edgeDirty(e, inputDirty)
		e.SelfDirty = why
		if why != "" {
			state[e] = 3
			sc.Dirty++
			return true
		}
		state[e] = 2
		return false
	}
	for _, e := range b.Edges {
		dirty(e)
	}
	return sc
}

// edgeDirty is one edge's own part of selfCheck: "" when ninja would not run it.
func (b *Build) edgeDirty(e *Edge, inputDirty func(string, int) (string, bool)) string {
	for _, o := range e.OutputStats {
		if !o.Exists {
			return "output " + o.Path + " does not exist"
		}
	}
	if len(e.OutputStats) == 0 {
		return "edge without outputs"
	}
	out0 := firstOut(e)
	switch {
	case e.Deps != "":
		r := e.Ref.Deps
		if r == nil {
			return "deps for " + out0 + " are missing"
		}
		if e.OutputStats[0].MTime > r.MTime {
			return "stored deps info out of date for " + out0
		}
	case e.Depfile != "":
		if !e.DepfileOnDisk || e.DepfileErr != nil {
			return "depfile " + e.Depfile + " is missing or unreadable"
		}
	}
	// Inputs ninja compares: explicit, implicit and discovered (deps record, depfile) ones.
	var newest int64
	newestPath := ""
	for _, p := range e.Explicit {
		if why, d := inputDirty(p, 0); d {
			return why
		}
	}
	for _, p := range e.Implicit {
		if why, d := inputDirty(p, 0); d {
			return why
		}
	}
	for _, in := range e.Inputs {
		if !in.Watched || onlyOrderOnly(in) {
			continue
		}
		if !in.Exists {
			return "input " + in.Path + " is missing"
		}
		if in.MTime > newest {
			newest, newestPath = in.MTime, in.Path
		}
	}
	for i, o := range e.OutputStats {
		name := e.Outputs
		var manifestName string
		if i < len(name) {
			manifestName = name[i]
		} else {
			manifestName = e.ImplicitOutputs[i-len(name)]
		}
		var entry *LogEntry
		if b.Log != nil {
			entry = b.Log.Entries[manifestName]
		}
		outMTime := o.MTime
		if e.Restat && entry != nil {
			outMTime = entry.MTime
		}
		if newestPath != "" && outMTime < newest {
			return fmt.Sprintf("output %s (mtime %d ns) older than most recent input %s (%d ns)", o.Path, outMTime, newestPath, newest)
		}
		if entry == nil {
			if !e.Generator {
				return "command line not found in log for " + manifestName
			}
			continue
		}
		if !e.Generator && MurmurHash64A([]byte(e.HashedCommand())) != entry.CommandHash {
			return "command line changed for " + manifestName
		}
		if newestPath != "" && entry.MTime < newest {
			return fmt.Sprintf("recorded mtime of %s older than most recent input %s", manifestName, newestPath)
		}
	}
	return ""
}

// onlyOrderOnly reports whether an input is known only as an order-only input.
func onlyOrderOnly(in *Input) bool {
	for _, c := range in.Clues {
		if c.How != HowOrderOnly {
			return false
		}
	}
	return true
}
