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

// file is the bytes a Writer writes with the records of recs (in the order of keys).
func file(keys []string, recs map[string][]byte) []byte {
	size := 0
	for _, k := range keys {
		size += RecordSize(k, recs[k], false)
	}
	var b bytes.Buffer
	w := NewWriter(&b, size)
	for _, k := range keys {
		w.Add(k, recs[k])
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// blockOf is a block of the raw records bytes recs, with a valid CRC.
func blockOf(recs []byte) []byte {
	out := binary.AppendUvarint(nil, uint64(len(recs)))
	out = append(out, recs...)
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(recs))
}

func TestRoundTrip(t *testing.T) {
	want := map[string][]byte{"a": []byte(`{"x":1}`), "": []byte("empty key"), "b/c@12": {}, "bin\x00ary": {0, 1, 2, 255}}
	got, info, err := ParseInfo(file([]string{"a", "", "b/c@12", "bin\x00ary"}, want))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	if info.Blocks != 1 || info.Appended != 0 || info.TornAt != 0 {
		t.Fatalf("info %+v", info)
	}
	if got, err := Parse(file(nil, nil)); err != nil || len(got) != 0 {
		t.Fatalf("an empty file: %v, %v", got, err)
	}
	var b bytes.Buffer
	w := NewWriter(&b, 100)
	w.Add("k", []byte("v"))
	if err := w.Close(); err == nil {
		t.Fatal("a Writer given the wrong size closed without an error")
	}
}

// Appended blocks replace and delete records; an append cut short ends the file there, and the next
// append after it is not read either (Cache.Save writes such a file whole).
func TestAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.kv")
	if err := os.WriteFile(p, file([]string{"a", "b"}, map[string][]byte{"a": []byte("1"), "b": []byte("2")}), 0o600); err != nil {
		t.Fatal(err)
	}
	var blk Block
	blk.Add("a", []byte("one"))
	blk.Delete("b")
	blk.Add("c", []byte("3"))
	if err := Append(p, &blk); err != nil {
		t.Fatal(err)
	}
	got, info, err := Read(p, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string][]byte{"a": []byte("one"), "c": []byte("3")}, got); d != "" || info.Blocks != 2 || info.Appended == 0 {
		t.Fatalf("after an append (-want +got):\n%s\ninfo %+v", d, info)
	}
	// A crash in the middle of the next append.
	data, _ := os.ReadFile(p)
	var blk2 Block
	blk2.Add("d", []byte("4"))
	torn := append(append([]byte(nil), data...), blockOf(blk2.recs)[:3]...)
	got, info, err = ParseInfo(append(torn, blockOf([]byte("\x01e\x02E"))...))
	if err != nil || got["d"] != nil || got["e"] != nil || info.TornAt != len(data) {
		t.Fatalf("a torn append: %v, %q, info %+v", err, got, info)
	}
	// Not a regular file: no append.
	if err := Append(t.TempDir(), &blk2); err == nil {
		t.Fatal("appended to a folder")
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if err := Append(link, &blk2); err == nil {
		t.Fatal("appended through a symbolic link")
	}
}

// Every damage of the first block is ErrDamaged, never a panic or a partial map: a truncated file, one
// byte changed, a length past the end (with a valid CRC), another file.
func TestDamaged(t *testing.T) {
	good := file([]string{"key", "other"}, map[string][]byte{"key": []byte("value"), "other": []byte("v2")})
	flip := append([]byte(nil), good...)
	flip[len(magic)+3] ^= 1
	cases := map[string][]byte{
		"empty":        nil,
		"magic only":   []byte(magic),
		"truncated":    good[:len(good)-1],
		"a byte flips": flip,
		"long key":     append([]byte(magic), blockOf([]byte{0x7f, 'a'})...),
		"long value":   append([]byte(magic), blockOf([]byte{1, 'a', 0x7f, 'b'})...),
		"bad varint":   append([]byte(magic), blockOf(bytes.Repeat([]byte{0xff}, 11))...),
		"long block":   append([]byte(magic), 0x7f, 'x'),
		"json":         []byte(`{"version":1,"entries":{}}`),
		"version 1":    []byte("stalecheck kv 1\n\x01k\x01v\x00\x00\x00\x00"),
	}
	for name, data := range cases {
		if m, err := Parse(data); !errors.Is(err, ErrDamaged) || m != nil {
			t.Errorf("%s: %v, %v; want ErrDamaged and no map", name, m, err)
		}
	}
}

func TestReadNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.kv")
	if err := os.WriteFile(p, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(p, 1<<20); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), p) {
		t.Fatalf("Read of a damaged file: %v; want ErrDamaged naming %s", err, p)
	}
	if _, _, err := Read(filepath.Join(t.TempDir(), "none"), 1<<20); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Read of a missing file: %v", err)
	}
}

// FuzzParse: any bytes are a map or ErrDamaged, never a panic; what parses writes back to what parses
// alike.
func FuzzParse(f *testing.F) {
	f.Add(file([]string{"k"}, map[string][]byte{"k": []byte("v")}))
	f.Add(file(nil, nil))
	f.Add(append(file([]string{"k"}, map[string][]byte{"k": []byte("v")}), blockOf([]byte("\x01k\x00"))...))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrDamaged) || m != nil {
				t.Fatalf("%v, %v", m, err)
			}
			return
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		again, err := Parse(file(keys, m))
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
