package kvfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRoundTrip(t *testing.T) {
	want := map[string][]byte{"a": []byte(`{"x":1}`), "": []byte("empty key"), "b/c@12": {}, "bin\x00ary": {0, 1, 2, 255}}
	got, err := Parse(file(func(w *Writer) {
		for k, v := range want {
			w.Add(k, v)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	if got, err := Parse(file(func(*Writer) {})); err != nil || len(got) != 0 {
		t.Fatalf("an empty file: %v, %v", got, err)
	}
}

// Every damage is ErrDamaged, never a panic or a partial map: a truncated file, one byte changed, a
// length past the end (with a valid CRC), a key twice, another file.
func TestDamaged(t *testing.T) {
	good := file(func(w *Writer) {
		w.Add("key", []byte("value"))
		w.Add("other", []byte("v2"))
	})
	recrc := func(body []byte) []byte { // a body with its own valid CRC
		return binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.ChecksumIEEE(body))
	}
	dup := file(func(w *Writer) {
		w.Add("k", []byte("1"))
		w.Add("k", []byte("2"))
	})
	cases := map[string][]byte{
		"empty":        nil,
		"magic only":   []byte(magic),
		"truncated":    good[:len(good)-1],
		"a byte flips": append(append([]byte(nil), good[:len(magic)+2]...), append([]byte{good[len(magic)+2] ^ 1}, good[len(magic)+3:]...)...),
		"long key":     recrc(append([]byte(magic), 0x7f, 'a')),
		"long value":   recrc(append([]byte(magic), 1, 'a', 0x7f, 'b')),
		"bad varint":   recrc(append([]byte(magic), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)),
		"key twice":    dup,
		"json":         []byte(`{"version":1,"entries":{}}`),
	}
	for name, data := range cases {
		if m, err := Parse(data); !errors.Is(err, ErrDamaged) || m != nil {
			t.Errorf("%s: %v, %v; want ErrDamaged and no map", name, m, err)
		}
	}
}

// file is the bytes a Writer writes with add.
func file(add func(w *Writer)) []byte {
	var b bytes.Buffer
	w := NewWriter(&b)
	add(w)
	if err := w.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func TestReadNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.kv")
	if err := os.WriteFile(p, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p, 1<<20); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), p) {
		t.Fatalf("Read of a damaged file: %v; want ErrDamaged naming %s", err, p)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none"), 1<<20); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Read of a missing file: %v", err)
	}
}

// FuzzParse: any bytes are a map or ErrDamaged, never a panic; what parses writes back to what parses
// alike.
func FuzzParse(f *testing.F) {
	f.Add(file(func(w *Writer) { w.Add("k", []byte("v")) }))
	f.Add(file(func(*Writer) {}))
	f.Add([]byte(magic + "\x01k\x01v\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrDamaged) || m != nil {
				t.Fatalf("%v, %v", m, err)
			}
			return
		}
		again, err := Parse(file(func(w *Writer) {
			for k, v := range m {
				w.Add(k, v)
			}
		}))
		if err != nil || len(again) != len(m) {
			t.Fatalf("written back: %v, %d of %d records", err, len(again), len(m))
		}
		for k, v := range m {
			if !bytes.Equal(again[k], v) {
				t.Fatalf("%q: %q, want %q", k, again[k], v)
			}
		}
	})
}
