package cargo

import (
	"regexp"
	"testing"

	"github.com/stalecheck/stalecheck/internal/testutil/mutate"
)

// TestEnvReadMatchesPattern: envRead accepts exactly the lines the pattern of cc-rs's lookup log
// accepts, with the same parts, for logged lines and mutations of them.
func TestEnvReadMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*) = (None|Some\((".*")\))$`)
	lines := []string{
		`CC_x86_64-unknown-linux-gnu = None`, `CFLAGS = Some("-O2 -g")`, `HOST_CC = Some("")`, `_X = None`,
		`TARGET = Some("a\"b")`, `X = Some(")`, `X = Some("")x`, `X = Some(""`, `1X = None`, `X-1 = None`,
		` X = None`, `X  = None`, `X = None `, `X = Some("a") = Some("b")`, `a = b = None`, `X = Some("\xff")`,
		`X = Some("a\nb")`, `= None`, `X=None`, `cargo:rustc-link-lib=foo`, `running: "cc" "-c"`, ``,
		`X = Some(None)`, `X = Some("")`, `é = None`, `X = Some("é")`,
	}
	lines = append(lines, mutate.Strings(1, lines, 20000, 2, []string{"A", "z", "0", "_", "-", " ", "=", "None", "Some(", ")", "\"", "\\", "\n", "é", "\xff"}, "Az0_- =()\"")...)
	matched := 0
	for _, line := range lines {
		m := re.FindStringSubmatch(line)
		name, quoted, set, ok := envRead(line)
		if ok != (m != nil) {
			t.Fatalf("envRead(%q) ok = %v, pattern %v", line, ok, m != nil)
		}
		if !ok {
			continue
		}
		matched++
		if name != m[1] || set != (m[2] != "None") || quoted != m[3] {
			t.Fatalf("envRead(%q) = %q %q %v, pattern %q", line, name, quoted, set, m[1:])
		}
	}
	if matched < 1000 {
		t.Fatalf("only %d of %d lines were lookups: the mutations test too little", matched, len(lines))
	}
}
