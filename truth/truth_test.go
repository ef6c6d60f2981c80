package truth

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/events-quick.wrong with the wrong judgements of this run")

// TestQuick is `truth/run.sh --quick`: the fixed edit sequence on the quick shapes, judged against a
// from-scratch build and against Cargo. Any false error, miss or disagreement with Cargo fails it.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("the truth harness builds real workspaces; not in -short")
	}
	t.Parallel() // beside TestEventsQuick: together they are the quick corpus
	for _, tool := range []string{"cargo", "cc", "ar", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required (CI installs it): %v", tool, err)
		}
	}
	if _, err := os.Stat("/usr/share/cargo/registry/cc-1.0.73"); err != nil {
		t.Fatalf("Debian's librust-cc-dev is required (CI installs it): %v", err)
	}
	dir := scratch(t)
	bin := filepath.Join(dir, "stalecheck")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/stalecheck").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var log bytes.Buffer
	res, err := Run(context.Background(), Options{Work: filepath.Join(dir, "work"), Stalecheck: bin,
		Registry: "/usr/share/cargo/registry", Quick: true, Seed: 1, Log: &log})
	if err != nil {
		t.Fatalf("harness: %v\n%s", err, log.String())
	}
	var table, wrong bytes.Buffer
	res.Write(&table)
	t.Log("\n" + table.String())
	if n := res.WriteWrong(&wrong); n > 0 {
		t.Errorf("%d wrong verdict(s):\n%s", n, wrong.String())
	}
	for _, d := range res.CacheDisagreed {
		t.Errorf("verdict cache (verify): %s", d)
	}
	for _, d := range res.ScopeDisagreed {
		t.Errorf("profile-scoped check: %s", d)
	}
	if len(res.Skipped) > 0 {
		t.Errorf("shapes not run: %v", res.Skipped)
	}
	if res.States < 20 {
		t.Errorf("only %d states judged", res.States)
	}
}

// TestParseCargo reads real cargo build -v lines (cargo 1.95).
func TestParseCargo(t *testing.T) {
	out := `       Dirty ccinc-sys v0.1.0 (/w/ccinc-sys): the file ` + "`native/ccinc.c`" + ` has changed (1764.5s, 2s after last build at 1762.5s)
   Compiling ccinc-sys v0.1.0 (/w/ccinc-sys)
       Dirty app v0.1.0 (/w/app): the dependency ccinc_sys was rebuilt
       Dirty mid v0.1.0 (/w/mid): info of dependency ` + "`ccinc-sys`" + ` changed
   Compiling mid v0.1.0 (/w/mid)
   Compiling app v0.1.0 (/w/app)
       Fresh cc v1.0.73
`
	c := parseCargo(out, "debug")
	if len(c.Own) != 1 || c.Own[0] != "ccinc-sys@debug" {
		t.Errorf("own = %v", c.Own)
	}
	if len(c.Rebuilt) != 3 {
		t.Errorf("rebuilt = %v", c.Rebuilt)
	}
	if !agrees(c, []string{"ccinc-sys@debug"}) || !agrees(c, []string{"app@debug", "ccinc-sys@debug"}) {
		t.Error("a pending set between own and rebuilt must agree")
	}
	if agrees(c, nil) || agrees(c, []string{"ccinc-sys@debug", "cc@debug"}) {
		t.Error("missing an own-dirty unit, or naming a fresh one, must disagree")
	}
	c.Failed = true
	if !agrees(c, []string{"ccinc-sys@debug", "later@debug"}) {
		t.Error("after a failed build, units Cargo never reached are not counted against stalecheck")
	}
}

// knownWrongFile lists the wrong judgements of the quick event corpus that are not fixed yet, one per
// line (project | edits | phase | program | outcome). TestEventsQuick fails on a wrong judgement that is
// not listed (a regression) and on a listed one that is now right (the list must shrink with the fix:
// go test ./truth -run TestEventsQuick -update).
const knownWrongFile = "testdata/events-quick.wrong"

func wrongKey(j Judgement) string {
	_, edits, _ := strings.Cut(j.Event, " ")
	return strings.Join([]string{j.Project, edits, j.Phase, j.Root, j.Outcome}, " | ")
}

