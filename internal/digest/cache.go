package digest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/zeebo/blake3"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// CacheFile is the name of the cache file inside the state folder. Version 2 keys entries by ctime too;
// a version 1 file (digests.v1, keyed without ctime) is never read.
const CacheFile = "digests.v2"

// lockFileName is the advisory lock that serializes Save across processes.
const lockFileName = "digests.lock"

// RacyWindow is how recent a file's mtime may be for its digest still to be cached: a file modified less
// than RacyWindow before it was hashed (or with an mtime in the future) is hashed on every call.
const RacyWindow = 2 * time.Second

// KeptEntries is what a cache file of answers keyed by stat key keeps of its table m when it is saved:
// every entry this process used, then unused ones while the total stays under max (the state folder is
// shared by every build; what this check did not use goes first).
func KeptEntries[E any](m map[Key]E, used func(E) bool, max int) []E {
	var out []E
	for _, e := range m {
		if used(e) {
			out = append(out, e)
		}
	}
	for _, e := range m {
		if !used(e) && len(out) < max {
			out = append(out, e)
		}
	}
	return out
}

// Settled says whether a file whose stat key is k may stand for its bytes in a cache at time now: its
// mtime and ctime are more than RacyWindow before now (a second write within the same timestamp tick
// could keep every field of the key). The read caches of parses (archives, DWARF units, #include
// lines) keep an answer only for a settled file whose key did not change across the read.
func Settled(k Key, now time.Time) bool {
	return now.Sub(time.Unix(0, max(k.MtimeNS, k.CtimeNS))) > RacyWindow
}

// MaxEntries bounds the number of entries the cache file keeps (72 bytes each, so 72 MiB at most). When a
// Save would exceed it, entries used or added by this process are kept first.
const MaxEntries = 1 << 20

// clock is the clock new caches use; tests move it past the racy window of the files they just wrote.
var clock = time.Now

// magic starts every cache file; the last byte is the format version.
var magic = [8]byte{'S', 'C', 'D', 'I', 'G', 'S', 'T', 2}

const (
	headerSize = 16 // magic + uint64 entry count
	entrySize  = 72 // dev, ino, size, mtime, ctime (8 bytes each, little endian) + digest
	sumSize    = 32 // blake3 of header and entries
)

// Key identifies one version of a file: its device and inode numbers, its size in bytes, and its
// modification and status-change times in nanoseconds since the Unix epoch. The ctime is what makes an
// in-place edit that keeps size and mtime (cp -p, rsync -t, tar, os.Chtimes) a new key: no program can set
// it back.
type Key struct {
	Dev     uint64
	Ino     uint64
	Size    int64
	MtimeNS int64
	CtimeNS int64
}

// Bytes is k as 40 bytes (each field little-endian): a record key in a state file.
func (k Key) Bytes() []byte {
	b := make([]byte, 0, 40)
	for _, v := range []uint64{k.Dev, k.Ino, uint64(k.Size), uint64(k.MtimeNS), uint64(k.CtimeNS)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

type entry struct {
	sum  Digest
	used bool // looked up or added by this process
}

// Stats counts what a Cache did since it was opened.
type Stats struct {
	Hits     int64 // File calls answered from the cache, without reading the file
	Misses   int64 // File calls that read and hashed the file
	Uncached int64 // of the Misses, those whose digest was not stored (racy mtime, file changing, no inode)
	Entries  int   // entries held now
}

// Cache is a persistent digest cache, safe for concurrent use by several goroutines. A nil *Cache is valid:
// its File hashes every time and its Save does nothing.
type Cache struct {
	dir string

	mu      sync.Mutex
	m       map[Key]entry
	dirty   bool
	stats   Stats
	loadErr error

	now func() time.Time // the clock, replaced in tests
}

// DefaultDir returns the state folder: $XDG_STATE_HOME/stalecheck when XDG_STATE_HOME is an absolute path,
// else $HOME/.local/state/stalecheck. It returns an error only when neither variable can be used.
func DefaultDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "stalecheck"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("no state folder: neither XDG_STATE_HOME (absolute) nor HOME is set")
	}
	return filepath.Join(home, ".local", "state", "stalecheck"), nil
}

// OpenCache loads the cache kept in the folder dir (which need not exist yet; Save creates it). A missing,
// truncated or corrupt cache file, or one that cannot be read, gives an empty cache: the reason is kept for
// diagnostics in LoadErr, and OpenCache still succeeds. The only error is an empty dir.
func OpenCache(dir string) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("digest: OpenCache: empty folder name")
	}
	c := &Cache{dir: dir, m: map[Key]entry{}, now: clock}
	m, err := readCacheFile(filepath.Join(dir, CacheFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.loadErr = err
	}
	for k, d := range m {
		c.m[k] = entry{sum: d}
	}
	return c, nil
}

