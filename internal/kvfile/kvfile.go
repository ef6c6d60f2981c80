// Package kvfile is the container of stalecheck's keyed state files (content baselines, code digests,
// holdings): one file of key/value records whose values a reader decodes only when it asks for them.
//
// Why: the content-baseline store is shared by every workspace a user checks, and grows with them (6.6
// MB and 5,200 runs on a machine after a day's use; up to 20,000 runs). Kept as one JSON document, every
// check that missed the verdict cache decoded all of it and, having recorded one new run, encoded and
// wrote all of it again: 245 ms of a 360 ms first check after a rebuild, against 3 ms with a fresh state
// folder. Here a check reads the file, checks its CRC and splits it into records (a few milliseconds for
// megabytes), decodes the few values it uses, and writes the others back as the bytes it read.
//
// Format (v1):
//
//	magic "stalecheck kv 1\n"
//	records: key length (uvarint), key, value length (uvarint), value
//	CRC-32 (IEEE, little-endian) of everything before it
//
// Keys are unique; their order means nothing. A file that does not parse is damaged as a whole
// (ErrDamaged): the caller starts empty, as it did for a JSON file that did not decode.
package kvfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/stalecheck/stalecheck/internal/safeio"
)

const magic = "stalecheck kv 1\n"

// ErrDamaged is returned for a file that is not a whole kvfile (wrong magic, bad length, bad CRC).
var ErrDamaged = errors.New("not a stalecheck key/value file, or damaged")

// Parse splits data, a whole file, into its records; the values are sub-slices of data (not copied).
func Parse(data []byte) (map[string][]byte, error) {
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return nil, ErrDamaged
	}
	body := data[:len(data)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, ErrDamaged
	}
	p := body[len(magic):]
	out := map[string][]byte{}
	next := func() ([]byte, bool) {
		n, w := binary.Uvarint(p)
		if w <= 0 || n > uint64(len(p)-w) {
			return nil, false
		}
		b := p[w : w+int(n)]
		p = p[w+int(n):]
		return b, true
	}
	for len(p) > 0 {
		k, ok := next()
		if !ok {
			return nil, fmt.Errorf("%w: a key's length runs past the end", ErrDamaged)
		}
		v, ok := next()
		if !ok {
			return nil, fmt.Errorf("%w: the value of %q runs past the end", ErrDamaged, k)
		}
		if _, dup := out[string(k)]; dup {
			return nil, fmt.Errorf("%w: key %q twice", ErrDamaged, k)
		}
		out[string(k)] = v
	}
	return out, nil
}

// Read reads and parses the file at path (at most max bytes, through safeio: a FIFO or a device is an
// error, not a wait).
func Read(path string, max int64) (map[string][]byte, error) {
	data, err := safeio.ReadFile(path, max)
	if err != nil {
		return nil, err
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Writer streams records to a file (through a buffer); Close ends it with the CRC.
type Writer struct {
	w   *bufio.Writer
	crc uint32
	n   [binary.MaxVarintLen64]byte
	key []byte
}

// NewWriter starts a file on dst, which the caller closes after Close.
func NewWriter(dst io.Writer) *Writer {
	w := &Writer{w: bufio.NewWriterSize(dst, 64<<10)}
	w.put([]byte(magic))
	return w
}

func (w *Writer) put(b []byte) {
	w.crc = crc32.Update(w.crc, crc32.IEEETable, b)
	w.w.Write(b) // a write error sticks in the bufio.Writer: Close returns it
}

// Add appends one record (the caller keeps keys unique).
func (w *Writer) Add(key string, value []byte) {
	w.put(w.n[:binary.PutUvarint(w.n[:], uint64(len(key)))])
	w.key = append(w.key[:0], key...)
	w.put(w.key)
	w.put(w.n[:binary.PutUvarint(w.n[:], uint64(len(value)))])
	w.put(value)
}

// Close writes the CRC and flushes; its error is the first write's.
func (w *Writer) Close() error {
	w.w.Write(binary.LittleEndian.AppendUint32(nil, w.crc))
	return w.w.Flush()
}
