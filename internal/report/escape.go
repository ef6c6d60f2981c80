// Package report writes findings for people (text, grouped by root) and for tools (JSON in the
// envelope of docs/json-schema.md). File names are escaped in text: a control character in a path
// never reaches the terminal raw.
package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape makes s safe to print on a terminal: control characters (C0, DEL, C1) and bytes that are not
// UTF-8 become Go-style escapes (\n, \x1b, \u0085); a backslash stays a backslash, so an ordinary path
// prints unchanged.
func Escape(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isControl(r) {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029
}
