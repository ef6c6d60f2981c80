// Package kvfile is the container of stalecheck's keyed state files (content baselines, code digests,
// holdings, content matches, #include parses, the Cargo read cache): one file of key/value records
// whose values a reader decodes only when it asks for them, and to which a writer appends what it
// changed.
//
// Why: those files are shared by every workspace a user checks, and grow with them (the content
// baselines 6.6 MB and 5,200 runs on a machine after a day's use; up to 20,000 runs). Kept as one JSON
// document, every check that missed the verdict cache decoded all of it and, having recorded one new
// run, encoded and wrote all of it again: 245 ms of a 360 ms first check after a rebuild, against 3 ms
// with a fresh state folder. Here a check reads the file, checks its CRCs and splits it into records (a
// few milliseconds for megabytes), decodes the few values it uses, and appends a block with the
// records it changed; the file is written whole again only now and then (Cache.Save: compaction).
//
// Format (v2):
//
//	magic "stalecheck kv 2\n"
//	blocks, each: length of its records (uvarint), the records, CRC-32 (IEEE, little-endian) of them
//	record: key length (uvarint), key, value length + 1 (uvarint; 0: the key is deleted), value
//
// A later record of a key replaces an earlier one. The first block is the file's last whole write; each
// later one an append. A file whose magic or first block does not parse is damaged as a whole
// (ErrDamaged): the caller starts empty, as it did for a JSON file that did not decode. A later block
// that runs past the end or fails its CRC ends the file there (an append cut short by a crash), and
// what follows it is not read; so does an empty block after the first (no append writes one).
package kvfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

const magic = "stalecheck kv 2\n"

// ErrDamaged is returned for a file that is not a kvfile, or whose first block is damaged.
var ErrDamaged = errors.New("not a stalecheck key/value file, or damaged")

// Info says how a file is laid out: its blocks, and the bytes of the first one (the last whole
// write) and of the ones appended after it.
type Info struct {
	Blocks          int
	First, Appended int
	TornAt          int // the offset of an append cut short (0: none)
}

// Parse splits data, a whole file, into its records (the values are sub-slices of data, not copied).
func Parse(data []byte) (map[string][]byte, error) {
	m, _, err := ParseInfo(data)
	return m, err
}

// ParseInfo is Parse that also says how the file is laid out.
func ParseInfo(data []byte) (map[string][]byte, Info, error) {
	var info Info
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return nil, info, ErrDamaged
	}
	out := map[string][]byte{}
	off := len(magic)
	for off < len(data) {
		recs, size, err := block(data[off:])
		if err == nil && info.Blocks > 0 && len(recs) == 0 {
			// No append is empty: zeros after the last block (a file extended with a hole) would
			// otherwise parse as millions of empty blocks.
			err = errors.New("an empty block after the first")
		}
		if err == nil {
			err = records(recs, out)
		}
		if err != nil {
			if info.Blocks == 0 {
				return nil, info, fmt.Errorf("%w: %v", ErrDamaged, err)
			}
			info.TornAt = off
			break
		}
		if info.Blocks == 0 {
			info.First = size
		} else {
			info.Appended += size
		}
		info.Blocks++
		off += size
	}
	if info.Blocks == 0 {
		return nil, info, fmt.Errorf("%w: no block", ErrDamaged)
	}
	return out, info, nil
}

// block returns the records of the block at the start of p and the block's whole size.
func block(p []byte) ([]byte, int, error) {
	n, w := binary.Uvarint(p)
	if w <= 0 || n > uint64(len(p)-w) || uint64(len(p)-w)-n < 4 {
		return nil, 0, errors.New("a block's length runs past the end")
	}
	recs := p[w : w+int(n)]
	if crc32.ChecksumIEEE(recs) != binary.LittleEndian.Uint32(p[w+int(n):]) {
		return nil, 0, errors.New("a block's CRC does not match")
	}
	return recs, w + int(n) + 4, nil
}

// records applies the records of one block to out (in a block, too, a later record of a key wins).
func records(p []byte, out map[string][]byte) error {
	next := func() (uint64, bool) {
		n, w := binary.Uvarint(p)
		if w <= 0 {
			return 0, false
		}
		p = p[w:]
		return n, true
	}
	for len(p) > 0 {
		kl, ok := next()
		if !ok || kl > uint64(len(p)) {
			return errors.New("a key's length runs past the end")
		}
		k := string(p[:kl])
		p = p[kl:]
		vl, ok := next()
		if !ok || vl > uint64(len(p))+1 {
			return fmt.Errorf("the value of %q runs past the end", k)
		}
		if vl == 0 {
			delete(out, k)
			continue
		}
		out[k] = p[:vl-1]
		p = p[vl-1:]
	}
	return nil
}

