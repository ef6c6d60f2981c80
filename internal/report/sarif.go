package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// SARIF 2.1.0 (OASIS Standard, errata 01: https://docs.oasis-open.org/sarif/sarif/v2.1.0/) output of
// `stalecheck check --format sarif`. The log is built from the check document (NewCheckDoc), so it
// says exactly what the JSON says: one run, one reportingDescriptor per rule of check.Rules (in that
// order, so a result's ruleIndex is the rule's place there), one result per finding.
//
// Locations: a path inside the workspace is a URI relative to it with uriBaseId "%SRCROOT%", and
// run.originalUriBaseIds gives %SRCROOT% as the workspace's file:// URI (with a trailing slash);
// other paths (the registry under $CARGO_HOME, a target folder elsewhere) are absolute file:// URIs.
// Every byte outside RFC 3986's unreserved set (ALPHA, DIGIT, "-", ".", "_", "~") and "/" is
// percent-encoded, so spaces, '#', '%', '?', ':' and non-ASCII (as UTF-8 bytes, or the raw bytes of a
// path that is not UTF-8) survive. A result's primary location is its first subject (the file the
// finding is about); the other subjects, the roots it affects and every evidence item with a path are
// relatedLocations, each with a message (the evidence kind, how the input is known, its mtime in
// nanoseconds with an RFC 3339 copy, its size in bytes, the detail: digests and baselines).
//
// Code scanning services: a primary location that is a text file carries region.startLine 1 (GitHub
// shows a result only on a line; stalecheck's claims are about whole files, and line 1 stands for the
// file); a folder or binary file is located by its artifact alone. partialFingerprints
// "stalecheck/v1" hashes the rule and the subjects in their URI form (no mtimes, no messages), so a
// result keeps its identity across runs and checkouts. The fix (a command, not a text edit) does not
// fit SARIF's fix object (artifactChanges with replacements) and is in the result's properties.
// Unreadable records (unreadable-record findings) and the graph's notes are also
// invocations[0].toolExecutionNotifications; executionSuccessful is true whenever the check ran to
// its end (a failed check writes no log).

// SarifSchemaURI is the OASIS schema the log names in "$schema".
const SarifSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// SrcRoot is the uriBaseId of paths inside the workspace.
const SrcRoot = "%SRCROOT%"

// maxRelated bounds relatedLocations per result (GitHub code scanning keeps at most 1,000; the
// number left out is in the result's properties).
const maxRelated = 1000

// SarifLog is a SARIF 2.1.0 log with one run.
type SarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []SarifRun `json:"runs"`
}

// SarifRun is the one run of `check`.
type SarifRun struct {
	Tool               SarifTool                        `json:"tool"`
	Invocations        []SarifInvocation                `json:"invocations"`
	OriginalURIBaseIDs map[string]SarifArtifactLocation `json:"originalUriBaseIds,omitempty"`
	Results            []SarifResult                    `json:"results"`
	Properties         map[string]any                   `json:"properties,omitempty"`
}

// SarifTool is the tool object; Driver.Rules lists every rule stalecheck has.
type SarifTool struct {
	Driver SarifDriver `json:"driver"`
}

// SarifDriver is the toolComponent of stalecheck itself.
type SarifDriver struct {
	Name    string                `json:"name"`
	Version string                `json:"version,omitempty"`
	Rules   []SarifRuleDescriptor `json:"rules"`
}

// SarifRuleDescriptor is a reportingDescriptor for one rule.
type SarifRuleDescriptor struct {
	ID                   string            `json:"id"`
	Name                 string            `json:"name"`
	ShortDescription     SarifMessage      `json:"shortDescription"`
	FullDescription      SarifMessage      `json:"fullDescription"`
	Help                 SarifMessage      `json:"help"`
	DefaultConfiguration SarifRuleConfig   `json:"defaultConfiguration"`
	Properties           map[string]string `json:"properties,omitempty"`
}

