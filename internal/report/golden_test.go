package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil/golden"
)

// groupedGraph is a small in-memory build: one binary, a package whose build script compiles 5
// undeclared sources that all changed (one rule, one fix: one fault), a changed header with another fix,
// and an orphaned folder with no fix.
func groupedGraph() (*graph.Graph, []check.Finding) {
	ws := "/ws"
	bin := ws + "/target/release/app"
	built := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC).UnixNano()
	g := &graph.Graph{Workspace: ws, TargetDir: ws + "/target", BuildDir: ws + "/target", ProfileDirs: []string{"release"},
		Roots: []*graph.Root{{File: graph.FileInfo{Path: bin, MTimeNS: built, Exists: true}, Kind: "bin", TiedBy: "dep-info"}}}
	fix := `add println!("cargo:rerun-if-changed=c") to ksys/build.rs, then: touch ksys/build.rs && cargo build --release`
	var fs []check.Finding
	for i, name := range []string{"f1.c", "f2.c", "sub/f3.c", "f4.c", "f5.c"} {
		src := ws + "/ksys/c/" + name
		fs = append(fs, check.Finding{Rule: "untracked-input-changed", Severity: check.Warning,
			Message:  "ksys/c/" + name + " was modified after the build script of ksys last ran; Cargo does not watch it",
			Subjects: []string{src}, Roots: []string{bin}, Fix: fix,
			Evidence: []check.Evidence{{Kind: "input", Path: src, MTimeNS: built + int64(i+1)*1e9, How: "script compile"}}})
		if i == 1 {
			fs = append(fs, check.Finding{Rule: "untracked-input-changed", Severity: check.Error,
				Message: "ksys/include/k.h changed after the build script of ksys last ran", Subjects: []string{ws + "/ksys/include/k.h"},
				Roots: []string{bin}, Fix: `add println!("cargo:rerun-if-changed=include") to ksys/build.rs`})
		}
	}
	fs = append(fs, check.Finding{Rule: "orphaned-build-dir", Severity: check.Info, Message: "target/release/build/old-0123 belongs to no current unit",
		Subjects: []string{ws + "/target/release/build/old-0123"}})
	return g, fs
}

// Findings of one rule and one fix are one finding with a count in text, JSON and SARIF; --all (no
// Group) keeps them apart; the summary counts every finding either way.
func TestGroupedGolden(t *testing.T) {
	g, fs := groupedGraph()
	grouped := check.Group(fs)
	if len(grouped) != 3 || grouped[0].Count() != 5 || grouped[1].Count() != 1 {
		t.Fatalf("Group gave %d findings (want 3: the 5 sources as one, the header, the orphan): %+v", len(grouped), grouped)
	}
	var text, all, js, sarif bytes.Buffer
	if err := WriteText(&text, g, grouped, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&all, g, fs, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	doc := NewCheckDoc(Tool{Name: "stalecheck", Version: "test"}, g, grouped)
	if err := WriteJSON(&js, doc); err != nil {
		t.Fatal(err)
	}
	if err := WriteSarif(&sarif, NewSarifLog(doc, SarifOptions{IsText: func(string) bool { return true }})); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "grouped.txt", text.Bytes())
	golden.Check(t, "grouped-all.txt", all.Bytes())
	golden.Check(t, "grouped.json", js.Bytes())
	golden.Check(t, "grouped.sarif", sarif.Bytes())
	if !strings.Contains(text.String(), "… and 4 more of the same cause in ksys/c/ (--all lists them)") {
		t.Errorf("text report lacks the group's count line:\n%s", text.String())
	}
	if doc.Summary["warning"] != 5 || doc.Summary["error"] != 1 {
		t.Errorf("summary %v: want every finding counted (5 warnings, 1 error)", doc.Summary)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 19999: "19,999", 1234567: "1,234,567", -2500: "-2,500"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
