package cargo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/kvfile"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// NativeCacheFile is the file in the state folder that keeps what archiveEvidence read from each static
// library in OUT_DIR (member names, whether each carries a CUDA fatbinary, and the DWARF compile units
// with their line-table files), keyed by the archive's device, inode, size, mtime and ctime
// (digest.Key): the parse of every member's ELF and DWARF (relocations applied) is most of a warm
// check's native cost, and an archive that did not change gives the same answer. The ctime makes an
// in-place rewrite that keeps size and mtime a new key; an archive changed less than digest.RacyWindow
// before it was read is not cached (a second write within the same timestamp tick would keep its key).
//
// It also keeps each package manifest's version (ReadManifestVersion) by the manifest's key, except a
// version inherited from the workspace (which another file decides): decoding the TOML of every
// registry package's Cargo.toml is the other large fixed cost.
//
// The file is an internal/kvfile file (each answer a record keyed by its kind and the file's key, the
// value JSON), read without decoding the values: the state folder is shared by every workspace a user
// checks, and a day's use made it 3.4 MB, whose JSON a check decoded whole (29 ms of waiting in a first
// check after a rebuild) and encoded whole again after adding one executable's units.
const NativeCacheFile = "read-cache.v2.kv"

// legacyNativeCacheFile is the JSON file earlier builds kept the cache in: read when NativeCacheFile is
// not there, and removed at the first save.
const legacyNativeCacheFile = "read-cache.v1.json"

// nativeCacheMax bounds the entries kept (the state folder is shared by every workspace); the entries
// this check did not use go first.
const nativeCacheMax = 20000

// nativeClock is the clock settled reads; tests move it past the racy window of files they just wrote.
var nativeClock = time.Now

type nativeCache struct {
	path     string
	mu       sync.Mutex
	m        map[digest.Key]*nativeEntry
	versions map[digest.Key]*versionEntry
	units    map[digest.Key]*unitsEntry
	// raw holds the records of the file not asked for yet, by record key (recordKey): decoded into
	// the maps above on first use, written back as read.
	raw   map[string][]byte
	dirty bool
	// changed holds the record keys this check added or changed (save appends them); info and read
	// are the file as read and its signature before the read; legacy: the entries came from the JSON
	// file of an earlier build.
	changed map[string]any // record key -> its entry (a pointer: what it holds at save)
	info    kvfile.Info
	read    string
	legacy  bool
}

// The kinds of record, the first byte of a record key; the rest is the file's digest.Key.
const (
	kindArchive = 'a'
	kindVersion = 'v'
	kindUnits   = 'u'
)

// recordKey is the kvfile key of kind's answer for the file with key k.
func recordKey(kind byte, k digest.Key) string {
	return string(kind) + string(k.Bytes())
}

// entryOf returns kind's answer for k from m, or decodes its record from raw into m (c.mu held). A
// record that does not decode, or that valid refuses (not what save writes), is dropped (as if absent).
func entryOf[E any](c *nativeCache, kind byte, k digest.Key, m map[digest.Key]*E, setKey func(*E), valid func(*E) bool) *E {
	if e := m[k]; e != nil {
		return e
	}
	rk := recordKey(kind, k)
	data, ok := c.raw[rk]
	if !ok {
		return nil
	}
	delete(c.raw, rk)
	e := new(E)
	if json.Unmarshal(data, e) != nil || !valid(e) {
		return nil
	}
	setKey(e)
	m[k] = e
	return e
}

// archive, version and unitsOf are entryOf for each kind. Save writes an archive's members and an
// executable's units as a list, empty or not: a null one is not this cache's.
func (c *nativeCache) archive(k digest.Key) *nativeEntry {
	return entryOf(c, kindArchive, k, c.m, func(e *nativeEntry) { e.Key = k }, func(e *nativeEntry) bool { return e.Members != nil })
}