// SarifRuleConfig is a reportingConfiguration; Level is "error", "warning" or "note".
type SarifRuleConfig struct {
	Level string `json:"level"`
}

// SarifMessage is a message or multiformatMessageString (Text, optionally Markdown).
type SarifMessage struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

// SarifInvocation says whether the check ran to its end and what it could not read.
type SarifInvocation struct {
	ExecutionSuccessful        bool                   `json:"executionSuccessful"`
	WorkingDirectory           *SarifArtifactLocation `json:"workingDirectory,omitempty"`
	ToolExecutionNotifications []SarifNotification    `json:"toolExecutionNotifications"`
}

// SarifNotification is one toolExecutionNotification: an unreadable record (level "warning", with
// its location and the rule unreadable-record) or a note on how the records were read ("note").
type SarifNotification struct {
	Level          string              `json:"level"`
	Message        SarifMessage        `json:"message"`
	Locations      []SarifLocation     `json:"locations,omitempty"`
	AssociatedRule *SarifDescriptorRef `json:"associatedRule,omitempty"`
	Properties     map[string]any      `json:"properties,omitempty"`
}

// SarifDescriptorRef is a reportingDescriptorReference to a rule of the driver.
type SarifDescriptorRef struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
}

// SarifResult is one finding.
type SarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             SarifMessage      `json:"message"`
	Locations           []SarifLocation   `json:"locations"`
	RelatedLocations    []SarifLocation   `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

// SarifLocation is a location: a physical location and, for related locations, an id and a message.
type SarifLocation struct {
	ID               *int                  `json:"id,omitempty"`
	PhysicalLocation SarifPhysicalLocation `json:"physicalLocation"`
	Message          *SarifMessage         `json:"message,omitempty"`
	// Properties hold an evidence item's volatile values (mtime, size, the detail with its digests),
	// which the message leaves out so that it reads the same from one run to the next.
	Properties map[string]any `json:"properties,omitempty"`
}

// SarifPhysicalLocation is an artifact and, for a text file, region.startLine.
type SarifPhysicalLocation struct {
	ArtifactLocation SarifArtifactLocation `json:"artifactLocation"`
	Region           *SarifRegion          `json:"region,omitempty"`
}

// SarifArtifactLocation is a URI, relative to UriBaseID when that is set.
type SarifArtifactLocation struct {
	URI         string        `json:"uri"`
	URIBaseID   string        `json:"uriBaseId,omitempty"`
	Description *SarifMessage `json:"description,omitempty"`
}

// SarifRegion is a region by line (1-based).
type SarifRegion struct {
	StartLine int `json:"startLine"`
}

// SarifOptions tune the log.
type SarifOptions struct {
	// IsText reports whether path is a regular text file (gets region.startLine 1). nil means: a
	// regular file whose first 8 KiB hold no NUL byte (read through safeio; a FIFO is never opened).
	IsText func(path string) bool
}

// SarifLevel maps a severity name of the check document to a SARIF level: error→error,
// warning→warning, info→note.
func SarifLevel(severity string) string {
	switch severity {
	case "error":
		return "error"
	case "warning":
		return "warning"
	}
	return "note"
}

// NewSarifLog builds the SARIF log of a check document.
func NewSarifLog(doc *CheckDoc, opt SarifOptions) *SarifLog {
	if opt.IsText == nil {
		opt.IsText = isTextFile
	}
	u := uriMaker{workspace: doc.Workspace, targetDir: doc.TargetDir, buildDir: doc.BuildDir}
	run := SarifRun{
		Tool:    SarifTool{Driver: SarifDriver{Name: doc.Tool.Name, Version: doc.Tool.Version, Rules: SarifRules()}},
		Results: []SarifResult{},
		Properties: map[string]any{
			"workspace": doc.Workspace, "target_dir": doc.TargetDir, "build_dir": doc.BuildDir,
			"profiles": doc.Profiles, "summary": doc.Summary,
		},
	}
	inv := SarifInvocation{ExecutionSuccessful: true, ToolExecutionNotifications: []SarifNotification{}}
	if doc.Workspace != "" {
		base := SarifArtifactLocation{URI: FileURI(doc.Workspace, true), Description: &SarifMessage{Text: "the Cargo workspace root"}}
		run.OriginalURIBaseIDs = map[string]SarifArtifactLocation{SrcRoot: base}
		inv.WorkingDirectory = &SarifArtifactLocation{URI: base.URI}
	}
	index := map[string]int{}
	for i, r := range run.Tool.Driver.Rules {
		index[r.ID] = i
	}
	for _, f := range doc.Findings {
		res := newSarifResult(f, index, u, opt)
		run.Results = append(run.Results, res)
		if f.Rule == "unreadable-record" {
			// The notification is about reading: it names the record that could not be read.
			locs := res.Locations
			if len(f.Subjects) > 0 {
				locs = []SarifLocation{{PhysicalLocation: SarifPhysicalLocation{ArtifactLocation: u.artifact(f.Subjects[0])}}}
			}
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, SarifNotification{
				Level: "warning", Message: SarifMessage{Text: f.Message}, Locations: locs,
				AssociatedRule: &SarifDescriptorRef{ID: f.Rule, Index: res.RuleIndex},
			})
		}
	}
	for _, n := range doc.Notes {
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, SarifNotification{Level: "note", Message: SarifMessage{Text: n}})
	}
	run.Invocations = []SarifInvocation{inv}
	return &SarifLog{Schema: SarifSchemaURI, Version: "2.1.0", Runs: []SarifRun{run}}
}

// WriteSarif writes the log as indented JSON followed by a newline.
func WriteSarif(w io.Writer, l *SarifLog) error { return WriteJSON(w, l) }

// SarifRules returns one reportingDescriptor per rule of check.Rules, in that order: id, a PascalCase
// name, the one-sentence summary, the README's meaning (fullDescription, plain text) and severity and
// meaning (help, text and Markdown), and the rule's usual severity as its default level.
func SarifRules() []SarifRuleDescriptor {
	out := make([]SarifRuleDescriptor, 0, len(check.Rules))
	for _, r := range check.Rules {
		t, ok := ruleTexts[r.Name]
		if !ok {
			t = ruleText{Short: r.Name, Severity: r.Severity.String(), Meaning: r.Name}
		}
		out = append(out, SarifRuleDescriptor{
			ID: r.Name, Name: pascal(r.Name),
			ShortDescription: SarifMessage{Text: t.Short},
			FullDescription:  SarifMessage{Text: plain(t.Meaning)},
			Help: SarifMessage{Text: "Severity: " + plain(t.Severity) + ".\n\n" + plain(t.Meaning) + ".",
				Markdown: "**Severity**: " + t.Severity + ".\n\n" + t.Meaning + "."},
			DefaultConfiguration: SarifRuleConfig{Level: SarifLevel(r.Severity.String())},
		})
	}
	return out
}

// ruleText is one row of the README's rules table plus a summary.
type ruleText struct {
	Short, Severity, Meaning string
}

func newSarifResult(f FindingJSON, index map[string]int, u uriMaker, opt SarifOptions) SarifResult {
	ri, ok := index[f.Rule]
	if !ok {
		ri = -1 // a rule check.Rules does not list (never, as long as check reports only its rules)
	}
	// The message code scanning shows: no times or digests (they change with every build and would
	// rewrite every alert's text), then the fix, which SARIF's fixes (text replacements) cannot hold.
	text := StableText(f.Message)
	if len(f.More) > 0 {
		// One fault, one alert: the files of the same rule and fix are named in relatedLocations.
		text += fmt.Sprintf(" (and %s more of the same cause)", Thousands(len(f.More)))
	}
	if f.Fix != "" {
		text += "\n\nFix: " + StableText(f.Fix)
	}
	res := SarifResult{
		RuleID: f.Rule, RuleIndex: ri, Level: SarifLevel(f.Severity), Message: SarifMessage{Text: text},
		PartialFingerprints: map[string]string{"stalecheck/v1": u.fingerprint(f)},
		Properties:          map[string]any{"severity": f.Severity, "subjects": f.Subjects, "roots": f.Roots, "message": f.Message},
	}
	if f.Fix != "" {
		res.Properties["fix"] = f.Fix
	}
	primary := ""
	switch {
	case f.Change != "" && !u.generated(f.Change):
		// The file the user changes (check.Finding.Change): a source, build script or manifest.
		primary = f.Change
	case len(f.Subjects) > 0:
		// The file the user changes: the first subject outside the target and build folders (which
		// code scanning cannot show: they are not in the repository), else the first.
		primary = f.Subjects[0]
		for _, sub := range f.Subjects {
			if !u.generated(sub) {
				primary = sub
				break
			}
		}
	case len(f.Roots) > 0:
		primary = f.Roots[0]
	default:
		for _, e := range f.Evidence {
			if e.Path != "" {
				primary = e.Path
				break
			}
		}
	}
	if primary == "" {
		// Nothing names a file: the finding is about the workspace's build as a whole.
		primary = u.workspace
		if primary == "" {
			primary = "/"
		}
	}
	loc := SarifLocation{PhysicalLocation: SarifPhysicalLocation{ArtifactLocation: u.artifact(primary)}}
	if opt.IsText(primary) {
		loc.PhysicalLocation.Region = &SarifRegion{StartLine: 1}
	}
	res.Locations = []SarifLocation{loc}

	var related []SarifLocation
	add := func(path, msg string, props map[string]any) {
		id := len(related)
		related = append(related, SarifLocation{ID: &id, PhysicalLocation: SarifPhysicalLocation{ArtifactLocation: u.artifact(path)},
			Message: &SarifMessage{Text: msg}, Properties: props})
	}
	for i, s := range f.Subjects {
		if s != primary {
			add(s, fmt.Sprintf("subject %d of the finding", i+1), nil)
		}
	}
	for _, r := range f.Roots {
		add(r, "a binary (root) this finding affects", nil)
	}
	for _, m := range f.More {
		add(m, "another file of the same cause", nil)
	}
	if len(f.More) > 0 {
		res.Properties["count"] = f.Count
	}
	var pathless []string
	for _, e := range f.Evidence {
		if e.Path == "" {
			pathless = append(pathless, evidenceText(e))
			continue
		}
		props := map[string]any{"evidence": evidenceText(e)}
		if e.MTimeNS != 0 {
			props["mtime_ns"] = e.MTimeNS // JSON readers that decode numbers as float64 lose its last digits:
			props["mtime"] = time.Unix(0, e.MTimeNS).UTC().Format(time.RFC3339Nano)
		}
		if e.Size != 0 {
			props["size"] = e.Size
		}
		add(e.Path, evidenceStableText(e), props)
	}
	if len(pathless) > 0 {
		res.Properties["evidence_without_path"] = pathless
	}
	if len(related) > maxRelated {
		res.Properties["related_locations_left_out"] = len(related) - maxRelated
		related = related[:maxRelated]
	}
	res.RelatedLocations = related
	return res
}

// evidenceStableText is an evidence item as one line without what changes from build to build (its
// mtime, size, times and digests in its detail): "input (known by: declared, depfile): <detail>".
func evidenceStableText(e EvidenceJSON) string {
	t := e.Kind
	if e.How != "" {
		t += " (known by: " + e.How + ")"
	}
	if d := StableText(e.Detail); d != "" {
		t += ": " + d
	}
	return t
}

// volatile matches what changes from one build to the next in a message: a time (RFC 3339, with the
// word that introduces it), a digest.
var (
	volatileTime = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?: (?:at|from|since|started|recorded at))? ?\(?\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})\)?`)
	})
	volatileDigest = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(?:blake3|sha256):[0-9a-f]{16,}`) })
)

// StableText is s without times and digests: what code scanning shows stays the same from one build to
// the next (the values are in the result's and the locations' properties).
func StableText(s string) string {
	s = volatileTime().ReplaceAllString(s, "")
	s = volatileDigest().ReplaceAllString(s, "a digest")
	return s
}

// evidenceText is an evidence item as one line: "input (known by: declared, depfile): mtime
// 1700000000123456789 ns (2023-11-14T22:13:20.123456789Z); 42 bytes; <detail>".
func evidenceText(e EvidenceJSON) string {
	var b strings.Builder
	b.WriteString(e.Kind)
	if e.How != "" {
		b.WriteString(" (known by: " + e.How + ")")
	}
	var parts []string
	if e.MTimeNS != 0 {
		parts = append(parts, fmt.Sprintf("mtime %d ns (%s)", e.MTimeNS, time.Unix(0, e.MTimeNS).UTC().Format(time.RFC3339Nano)))
	}
	if e.Size != 0 {
		parts = append(parts, fmt.Sprintf("%d bytes", e.Size))
	}
	if e.Detail != "" {
		parts = append(parts, e.Detail)
	}
	if len(parts) > 0 {
		b.WriteString(": " + strings.Join(parts, "; "))
	}
	return b.String()
}

// uriMaker turns absolute paths into artifact locations.
type uriMaker struct{ workspace, targetDir, buildDir string }

// generated reports whether path lies in the target or build folder (outputs, not the repository's files).
func (u uriMaker) generated(path string) bool {
	for _, d := range []string{u.targetDir, u.buildDir} {
		if d != "" && (path == d || strings.HasPrefix(path, d+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

// rel returns path relative to the workspace, and whether it lies inside it.
func (u uriMaker) rel(path string) (string, bool) {
	if u.workspace == "" || !filepath.IsAbs(path) {
		return "", false
	}
	r, err := filepath.Rel(u.workspace, path)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", false
	}
	if r == "." {
		r = ""
	}
	return r, true
}

func (u uriMaker) artifact(path string) SarifArtifactLocation {
	if r, ok := u.rel(path); ok {
		return SarifArtifactLocation{URI: EncodePath(r), URIBaseID: SrcRoot}
	}
	return SarifArtifactLocation{URI: FileURI(path, false)}
}

// fingerprint hashes the rule and the subjects as the log writes them (relative to %SRCROOT% inside
// the workspace): SHA-256, the first 16 bytes in hex.
func (u uriMaker) fingerprint(f FindingJSON) string {
	h := sha256.New()
	h.Write([]byte(f.Rule))
	for _, s := range f.Subjects {
		h.Write([]byte{0})
		a := u.artifact(s)
		h.Write([]byte(a.URIBaseID + ":" + a.URI))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// FileURI is the file:// URI of an absolute path (percent-encoded as EncodePath does), with a
// trailing slash when dir is set.
func FileURI(path string, dir bool) string {
	p := filepath.ToSlash(filepath.Clean(path))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if dir && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return "file://" + EncodePath(p)
}

// EncodePath percent-encodes a path for a URI (RFC 3986 §2.1, §3.3): every byte but the unreserved
// characters and "/" becomes %XX (upper-case hex), byte by byte, so a path that is not UTF-8 keeps its
// bytes.
func EncodePath(p string) string {
	const hexdig = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || c == '/' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexdig[c>>4])
		b.WriteByte(hexdig[c&15])
	}
	return b.String()
}

// pascal turns a rule id into a reportingDescriptor name: untracked-input-changed →
// UntrackedInputChanged.
func pascal(id string) string {
	var b strings.Builder
	for _, w := range strings.Split(id, "-") {
		if w == "" {
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// plain drops the Markdown code marks of the README's text.
func plain(md string) string { return strings.ReplaceAll(md, "`", "") }

func isTextFile(path string) bool {
	f, err := safeio.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 8192)
	n, _ := io.ReadFull(f, buf)
	if n == 0 {
		return false
	}
	for _, c := range buf[:n] {
		if c == 0 {
			return false
		}
	}
	return true
}
