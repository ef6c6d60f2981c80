package report

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"time"
	"unicode/utf8"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/check"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// SchemaVersion is the version of the JSON documents stalecheck writes (docs/json-schema.md).
const SchemaVersion = 1

// Tool identifies the program in every envelope.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Envelope is the part every JSON document shares.
type Envelope struct {
	SchemaVersion int    `json:"schema_version"`
	Tool          Tool   `json:"tool"`
	Command       string `json:"command"`
}

// CheckDoc is the JSON document of `stalecheck check`.
type CheckDoc struct {
	Envelope
	Workspace string         `json:"workspace"`
	TargetDir string         `json:"target_dir"`
	BuildDir  string         `json:"build_dir"`
	Profiles  []string       `json:"profiles"`
	Roots     []RootJSON     `json:"roots"`
	Findings  []FindingJSON  `json:"findings"`
	Summary   map[string]int `json:"summary"`
	Notes     []string       `json:"notes"`
}

// RootJSON is one root in the check document.
type RootJSON struct {
	Path      string   `json:"path"`
	PathBytes string   `json:"path_bytes,omitempty"`
	Kind      string   `json:"kind"`
	Unit      string   `json:"unit,omitempty"`
	Profile   string   `json:"profile,omitempty"`
	Features  []string `json:"features"`
	TiedBy    string   `json:"tied_by,omitempty"`
	MTimeNS   int64    `json:"mtime_ns"`
	MTime     string   `json:"mtime"`
}

// FindingJSON is one finding.
type FindingJSON struct {
	Rule          string         `json:"rule"`
	Severity      string         `json:"severity"`
	Message       string         `json:"message"`
	Subjects      []string       `json:"subjects"`
	SubjectsBytes []string       `json:"subjects_bytes,omitempty"`
	Roots         []string       `json:"roots"`
	Evidence      []EvidenceJSON `json:"evidence"`
	Fix           string         `json:"fix"`
	// System names the build system of the finding's step where it is not Cargo ("make", "ninja", "go").
	System string `json:"system,omitempty"`
	// More lists, when findings of this rule and cause were grouped into this one, the first subject of
	// each of the others (their messages and evidence: check --all); Count is 1 + len(More).
	More []string `json:"more_subjects,omitempty"`
	// Change is the file the user changes to settle the finding (a source, build script, manifest or
	// makefile; never a build output); absent when none is known.
	Change string `json:"change,omitempty"`
	Count  int    `json:"count"`
}

// EvidenceJSON is one fact behind a finding. Times are integer nanoseconds since the epoch with an
// RFC 3339 copy; a path that is not valid UTF-8 also carries its raw bytes in base64.
type EvidenceJSON struct {
	Kind      string `json:"kind"`
	Path      string `json:"path,omitempty"`
	PathBytes string `json:"path_bytes,omitempty"`
	MTimeNS   int64  `json:"mtime_ns,omitempty"`
	MTime     string `json:"mtime,omitempty"`
	Size      int64  `json:"size,omitempty"`
	How       string `json:"how,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

func rfc3339(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

func pathBytes(p string) string {
	if utf8.ValidString(p) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(p))
}

// unitLabel names a root's unit for people and JSON.
func unitLabel(r *graph.Root) string {
	if r.Step == nil || r.Step.System != "" && r.Step.System != unit.System {
		return "" // a Make or Ninja step has no unit
	}
	return r.Step.Package + "-" + unit.Of(r.Step).Hash
}

// NewCheckDoc builds the check document.
func NewCheckDoc(tool Tool, g *graph.Graph, fs []check.Finding) *CheckDoc {
	d := &CheckDoc{
		Envelope:  Envelope{SchemaVersion: SchemaVersion, Tool: tool, Command: "check"},
		Workspace: g.Workspace, TargetDir: g.TargetDir, BuildDir: g.BuildDir, Profiles: g.ProfileDirs,
		Roots: []RootJSON{}, Findings: []FindingJSON{}, Notes: g.Notes,
		Summary: map[string]int{"error": 0, "warning": 0, "info": 0},
	}
	if d.Profiles == nil {
		d.Profiles = []string{}
	}
	if d.Notes == nil {
		d.Notes = []string{}
	}
	for _, r := range g.Roots {
		rj := RootJSON{Path: r.File.Path, PathBytes: pathBytes(r.File.Path), Kind: r.Kind, Unit: unitLabel(r), TiedBy: r.TiedBy,
			MTimeNS: r.File.MTimeNS, MTime: rfc3339(r.File.MTimeNS), Features: []string{}}
		if r.Step != nil {
			rj.Profile = r.Step.ProfileDir
			if unit.Of(r.Step).Features != nil {
				rj.Features = unit.Of(r.Step).Features
			}
		}
		d.Roots = append(d.Roots, rj)
	}
	for _, f := range fs {
		fj := FindingJSON{Rule: f.Rule, Severity: f.Severity.String(), Message: f.Message, Subjects: f.Subjects,
			Roots: f.Roots, Fix: f.Fix, Evidence: []EvidenceJSON{}, System: f.System, More: f.More, Count: f.Count(), Change: f.Change}
		if fj.Subjects == nil {
			fj.Subjects = []string{}
		}
		if fj.Roots == nil {
			fj.Roots = []string{}
		}
		invalid := false
		for _, s := range f.Subjects {
			if !utf8.ValidString(s) {
				invalid = true
			}
		}
		if invalid {
			for _, s := range f.Subjects {
				fj.SubjectsBytes = append(fj.SubjectsBytes, base64.StdEncoding.EncodeToString([]byte(s)))
			}
		}
		for _, e := range f.Evidence {
			fj.Evidence = append(fj.Evidence, EvidenceJSON{Kind: e.Kind, Path: e.Path, PathBytes: pathBytes(e.Path),
				MTimeNS: e.MTimeNS, MTime: rfc3339(e.MTimeNS), Size: e.Size, How: e.How, Detail: e.Detail})
		}
		d.Findings = append(d.Findings, fj)
		d.Summary[f.Severity.String()] += f.Count()
	}
	return d
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
