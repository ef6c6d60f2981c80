// Package vcache is the verdict cache of `stalecheck check` and of `run`'s pre-run check: a warm check of
// a build that did not change costs one read of a small file and a stat of every path the last full
// check consulted, instead of reading the records again.
//
// # Key
//
// A SHA-256 over: the kind ("check", "run"), stalecheck's version and VCS revision, the signature of its
// own executable (device, inode, size, mtime and ctime of os.Executable: a rebuilt stalecheck misses),
// the working folder, the whole command line, the whole environment except the volatile `_` and
// `OLDPWD` and the STALECHECK_VERDICT_CACHE* switches (the rules read CC, CFLAGS, PATH, LIBRARY_PATH,
// CARGO_*, HOME…; taking all of it needs no list of what they read), and the caller's extra words
// (whether stdout and stderr are terminals: colour). The format is part of the command line.
//
// # Validity
//
// The value holds the signature (internal/fsrec.Sig: device, inode, size, mtime and ctime in ns, mode;
// or the error class of a failed look-up) of every path the full check consulted through
// internal/fsrec: files read, stat'ed and lstat'ed, folders listed and walked (by their own signature:
// an entry added or removed changes their mtime and ctime), and look-ups that found nothing (a header or
// tool that appears later). A hit needs every one of them unchanged now, with two refinements:
//   - a file read whole by a reader that uses only its bytes (safeio.ReadContent: Cargo's uplifted
//     `<bin>.d`, which every no-op `cargo build` rewrites with the same bytes) is kept with the BLAKE3-256
//     of those bytes (fsrec.OpContent): another signature with the same bytes still answers alike;
//     one written within the racy window is compared by its bytes on every look-up instead of
//     keeping the check from being stored;
//   - a look-up that found nothing (ENOENT) in a folder that is itself recorded as a folder is not
//     kept apart: the folder's signature covers it (an entry added moves its mtime and ctime). The
//     linker search order and the nested-package probes ask for many absent names in listed folders.
//
// Not stored (Store's reason):
//   - a recording that declared itself uncacheable (a child process whose reads are not enumerable:
//     make -n, ninja -n, go list);
//   - a path that was seen with two signatures during the check;
//   - a path (outside the state folder) whose ctime is not older than the check's start minus the file
//     system's timestamp granularity (50 ms; 2 s where the times carry no nanoseconds): a change made
//     during the check in the same clock tick as the state the check saw would keep every field. ctime
//     cannot be set by a user (mtime can: touch -d), so every change after the consult moves it.
//
// Each entry keeps the signature the check saw when it consulted the path: a path changed later in the
// check has, at the next look-up, a ctime past the check's start and so another signature, which is a
// miss. No path is looked at a second time when the check ends.
//
// Stalecheck's own files in the state folder (content baselines, digest, read, evidence and run caches)
// are recorded like any input, since a baseline decides later verdicts, but with the signature they
// have when the check ends: a check that wrote one (a baseline recorded at a step's first sight, a
// cache filled) is stored all the same, as what the next check will read. That is sound because what a
// check records never changes its own verdict of the build state it recorded it in (a baseline is
// recorded only for inputs not newer than the step, which no rule judges by content then; a cache
// answers as the full computation does, and reports never say whether an answer came from one); the
// truth harness under STALECHECK_VERDICT_CACHE=verify checks it. They are replaced by rename, so the
// racy window does not apply to them. The verdicts, the ledger and the digest cache's lock are not
// recorded.
//
// # Value
//
// The exit status and the bytes the full check wrote (stdout, stderr) and an opaque Extra (run's plan),
// written to `<state>/verdicts/<key hex>` (a temporary file renamed into place; at most MaxEntries files
// kept, the oldest removed), with a CRC-32: a damaged file is a miss.
//
// # Memos
//
// Beside it, `<key hex>.memos` holds the memos the check kept (internal/fsrec's memo.go: what a
// reader computed over one file or folder) and the covered misses the verdict file leaves out. After a
// miss every entry is looked up again, and Begin hands the next recording the memos none of whose
// entries at or under their scope changed, with the entries that still answer alike and the covered
// misses whose folder does (memo.go). OnMiss lets the caller start preparing the full check as soon as
// the look-up meets a change; the verdict file's first-look entries (the paths the build changed last
// when it was stored: firstLook) are looked up before the others, so that after an edit and rebuild
// the miss is known before any other work.
package vcache

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// EnvMode is the variable that switches the cache: "off" (also "0", "no"), "verify", else on.
const EnvMode = "STALECHECK_VERDICT_CACHE"

