package report

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// With colour on, the headers carry real ANSI codes (ours) around escaped text: a path holding an ESC
// is still printed escaped, and no other ESC reaches the terminal.
func TestWriteTextColorHeadersRaw(t *testing.T) {
	ws := "/ws"
	evil := ws + "/target/release/red\x1b[31mbin"
	mtime := time.Date(2026, 11, 30, 8, 51, 36, 947357198, time.UTC).UnixNano()
	g := &graph.Graph{Workspace: ws, TargetDir: ws + "/target", BuildDir: ws + "/target", ProfileDirs: []string{"release"},
		Roots: []*graph.Root{{File: graph.FileInfo{Path: evil, MTimeNS: mtime, Exists: true}, Kind: "bin"}}}
	fs := []check.Finding{
		{Rule: "untracked-input-changed", Severity: check.Error, Message: "msg with \x1b[2J inside", Roots: []string{evil},
			Evidence: []check.Evidence{{Kind: "input", Path: ws + "/a\x1b.c", MTimeNS: mtime}}},
		{Rule: "orphaned-build-dir", Severity: check.Info, Message: "orphan"},
	}
	var b strings.Builder
	if err := WriteText(&b, g, fs, TextOptions{Color: true, Verbose: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, `\x1b[1m`) || strings.Contains(out, `\x1b[0m`) {
		t.Errorf("our own bold codes were escaped:\n%s", out)
	}
	wantHeader := "\x1b[1m" + `target/release/red\x1b[31mbin (bin, built 2026-11-30T08:51:36.947357198Z)` + "\x1b[0m\n"
	if !strings.Contains(out, wantHeader) {
		t.Errorf("output lacks the bold header %q:\n%q", wantHeader, out)
	}
	if !strings.Contains(out, "\x1b[1mNot tied to a current binary:\x1b[0m\n") {
		t.Errorf("output lacks the bold no-root header:\n%q", out)
	}
	ours := regexp.MustCompile("\x1b\\[(1|0|31|33|36)m")
	if rest := ours.ReplaceAllString(out, ""); strings.ContainsRune(rest, 0x1b) {
		t.Errorf("a raw ESC other than our codes reached the output:\n%q", rest)
	}
	for _, want := range []string{`msg with \x1b[2J inside`, `a\x1b.c; mtime 2026-11-30T08:51:36.947357198Z`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%q", want, out)
		}
	}

	// Without colour: no ESC at all, the same escaped text.
	b.Reset()
	if err := WriteText(&b, g, fs, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(b.String(), 0x1b) || !strings.Contains(b.String(), `target/release/red\x1b[31mbin (bin, built `) {
		t.Errorf("no-colour output:\n%q", b.String())
	}
}

func TestTimestamp(t *testing.T) {
	for ns, want := range map[int64]string{
		time.Date(2026, 11, 30, 8, 51, 36, 947357198, time.UTC).UnixNano(): "2026-11-30T08:51:36.947357198Z",
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano():             "2026-01-02T03:04:05.000000000Z",
	} {
		if got := Timestamp(ns); got != want {
			t.Errorf("Timestamp(%d) = %q, want %q", ns, got, want)
		}
	}
	if got := FormatTime(time.Date(2026, 1, 2, 5, 4, 5, 10, time.FixedZone("X", 2*3600))); got != "2026-01-02T03:04:05.000000010Z" {
		t.Errorf("FormatTime in another zone = %q", got)
	}
}

// Records with nothing to judge: the summary says why, and points to notes only when there are some (a
// build.ninja cut short said "see the notes with -v" with none).
func TestWriteTextNothingToJudge(t *testing.T) {
	for _, c := range []struct {
		g    *graph.Graph
		want string
	}{
		{&graph.Graph{System: "ninja", BuildDir: "/b"}, "the records in /b declare no build step."},
		{&graph.Graph{System: "ninja", BuildDir: "/b", Steps: []*graph.Step{{ID: "x"}}}, "show no built target tied to a rule or edge."},
		{&graph.Graph{System: "ninja", BuildDir: "/b", Notes: []string{"ninja -n: not run"}}, "declare no build step (see the notes with -v)."},
	} {
		var b strings.Builder
		if err := WriteText(&b, c.g, nil, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("steps %d, notes %d: want %q in\n%s", len(c.g.Steps), len(c.g.Notes), c.want, b.String())
		}
	}
}
