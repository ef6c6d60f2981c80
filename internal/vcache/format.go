package vcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/stalecheck/stalecheck/internal/fsrec"
)

// The verdict file (v5):
//
//	magic, key (32 bytes),
//	exit (uvarint), out, err, extra (each a uvarint length + bytes),
//	entry count (uvarint), chunk count (uvarint), per chunk: byte offset in the group area and
//	entry count (uvarints),
//	group area length (uvarint), the group area,
//	memo generation (a uvarint length + bytes: empty when the check kept no memo),
//	first-look count (uvarint), per entry its whole path and the fields below,
//	CRC-32 (IEEE, little-endian) of everything before it.
//
// The group area holds the entries folder by folder (Store sorts them so): per group the folder
// prefix D (a length + bytes, ending in "/"; empty for a path that does not split, whose name is the
// whole path), its entry count, then per entry its name N (the path is D+N), op, error class, for a
// found path dev, ino, size, mtime, ctime, mode as varints, and for content read whole its BLAKE3-256
// and a recheck byte. Writing each folder once makes the file about half as large as full paths (a
// 615-unit workspace's 10,652 paths: 1.1 MB before); the chunks, cut at group boundaries, let the
// look-up stat them on several cores without decoding the file first.
//
// The first-look entries are copies of a few entries the verdict holds: those the build changed last
// when the verdict was stored (firstLook), the likeliest to have changed at the next look-up (an edit
// and rebuild rewrites the same outputs). The look-up stats them before the others, so that a miss is
// known at once, before the look-up has grown the heap (Cache.OnMiss).
const magic = "stalecheck verdict v5\n"

// The memo file `<key hex>.memos` beside it (read only after a miss, so that a hit does not pay for
// it):
//
//	memoMagic, key (32 bytes), generation (16 bytes: the verdict file's, written with it),
//	memo count (uvarint), per memo its name, scope and value (each a uvarint length + bytes),
//	covered-miss count (uvarint), per miss its path (a uvarint length + bytes) and op (a byte),
//	CRC-32 (IEEE, little-endian) of everything before it.
//
// The covered misses are the look-ups that found nothing in a folder the check recorded as a folder
// (dropCoveredMisses): the verdict file leaves them out, since the folder's signature covers them on
// a hit; after a miss they answer the next recording's look-ups while that folder still answers alike
// (lastMiss), instead of a system call each (1,500 of the 12,000 look-ups of the real workspace's
// first check after a rebuild: nested-package and header probes).
const memoMagic = "stalecheck memos v2\n"

// chunkEntries is about how many entries a chunk holds (the last one of a folder ends it).
const chunkEntries = 1024

var errDamaged = errors.New("damaged or truncated verdict file")

// prefixName splits a path for the group area: D up to and including its last "/", and the name;
// a path whose last element is empty, "." or ".." is not split (D is empty).
func prefixName(p string) (dir, name string) {
	d, _, ok := splitPath(p)
	if !ok {
		return "", p
	}
	if d == "/" {
		return "/", p[1:]
	}
	return p[:len(d)+1], p[len(d)+1:]
}