func (c *nativeCache) version(k digest.Key) *versionEntry {
	return entryOf(c, kindVersion, k, c.versions, func(e *versionEntry) { e.Key = k }, func(*versionEntry) bool { return true })
}

func (c *nativeCache) unitsOf(k digest.Key) *unitsEntry {
	return entryOf(c, kindUnits, k, c.units, func(e *unitsEntry) { e.Key = k }, func(e *unitsEntry) bool { return e.Units != nil })
}

// unitsEntry is one executable's DWARF compile units, names only (dwarfTree's first pass): the name and
// comp_dir of each, in .debug_info order.
type unitsEntry struct {
	Key   digest.Key `json:"-"`
	Units []unitName `json:"units"`
	// Trees are dwarfTree's second pass: for a tree the executable was built in, the files there that
	// the line tables of the units compiled there name, in unit order.
	Trees map[string][]string `json:"trees,omitempty"`
	used  bool
}

// unitName is a compile unit's [name, comp_dir]: exactly two strings in the file (encoding/json pads a
// shorter array and drops the rest of a longer one, which would answer for a unit that is not there).
type unitName [2]string

func (u *unitName) UnmarshalJSON(b []byte) error {
	var s []string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if len(s) != 2 {
		return fmt.Errorf("a compile unit is [name, comp_dir], not %d strings", len(s))
	}
	u[0], u[1] = s[0], s[1]
	return nil
}

// versionEntry is one manifest's [package] version.
type versionEntry struct {
	Key     digest.Key `json:"-"`
	Version string     `json:"version"`
	used    bool
}

// nativeEntry is one archive's answer, in the cache file's JSON.
type nativeEntry struct {
	Key     digest.Key     `json:"-"`
	Members []cachedMember `json:"members"`
	CUs     []cachedCU     `json:"cus,omitempty"`
	used    bool
}

type cachedMember struct {
	Name string `json:"name"`
	CUDA bool   `json:"cuda,omitempty"`
}

type cachedCU struct {
	Member string       `json:"member"`
	Files  []string     `json:"files,omitempty"`
	Units  []cachedUnit `json:"units,omitempty"`
}

type cachedUnit struct {
	Source string   `json:"source"`
	Files  []string `json:"files,omitempty"`
}

// openNativeCache loads the cache of stateDir; nil (no cache) when stateDir is "". A missing or damaged
// file gives an empty cache.
func openNativeCache(stateDir string) *nativeCache {
	if stateDir == "" {
		return nil
	}
	c := &nativeCache{path: filepath.Join(stateDir, NativeCacheFile), m: map[digest.Key]*nativeEntry{}, versions: map[digest.Key]*versionEntry{}, units: map[digest.Key]*unitsEntry{}, raw: map[string][]byte{}}
	c.changed = map[string]any{}
	c.read = kvfile.Signature(c.path)
	raw, info, err := kvfile.Read(c.path, safeio.MaxCache)
	switch {
	case err == nil:
		c.raw, c.info = raw, info
		// A torn tail: the file is written whole at the end of this check.
		c.dirty = info.TornAt > 0
	case errors.Is(err, fs.ErrNotExist):
		c.readLegacy(filepath.Join(stateDir, legacyNativeCacheFile))
	default:
		// Damaged, too large or not a regular file: written whole at the end of this check.
		c.dirty = true
	}
	return c
}