// Dir returns the folder the cache is kept in.
func (c *Cache) Dir() string {
	if c == nil {
		return ""
	}
	return c.dir
}

// LoadErr returns why the cache file could not be used when it was opened (corrupt, unreadable), or nil
// when it was loaded or did not exist. It is informational: the cache works either way.
func (c *Cache) LoadErr() error {
	if c == nil {
		return nil
	}
	return c.loadErr
}

// Stats returns the counters of c.
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries = len(c.m)
	return s
}

// File returns the digest of the content of the regular file at path, following symbolic links. It stats
// the path (Lstat, then Stat when it is a link) and answers from the cache when the key (device, inode,
// size, mtime, ctime) is known, without opening the file; otherwise it reads the file in fixed-size chunks,
// hashes it and stores the digest (see the package comment for when it does not).
//
// Errors: those of os.Lstat, os.Stat, os.Open and reading (*fs.PathError naming path), and an error naming
// path when it is not a regular file (a folder, a device, a FIFO).
func (c *Cache) File(path string) (Digest, error) {
	fi, err := fsrec.Lstat(path)
	if err != nil {
		return Digest{}, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if fi, err = fsrec.Stat(path); err != nil {
			return Digest{}, err
		}
	}
	if !fi.Mode().IsRegular() {
		return Digest{}, notRegular(path, fi.Mode())
	}
	if c == nil {
		return HashFile(path)
	}
	if k, ok := fileKey(fi); ok {
		c.mu.Lock()
		e, hit := c.m[k]
		if hit {
			c.stats.Hits++
			if !e.used {
				e.used = true
				c.m[k] = e
			}
		}
		c.mu.Unlock()
		if hit {
			return e.sum, nil
		}
	}
	return c.hash(path)
}

func notRegular(path string, mode fs.FileMode) error {
	return &fs.PathError{Op: "digest", Path: path, Err: fmt.Errorf("not a regular file (%v)", mode.Type())}
}

// hash reads and hashes path, and stores the digest when the file held still and its mtime is not racy.
func (c *Cache) hash(path string) (Digest, error) {
	f, err := safeio.Open(path) // the path may have been replaced by a FIFO since File's stat
	if err != nil {
		return Digest{}, err
	}
	defer f.Close()
	var d Digest
	for attempt := 0; attempt < 3; attempt++ {
		before, err := f.Stat()
		if err != nil {
			return Digest{}, err
		}
		if !before.Mode().IsRegular() {
			return Digest{}, notRegular(path, before.Mode())
		}
		if attempt > 0 {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return Digest{}, err
			}
		}
		if d, err = Reader(f); err != nil {
			return Digest{}, &fs.PathError{Op: "read", Path: path, Err: unwrapPathError(err)}
		}
		after, err := f.Stat()
		if err != nil {
			return Digest{}, err
		}
		kb, okb := fileKey(before)
		ka, oka := fileKey(after)
		if okb && oka && kb != ka {
			continue // changed while we read it: read again
		}
		c.mu.Lock()
		c.stats.Misses++
		if oka && !c.racy(time.Unix(0, max(ka.MtimeNS, ka.CtimeNS))) {
			c.m[ka] = entry{sum: d, used: true}
			c.dirty = true
		} else {
			c.stats.Uncached++
		}
		c.mu.Unlock()
		return d, nil
	}
	// The file kept changing; return the last reading without caching it.
	c.mu.Lock()
	c.stats.Misses++
	c.stats.Uncached++
	c.mu.Unlock()
	return d, nil
}

// racy reports whether a file last modified or changed (the later of mtime and ctime) at t may still be
// written again within the same timestamp tick. Called with c.mu held.
func (c *Cache) racy(t time.Time) bool {
	return !t.Before(c.now().Add(-RacyWindow))
}

// Save writes the cache to dir/digests.v1, creating dir (mode 0700) if needed. It does nothing when no
// entry was added since the last Save. Under an advisory lock it merges the entries another process saved
// meanwhile, writes a temporary file in dir, syncs it and renames it over the cache file: a crash or a
// concurrent Save never leaves a torn file. Errors are those of creating the folder and writing, syncing or
// renaming the file; a failed Save leaves the previous cache file in place.
func (c *Cache) Save() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("digest cache: %w", err)
	}
	unlock := LockPath(filepath.Join(c.dir, lockFileName))
	defer unlock()

	path := filepath.Join(c.dir, CacheFile)
	if disk, err := readCacheFile(path); err == nil {
		for k, d := range disk {
			if _, ok := c.m[k]; !ok {
				c.m[k] = entry{sum: d}
			}
		}
	}
	if len(c.m) > MaxEntries {
		c.prune()
	}
	if err := writeCacheFile(path, c.m); err != nil {
		return fmt.Errorf("digest cache: %w", err)
	}
	c.dirty = false
	return nil
}