// Read reads and parses the file at path (at most max bytes, through safeio: a FIFO or a device is an
// error, not a wait).
func Read(path string, max int64) (map[string][]byte, Info, error) {
	data, err := safeio.ReadFile(path, max)
	if err != nil {
		return nil, Info{}, err
	}
	m, info, err := ParseInfo(data)
	if err != nil {
		return nil, info, fmt.Errorf("%s: %w", path, err)
	}
	return m, info, nil
}

// RecordSize is the bytes a record of key and value takes (a deletion: value nil, deleted true).
func RecordSize(key string, value []byte, deleted bool) int {
	vl := uint64(len(value)) + 1
	if deleted {
		vl = 0
	}
	return uvarintLen(uint64(len(key))) + len(key) + uvarintLen(vl) + len(value)
}

func uvarintLen(x uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], x)
}

// Writer streams a whole file of one block (through a buffer): the caller gives the size of the
// records (the sum of RecordSize) first, adds exactly them, and closes it.
type Writer struct {
	w    *bufio.Writer
	crc  uint32
	left int
	n    [binary.MaxVarintLen64]byte
	key  []byte
}

// NewWriter starts a file on dst, which the caller closes after Close.
func NewWriter(dst io.Writer, size int) *Writer {
	w := &Writer{w: bufio.NewWriterSize(dst, 64<<10), left: size}
	w.w.WriteString(magic)
	w.w.Write(w.n[:binary.PutUvarint(w.n[:], uint64(size))])
	return w
}

func (w *Writer) put(b []byte) {
	w.crc = crc32.Update(w.crc, crc32.IEEETable, b)
	w.left -= len(b)
	w.w.Write(b) // a write error sticks in the bufio.Writer: Close returns it
}

// Add appends one record (the caller keeps keys unique).
func (w *Writer) Add(key string, value []byte) {
	w.put(w.n[:binary.PutUvarint(w.n[:], uint64(len(key)))])
	w.key = append(w.key[:0], key...)
	w.put(w.key)
	w.put(w.n[:binary.PutUvarint(w.n[:], uint64(len(value))+1)])
	w.put(value)
}

// Close writes the CRC and flushes; its error is the first write's, or says the records added were
// not the size given.
func (w *Writer) Close() error {
	if w.left != 0 {
		return fmt.Errorf("kvfile: the records written are %d bytes off the size announced", w.left)
	}
	w.w.Write(binary.LittleEndian.AppendUint32(nil, w.crc))
	return w.w.Flush()
}

// Block is one block being built in memory, for Append.
type Block struct {
	recs []byte
}

// Add adds a record of key and value to the block.
func (b *Block) Add(key string, value []byte) {
	b.recs = binary.AppendUvarint(b.recs, uint64(len(key)))
	b.recs = append(b.recs, key...)
	b.recs = binary.AppendUvarint(b.recs, uint64(len(value))+1)
	b.recs = append(b.recs, value...)
}

// Delete adds a record that deletes key.
func (b *Block) Delete(key string) {
	b.recs = binary.AppendUvarint(b.recs, uint64(len(key)))
	b.recs = append(b.recs, key...)
	b.recs = binary.AppendUvarint(b.recs, 0)
}

// Len is the bytes of the block's records.
func (b *Block) Len() int { return len(b.recs) }

// Append adds the block at the end of the regular file at path (not a link), in one write
// (O_APPEND: a concurrent append lands whole before or after it).
func Append(path string, b *Block) error {
	before, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !before.Mode().IsRegular() {
		return fmt.Errorf("append to %s: %w", path, safeio.ErrNotRegular)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(before, now) {
		return fmt.Errorf("append to %s: replaced while it was opened", path)
	}
	buf := binary.AppendUvarint(nil, uint64(len(b.recs)))
	buf = append(buf, b.recs...)
	buf = binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(b.recs))
	if _, err = f.Write(buf); err != nil {
		return err
	}
	return f.Close()
}