// EnvTrace, when set to a non-empty value, makes the cache say on stderr what it did (hit, miss and
// why, stored or why not).
const EnvTrace = "STALECHECK_VERDICT_CACHE_TRACE"

// Folder is the cache's folder inside the state folder.
const Folder = "verdicts"

// MaxEntries bounds the files kept in the folder.
const MaxEntries = 32

// Mode is what the cache does.
type Mode int

const (
	Off    Mode = iota // neither looked up nor stored
	On                 // a hit answers
	Verify             // a hit is checked against the full check (exit status 3 when they differ)
)

// ModeFromEnv reads EnvMode; noCache (a --no-cache flag) wins.
func ModeFromEnv(noCache bool) Mode {
	if noCache {
		return Off
	}
	switch strings.ToLower(os.Getenv(EnvMode)) {
	case "off", "0", "no", "false":
		return Off
	case "verify":
		return Verify
	}
	return On
}

// volatile are environment variables left out of the key: shells set them per command (SHLVL too:
// bash lowers it for a command it runs last in a $(...) substitution, so `out=$(stalecheck check)` in a
// script and the same check on the next line had two keys).
var volatile = map[string]bool{"_": true, "OLDPWD": true, "SHLVL": true}

// StableEnv returns env sorted, without the volatile variables and the cache's own switches: the
// environment as the key sees it.
func StableEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if !volatile[name] && !strings.HasPrefix(name, EnvMode) {
			out = append(out, e)
		}
	}
	sort.Strings(out)
	return out
}

// Key identifies one invocation (see the package comment).
type Key [32]byte

func (k Key) String() string { return hex.EncodeToString(k[:]) }