// TestEventsQuick is `truth/run.sh --corpus events --quick`: one event of each edit kind per build
// system, spread over its projects (quickKinds), each from a fresh state, scored by reason.
func TestEventsQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("the truth harness builds real projects; not in -short")
	}
	t.Parallel()
	for _, tool := range []string{"cargo", "cc", "ar", "git", "make", "ninja", "cmake", "meson", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required (CI installs it: .ci/setup-debian): %v", tool, err)
		}
	}
	dir := scratch(t)
	bin := filepath.Join(dir, "stalecheck")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/stalecheck").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var log bytes.Buffer
	res, err := RunEvents(context.Background(), EventOptions{Work: filepath.Join(dir, "work"), Stalecheck: bin, Quick: true, Seed: 1, Jobs: 2, Log: &log})
	if err != nil {
		t.Fatalf("harness: %v\n%s", err, log.String())
	}
	var table bytes.Buffer
	res.Write(&table)
	t.Log("\n" + table.String())
	if len(res.Skipped) > 0 {
		t.Errorf("projects not run: %v", res.Skipped)
	}
	want := 0 // a fresh state per project, and each edit kind once per build system
	for _, ks := range quickKinds(Projects()) {
		want += 1 + len(ks)
	}
	if res.Events != want {
		t.Errorf("%d events over %d projects, want %d", res.Events, len(Projects()), want)
	}
	var wrong []string
	for _, j := range res.Judgements {
		switch j.Outcome {
		case "right", "healthy", "conservative":
		default:
			wrong = append(wrong, wrongKey(j))
		}
	}
	sort.Strings(wrong)
	if *update {
		if err := os.WriteFile(knownWrongFile, []byte(strings.Join(wrong, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(knownWrongFile)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			known[l] = true
		}
	}
	var details bytes.Buffer
	res.WriteWrong(&details)
	for _, w := range wrong {
		if !known[w] {
			t.Errorf("new wrong judgement (a regression): %s", w)
		}
		delete(known, w)
	}
	for k := range known {
		t.Errorf("listed as wrong in %s but right now: %s (remove the line: go test ./truth -run TestEventsQuick -update)", knownWrongFile, k)
	}
	if t.Failed() {
		t.Log("\n" + details.String())
	}
}

// An error is right by reason when it names the edited file or a file made from it; patterns name the
// files whose folders carry a hash (OUT_DIR, deps/).
func TestFindingNames(t *testing.T) {
	var f finding
	f.Subjects = []string{"/w/ws/target/debug/deps/libtruthsys-04aca7c79bd26130.rlib"}
	f.Evidence = append(f.Evidence, struct {
		Kind string `json:"kind"`
		Path string `json:"path"`
	}{"artifact", "/w/ws/target/debug/build/truthsys-1a2b/out/libtruthc.a"})
	for _, c := range []struct {
		want []string
		ok   bool
	}{
		{[]string{"/w/ws/truthsys/src/a.c"}, false},
		{[]string{"*/out/libtruthc.a"}, true},
		{[]string{"*/libtruthsys-*.rlib"}, true},
		{[]string{"*/libother-*.rlib"}, false},
		{[]string{"*/build/libtruthc.a"}, false},
		{[]string{"/w/ws/target/debug/deps/libtruthsys-04aca7c79bd26130.rlib"}, true},
	} {
		if got := f.names(c.want); got != c.ok {
			t.Errorf("names(%q) = %v, want %v", c.want, got, c.ok)
		}
	}
}

// The quick corpus runs each edit kind once per build system, and every project some of them.
func TestQuickKinds(t *testing.T) {
	ps := Projects()
	q := quickKinds(ps)
	covered := map[string]map[string]int{}
	for _, p := range ps {
		if covered[p.System] == nil {
			covered[p.System] = map[string]int{}
		}
		if len(q[p.Name]) == 0 {
			t.Errorf("%s runs no event in the quick corpus", p.Name)
		}
		for k := range q[p.Name] {
			covered[p.System][k]++
		}
	}
	for _, p := range ps {
		for _, e := range p.SingleEdits() {
			want := 1
			if isChain(p.System) && quietKinds[e.Kind] {
				want = 0 // judged on each system of the chain alone
			}
			if covered[p.System][e.Kind] != want {
				t.Errorf("system %s, kind %s: run %d times, want %d", p.System, e.Kind, covered[p.System][e.Kind], want)
			}
		}
	}
}

// scratch is a test's scratch folder under ScratchRoot, removed at the end.
func scratch(t *testing.T) string {
	dir, err := os.MkdirTemp(ScratchRoot(QuickScratch), "stalecheck-truth-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
