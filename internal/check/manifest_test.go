package check_test

import (
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// A program that prints its package's description and version (env!): an edit of either field in
// Cargo.toml is what the next build compiles in (rustc's env-deps record the values it read), so the
// binary you have is stale until then; a field the code does not read (homepage) is not.
func TestManifestFieldRead(t *testing.T) {
	p := testutil.NewProject(t, map[string]string{
		"Cargo.toml":  "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\ndescription = \"first\"\nhomepage = \"https://example.invalid/a\"\n",
		"src/main.rs": "fn main() { println!(\"{} {}\", env!(\"CARGO_PKG_DESCRIPTION\"), env!(\"CARGO_PKG_VERSION\")); }\n",
	})
	p.Cargo("build")
	fs, _ := p.Check()
	noErrors(t, fs)
	for _, c := range []struct{ old, new, name string }{
		{`"first"`, `"second"`, "CARGO_PKG_DESCRIPTION"},
		{`"0.1.0"`, `"0.2.0"`, "CARGO_PKG_VERSION"},
	} {
		p.Edit("Cargo.toml", c.old, c.new)
		fs, _ = p.Check()
		f := wantPending(t, fs, p.Path("Cargo.toml"))
		if !strings.Contains(f.Message, c.name) || !strings.Contains(f.Message, strings.Trim(c.new, `"`)) {
			t.Errorf("the finding should name %s and its new value: %s", c.name, f.Message)
		}
		p.Cargo("build")
		fs, _ = p.Check()
		noErrors(t, fs)
	}
	p.Edit("Cargo.toml", "example.invalid/a", "example.invalid/b")
	fs, _ = p.Check()
	noErrors(t, fs)
}

func wantPending(t *testing.T, fs []check.Finding, subject string) check.Finding {
	t.Helper()
	for _, f := range testutil.AtLeast(fs, check.Error) {
		if f.Rule == "pending-rebuild" && testutil.HasSubject(f, subject) {
			return f
		}
	}
	t.Fatalf("want a pending-rebuild error naming %s; got:\n%s", subject, testutil.Dump(fs))
	return check.Finding{}
}