// encode is the verdict file of k: res, the entries (sorted by folder: sortByFolder), the memo
// generation gen and the first-look entries (copies of some of ents).
func encode(k Key, res *Result, ents []fsrec.Entry, gen []byte, first []fsrec.Entry) []byte {
	var n [binary.MaxVarintLen64]byte
	var area bytes.Buffer
	area.Grow(len(ents) * 72) // about 60 bytes an entry: no growth (and copies) on the way
	type chunk struct{ off, ents int }
	var chunks []chunk
	for lo := 0; lo < len(ents); {
		d, _ := prefixName(ents[lo].Path)
		hi := lo + 1
		for hi < len(ents) {
			if d2, _ := prefixName(ents[hi].Path); d2 != d {
				break
			}
			hi++
		}
		if len(chunks) == 0 || chunks[len(chunks)-1].ents >= chunkEntries {
			chunks = append(chunks, chunk{off: area.Len()})
		}
		chunks[len(chunks)-1].ents += hi - lo
		uv := func(x uint64) { area.Write(n[:binary.PutUvarint(n[:], x)]) }
		uv(uint64(len(d)))
		area.WriteString(d)
		uv(uint64(hi - lo))
		for _, e := range ents[lo:hi] {
			_, name := prefixName(e.Path)
			writeEntry(&area, name, &e)
		}
		lo = hi
	}
	var b bytes.Buffer
	b.Grow(len(magic) + 32 + len(res.Out) + len(res.Err) + len(res.Extra) + len(chunks)*8 + area.Len() + 96)
	uv := func(x uint64) { b.Write(n[:binary.PutUvarint(n[:], x)]) }
	bs := func(x []byte) { uv(uint64(len(x))); b.Write(x) }
	b.WriteString(magic)
	b.Write(k[:])
	uv(uint64(res.Exit))
	bs(res.Out)
	bs(res.Err)
	bs(res.Extra)
	uv(uint64(len(ents)))
	uv(uint64(len(chunks)))
	for _, c := range chunks {
		uv(uint64(c.off))
		uv(uint64(c.ents))
	}
	bs(area.Bytes())
	bs(gen)
	uv(uint64(len(first)))
	for i := range first {
		writeEntry(&b, first[i].Path, &first[i])
	}
	var crc [4]byte
	binary.LittleEndian.PutUint32(crc[:], crc32.ChecksumIEEE(b.Bytes()))
	b.Write(crc[:])
	return b.Bytes()
}

// writeEntry appends an entry of the group area: its name (the path less its folder's prefix), op,
// error class, the signature of a found path and, for content read whole, its sum and recheck byte.
func writeEntry(b *bytes.Buffer, name string, e *fsrec.Entry) {
	var n [binary.MaxVarintLen64]byte
	uv := func(x uint64) { b.Write(n[:binary.PutUvarint(n[:], x)]) }
	sv := func(x int64) { b.Write(n[:binary.PutVarint(n[:], x)]) }
	uv(uint64(len(name)))
	b.WriteString(name)
	b.WriteByte(byte(e.Op))
	b.WriteByte(e.Sig.Err)
	if e.Sig.Err == fsrec.ErrNone {
		uv(e.Sig.Dev)
		uv(e.Sig.Ino)
		sv(e.Sig.Size)
		sv(e.Sig.MtimeNS)
		sv(e.Sig.CtimeNS)
		uv(uint64(e.Sig.Mode))
	}
	if e.Op == fsrec.OpContent {
		var sum [32]byte
		if e.Sum != nil {
			sum = *e.Sum
		}
		b.Write(sum[:])
		if e.Recheck {
			b.WriteByte(1)
		} else {
			b.WriteByte(0)
		}
	}
}

// entry decodes writeEntry's fields after the name into e (Path left empty; Sum pointing at sum).
func (r *reader) entry(e *fsrec.Entry, sum *[32]byte) error {
	*e = fsrec.Entry{Op: fsrec.Op(r.byte())}
	e.Sig.Err = r.byte()
	if e.Sig.Err == fsrec.ErrNone {
		e.Sig.Dev, e.Sig.Ino = r.uv(), r.uv()
		e.Sig.Size, e.Sig.MtimeNS, e.Sig.CtimeNS = r.sv(), r.sv(), r.sv()
		e.Sig.Mode = uint32(r.uv())
	}
	if e.Op == fsrec.OpContent {
		if r.bad || len(r.p) < 33 {
			return errDamaged
		}
		copy(sum[:], r.p)
		e.Sum = sum
		e.Recheck = r.p[32] == 1
		r.p = r.p[33:]
	}
	if r.bad {
		return errDamaged
	}
	return nil
}