// MakeKey computes the key of an invocation: kind, version (the caller's version string), the command
// line args (all of it, program name first) and extra words. Errors: the working folder or the own
// executable cannot be found.
func MakeKey(kind, version string, args []string, extra ...string) (Key, error) {
	h := sha256.New()
	put := func(s string) {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	put("stalecheck verdict cache v1")
	put(kind)
	put(version)
	if bi, ok := debug.ReadBuildInfo(); ok {
		put(bi.Main.Version)
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				put(s.Key + "=" + s.Value)
			}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return Key{}, fmt.Errorf("the own executable: %w", err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return Key{}, fmt.Errorf("the own executable: %w", err)
	}
	s := fsrec.SigOf(fi, nil)
	put(fmt.Sprintf("exe %s %d %d %d %d %d", exe, s.Dev, s.Ino, s.Size, s.MtimeNS, s.CtimeNS))
	wd, err := os.Getwd()
	if err != nil {
		return Key{}, fmt.Errorf("the working folder: %w", err)
	}
	put("cwd " + wd)
	put(fmt.Sprintf("args %d", len(args)))
	for _, a := range args {
		put(a)
	}
	for _, e := range StableEnv(os.Environ()) {
		put(e)
	}
	put(fmt.Sprintf("extra %d", len(extra)))
	for _, x := range extra {
		put(x)
	}
	var k Key
	h.Sum(k[:0])
	return k, nil
}

// Result is what a full check produced.
type Result struct {
	Exit     int
	Out, Err []byte
	Extra    []byte // the caller's own (run's plan summary)
}

// Cache is the cache in one state folder. A nil *Cache caches nothing.
type Cache struct {
	stateDir, dir string
	// last is what the last Lookup or Peek that missed (a changed path) learnt of the verdict file's
	// memos: Begin starts the next recording from them (memo.go).
	last *lastMiss
	// Trace, when not nil, gets one line per decision.
	Trace func(format string, args ...any)
	// OnMiss, when not nil, is called once as soon as the look-up of a verdict file with memos meets a
	// change: the caller may start preparing the full check that follows a miss. When a first-look
	// entry changed (firstLook) it is called before the other look-ups start, else on its own
	// goroutine while they go on.
	OnMiss func()
}

// Open returns the cache of the state folder stateDir; nil when stateDir is "" or the platform cannot
// take signatures (fsrec.Supported). With EnvTrace set, each decision is written to trace (nil:
// os.Stderr) as a line "stalecheck: verdict cache: …".
func Open(stateDir string, trace io.Writer) *Cache {
	if stateDir == "" || !fsrec.Supported {
		return nil
	}
	c := &Cache{stateDir: stateDir, dir: filepath.Join(stateDir, Folder)}
	if os.Getenv(EnvTrace) != "" {
		if trace == nil {
			trace = os.Stderr
		}
		c.Trace = func(format string, args ...any) {
			fmt.Fprintf(trace, "stalecheck: verdict cache: "+format+"\n", args...)
		}
	}
	return c
}

// ReadEntry decodes a verdict file (for tests and diagnostics): its key, result and entries.
func ReadEntry(path string) (Key, *Result, []fsrec.Entry, error) {
	data, err := safeio.ReadFile(path, safeio.MaxCache)
	if err != nil {
		return Key{}, nil, nil, err
	}
	var k Key
	if len(data) >= len(magic)+32 {
		copy(k[:], data[len(magic):])
	}
	f, err := parse(data, k)
	if err != nil {
		return Key{}, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	ents, err := f.entries()
	if err != nil {
		return Key{}, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, f.res, ents, nil
}

// WriteEntry encodes a verdict file (for tests: a tampered verdict that verify mode must catch).
func WriteEntry(path string, k Key, res *Result, ents []fsrec.Entry) error {
	return os.WriteFile(path, encode(k, res, ents, nil, nil), 0o600)
}

func (c *Cache) say(format string, args ...any) {
	if c != nil && c.Trace != nil {
		c.Trace(format, args...)
	}
}

// PureCaches are the state files that only save work: each answer is keyed by the signatures of the
// files it is about and equals what computing it again gives (digests, archive members and DWARF units
// read, content matches, holdings, #include parses), and no report says whether an answer came from one. Another check
// (under another environment, of another build) rewrites them at will, so a verdict does not depend
// on them: they are not recorded. (internal/digest.CacheFile, cargo.NativeCacheFile,
// evidence.CacheFile, content.HoldsCacheFile, cinclude.StoreFile, content.CodeDigestsFile; internal/cli.TestPureCacheNames checks
// the names.)
var PureCaches = map[string]bool{"digests.v2": true, "read-cache.v2.kv": true, "read-cache.v1.json": true, "content-matches.v2.kv": true, "content-holds.v1.kv": true, "include-parses.v2.kv": true, "code-digests.v2.kv": true,
	// The JSON files earlier stalecheck builds kept five of them in (read once, when the .kv is not there).
	"content-holds.v1.json": true, "code-digests.v2.json": true, "content-matches.v2.json": true, "include-parses.v1.json": true}

// Exclude is the recording's exclusion (fsrec.Begin): the verdicts themselves, the ledger, the digest
// cache's lock and the pure caches. Every other state file (content baselines, the pairs last shown
// held, run's state) is recorded, with its signature at the end of the check (Store).
func (c *Cache) Exclude() func(abs string) bool {
	if c == nil {
		return nil
	}
	prefix := c.stateDir + string(filepath.Separator)
	return func(abs string) bool {
		if !strings.HasPrefix(abs, prefix) {
			return false
		}
		rel := abs[len(prefix):]
		return rel == "digests.lock" || PureCaches[rel] || strings.HasPrefix(rel, Folder+string(filepath.Separator)) || strings.HasPrefix(rel, "ledger.db")
	}
}

// Begin starts the recording of a full check for Store (nil when caching is off or another
// recording is active).
func (c *Cache) Begin() *fsrec.Recorder {
	if c == nil {
		return nil
	}
	state := c.stateDir + string(filepath.Separator)
	opt := fsrec.Options{Exclude: c.Exclude(),
		// What a check writes is in the state folder: looked up anew each time.
		Fresh: func(abs string) bool { return strings.HasPrefix(abs, state) }}
	if c.last != nil {
		// The recording starts when the look-ups of the last file's entries began: the racy rule
		// covers the signatures adopted from it.
		opt.Since = c.last.since
		opt.Expect = len(c.last.cands)
	}
	rec := fsrec.Begin(opt)
	if rec != nil && c.last != nil {
		rec.Adopt(c.prior(c.last))
	}
	c.last = nil
	return rec
}

// HasPrior reports whether the next Begin starts from the memos of the verdict the last Lookup or
// Peek missed.
func (c *Cache) HasPrior() bool { return c != nil && c.last != nil }

func (c *Cache) path(k Key) string { return filepath.Join(c.dir, k.String()) }

// Lookup returns the stored result of k when every recorded path still has its signature; false on a
// miss (none stored, damaged, or a path changed: the trace names it).
func (c *Cache) Lookup(k Key) (*Result, bool) {
	res, valid := c.Peek(k)
	if res == nil || !valid() {
		return nil, false
	}
	return res, true
}

// Peek returns the stored result of k without checking it (nil when none is stored or the file is
// damaged), and valid, which stats the recorded paths and reports whether every one still has its
// signature (Lookup's answer; the trace says hit or miss). A caller may start work from the result
// while valid runs, and must drop that work when valid says false.
func (c *Cache) Peek(k Key) (res *Result, valid func() bool) {
	if c == nil {
		return nil, nil
	}
	t0 := time.Now()
	data, err := safeio.ReadFile(c.path(k), safeio.MaxCache)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			c.say("miss: nothing stored for this invocation")
		} else {
			c.say("miss: %v", err)
		}
		return nil, nil
	}
	// The header is decoded now (a damaged file is a miss at once); the entries stay encoded, and valid
	// decodes and stats them chunk by chunk on several cores, so that half a million of them (a
	// 28,000-unit tree) are never held decoded at once.
	f, err := parse(data, k)
	if err != nil {
		c.say("miss: %s: %v", c.path(k), err)
		return nil, nil
	}
	return f.res, func() bool {
		if len(f.gen) > 0 && f.n <= maxPriorEntries {
			return c.validWithPrior(k, f, t0)
		}
		changed, err := f.changed(nil)
		if err != nil {
			c.say("miss: %s: %v", c.path(k), err)
			return false
		}
		if changed != "" {
			if c.Trace != nil && strings.HasPrefix(changed, c.stateDir+string(filepath.Separator)) {
				// A cache of the state folder that another check rewrote is a reason, but rarely the one a
				// person looks for: name a change outside the state folder when there is one too (the
				// workers stop at the first change they meet, in no set order).
				prefix := []byte(c.stateDir + string(filepath.Separator))
				if other, _ := f.changed(func(p []byte) bool { return bytes.HasPrefix(p, prefix) }); other != "" {
					changed = other
				}
			}
			c.say("miss: %s changed (%.1f ms)", changed, float64(time.Since(t0).Microseconds())/1000)
			return false
		}
		c.say("hit: %d paths unchanged (%.1f ms)", f.n, float64(time.Since(t0).Microseconds())/1000)
		return true
	}
}

// validWithPrior is Peek's valid for a verdict file with memos: one look-up of every entry (lookAll),
// and after a miss what the next recording starts from (lastMiss), with the memo file read while the
// look-ups go on.
func (c *Cache) validWithPrior(k Key, f *file, t0 time.Time) bool {
	memoc := make(chan memoRead, 1)
	var once sync.Once
	missed := func(early bool) {
		once.Do(func() {
			if c.OnMiss != nil {
				if early {
					c.OnMiss() // before the look-ups grow the heap and while no other goroutine runs
				} else {
					go c.OnMiss()
				}
			}
			go func() {
				data, err := safeio.ReadFile(c.path(k)+MemoSuffix, safeio.MaxCache)
				memoc <- memoRead{data, err}
			}()
		})
	}
	early := f.firstChanged()
	if early {
		missed(true)
	}
	state, changed, err := f.lookAll(func() { missed(false) })
	if err != nil {
		if len(changed) > 0 {
			<-memoc
		}
		c.say("miss: %s: %v", c.path(k), err)
		return false
	}
	if len(changed) == 0 {
		c.say("hit: %d paths unchanged (%.1f ms)", f.n, float64(time.Since(t0).Microseconds())/1000)
		return true
	}
	// A cache of the state folder that another check rewrote is a reason, but rarely the one a person
	// looks for: name the first change outside the state folder when there is one.
	name := changed[0].path
	for _, ch := range changed {
		if !strings.HasPrefix(ch.path, c.stateDir+string(filepath.Separator)) {
			name = ch.path
			break
		}
	}
	how := ""
	if early {
		how = ", seen at first look"
	}
	c.say("miss: %s changed (%.1f ms%s)", name, float64(time.Since(t0).Microseconds())/1000, how)
	c.last = c.lastMiss(k, f, t0, <-memoc, state, changed)
	return false
}

// splitPath splits an absolute path at its last "/" (never cleaned: "a/../b" keeps its meaning under
// symbolic links); ok is false for a last element that is empty, "." or "..".
func splitPath(p string) (dir, base string, ok bool) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", "", false
	}
	base = p[i+1:]
	if base == "" || base == "." || base == ".." {
		return "", "", false
	}
	dir = p[:i]
	if dir == "" {
		dir = "/"
	}
	return dir, base, true
}

