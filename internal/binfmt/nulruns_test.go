package binfmt

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

type run struct {
	start uint64
	s     string
	text  bool
	end   runEnd
}

// runsByByte is nulRuns's meaning, a byte at a time over the whole data: the reference it is tested
// against.
func runsByByte(data []byte) []run {
	var out []run
	var cur []byte
	start, text := 0, true
	for i, c := range data {
		if c == 0 {
			if len(cur) > 0 {
				out = append(out, run{uint64(start), string(cur), text, endNUL})
			}
			cur, start, text = nil, i+1, true
			continue
		}
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			text = false
		}
		cur = append(cur, c)
		if len(cur) == maxStringLen {
			out = append(out, run{uint64(start), string(cur), text, endMax})
			cur, start, text = nil, i+1, true
		}
	}
	if len(cur) > 0 {
		out = append(out, run{uint64(start), string(cur), text, endEOF})
	}
	return out
}

// nulRuns reads up to each NUL at once; it gives the runs, offsets, text flags and ends a byte-at-a-time
// scan gives, whatever bufio's buffer size (16 bytes: most runs span several reads), including runs cut
// at maxStringLen.
func TestNulRunsMatchesByteScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261206, 1))
	pieces := []string{"\x00", "\x00\x00", "hello", "a\tb\nc", "\x01", "\x7f", "é", "\xc3", "\xff\xfe", strings.Repeat("x", 40), " "}
	var inputs [][]byte
	for range 3000 {
		var b bytes.Buffer
		for range rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		inputs = append(inputs, b.Bytes())
	}
	long := append(append([]byte("lead\x00"), bytes.Repeat([]byte("y"), 2*maxStringLen+7)...), "\x01tail\x00end"...)
	inputs = append(inputs, nil, []byte("\x00"), long, bytes.Repeat([]byte("z"), maxStringLen))
	for _, in := range inputs {
		for _, size := range []int{16, 4096} {
			var got []run
			err := nulRuns(bufio.NewReaderSize(bytes.NewReader(in), size), func(start uint64, s []byte, text bool, end runEnd) error {
				got = append(got, run{start, string(s), text, end})
				return nil
			})
			if want := runsByByte(in); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("nulRuns(%.60q, buffer %d) = %v, %v; want %v", in, size, summary(got), err, summary(want))
			}
		}
	}
	// A run that is text but not UTF-8 keeps its text flag: RodataStrings checks UTF-8 itself.
	if rs := runsByByte([]byte("\xc3\x00")); len(rs) != 1 || !rs[0].text || utf8.ValidString(rs[0].s) {
		t.Fatalf("premise: %v", rs)
	}
}

func summary(rs []run) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "{%d %.20q(%d) %v %d} ", r.start, r.s, len(r.s), r.text, r.end)
	}
	return b.String()
}
