package report

import "testing"

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"/plain/path/libk.a":       "/plain/path/libk.a",
		"a\nb":                     `a\nb`,
		"red\x1b[31mtext":          `red\x1b[31mtext`,
		"bell\a":                   `bell\x07`,
		"bad\xff\xfeutf8":          `bad\xff\xfeutf8`,
		"nel\u0085line":            `nel\u0085line`,
		"tab\there":                `tab\there`,
		"ünïcode/ok":               "ünïcode/ok",
		"back\\slash stays itself": "back\\slash stays itself",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
