package content

import (
	"bytes"
	"path/filepath"
	"strings"

	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// A source file's code digest is the digest of its text as the compiler reads it apart from comments
// and the width of blank runs: comments become one blank, runs of blanks outside literals one blank,
// blanks at line ends go; newlines stay (they are line numbers: __LINE__, assert messages, debug
// info; those at the very end number nothing), and so does everything inside string and character
// literals. Two versions with one code
// digest compile to the same code, so an edit that changed only comments is judged like a touch: its
// content baseline differs, its code does not (graph.ContentSame with the reason said).
//
// What counts as a comment is the language's: C, C++ and CUDA (a `//` comment continues past a
// backslash-newline, raw strings R"d(…)d" are literals); Rust (block comments nest; doc comments
// `///`, `//!`, `/** */`, `/*! */` are attributes that code can read, clap's help texts, so they are
// code). Other files have no code digest.

// codeExts are the extensions of the sources whose comments are known here, with their language.
var codeExts = map[string]byte{
	".c": 'c', ".h": 'c', ".cc": 'c', ".cpp": 'c', ".cxx": 'c', ".hh": 'c', ".hpp": 'c', ".hxx": 'c',
	".cu": 'c', ".cuh": 'c', ".inl": 'c', ".rs": 'r',
}

// maxCodeBytes bounds the files given a code digest (larger ones keep only their content digest).
const maxCodeBytes = 8 << 20

// codeFile reports whether path has a code digest (by its extension).
func codeFile(path string) bool { return codeExts[strings.ToLower(filepath.Ext(path))] != 0 }

// codeDigests reads path once and returns the digest of its bytes and its code digest ("blake3:<hex>"
// both); ok is false for a file without a code digest or one that cannot be read.
func codeDigests(path string) (content, code string, ok bool) {
	lang := codeExts[strings.ToLower(filepath.Ext(path))]
	if lang == 0 {
		return "", "", false
	}
	data, err := safeio.ReadFile(path, maxCodeBytes)
	if err != nil {
		return "", "", false
	}
	// Newlines at the very end number no line of code: a comment appended at the end changes nothing.
	text := bytes.TrimRight(codeText(data, lang), "\n")
	return digest.Bytes(data).String(), digest.Bytes(text).String(), true
}

// codeText is data with comments and blank runs normalised (see the comment above); lang 'c' or 'r'.
func codeText(data []byte, lang byte) []byte {
	out := make([]byte, 0, len(data))
	blank := false // a blank is pending: written before the next byte of code on the line
	emit := func(c byte) {
		if blank && c != '\n' && len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, ' ')
		}
		blank = false
		out = append(out, c)
	}
	n := len(data)
	for i := 0; i < n; i++ {
		c := data[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			blank = true
		case c == '\n':
			blank = false
			out = append(out, '\n')
		case c == '/' && i+1 < n && data[i+1] == '/':
			if lang == 'r' && i+2 < n && (data[i+2] == '!' || data[i+2] == '/' && (i+3 >= n || data[i+3] != '/')) {
				// A Rust doc comment: code, to the end of its line.
				for ; i < n && data[i] != '\n'; i++ {
					emit(data[i])
				}
				i--
				continue
			}
			// To the end of the line; in C a backslash-newline continues it.
			for i += 2; i < n && data[i] != '\n'; i++ {
				if lang == 'c' && data[i] == '\\' && i+1 < n && data[i+1] == '\n' {
					i++
					out = append(out, '\n')
				} else if lang == 'c' && data[i] == '\\' && i+2 < n && data[i+1] == '\r' && data[i+2] == '\n' {
					i += 2
					out = append(out, '\n')
				}
			}
			blank = true
			i--
		case c == '/' && i+1 < n && data[i+1] == '*':
			if lang == 'r' && i+2 < n && (data[i+2] == '!' || data[i+2] == '*' && (i+3 >= n || data[i+3] != '*' && data[i+3] != '/')) {
				// A Rust doc block comment: code, whole.
				end := rustBlockEnd(data, i)
				for ; i < end; i++ {
					emit(data[i])
				}
				i--
				continue
			}
			var end int
			if lang == 'r' {
				end = rustBlockEnd(data, i)
			} else if j := strings.Index(string(data[i+2:]), "*/"); j >= 0 {
				end = i + 2 + j + 2
			} else {
				end = n
			}
			for k := i; k < end; k++ {
				if data[k] == '\n' {
					out = append(out, '\n')
				}
			}
			blank = true
			i = end - 1
		case c == '"' || c == '\'' && (lang == 'c' || rustCharAt(data, i)):
			if lang == 'c' && c == '"' && rawPrefix(data, i) {
				end := cRawEnd(data, i)
				for ; i < end; i++ {
					emit(data[i])
				}
				i--
				continue
			}
			if lang == 'r' && c == '"' {
				if hashes, ok := rustRawPrefix(data, i); ok {
					end := rustRawEnd(data, i, hashes)
					for ; i < end; i++ {
						emit(data[i])
					}
					i--
					continue
				}
			}
			// A quoted literal with backslash escapes, copied whole.
			emit(c)
			for i++; i < n; i++ {
				out = append(out, data[i])
				if data[i] == '\\' && i+1 < n {
					i++
					out = append(out, data[i])
					continue
				}
				if data[i] == c || lang == 'c' && data[i] == '\n' {
					break
				}
			}
		default:
			emit(c)
		}
	}
	return out
}