// encodeMemos is the memo file of the verdict file of k with generation gen: its memos and covered
// misses (look-ups that found nothing; only Path and Op are kept).
func encodeMemos(k Key, gen []byte, memos []fsrec.Memo, misses []fsrec.Entry) []byte {
	size := len(memoMagic) + 32 + len(gen) + 32
	for _, m := range memos {
		size += len(m.Name) + len(m.Scope) + len(m.Value) + 3*binary.MaxVarintLen64
	}
	for _, e := range misses {
		size += len(e.Path) + binary.MaxVarintLen64 + 1
	}
	b := make([]byte, 0, size)
	b = append(b, memoMagic...)
	b = append(b, k[:]...)
	b = append(b, gen...)
	b = binary.AppendUvarint(b, uint64(len(memos)))
	for _, m := range memos {
		b = binary.AppendUvarint(b, uint64(len(m.Name)))
		b = append(b, m.Name...)
		b = binary.AppendUvarint(b, uint64(len(m.Scope)))
		b = append(b, m.Scope...)
		b = binary.AppendUvarint(b, uint64(len(m.Value)))
		b = append(b, m.Value...)
	}
	b = binary.AppendUvarint(b, uint64(len(misses)))
	for _, e := range misses {
		b = binary.AppendUvarint(b, uint64(len(e.Path)))
		b = append(b, e.Path...)
		b = append(b, byte(e.Op))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// parseMemos decodes a memo file written with the verdict file of k whose generation is gen: its memos
// and covered misses (Sig.Err ErrNotExist).
func parseMemos(data []byte, k Key, gen []byte) ([]fsrec.Memo, []fsrec.Entry, error) {
	head := len(memoMagic) + 32 + len(gen)
	if len(data) < head+4 || string(data[:len(memoMagic)]) != memoMagic {
		return nil, nil, errDamaged
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, nil, errDamaged
	}
	if !bytes.Equal(body[len(memoMagic):len(memoMagic)+32], k[:]) || !bytes.Equal(body[len(memoMagic)+32:head], gen) {
		return nil, nil, errors.New("the memos of another verdict")
	}
	r := &reader{p: body[head:]}
	nm := r.uv()
	if r.bad || nm > uint64(len(r.p)) {
		return nil, nil, errDamaged
	}
	out := make([]fsrec.Memo, 0, nm)
	for i := uint64(0); i < nm; i++ {
		name, scope, value := r.bs(), r.bs(), r.bs()
		if r.bad {
			return nil, nil, errDamaged
		}
		out = append(out, fsrec.Memo{Name: aliasString(name), Scope: aliasString(scope), Value: value})
	}
	nc := r.uv()
	if r.bad || nc > uint64(len(r.p)) {
		return nil, nil, errDamaged
	}
	misses := make([]fsrec.Entry, 0, nc)
	for i := uint64(0); i < nc; i++ {
		path, op := r.bs(), fsrec.Op(r.byte())
		if r.bad || len(path) == 0 || op != fsrec.OpStat && op != fsrec.OpLstat {
			return nil, nil, errDamaged
		}
		misses = append(misses, fsrec.Entry{Path: string(path), Op: op, Sig: fsrec.Sig{Err: fsrec.ErrNotExist}})
	}
	if len(r.p) != 0 {
		return nil, nil, errDamaged
	}
	return out, misses, nil
}

// aliasString is b as a string sharing its bytes, for bytes never written again: the memo file's once
// read (its values alias them too; copying 4,000 names and scopes cost a megabyte), a chunk's paths.
func aliasString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// file is a verdict file whose header was decoded and whose CRC and key matched; its entries stay
// encoded in area until a scan.
type file struct {
	res    *Result
	n      int // entries
	chunks []fileChunk
	area   []byte
	// gen is the generation of the memo file written with it (empty: none).
	gen []byte
	// first holds the first-look entries (firstLook).
	first []fsrec.Entry
}

type fileChunk struct{ off, ents int }

// reader decodes varints from p; bad is set (and zeros returned) past the end or on a bad varint.
type reader struct {
	p   []byte
	bad bool
}

func (r *reader) uv() uint64 {
	x, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.p = r.p[n:]
	return x
}

func (r *reader) sv() int64 {
	x, n := binary.Varint(r.p)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.p = r.p[n:]
	return x
}

func (r *reader) bs() []byte {
	l := r.uv()
	if r.bad || l > uint64(len(r.p)) {
		r.bad = true
		return nil
	}
	x := r.p[:l:l]
	r.p = r.p[l:]
	return x
}

func (r *reader) byte() byte {
	if len(r.p) == 0 {
		r.bad = true
		return 0
	}
	x := r.p[0]
	r.p = r.p[1:]
	return x
}

// parse checks a verdict file's magic, CRC and key and decodes its header. The result's byte slices
// point into data.
func parse(data []byte, k Key) (*file, error) {
	if len(data) < len(magic)+32+4 || string(data[:len(magic)]) != magic {
		return nil, errDamaged
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errDamaged
	}
	if !bytes.Equal(body[len(magic):len(magic)+32], k[:]) {
		return nil, errors.New("another invocation's verdict")
	}
	r := &reader{p: body[len(magic)+32:]}
	f := &file{res: &Result{Exit: int(r.uv())}}
	f.res.Out, f.res.Err, f.res.Extra = r.bs(), r.bs(), r.bs()
	n, nc := r.uv(), r.uv()
	if r.bad || n > uint64(len(r.p)) || nc > uint64(len(r.p)) {
		return nil, errDamaged
	}
	f.n = int(n)
	total := 0
	for i := uint64(0); i < nc; i++ {
		c := fileChunk{int(r.uv()), int(r.uv())}
		if r.bad || c.ents <= 0 || c.ents > f.n-total {
			return nil, errDamaged
		}
		total += c.ents
		f.chunks = append(f.chunks, c)
	}
	f.area = r.bs()
	f.gen = r.bs()
	nf := r.uv()
	if r.bad || nf > uint64(len(r.p)) {
		return nil, errDamaged
	}
	for i := uint64(0); i < nf; i++ {
		path := r.bs()
		var e fsrec.Entry
		var sum [32]byte
		if err := r.entry(&e, &sum); err != nil || len(path) == 0 {
			return nil, errDamaged
		}
		e.Path = string(path)
		f.first = append(f.first, e)
	}
	if r.bad || len(r.p) != 0 || total != f.n {
		return nil, errDamaged
	}
	for i, c := range f.chunks {
		if c.off >= len(f.area) || i == 0 && c.off != 0 || i > 0 && c.off <= f.chunks[i-1].off {
			return nil, errDamaged
		}
	}
	return f, nil
}

// scan decodes chunk ci and calls each with every entry (Path left empty) and its path as bytes
// followed by a NUL (buf's storage, valid during the call); each returning false stops it (ok).
// A chunk that does not decode is errDamaged.
func (f *file) scan(ci int, buf *[]byte, each func(e *fsrec.Entry, pathz []byte) bool) error {
	c := f.chunks[ci]
	end := len(f.area)
	if ci+1 < len(f.chunks) {
		end = f.chunks[ci+1].off
	}
	r := &reader{p: f.area[c.off:end]}
	seen := 0
	var e fsrec.Entry
	var sum [32]byte
	for len(r.p) > 0 {
		dir := r.bs()
		cnt := r.uv()
		if r.bad || cnt == 0 || cnt > uint64(c.ents-seen) {
			return errDamaged
		}
		seen += int(cnt)
		for i := uint64(0); i < cnt; i++ {
			name := r.bs()
			if err := r.entry(&e, &sum); err != nil {
				return err
			}
			b := append(append(append((*buf)[:0], dir...), name...), 0)
			*buf = b
			if !each(&e, b) {
				return nil
			}
		}
	}
	if seen != c.ents {
		return errDamaged
	}
	return nil
}

// entries decodes every entry (ReadEntry, the trace's second look).
func (f *file) entries() ([]fsrec.Entry, error) {
	out := make([]fsrec.Entry, 0, f.n)
	var buf []byte
	for ci := range f.chunks {
		err := f.scan(ci, &buf, func(e *fsrec.Entry, pathz []byte) bool {
			x := *e
			x.Path = string(pathz[:len(pathz)-1])
			if x.Sum != nil {
				s := *x.Sum
				x.Sum = &s
			}
			out = append(out, x)
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// onChunks calls work with each chunk of f and a buffer of its goroutine, on up to four cores (one for
// a small file), until stop (when not nil) says so; the first error work returns ends that goroutine
// and is returned.
func (f *file) onChunks(stop func() bool, work func(ci int, buf *[]byte) error) error {
	workers := min(runtime.GOMAXPROCS(0), 4, len(f.chunks))
	if f.n < 512 {
		workers = 1
	}
	var next atomic.Int64
	var mu sync.Mutex
	var ferr error
	onWorkers(workers, func() {
		var buf []byte
		for stop == nil || !stop() {
			ci := int(next.Add(1) - 1)
			if ci >= len(f.chunks) {
				return
			}
			if err := work(ci, &buf); err != nil {
				mu.Lock()
				if ferr == nil {
					ferr = err
				}
				mu.Unlock()
				return
			}
		}
	})
	return ferr
}

// changed stats every entry of f again (chunks spread over up to four cores) and returns the first
// path whose look-up answers otherwise now, "" when none does; skip, when not nil, leaves out the
// paths it accepts. The error is errDamaged for a chunk that does not decode.
func (f *file) changed(skip func(path []byte) bool) (string, error) {
	var stop atomic.Bool
	var mu sync.Mutex
	changed := ""
	err := f.onChunks(stop.Load, func(ci int, buf *[]byte) error {
		err := f.scan(ci, buf, func(e *fsrec.Entry, pathz []byte) bool {
			if stop.Load() {
				return false
			}
			if skip != nil && skip(pathz[:len(pathz)-1]) {
				return true
			}
			if sameZ(e, pathz) {
				return true
			}
			mu.Lock()
			if changed == "" {
				changed = string(pathz[:len(pathz)-1])
			}
			mu.Unlock()
			stop.Store(true)
			return false
		})
		if err != nil {
			stop.Store(true)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return changed, nil
}

// changedMark in lookAll's state marks an entry whose look-up answers otherwise now.
const changedMark = ^uint64(0)

// changedEntry is an entry lookAll found changed: its index in the file and its path.
type changedEntry struct {
	idx  int
	path string
}

// lookAll is changed without stopping: it looks up every entry once (chunks spread over up to four
// cores) and returns per entry, in file order, changedMark when its look-up answers otherwise now,
// else the link count the look-up saw (0: none), and the changed entries in file order. first, when
// not nil, is called once, at the first change met (the memo file is read meanwhile). After a miss
// the answers of this one pass are what the next recording starts from (candidates): a second pass
// over every path cost about a hit's time.
func (f *file) lookAll(first func()) (state []uint64, changed []changedEntry, err error) {
	base := chunkBases(f)
	state = make([]uint64, f.n)
	var mu sync.Mutex
	var once sync.Once
	err = f.onChunks(nil, func(ci int, buf *[]byte) error {
		i := base[ci]
		return f.scan(ci, buf, func(e *fsrec.Entry, pathz []byte) bool {
			now, nlink := fsrec.StatZN(pathz, e.Op)
			if sameAs(e, pathz, now) {
				if e.Op != fsrec.OpContent {
					state[i] = nlink
				}
			} else {
				state[i] = changedMark
				mu.Lock()
				changed = append(changed, changedEntry{i, string(pathz[:len(pathz)-1])})
				mu.Unlock()
				if first != nil {
					once.Do(first)
				}
			}
			i++
			return true
		})
	})
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(changed, func(a, b changedEntry) int { return a.idx - b.idx })
	return state, changed, nil
}

// firstChanged looks up f's first-look entries and reports whether one of them answers otherwise now.
func (f *file) firstChanged() bool {
	var buf []byte
	for i := range f.first {
		e := &f.first[i]
		buf = append(append(buf[:0], e.Path...), 0)
		if !sameZ(e, buf) {
			return true
		}
	}
	return false
}

// chunkBases is the index in the file of each chunk's first entry.
func chunkBases(f *file) []int {
	base := make([]int, len(f.chunks))
	for i := 1; i < len(f.chunks); i++ {
		base[i] = base[i-1] + f.chunks[i-1].ents
	}
	return base
}

// candidates decodes every entry of f that lookAll's state says still answers alike, as the next
// recording's candidates (fsrec.PriorEntry, in file order), with Memo set when it lies at or under
// one of scopes. Each chunk's paths share one string: ten thousand paths are a few allocations. The
// slice's capacity leaves room for room more entries (the caller appends the covered answers: no
// copy of ten thousand entries into a larger slice).
func (f *file) candidates(state []uint64, scopes map[string]bool, room int) ([]fsrec.PriorEntry, error) {
	// Each chunk writes its unchanged entries into its own part of one slice.
	base := chunkBases(f)
	out := make([]int, len(f.chunks)+1)
	for ci, c := range f.chunks {
		kept := 0
		for _, st := range state[base[ci] : base[ci]+c.ents] {
			if st != changedMark {
				kept++
			}
		}
		out[ci+1] = out[ci] + kept
	}
	cands := make([]fsrec.PriorEntry, out[len(f.chunks)], out[len(f.chunks)]+room)
	err := f.onChunks(nil, func(ci int, buf *[]byte) error {
		// Sized at once (a path is rarely longer than 128 bytes; capacity never written costs nothing
		// on fresh memory): appending in doublings made two to three times the bytes kept.
		paths := make([]byte, 0, f.chunks[ci].ents*128)
		ends := make([]int, 0, f.chunks[ci].ents)
		var lastDir []byte
		lastCovered := false
		i, o := base[ci], out[ci]
		err := f.scan(ci, buf, func(e *fsrec.Entry, pathz []byte) bool {
			st := state[i]
			i++
			if st == changedMark {
				return true
			}
			path := pathz[:len(pathz)-1]
			dir := path
			if j := bytes.LastIndexByte(path, '/'); j > 0 {
				dir = path[:j]
			}
			if len(lastDir) == 0 || !bytes.Equal(dir, lastDir) {
				lastDir = append(lastDir[:0], dir...)
				lastCovered = covered(scopes, string(dir))
			}
			x := &cands[o]
			o++
			x.Entry = *e
			x.Memo = lastCovered || scopes[string(path)]
			if x.Sum != nil {
				s := *x.Sum
				x.Sum = &s
				// Same bytes, perhaps another signature now: compare the bytes at the next look-up.
				x.Recheck = true
			} else {
				x.Nlink = st
			}
			paths = append(paths, path...)
			ends = append(ends, len(paths))
			return true
		})
		if err != nil {
			return err
		}
		// The chunk's paths are not written again: their one string shares the bytes (no copy).
		all := aliasString(paths)
		start := 0
		for j, end := range ends {
			cands[out[ci]+j].Path = all[start:end]
			start = end
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cands, nil
}

// sameZ is same for an entry decoded by scan, looked up again at pathz.
func sameZ(e *fsrec.Entry, pathz []byte) bool { return sameAs(e, pathz, fsrec.StatZ(pathz, e.Op)) }

// sameAs is sameZ with the look-up's answer now given.
func sameAs(e *fsrec.Entry, pathz []byte, now fsrec.Sig) bool {
	if e.Op != fsrec.OpContent {
		return now == e.Sig
	}
	x := *e
	x.Path = string(pathz[:len(pathz)-1])
	return same(&x, now)
}

// onWorkers runs work on n goroutines (this one among them) and waits for all.
func onWorkers(n int, work func()) {
	var wg sync.WaitGroup
	for w := 1; w < n; w++ {
		wg.Add(1)
		go func() { defer wg.Done(); work() }()
	}
	work()
	wg.Wait()
}
