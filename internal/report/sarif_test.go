package report

import (
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/check"
)

func TestSarifEncodePath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"src/main.rs", "src/main.rs"},
		{"ws #1/a b%c?d:e@f", "ws%20%231/a%20b%25c%3Fd%3Ae%40f"},
		{"café/ü.c", "caf%C3%A9/%C3%BC.c"},
		{"odd\xff/x", "odd%FF/x"},
		{"a~b-c_d.e", "a~b-c_d.e"},
	} {
		if got := EncodePath(c.in); got != c.want {
			t.Errorf("EncodePath(%q) = %q, want %q", c.in, got, c.want)
		}
		// Decoding gives the bytes back.
		if back, err := url.PathUnescape(EncodePath(c.in)); err != nil || back != c.in {
			t.Errorf("PathUnescape(EncodePath(%q)) = %q, %v", c.in, back, err)
		}
	}
	if got := FileURI("/tmp/a b#", true); got != "file:///tmp/a%20b%23/" {
		t.Errorf("FileURI dir: %q", got)
	}
	if got := FileURI("/tmp/x.c", false); got != "file:///tmp/x.c" {
		t.Errorf("FileURI file: %q", got)
	}
	if SarifLevel("error") != "error" || SarifLevel("warning") != "warning" || SarifLevel("info") != "note" {
		t.Error("SarifLevel mapping")
	}
	if pascal("untracked-input-changed") != "UntrackedInputChanged" {
		t.Error(pascal("untracked-input-changed"))
	}
}

// The rule texts in the SARIF log are the README's rules table, row for row, and every rule check runs
// has one (with the level of its usual severity). GitHub code scanning shows shortDescription and
// fullDescription at the top of an alert; both stay within 1,024 characters.
func TestSarifRuleTextsMatchREADME(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "\n## Rules\n")
	if !ok {
		t.Fatal("README.md has no ## Rules section")
	}
	row := regexp.MustCompile("^\\| `([a-z-]+)` \\| (.*) \\| (.*) \\|$")
	readme := map[string][2]string{}
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if m := row.FindStringSubmatch(line); m != nil {
			readme[m[1]] = [2]string{m[2], m[3]}
		}
	}
	if len(readme) != len(check.Rules) || len(ruleTexts) != len(check.Rules) {
		t.Fatalf("README rows %d, ruleTexts %d, check.Rules %d", len(readme), len(ruleTexts), len(check.Rules))
	}
	rules := SarifRules()
	for i, r := range check.Rules {
		rt, ok := ruleTexts[r.Name]
		if !ok {
			t.Errorf("no ruleTexts entry for %s", r.Name)
			continue
		}
		if got := readme[r.Name]; got != [2]string{rt.Severity, rt.Meaning} {
			t.Errorf("%s: README row differs from ruleTexts:\nREADME   %q\nruleText %q", r.Name, got, [2]string{rt.Severity, rt.Meaning})
		}
		d := rules[i]
		if d.ID != r.Name || d.DefaultConfiguration.Level != SarifLevel(r.Severity.String()) {
			t.Errorf("descriptor %d: %+v", i, d)
		}
		if !strings.HasPrefix(rt.Severity, r.Severity.String()) {
			t.Errorf("%s: README severity %q does not start with the rule's usual severity %s", r.Name, rt.Severity, r.Severity)
		}
		if len(d.ShortDescription.Text) > 1024 || len(d.FullDescription.Text) > 1024 || d.ShortDescription.Text == "" {
			t.Errorf("%s: description lengths %d, %d", r.Name, len(d.ShortDescription.Text), len(d.FullDescription.Text))
		}
	}
}