// sortByFolder orders entries by folder, then name and op, so that a folder's entries are contiguous
// (firstChanged stats them through one descriptor of the folder). Folders come newest first (by the
// newest ctime among their entries, then by name): what changed lately is what a build changes again
// (a crate's fingerprint and deps folders, the edited source's folder), and the look-up after a
// rebuild, which stops at the first change when the file has no memos (lookAll does not stop), then
// stops in the first chunk instead of near the last.
func sortByFolder(ents []fsrec.Entry) {
	// The folders are numbered and sorted (a few thousand names, against tens of thousands of entries
	// that share long prefixes), the entries placed by their folder's rank (a counting sort), then each
	// folder's few entries ordered by name and op. Each path is cut into folder and name once.
	type member struct {
		base string
		op   fsrec.Op
		i    int
	}
	ids := make(map[string]int, len(ents)/4)
	var dirs []string
	var newest []int64
	of := make([]int, len(ents))
	bases := make([]string, len(ents))
	for i := range ents {
		d, b, _ := splitPath(ents[i].Path)
		id, ok := ids[d]
		if !ok {
			id = len(dirs)
			ids[d] = id
			dirs = append(dirs, d)
			newest = append(newest, 0)
		}
		of[i], bases[i] = id, b
		newest[id] = max(newest[id], ents[i].Sig.CtimeNS)
	}
	order := make([]int, len(dirs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(newest[b], newest[a]), strings.Compare(dirs[a], dirs[b]))
	})
	rank := make([]int, len(dirs))
	for r, id := range order {
		rank[id] = r
	}
	start := make([]int, len(dirs)+1)
	for _, id := range of {
		start[rank[id]+1]++
	}
	for r := 1; r < len(start); r++ {
		start[r] += start[r-1]
	}
	members := make([]member, len(ents))
	fill := slices.Clone(start[:len(dirs)])
	for i, id := range of {
		r := rank[id]
		members[fill[r]] = member{base: bases[i], op: ents[i].Op, i: i}
		fill[r]++
	}
	for r := range dirs {
		slices.SortFunc(members[start[r]:start[r+1]], func(a, b member) int {
			if c := strings.Compare(a.base, b.base); c != 0 {
				return c
			}
			if c := strings.Compare(ents[a.i].Path, ents[b.i].Path); c != 0 {
				return c
			}
			return cmp.Compare(a.op, b.op)
		})
	}
	// Each entry goes to its place along the cycles of the permutation (members[j].i is the entry
	// place j takes; -1 once placed): no second slice of ten thousand entries.
	for j := range members {
		if members[j].i < 0 {
			continue
		}
		held := ents[j]
		k := j
		for {
			src := members[k].i
			members[k].i = -1
			if src == j {
				ents[k] = held
				break
			}
			ents[k] = ents[src]
			k = src
		}
	}
}

