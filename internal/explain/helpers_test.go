package explain_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stalecheck/stalecheck/internal/explain"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

// readGraph reads a project's build folder the way the CLI does (with the project's CARGO_HOME).
func readGraph(t *testing.T, p *testutil.Project) *graph.Graph {
	t.Helper()
	_, g := p.Check()
	return g
}

func explainPath(t *testing.T, p *testutil.Project, path string) *explain.PathReport {
	t.Helper()
	g := readGraph(t, p)
	r, err := explain.Path(g, path, explain.Options{Cwd: p.Dir})
	if err != nil {
		t.Fatal(err)
	}
	// The text form must print without error and escape what it prints.
	var b bytes.Buffer
	if err := explain.WritePathText(&b, g, r); err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// verdict returns the one step verdict of a kind ("build-script run", "lib unit", …) whose unit is
// live (or not), failing otherwise.
func verdict(t *testing.T, r *explain.PathReport, kind string, live bool) explain.StepVerdict {
	t.Helper()
	var got []explain.StepVerdict
	for _, v := range r.Steps {
		if v.Kind == kind && v.Live == live {
			got = append(got, v)
		}
	}
	if len(got) != 1 {
		t.Fatalf("want one %s verdict (live %v) for %s, got %d:\n%s", kind, live, r.Path, len(got), dumpPath(r))
	}
	return got[0]
}

func dumpPath(r *explain.PathReport) string {
	var b strings.Builder
	for _, v := range r.Steps {
		b.WriteString(v.Kind + " " + v.Unit + " live=" + boolStr(v.Live) + " declared=" + boolStr(v.Declared) + " rerun=" + boolStr(v.WillRerun) + "\n")
		for _, c := range v.Reads {
			b.WriteString("   reads " + c.How + ": " + c.Detail + "\n")
		}
		for _, rs := range v.Reasons {
			b.WriteString("   " + string(rs.Code) + ": " + rs.Message + "\n")
		}
	}
	if r.Note != "" {
		b.WriteString("note: " + r.Note + "\n")
	}
	return b.String()
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// codes returns the reason codes of a verdict in order.
func codes(v explain.StepVerdict) []explain.Code {
	var out []explain.Code
	for _, r := range v.Reasons {
		out = append(out, r.Code)
	}
	return out
}

func wantCodes(t *testing.T, v explain.StepVerdict, want ...explain.Code) {
	t.Helper()
	got := codes(v)
	if len(got) != len(want) {
		t.Fatalf("%s %s: reasons %v, want %v", v.Kind, v.Unit, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s %s: reasons %v, want %v", v.Kind, v.Unit, got, want)
		}
	}
}

func wantCase(t *testing.T, v explain.StepVerdict, code explain.Code, cas int, parts ...string) {
	t.Helper()
	for _, r := range v.Reasons {
		if r.Code != code {
			continue
		}
		if r.Case != cas {
			t.Errorf("%s: case %d, want §11.5 case %d", code, r.Case, cas)
		}
		for _, p := range parts {
			if !strings.Contains(r.Message, p) {
				t.Errorf("%s message lacks %q:\n%s", code, p, r.Message)
			}
		}
		return
	}
	t.Fatalf("no %s reason in %v", code, codes(v))
}

// cargoRebuilds builds with -v and reports whether cargo compiled or ran anything of pkg.
func cargoRebuilds(t *testing.T, p *testutil.Project, pkg string, args ...string) bool {
	t.Helper()
	out := p.Cargo(append([]string{"build", "-v"}, args...)...)
	fresh := strings.Contains(out, "Fresh "+pkg+" ")
	dirty := strings.Contains(out, "Compiling "+pkg+" ") || strings.Contains(out, "Dirty "+pkg+" ")
	if fresh == dirty {
		t.Fatalf("cannot tell whether cargo rebuilt %s:\n%s", pkg, out)
	}
	return dirty
}

func mtime(t *testing.T, path string) string {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return explain.FmtTime(st.ModTime().UnixNano())
}

func runDir(t *testing.T, p *testutil.Project, prof, pkg string) string {
	t.Helper()
	m := p.RunDirs(prof, pkg) // either layout
	if len(m) != 1 {
		t.Fatalf("want one run folder of %s in %s, got %v", pkg, prof, m)
	}
	return m[0]
}