// readLegacy carries the entries of an earlier build's JSON file over (written as a kvfile, and the
// JSON file removed, at the next save): reading every archive and executable again costs more once
// than decoding that file once.
func (c *nativeCache) readLegacy(path string) {
	data, err := safeio.ReadFile(path, safeio.MaxCache)
	if err != nil {
		return
	}
	var f struct {
		Archives []*struct {
			Key digest.Key `json:"key"`
			nativeEntry
		} `json:"archives"`
		Versions []*struct {
			Key digest.Key `json:"key"`
			versionEntry
		} `json:"versions"`
		Units []*struct {
			Key digest.Key `json:"key"`
			unitsEntry
		} `json:"units"`
	}
	if json.Unmarshal(data, &f) != nil {
		return
	}
	for _, e := range f.Archives {
		if e != nil && e.Members != nil {
			e.nativeEntry.Key = e.Key
			c.m[e.Key] = &e.nativeEntry
		}
	}
	for _, e := range f.Versions {
		if e != nil {
			e.versionEntry.Key = e.Key
			c.versions[e.Key] = &e.versionEntry
		}
	}
	for _, e := range f.Units {
		if e != nil && e.Units != nil {
			e.unitsEntry.Key = e.Key
			c.units[e.Key] = &e.unitsEntry
		}
	}
	c.dirty = len(c.m)+len(c.versions)+len(c.units) > 0
	c.legacy = c.dirty
}

// settled says whether a file with key k may be cached: not changed within digest.RacyWindow.
func settled(k digest.Key) bool {
	return digest.Settled(k, nativeClock())
}

// manifestVersion is ReadManifestVersion(root, workspace) through the cache.
func (c *nativeCache) manifestVersion(root, workspace string) (string, error) {
	if c == nil {
		return ReadManifestVersion(root, workspace)
	}
	m := filepath.Join(root, "Cargo.toml")
	k, ok, err := digest.StatKey(m)
	if err != nil || !ok {
		return ReadManifestVersion(root, workspace)
	}
	c.mu.Lock()
	e := c.version(k)
	if e != nil {
		e.used = true
	}
	c.mu.Unlock()
	if e != nil {
		return e.Version, nil
	}
	v, inherited, err := readManifestVersion(root, workspace)
	if err != nil || inherited {
		return v, err
	}
	if k2, ok2, err2 := digest.StatKey(m); err2 == nil && ok2 && k2 == k && settled(k) {
		c.mu.Lock()
		c.versions[k] = &versionEntry{Key: k, Version: v, used: true}
		c.dirty, c.changed[recordKey(kindVersion, k)] = true, c.versions[k]
		c.mu.Unlock()
	}
	return v, nil
}

// evidence is archiveEvidence(path) through the cache.
func (c *nativeCache) evidence(path string) ([]memberInfo, []cuSources, error) {
	if c == nil {
		return archiveEvidence(path)
	}
	k, ok, err := digest.StatKey(path)
	if err != nil || !ok {
		return archiveEvidence(path)
	}
	c.mu.Lock()
	e := c.archive(k)
	if e != nil {
		e.used = true
	}
	c.mu.Unlock()
	if e != nil {
		return e.decode()
	}
	members, cus, err := archiveEvidence(path)
	if err != nil {
		return nil, nil, err
	}
	// Stored only when the archive is the one stat'ed before the read, and not racy.
	if k2, ok2, err2 := digest.StatKey(path); err2 == nil && ok2 && k2 == k && settled(k) {
		e := encodeNative(k, members, cus)
		e.used = true
		c.mu.Lock()
		c.m[k] = e
		c.dirty, c.changed[recordKey(kindArchive, k)] = true, e
		c.mu.Unlock()
	}
	return members, cus, nil
}

// unitNames is the name and comp_dir of every DWARF compile unit of the executable at bin (through the
// cache; a 58 MB debug executable's .debug_info is most of what reading it costs), and f when bin had to
// be mapped to answer (nil from the cache; the caller closes it).
func (c *nativeCache) unitNames(bin string) (names []unitName, f *binfmt.ELFFile, err error) {
	var k digest.Key
	cacheable := false
	if c != nil {
		var ok bool
		if k, ok, err = digest.StatKey(bin); err == nil && ok {
			cacheable = true
			c.mu.Lock()
			e := c.unitsOf(k)
			if e != nil {
				e.used = true
			}
			c.mu.Unlock()
			if e != nil {
				return e.Units, nil, nil
			}
		}
	}
	if f, err = binfmt.MapELF(bin); err != nil {
		return nil, nil, err
	}
	cus, err := f.UnitSources(nil)
	if err != nil {
		return nil, f, err
	}
	names = make([]unitName, len(cus))
	for i, cu := range cus {
		names[i] = unitName{cu.Name, cu.CompDir}
	}
	// Stored only when the file is the one stat'ed before it was mapped, and not racy.
	if k2, ok2, err2 := digest.StatKey(bin); cacheable && err2 == nil && ok2 && k2 == k && settled(k) {
		c.mu.Lock()
		c.units[k] = &unitsEntry{Key: k, Units: names, used: true}
		c.dirty, c.changed[recordKey(kindUnits, k)] = true, c.units[k]
		c.mu.Unlock()
	}
	return names, f, nil
}

