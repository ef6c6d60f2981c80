package binfmt

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestNewELFNamesWhatItIs: a file given as a binary that is no ELF file is named for what it is (an
// archive, a script, text), not by debug/elf's "bad magic number '[33 60 97 114]'" or "truncated ELF
// file" of a text file.
func TestNewELFNamesWhatItIs(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"!<arch>\n/               0           0     0     0       4         `\n", "an ar archive"},
		{"#!/bin/sh\necho hi\n", "a script"},
		{"hi\n", "it is text"},
		{"", "it is empty"},
		{"\x7fELF\x02\x01", "ends after 6 bytes"},
		{"MZ\x90\x00", "Windows (PE)"},
		{"\xcf\xfa\xed\xfe\x07\x00", "Mach-O"},
		{"\x00\x01\x02\x03\x04", "begins with the bytes 00 01 02 03"},
	} {
		_, err := NewELF(bytes.NewReader([]byte(c.data)), "f.bin")
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "not an ELF file: ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "magic number") {
			t.Errorf("%q: %v (want a FormatError saying %q)", c.data, err, c.want)
		}
	}
}