// prune drops entries until MaxEntries remain, entries not used by this process first. Called with c.mu held.
func (c *Cache) prune() {
	excess := len(c.m) - MaxEntries
	for _, usedPass := range []bool{false, true} {
		for k, e := range c.m {
			if excess <= 0 {
				return
			}
			if e.used == usedPass {
				delete(c.m, k)
				excess--
			}
		}
	}
}

// maxCacheFileSize is the largest cache file Save writes (MaxEntries entries); a larger one is corrupt.
const maxCacheFileSize = headerSize + MaxEntries*entrySize + sumSize

// readCacheFile reads and validates a cache file. It returns fs.ErrNotExist (wrapped) for a missing file
// and a descriptive error for a corrupt one, or for a path that is not a regular file (a FIFO, a device
// such as a symlink to /dev/zero, a folder) or is larger than any cache Save writes: it never blocks and
// never reads without bound.
func readCacheFile(path string) (map[Key]Digest, error) {
	data, err := safeio.ReadFile(path, min(maxCacheFileSize, safeio.MaxCache))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("digest cache %s cannot be used: %w", path, unwrapPathError(err))
	}
	corrupt := func(why string) error { return fmt.Errorf("digest cache %s is corrupt: %s", path, why) }
	if len(data) < headerSize+sumSize {
		return nil, corrupt("too short")
	}
	if [8]byte(data[:8]) != magic {
		return nil, corrupt("bad magic or unknown format version")
	}
	n := binary.LittleEndian.Uint64(data[8:16])
	if n > uint64(len(data)-headerSize-sumSize)/entrySize || headerSize+int(n)*entrySize+sumSize != len(data) {
		return nil, corrupt(fmt.Sprintf("%d bytes do not hold %d entries", len(data), n))
	}
	body, sum := data[:len(data)-sumSize], data[len(data)-sumSize:]
	if blake3.Sum256(body) != [32]byte(sum) {
		return nil, corrupt("checksum mismatch")
	}
	m := make(map[Key]Digest, min(int(n), MaxEntries))
	for i := 0; i < int(n) && len(m) < MaxEntries; i++ {
		b := body[headerSize+i*entrySize:]
		k := Key{
			Dev:     binary.LittleEndian.Uint64(b[0:]),
			Ino:     binary.LittleEndian.Uint64(b[8:]),
			Size:    int64(binary.LittleEndian.Uint64(b[16:])),
			MtimeNS: int64(binary.LittleEndian.Uint64(b[24:])),
			CtimeNS: int64(binary.LittleEndian.Uint64(b[32:])),
		}
		m[k] = Digest(b[40:72])
	}
	return m, nil
}

// writeCacheFile writes m to path through a temporary file renamed over it, synced (the cache's
// entries are only as good as their bytes: a torn file would be read as a corrupt cache).
func writeCacheFile(path string, m map[Key]entry) error {
	return safeio.WriteFileAtomic(path, safeio.WriteOptions{Replace: true, Perm: 0o600, Sync: true}, func(out io.Writer) error {
		h := blake3.New()
		w := bufio.NewWriterSize(io.MultiWriter(out, h), 256<<10)
		var hdr [headerSize]byte
		copy(hdr[:], magic[:])
		binary.LittleEndian.PutUint64(hdr[8:], uint64(len(m)))
		w.Write(hdr[:])
		var b [entrySize]byte
		for k, e := range m {
			binary.LittleEndian.PutUint64(b[0:], k.Dev)
			binary.LittleEndian.PutUint64(b[8:], k.Ino)
			binary.LittleEndian.PutUint64(b[16:], uint64(k.Size))
			binary.LittleEndian.PutUint64(b[24:], uint64(k.MtimeNS))
			binary.LittleEndian.PutUint64(b[32:], uint64(k.CtimeNS))
			copy(b[40:], e.sum[:])
			w.Write(b[:])
		}
		if err := w.Flush(); err != nil {
			return err
		}
		_, err := out.Write(h.Sum(nil))
		return err
	})
}

// StatKey returns the cache key of the file at path (following symbolic links): its device, inode, size,
// mtime and ctime. ok is false on systems without inode numbers. Errors are those of os.Stat, and an error
// naming path when it is not a regular file.
func StatKey(path string) (k Key, ok bool, err error) {
	fi, err := fsrec.Stat(path)
	if err != nil {
		return Key{}, false, err
	}
	if !fi.Mode().IsRegular() {
		return Key{}, false, notRegular(path, fi.Mode())
	}
	k, ok = fileKey(fi)
	return k, ok, nil
}
