package report_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/testutil"
)

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// validSarif writes the log of findings as `check --format sarif` does, validates it against the
// OASIS schema (testdata/sarif-schema-2.1.0.json, draft-04, formats asserted) and GitHub code
// scanning's constraints, and returns the log read back.
func validSarif(t *testing.T, g *graph.Graph, fs []check.Finding) *report.SarifLog {
	t.Helper()
	doc := report.NewCheckDoc(report.Tool{Name: "stalecheck", Version: "0.1.0"}, g, fs)
	return validLog(t, report.NewSarifLog(doc, report.SarifOptions{}))
}

func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		schema, schemaErr = c.Compile("testdata/sarif-schema-2.1.0.json")
	})
	if schemaErr != nil {
		t.Fatal(schemaErr)
	}
	return schema
}

func schemaErrorOf(t *testing.T, log *report.SarifLog) (error, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := report.WriteSarif(&buf, log); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return sarifSchema(t).Validate(inst), buf.Bytes()
}

func validLog(t *testing.T, log *report.SarifLog) *report.SarifLog {
	t.Helper()
	verr, data := schemaErrorOf(t, log)
	if verr != nil {
		t.Fatalf("SARIF does not validate against the OASIS schema: %v\n%s", verr, data)
	}
	buf := bytes.NewBuffer(data)
	var l report.SarifLog
	if err := json.Unmarshal(buf.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	githubConstraints(t, &l)
	return &l
}

// githubConstraints checks what GitHub code scanning needs beyond the schema (its "SARIF support for
// code scanning" page and the sarif-sdk's GH rules): one run; rules and results within 25,000; each
// result with a ruleId of at most 255 characters that names a rule, a message, 1 to 10 locations with
// an artifact URI, at most 1,000 related locations, each with a message; every URI either relative to
// a base the run defines or an absolute file:// URI.
func githubConstraints(t *testing.T, l *report.SarifLog) {
	t.Helper()
	if len(l.Runs) != 1 {
		t.Fatalf("%d runs", len(l.Runs))
	}
	run := l.Runs[0]
	if len(run.Tool.Driver.Rules) > 25000 || len(run.Results) > 25000 {
		t.Errorf("rules %d, results %d", len(run.Tool.Driver.Rules), len(run.Results))
	}
	checkURI := func(where string, a report.SarifArtifactLocation) {
		u, err := url.Parse(a.URI)
		if err != nil {
			t.Errorf("%s: %q: %v", where, a.URI, err)
			return
		}
		switch {
		case a.URIBaseID != "":
			if _, ok := run.OriginalURIBaseIDs[a.URIBaseID]; !ok || u.IsAbs() || strings.HasPrefix(a.URI, "/") {
				t.Errorf("%s: %q relative to %q: base undefined or URI not relative", where, a.URI, a.URIBaseID)
			}
		case u.Scheme != "file":
			t.Errorf("%s: %q is neither relative to a base nor a file:// URI", where, a.URI)
		}
	}
	for i, r := range run.Results {
		if r.RuleID == "" || len(r.RuleID) > 255 || r.RuleIndex < 0 || run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %d: ruleId %q index %d", i, r.RuleID, r.RuleIndex)
		}
		if r.Message.Text == "" || len(r.Locations) == 0 || len(r.Locations) > 10 || len(r.RelatedLocations) > 1000 {
			t.Errorf("result %d: message %q, %d locations, %d related", i, r.Message.Text, len(r.Locations), len(r.RelatedLocations))
		}
		if r.PartialFingerprints["stalecheck/v1"] == "" {
			t.Errorf("result %d: no partial fingerprint", i)
		}
		for _, loc := range r.Locations {
			checkURI("location", loc.PhysicalLocation.ArtifactLocation)
		}
		for _, loc := range r.RelatedLocations {
			if loc.Message == nil {
				t.Errorf("result %d: related location without a message (GitHub rejects the file)", i)
			}
			checkURI("related location", loc.PhysicalLocation.ArtifactLocation)
		}
	}
	for _, b := range run.OriginalURIBaseIDs {
		if u, err := url.Parse(b.URI); err != nil || u.Scheme != "file" || !strings.HasSuffix(b.URI, "/") {
			t.Errorf("base %q: must be an absolute file:// URI ending in /", b.URI)
		}
	}
}

