package content

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCodeText: two versions of a source have one code digest exactly when they differ only in
// comments and the width of blank runs, in the language's own comment syntax; a newline, a literal's
// bytes, a C comment continued by a backslash, a Rust doc comment are code.
func TestCodeText(t *testing.T) {
	for _, tc := range []struct {
		lang byte
		a, b string
		same bool
	}{
		{'c', "int x; /* TRUTHC_note_0 */\n", "int x; /* TRUTHC_note_1 */\n", true},
		{'c', "int x; // one\nint y;\n", "int x;   // two, longer\nint  y;\n", true},
		{'c', "int x;\n", "int x;    \n", true},
		{'c', "/* a\n b */ int x;\n", "/* c\n d */ int x;\n", true},
		{'c', "/* a */ int x;\n", "/* a\n */ int x;\n", false},            // a line more: __LINE__ moves
		{'c', "int x; // c \\\nint y;\n", "int x; // c\nint y;\n", false}, // the comment ate int y
		{'c', `const char *s = "a // b";` + "\n", `const char *s = "a // c";` + "\n", false},
		{'c', `const char *s = "a  b";` + "\n", `const char *s = "a b";` + "\n", false},
		{'c', `char c = '"'; /* x */` + "\n", `char c = '"'; /* y */` + "\n", true},
		{'c', `auto s = R"d(/* x */)d";` + "\n", `auto s = R"d(/* y */)d";` + "\n", false},
		{'c', `auto s = R"(a)"; // x` + "\n", `auto s = R"(a)"; // y` + "\n", true},
		{'c', "int x = 1;\n", "int x = 2;\n", false},
		{'c', "a/**/b\n", "a b\n", true},
		{'c', "a/**/b\n", "ab\n", false},
		{'r', "fn f() {} // x\n", "fn f() {} // y\n", true},
		{'r', "/* a /* nested */ still */ fn f() {}\n", "/* b */ fn f() {}\n", true},
		{'r', "/// doc x\nfn f() {}\n", "/// doc y\nfn f() {}\n", false},
		{'r', "//! crate x\n", "//! crate y\n", false},
		{'r', "//// not doc x\n", "//// not doc y\n", true},
		{'r', "/** doc x */ fn f() {}\n", "/** doc y */ fn f() {}\n", false},
		{'r', `let s = r#"a // b"#; // c` + "\n", `let s = r#"a // x"#; // c` + "\n", false},
		{'r', `let s = r#"a // b"#; // c` + "\n", `let s = r#"a // b"#; // d` + "\n", true},
		{'r', "fn f<'a>(x: &'a str) -> char { 'x' } // c\n", "fn f<'a>(x: &'a str) -> char { 'x' } // d\n", true},
		{'r', "let c = '/'; // c\n", "let c = '/'; // d\n", true},
		{'r', "let c = '/'; let d = 1;\n", "let c = '/'; let d = 2;\n", false},
	} {
		got := string(codeText([]byte(tc.a), tc.lang)) == string(codeText([]byte(tc.b), tc.lang))
		if got != tc.same {
			t.Errorf("%c %q vs %q: same code %v, want %v (%q / %q)", tc.lang, tc.a, tc.b, got, tc.same,
				codeText([]byte(tc.a), tc.lang), codeText([]byte(tc.b), tc.lang))
		}
	}
}

// TestCodeTextNeverPanics cuts a source with every construct at every byte.
func TestCodeTextNeverPanics(t *testing.T) {
	src := "/* a */ x // b \\\n y R\"d(z)d\" 'c' \"s\\\"\" r#\"q\"# '\\n' /** d */ /*! e */ //! f\n/// g\n"
	for i := 0; i <= len(src); i++ {
		for _, lang := range []byte{'c', 'r'} {
			codeText([]byte(src[:i]), lang)
			codeText([]byte(src[i:]), lang)
		}
	}
}

// TestSameCode: the store tells a comment edit from a code edit of a file it recorded.
func TestSameCode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.c")
	write := func(s string) string {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		d, _, ok := codeDigests(p)
		if !ok {
			t.Fatal("no code digest")
		}
		return d
	}
	st := OpenStore("")
	base := write("int f(void) { return 1; } /* v1 */\n")
	st.keepCode(p, base)
	if now := write("int f(void) { return 1; } /* v2 */\n"); !st.sameCode(p, base, now) {
		t.Error("a comment edit judged a code change")
	}
	if now := write("int f(void) { return 1; } /* v1 */\n/* appended */\n\n"); !st.sameCode(p, base, now) {
		t.Error("comment lines appended at the end judged a code change")
	}
	if now := write("/* prepended */\nint f(void) { return 1; } /* v1 */\n"); st.sameCode(p, base, now) {
		t.Error("a line prepended (line numbers move) judged the same code")
	}
	if now := write("int f(void) { return 2; } /* v1 */\n"); st.sameCode(p, base, now) {
		t.Error("a code edit judged a comment change")
	}
	if st.sameCode(p, "blake3:unknown", base) {
		t.Error("a baseline without a code digest judged the same")
	}
	if st.sameCode(filepath.Join(dir, "data.txt"), base, base) {
		t.Error("a file with no code digest judged the same")
	}
}