// treeFiles is the files under tree that the line tables of bin's units compiled there name, in unit
// order (nil when none or bin cannot be read), through the cache: by bin's stat key, as unitNames
// (whose entry holds it). f is bin mapped when the caller has it, else nil.
func (c *nativeCache) treeFiles(bin, tree string, f *binfmt.ELFFile) []string {
	var k digest.Key
	cacheable := false
	if c != nil {
		if key, ok, err := digest.StatKey(bin); err == nil && ok {
			k, cacheable = key, true
			c.mu.Lock()
			e := c.unitsOf(k)
			var files []string
			found := false
			if e != nil && e.Trees != nil {
				files, found = e.Trees[tree]
			}
			c.mu.Unlock()
			if found {
				return slices.Clone(files)
			}
		}
	}
	if f == nil {
		var err error
		if f, err = binfmt.MapELF(bin); err != nil {
			return nil
		}
		defer f.Close()
	}
	sep := string(filepath.Separator)
	inTree := func(p string) bool { return p == tree || strings.HasPrefix(p, tree+sep) }
	cus, err := f.UnitSources(func(cu binfmt.CompileUnit) bool { return inTree(cu.CompDir) })
	if err != nil {
		return nil
	}
	var files []string
	for _, cu := range cus {
		for _, p := range cu.Files {
			if inTree(p) {
				files = append(files, p)
			}
		}
	}
	// Stored as unitNames stores: the file is the one stat'ed before, and not racy.
	if k2, ok2, err2 := digest.StatKey(bin); cacheable && err2 == nil && ok2 && k2 == k && settled(k) {
		c.mu.Lock()
		if e := c.units[k]; e != nil {
			if e.Trees == nil {
				e.Trees = map[string][]string{}
			}
			e.Trees[tree] = slices.Clone(files)
			c.dirty, c.changed[recordKey(kindUnits, k)] = true, e
		}
		c.mu.Unlock()
	}
	return files
}

func encodeNative(k digest.Key, members []memberInfo, cus []cuSources) *nativeEntry {
	e := &nativeEntry{Key: k, Members: make([]cachedMember, len(members))}
	for i, m := range members {
		e.Members[i] = cachedMember{Name: m.name, CUDA: m.cuda}
	}
	for _, cu := range cus {
		cc := cachedCU{Member: cu.member, Files: cu.files}
		for _, u := range cu.units {
			cc.Units = append(cc.Units, cachedUnit{Source: u.source, Files: u.files})
		}
		e.CUs = append(e.CUs, cc)
	}
	return e
}

func (e *nativeEntry) decode() ([]memberInfo, []cuSources, error) {
	members := make([]memberInfo, len(e.Members))
	for i, m := range e.Members {
		members[i] = memberInfo{name: m.Name, cuda: m.CUDA}
	}
	var cus []cuSources
	for _, cc := range e.CUs {
		cu := cuSources{member: cc.Member, files: cc.Files}
		for _, u := range cc.Units {
			cu.units = append(cu.units, cuUnit{source: u.Source, files: u.Files})
		}
		cus = append(cus, cu)
	}
	return members, cus, nil
}