// same reports whether the look-up e answers alike now that the path has the signature now: the same
// signature, or for content read whole (fsrec.OpContent) the same bytes (read again when the
// signature differs or the entry asks for a recheck).
func same(e *fsrec.Entry, now fsrec.Sig) bool {
	if e.Op != fsrec.OpContent {
		return now == e.Sig
	}
	if now == e.Sig && !e.Recheck {
		return true
	}
	if now.Err != fsrec.ErrNone || now.Size != e.Sig.Size || now.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return false
	}
	data, err := safeio.ReadFile(e.Path, e.Sig.Size)
	return err == nil && e.Sum != nil && fsrec.SumOf(data) == *e.Sum
}

// Racy windows: how close to the recording's start a ctime may be before a change made during the
// check could have kept it (the kernel's coarse clock ticks at 1–10 ms; file systems without
// nanoseconds at 1–2 s).
const (
	racyWindow       = 50 * time.Millisecond
	racyWindowCoarse = 2 * time.Second
)

// Store saves res for k when the recording allows it (see the package comment); it returns whether it
// did and, when not, why. rec is ended first.
func (c *Cache) Store(k Key, rec *fsrec.Recorder, res *Result) (bool, string) {
	if c == nil {
		return false, "off"
	}
	if rec == nil {
		return c.notStored("another check in this process was being recorded")
	}
	rec.End()
	t0 := time.Now()
	if r := rec.UncacheableReasons(); len(r) > 0 {
		return c.notStored("the check " + r[0] + " (what it read is not known)")
	}
	statePrefix := c.stateDir + string(filepath.Separator)
	for _, p := range rec.Changed() {
		if !strings.HasPrefix(p, statePrefix) {
			return c.notStored(p + " changed during the check")
		}
	}
	ents, misses := dropCoveredMisses(dropFollowedTwins(rec.Entries()))
	start := rec.Start.UnixNano()
	for i := range ents {
		e := &ents[i]
		if strings.HasPrefix(e.Path, statePrefix) {
			// Stalecheck's own state file, which this check may have written (a content baseline
			// recorded at a step's first sight, a cache filled): the next check reads it as it is now,
			// and gives the same verdict (what a check records never changes the verdict of the build
			// state it was recorded in), so the entry is kept with its signature at the end.
			if now := fsrec.Now(e.Path, e.Op); !same(e, now) {
				resign(e, now)
			}
			continue
		}
		// Every other entry keeps the signature the check saw, not the one it has now: a path changed
		// after the check consulted it has another signature at the next look-up (its ctime moved past
		// the start), which misses; one changed within the racy window before is kept out below. A
		// second look at every path here would only spare storing an entry that will miss.
		if e.Sig.Err != fsrec.ErrNone {
			continue
		}
		w := racyWindow
		if e.Sig.MtimeNS%1e9 == 0 && e.Sig.CtimeNS%1e9 == 0 {
			w = racyWindowCoarse
		}
		if e.Sig.CtimeNS > start-w.Nanoseconds() {
			if e.Op == fsrec.OpContent {
				// The verdict used exactly the bytes summed: compare them on every look-up.
				e.Recheck = true
				continue
			}
			return c.notStored(fmt.Sprintf("%s changed %s before the check started (or later): too close to tell a later change apart", e.Path, time.Duration(start-e.Sig.CtimeNS)))
		}
	}
	sortByFolder(ents)
	wo := safeio.WriteOptions{Replace: true, Perm: 0o600, MkdirPerm: 0o700}
	// The memo file is written while the verdict is encoded with its generation; the verdict file is
	// written after it (a verdict never names a generation that was not written), and encoded again
	// without one when the memo file was not written (none of the memos kept was still in scope, or
	// the write failed: both rare).
	// None are stored for a verdict too large to be looked up again entry by entry after a miss.
	var gen []byte
	if len(ents) <= maxPriorEntries && rec.KeptMemos() {
		gen = make([]byte, 16)
		if _, err := rand.Read(gen); err != nil {
			gen = nil
		}
	}
	memoDone := make(chan bool, 1)
	go func() {
		var memos []fsrec.Memo
		if gen != nil {
			memos = keptMemos(rec.Memos(), ents)
		}
		memoDone <- c.storeMemos(k, memos, misses, gen, wo)
	}()
	first := firstLook(ents, statePrefix)
	data := encode(k, res, ents, gen, first)
	if !<-memoDone && gen != nil {
		data = encode(k, res, ents, nil, first)
	}
	if err := safeio.WriteBytesAtomic(c.path(k), wo, data); err != nil {
		return c.notStored(err.Error())
	}
	c.prune()
	c.say("stored: %d paths, %d bytes (%.1f ms)", len(ents), len(data), float64(time.Since(t0).Microseconds())/1000)
	return true, ""
}