// Paths with '%', '?', ':' and bytes that are not UTF-8, inside and outside the workspace, give URIs the
// schema's uri and uri-reference formats accept and that resolve back to the same bytes; the schema
// check itself rejects what SARIF does not allow (a level "info").
func TestSarifOddPathsAndSchemaRejects(t *testing.T) {
	ws := "/w/a%b?c:d"
	in := ws + "/src/x\xff y#.c"
	out := "/reg/h%C3/z.c"
	doc := &report.CheckDoc{Envelope: report.Envelope{Tool: report.Tool{Name: "stalecheck", Version: "0.1.0"}}, Workspace: ws,
		Findings: []report.FindingJSON{{Rule: "pending-rebuild", Severity: "info", Message: "m", Subjects: []string{in, out},
			Evidence: []report.EvidenceJSON{{Kind: "input", Path: in, MTimeNS: 1}, {Kind: "declared", Detail: "no path"}}}}}
	log := validLog(t, report.NewSarifLog(doc, report.SarifOptions{IsText: func(string) bool { return false }}))
	run := log.Runs[0]
	r := run.Results[0]
	if r.Level != "note" || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != "src/x%FF%20y%23.c" {
		t.Fatalf("%+v", r.Locations[0])
	}
	if got := resolve(t, run, r.Locations[0].PhysicalLocation.ArtifactLocation); got != in {
		t.Fatalf("resolves to %q, want %q", got, in)
	}
	if got := resolve(t, run, r.RelatedLocations[0].PhysicalLocation.ArtifactLocation); got != out {
		t.Fatalf("resolves to %q, want %q", got, out)
	}
	if r.Properties["evidence_without_path"] == nil {
		t.Fatalf("pathless evidence lost: %+v", r.Properties)
	}
	bad := report.NewSarifLog(doc, report.SarifOptions{})
	bad.Runs[0].Results[0].Level = "info"
	if err, _ := schemaErrorOf(t, bad); err == nil {
		t.Fatal("the schema accepted level \"info\"")
	}
}

// resolve turns an artifact location of the log back into a file path.
func resolve(t *testing.T, run report.SarifRun, a report.SarifArtifactLocation) string {
	t.Helper()
	ref, err := url.Parse(a.URI)
	if err != nil {
		t.Fatal(err)
	}
	if a.URIBaseID != "" {
		base, err := url.Parse(run.OriginalURIBaseIDs[a.URIBaseID].URI)
		if err != nil {
			t.Fatal(err)
		}
		ref = base.ResolveReference(ref)
	}
	return filepath.Clean(ref.Path)
}

func results(run report.SarifRun, rule string) []report.SarifResult {
	var out []report.SarifResult
	for _, r := range run.Results {
		if r.RuleID == rule {
			out = append(out, r)
		}
	}
	return out
}