// save writes the cache when this check added to it. When the file is the one this check read, the
// records it added or changed are appended as one block (kvfile.Append); otherwise, or when the
// appended blocks would pass half the file's last whole write (64 KiB at least), or a kind passes its
// bound, the whole file is written again: a temporary file renamed into place, so a crash or a
// concurrent check never leaves a torn file (a concurrent check's additions may be lost: they are read
// again next time), with the records this check did not ask for copied as read. Errors are ignored:
// the cache only saves work.
func (c *nativeCache) save() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return
	}
	unlock := digest.LockPath(c.path + ".lock") // one saver at a time (kvfile.Cache.Save says why)
	defer unlock()
	count := map[byte]int{kindArchive: len(c.m), kindVersion: len(c.versions), kindUnits: len(c.units)}
	for k := range c.raw {
		count[k[0]]++
	}
	within := count[kindArchive] <= nativeCacheMax && count[kindVersion] <= nativeCacheMax && count[kindUnits] <= nativeCacheMax
	// Appended to only when it was read whole (a damaged file is written again, never appended to).
	if within && c.info.Blocks > 0 && !c.legacy && c.info.TornAt == 0 && c.read != "" && kvfile.Signature(c.path) == c.read && c.appendChanged() {
		return
	}
	type rec struct {
		key  string
		data []byte
	}
	var recs []rec
	size := 0
	add := func(kind byte, k digest.Key, v any) bool {
		data, err := json.Marshal(v)
		if err != nil {
			return false
		}
		r := rec{recordKey(kind, k), data}
		recs = append(recs, r)
		size += kvfile.RecordSize(r.key, data, false)
		return true
	}
	for _, e := range digest.KeptEntries(c.m, func(e *nativeEntry) bool { return e.used }, nativeCacheMax) {
		if !add(kindArchive, e.Key, e) {
			return
		}
	}
	for _, e := range digest.KeptEntries(c.versions, func(e *versionEntry) bool { return e.used }, nativeCacheMax) {
		if !add(kindVersion, e.Key, e) {
			return
		}
	}
	for _, e := range digest.KeptEntries(c.units, func(e *unitsEntry) bool { return e.used }, nativeCacheMax) {
		if !add(kindUnits, e.Key, e) {
			return
		}
	}
	// The records not asked for are unused: kept while their kind stays within the bound.
	room := map[byte]int{kindArchive: nativeCacheMax, kindVersion: nativeCacheMax, kindUnits: nativeCacheMax}
	for _, r := range recs {
		room[r.key[0]]--
	}
	for k := range c.raw {
		room[k[0]]--
	}
	for k, v := range c.raw {
		if len(k) > 0 && room[k[0]] >= 0 {
			recs = append(recs, rec{k, v})
			size += kvfile.RecordSize(k, v, false)
		}
	}
	err := safeio.WriteFileAtomic(c.path, safeio.WriteOptions{Replace: true, Perm: 0o600, MkdirPerm: 0o700}, func(f io.Writer) error {
		w := kvfile.NewWriter(f, size)
		for _, r := range recs {
			w.Add(r.key, r.data)
		}
		return w.Close()
	})
	if err != nil {
		return
	}
	os.Remove(filepath.Join(filepath.Dir(c.path), legacyNativeCacheFile))
	c.info, c.read, c.legacy = kvfile.Info{Blocks: 1, First: size}, kvfile.Signature(c.path), false
	clear(c.changed)
	c.dirty = false
}

// appendChanged appends the records this check added or changed as one block (c.mu held); false when
// the appended part would grow too large or the append failed.
func (c *nativeCache) appendChanged() bool {
	var b kvfile.Block
	for rk, v := range c.changed {
		data, err := json.Marshal(v)
		if err != nil {
			return false
		}
		b.Add(rk, data)
	}
	if c.info.Appended+b.Len() > max(c.info.First/2, 64<<10) {
		return false
	}
	if kvfile.Append(c.path, &b) != nil {
		return false
	}
	c.info.Blocks++
	c.info.Appended += b.Len()
	c.read = kvfile.Signature(c.path)
	clear(c.changed)
	c.dirty = false
	return true
}
