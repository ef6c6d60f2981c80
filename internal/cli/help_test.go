package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command's --help has examples, and every example line is a command line the tree accepts:
// the command exists and every flag it gives parses.
func TestHelpExamples(t *testing.T) {
	root := NewRoot(Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	cmds := append([]*cobra.Command{root}, root.Commands()...)
	seen := 0
	for _, c := range cmds {
		if c.Name() == "completion" || c.Name() == "help" {
			continue
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.Name())
			continue
		}
		for _, line := range strings.Split(c.Example, "\n") {
			line, _, _ = strings.Cut(line, "  #")
			for _, part := range strings.FieldsFunc(line, func(r rune) bool { return r == '|' || r == '&' || r == '>' }) {
				words := shellWords(part)
				if len(words) == 0 || words[0] != "stalecheck" {
					continue
				}
				fresh := NewRoot(Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
				fresh.InitDefaultCompletionCmd() // cobra adds `completion` when it executes
				sub, rest, err := fresh.Find(words[1:])
				if err != nil {
					t.Errorf("%s example %q: %v", c.Name(), part, err)
					continue
				}
				if sub != fresh && c != root && sub.Name() != c.Name() {
					t.Errorf("%s example %q runs %s", c.Name(), part, sub.Name())
				}
				if err := sub.ParseFlags(rest); err != nil {
					t.Errorf("%s example %q: %v", c.Name(), part, err)
				}
				if err := sub.ValidateArgs(sub.Flags().Args()); err != nil && sub.Args != nil {
					t.Errorf("%s example %q: %v", c.Name(), part, err)
				}
				seen++
			}
		}
		var out bytes.Buffer
		c.SetOut(&out)
		c.Help()
		if !strings.Contains(out.String(), "Examples:") {
			t.Errorf("%s --help shows no examples", c.Name())
		}
	}
	if seen < 20 {
		t.Fatalf("only %d example command lines checked", seen)
	}
}

// shellWords splits a line as sh does for the simple quoting the examples use.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Shell completion: cobra's completion command writes the scripts, and explain completes the package
// names of the workspace's Cargo.lock through cobra's __complete entry (no file names then).
func TestCompletionExplainPackages(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, stderr, code := run(t, "completion", sh)
		if code != 0 || !strings.Contains(out, "stalecheck") || len(out) < 500 {
			t.Fatalf("completion %s: exit %d, %d bytes, stderr %q", sh, code, len(out), stderr)
		}
	}
	ws := builtProject(t)
	out, _, code := run(t, "__complete", "explain", "-w", ws, "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || !contains(lines, "app") || !contains(lines, "seed-sys") || lines[len(lines)-1] != ":4" {
		t.Fatalf("__complete explain: exit %d\n%s", code, out)
	}
	out, _, _ = run(t, "__complete", "explain", "-w", filepath.Join(ws, "seed-sys", "cuda"), "se")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); !contains(lines, "seed-sys") || contains(lines, "app") {
		t.Fatalf("__complete explain se (from a subfolder):\n%s", out)
	}
	// A word that looks like a path completes as a file name (directive 0, default).
	out, _, _ = run(t, "__complete", "explain", "-w", ws, "./")
	if strings.TrimSpace(out) != ":0" {
		t.Fatalf("__complete explain ./:\n%s", out)
	}
	// A damaged Cargo.lock: no names, file completion, and the error only in cobra's debug log.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "Cargo.lock"), []byte("[[package]\nname = "), 0o644)
	out, _, code = run(t, "__complete", "explain", "-w", bad, "")
	if code != 0 || strings.TrimSpace(out) != ":0" {
		t.Fatalf("__complete explain on a damaged Cargo.lock: exit %d\n%s", code, out)
	}
}