// firstLookEntries is how many first-look entries a verdict file holds.
const firstLookEntries = 8

// firstLook picks the first-look entries of a verdict (copies): the found paths outside the state
// folder (whose files every check may rewrite) with the latest change (mtime or ctime), looked up
// by signature (content is compared by its bytes: not a quick look). The files a build wrote last
// are the ones the next build rewrites.
func firstLook(ents []fsrec.Entry, statePrefix string) []fsrec.Entry {
	changedAt := func(e *fsrec.Entry) int64 { return max(e.Sig.MtimeNS, e.Sig.CtimeNS) }
	var first []fsrec.Entry
	for i := range ents {
		e := &ents[i]
		if e.Sig.Err != fsrec.ErrNone || e.Op == fsrec.OpContent || strings.HasPrefix(e.Path, statePrefix) {
			continue
		}
		if len(first) == firstLookEntries && changedAt(e) <= changedAt(&first[len(first)-1]) {
			continue
		}
		// Insert in order, latest first, dropping the earliest past the bound.
		j, _ := slices.BinarySearchFunc(first, changedAt(e), func(x fsrec.Entry, t int64) int { return cmp.Compare(t, changedAt(&x)) })
		if len(first) < firstLookEntries {
			first = append(first, fsrec.Entry{})
		}
		copy(first[j+1:], first[j:len(first)-1])
		first[j] = *e
	}
	return first
}