// A workspace in a folder whose name has a space, '#' and non-ASCII ('%' is covered by
// TestSarifEncodePath: rustc 1.95's rust-lld cannot write a build script into a folder whose name holds
// '%', "cannot open output file"): the clean build gives a valid
// log with every rule and no result; after a native edit the pending-rebuild error is located at the
// edited source by a URI relative to %SRCROOT% that resolves back to the file, and the fingerprints
// stay the same when only mtimes change. An unreadable record is a result and a tool execution
// notification.
func TestSarifRealBuildOddWorkspacePath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my ws #1 ü")
	p := testutil.ProjectAt(t, dir)
	files := testutil.SysCrate("seed-sys", "groth16_cuda", map[string]string{"cuda/groth16.c": "int native_run(void) { return 1; }\n"},
		nil, []string{"cargo:rerun-if-changed=build.rs", "cargo:rerun-if-changed=cuda"})
	for rel, c := range files {
		p.Write(rel, c)
	}
	p.Cargo("build", "--release")

	fs, g := p.Check()
	l := validSarif(t, g, fs)
	run := l.Runs[0]
	if len(run.Results) != 0 {
		t.Fatalf("clean build: %d results:\n%s", len(run.Results), testutil.Dump(fs))
	}
	if len(run.Tool.Driver.Rules) != len(check.Rules) || !run.Invocations[0].ExecutionSuccessful {
		t.Fatalf("clean build: %d rules, invocation %+v", len(run.Tool.Driver.Rules), run.Invocations[0])
	}
	wantBase := "file://" + strings.ReplaceAll(filepath.Dir(dir), " ", "%20") + "/my%20ws%20%231%20%C3%BC/"
	if got := run.OriginalURIBaseIDs["%SRCROOT%"].URI; got != wantBase {
		t.Fatalf("%%SRCROOT%% = %q, want %q", got, wantBase)
	}

	src := p.Path("seed-sys/cuda/groth16.c")
	p.Write("seed-sys/cuda/groth16.c", "int native_run(void) { return 2; }\n")
	fs, g = p.Check()
	l = validSarif(t, g, fs)
	run = l.Runs[0]
	pend := results(run, "pending-rebuild")
	if len(pend) == 0 {
		t.Fatalf("no pending-rebuild result after a native edit:\n%s", testutil.Dump(fs))
	}
	r := pend[0]
	loc := r.Locations[0].PhysicalLocation
	// The subject is what the script declared (rerun-if-changed=cuda): a folder, located by its
	// artifact alone (no line region); the edited file is among the related locations.
	if r.Level != "error" || loc.ArtifactLocation.URIBaseID != "%SRCROOT%" || loc.ArtifactLocation.URI != "seed-sys/cuda" || loc.Region != nil {
		t.Fatalf("pending-rebuild result: level %s, location %+v region %+v", r.Level, loc.ArtifactLocation, loc.Region)
	}
	if got := resolve(t, run, loc.ArtifactLocation); got != filepath.Dir(src) {
		t.Fatalf("location resolves to %q, want %q", got, filepath.Dir(src))
	}
	// Every related location resolves to a path the finding names, and the input's mtime is there in ns.
	var f check.Finding
	for _, x := range fs {
		if x.Rule == "pending-rebuild" {
			f = x
			break
		}
	}
	paths := map[string]bool{}
	for _, s := range append(append([]string{}, f.Subjects...), f.Roots...) {
		paths[s] = true
	}
	for _, e := range f.Evidence {
		paths[e.Path] = true
	}
	st, _ := os.Stat(src)
	sawMtime := false
	for _, rl := range r.RelatedLocations {
		if p := resolve(t, run, rl.PhysicalLocation.ArtifactLocation); !paths[p] {
			t.Errorf("related location %q (%s) is not a path of the finding", p, rl.Message.Text)
		}
		// A declared folder is known by its newest file: the folder's evidence carries the source's mtime,
		// in the location's properties (the message leaves times out).
		if rl.Properties["mtime"] == st.ModTime().UTC().Format(time.RFC3339Nano) {
			sawMtime = true
		}
		if strings.Contains(rl.Message.Text, itoa(st.ModTime().UnixNano())) || strings.Contains(rl.Message.Text, "blake3:") {
			t.Errorf("related location message carries a volatile value: %s", rl.Message.Text)
		}
	}
	if !sawMtime {
		for _, rl := range r.RelatedLocations {
			t.Logf("related %s: %s", rl.PhysicalLocation.ArtifactLocation.URI, rl.Message.Text)
		}
		t.Errorf("no related location gives the edited source's mtime %d ns", st.ModTime().UnixNano())
	}
	if r.Properties["fix"] == nil {
		t.Errorf("no fix in the result's properties: %+v", r.Properties)
	}

	// Same edit, new mtime: same fingerprints, same messages (the times are in the properties, whose
	// full message changes).
	before := map[string]string{}
	beforeFull := map[string]any{}
	for _, x := range run.Results {
		before[x.PartialFingerprints["stalecheck/v1"]] = x.Message.Text
		beforeFull[x.PartialFingerprints["stalecheck/v1"]] = x.Properties["message"]
	}
	p.Write("seed-sys/cuda/groth16.c", "int native_run(void) { return 2; }\n")
	fs, g = p.Check()
	run = validSarif(t, g, fs).Runs[0]
	if len(run.Results) != len(before) {
		t.Fatalf("%d results, %d before", len(run.Results), len(before))
	}
	changed := 0
	for _, x := range run.Results {
		msg, ok := before[x.PartialFingerprints["stalecheck/v1"]]
		if !ok {
			t.Errorf("fingerprint of %s changed with the mtime", x.RuleID)
		}
		if msg != x.Message.Text {
			t.Errorf("the message of %s changed with the mtime:\n%s\n%s", x.RuleID, msg, x.Message.Text)
		}
		if beforeFull[x.PartialFingerprints["stalecheck/v1"]] != x.Properties["message"] {
			changed++
		}
	}
	if changed == 0 {
		t.Errorf("no full message changed with the mtime (the test would not show that messages and fingerprints ignore it)")
	}

	// A corrupt fingerprint record: an unreadable-record result, a notification, still successful.
	fps := p.FingerprintFiles("release", "seed-sys", "lib-seed_sys.json")
	if len(fps) == 0 {
		t.Fatal("no lib-seed_sys.json fingerprint")
	}
	os.WriteFile(fps[0], []byte("{\"rustc\": 1, trunc"), 0o644)
	fs, g = p.Check()
	run = validSarif(t, g, fs).Runs[0]
	if len(results(run, "unreadable-record")) == 0 {
		t.Fatalf("no unreadable-record result:\n%s", testutil.Dump(fs))
	}
	inv := run.Invocations[0]
	found := false
	for _, n := range inv.ToolExecutionNotifications {
		if n.AssociatedRule != nil && n.AssociatedRule.ID == "unreadable-record" && n.Level == "warning" && strings.Contains(n.Message.Text, filepath.Base(fps[0])) &&
			resolve(t, run, n.Locations[0].PhysicalLocation.ArtifactLocation) == fps[0] {
			found = true
		}
	}
	if !inv.ExecutionSuccessful || !found {
		t.Fatalf("invocation: %+v", inv)
	}
}