// rustBlockEnd returns the index just past the (nested) block comment starting at i.
func rustBlockEnd(data []byte, i int) int {
	depth := 0
	for j := i; j+1 < len(data); j++ {
		switch {
		case data[j] == '/' && data[j+1] == '*':
			depth++
			j++
		case data[j] == '*' && data[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(data)
}

// rustCharAt reports whether the ' at i starts a character literal (not a lifetime or a label):
// 'x', '\n', '\u{1F600}'; a multi-byte character counts by its UTF-8 length.
func rustCharAt(data []byte, i int) bool {
	if i+1 >= len(data) {
		return false
	}
	if data[i+1] == '\\' {
		return true
	}
	size := 1
	switch c := data[i+1]; {
	case c >= 0xF0:
		size = 4
	case c >= 0xE0:
		size = 3
	case c >= 0xC0:
		size = 2
	}
	return i+1+size < len(data) && data[i+1+size] == '\''
}

// rawPrefix reports whether the " at i opens a C++ raw string (R", u8R", LR", uR", UR").
func rawPrefix(data []byte, i int) bool {
	if i < 1 || data[i-1] != 'R' {
		return false
	}
	j := i - 1
	for j > 0 && (data[j-1] == 'u' || data[j-1] == '8' || data[j-1] == 'L' || data[j-1] == 'U') {
		j--
	}
	return j == 0 || !identByte(data[j-1])
}

// cRawEnd returns the index just past the raw string R"delim( … )delim" whose quote is at i.
func cRawEnd(data []byte, i int) int {
	open := strings.IndexByte(string(data[i+1:min(len(data), i+1+18)]), '(')
	if open < 0 {
		return i + 1
	}
	closing := ")" + string(data[i+1:i+1+open]) + "\""
	if j := strings.Index(string(data[i+1+open:]), closing); j >= 0 {
		return i + 1 + open + j + len(closing)
	}
	return len(data)
}

// rustRawPrefix reports whether the " at i closes the prefix of a Rust raw string (r"…", r#"…"#,
// br"…", cr#"…"#) and how many # it has.
func rustRawPrefix(data []byte, i int) (int, bool) {
	j := i
	for j > 0 && data[j-1] == '#' {
		j--
	}
	hashes := i - j
	if j < 1 || data[j-1] != 'r' {
		return 0, false
	}
	k := j - 1
	if k > 0 && (data[k-1] == 'b' || data[k-1] == 'c') {
		k--
	}
	if k > 0 && identByte(data[k-1]) {
		return 0, false
	}
	return hashes, true
}

// rustRawEnd returns the index just past the raw string whose opening quote is at i.
func rustRawEnd(data []byte, i, hashes int) int {
	closing := "\"" + strings.Repeat("#", hashes)
	if j := strings.Index(string(data[i+1:]), closing); j >= 0 {
		return i + 1 + j + len(closing)
	}
	return len(data)
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