// resign gives the entry e of a state file the signature now (and, for content, the sum of its bytes
// now; a file that can no longer be read keeps a signature no later look-up matches).
func resign(e *fsrec.Entry, now fsrec.Sig) {
	e.Sig, e.Recheck = now, false
	if e.Op != fsrec.OpContent {
		return
	}
	data, err := safeio.ReadFile(e.Path, safeio.MaxCache)
	if err != nil || now.Err != fsrec.ErrNone {
		e.Sig = fsrec.Sig{Err: fsrec.ErrOther}
		e.Op = fsrec.OpStat
		return
	}
	sum := fsrec.SumOf(data)
	e.Sum = &sum
}

// dropFollowedTwins drops the stat of a path whose lstat is recorded with the same signature and is
// not a symbolic link: the two look-ups answer alike as long as the lstat does (a path that becomes
// a link changes its lstat).
func dropFollowedTwins(ents []fsrec.Entry) []fsrec.Entry {
	lst := make(map[string]fsrec.Sig, len(ents)/2)
	for _, e := range ents {
		if e.Op == fsrec.OpLstat {
			lst[e.Path] = e.Sig
		}
	}
	out := ents[:0]
	for _, e := range ents {
		if e.Op == fsrec.OpStat {
			if l, ok := lst[e.Path]; ok && l == e.Sig && (l.Err != fsrec.ErrNone || l.Mode&syscall.S_IFMT != syscall.S_IFLNK) {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// isFolder reports whether e recorded a folder found (the look-up of a folder, not its bytes): its
// signature covers the names absent from it.
func isFolder(e *fsrec.Entry) bool {
	return e.Op != fsrec.OpContent && e.Sig.Err == fsrec.ErrNone && e.Sig.Mode&syscall.S_IFMT == syscall.S_IFDIR
}

// dropCoveredMisses drops a look-up that found nothing (ENOENT) at dir/name when the folder dir itself
// is recorded as a folder: while dir keeps its signature (same inode, mtime and ctime: an entry added,
// removed or renamed moves both) name is still absent from it. The linker search order and the
// nested-package probes look up many absent names in folders the check lists anyway. The stat and
// lstat misses dropped are returned too (misses, a new slice): the memo file keeps them for the
// recording after a miss (lastMiss).
func dropCoveredMisses(ents []fsrec.Entry) (kept, misses []fsrec.Entry) {
	dirs := make(map[string]bool, len(ents)/8)
	for i := range ents {
		if isFolder(&ents[i]) {
			dirs[ents[i].Path] = true
		}
	}
	out := ents[:0]
	for _, e := range ents {
		if e.Sig.Err == fsrec.ErrNotExist {
			if dir, _, ok := splitPath(e.Path); ok && dirs[dir] {
				if e.Op == fsrec.OpStat || e.Op == fsrec.OpLstat {
					misses = append(misses, e)
				}
				continue
			}
		}
		out = append(out, e)
	}
	return out, misses
}

func (c *Cache) notStored(reason string) (bool, string) {
	c.say("not stored: %s", reason)
	return false, reason
}

// prune removes the oldest verdict files beyond MaxEntries, each with its memo file, memo files
// whose verdict file is gone, and temporary files older than a minute.
func (c *Cache) prune() {
	ents, err := os.ReadDir(c.dir)
	if err != nil || len(ents) <= MaxEntries {
		return
	}
	type f struct {
		name string
		mt   int64
	}
	var fs []f
	names := make(map[string]bool, len(ents))
	for _, e := range ents {
		names[e.Name()] = true
	}
	for _, e := range ents {
		n := e.Name()
		if v, ok := strings.CutSuffix(n, MemoSuffix); ok && !strings.HasPrefix(n, ".") {
			if !names[v] {
				os.Remove(filepath.Join(c.dir, n))
			}
			continue
		}
		if info, err := e.Info(); err == nil {
			if strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".tmp") && time.Since(info.ModTime()) < time.Minute {
				continue
			}
			fs = append(fs, f{n, info.ModTime().UnixNano()})
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].mt > fs[j].mt })
	for _, x := range fs[min(len(fs), MaxEntries):] {
		os.Remove(filepath.Join(c.dir, x.name))
		os.Remove(filepath.Join(c.dir, x.name+MemoSuffix))
	}
}