// Debian's cc crate through a directory source, the target folder outside the workspace: an edit to
// an undeclared header gives untracked-input-changed errors located at the header (relative to
// %SRCROOT%), and the binaries they affect, outside the workspace, are absolute file:// URIs.
func TestSarifRealBuildTargetOutsideWorkspace(t *testing.T) {
	p := testutil.NewProject(t, testutil.CCSys(t))
	target := filepath.Join(t.TempDir(), "out side")
	p.Env = append(p.Env, "CARGO_TARGET_DIR="+target)
	p.Cargo("build", "--release")
	p.Edit("fastmath-sys/native/include/x.h", "fastmath banner v1", "fastmath banner v2")
	fs, g := p.Check()
	run := validSarif(t, g, fs).Runs[0]
	un := results(run, "untracked-input-changed")
	if len(un) == 0 {
		t.Fatalf("no untracked-input-changed result:\n%s", testutil.Dump(fs))
	}
	r := un[0]
	loc := r.Locations[0].PhysicalLocation.ArtifactLocation
	if r.Level != "error" || loc.URIBaseID != "%SRCROOT%" || loc.URI != "fastmath-sys/native/include/x.h" {
		t.Fatalf("untracked-input-changed: level %s location %+v", r.Level, loc)
	}
	abs := 0
	for _, rl := range r.RelatedLocations {
		a := rl.PhysicalLocation.ArtifactLocation
		if a.URIBaseID == "" {
			abs++
			if !strings.HasPrefix(a.URI, "file://"+filepath.Dir(target)+"/out%20side/") {
				t.Errorf("absolute URI %q is not under the target folder %s", a.URI, target)
			}
			if got := resolve(t, run, a); !strings.HasPrefix(got, target+"/") {
				t.Errorf("%q resolves to %q", a.URI, got)
			}
		}
	}
	if abs == 0 {
		t.Errorf("no related location outside the workspace: %+v", r.RelatedLocations)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
