package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

type whichFlags struct {
	lib, format, targetDir, buildDir string
	candidates                       []string
}

func newWhichCmd(st Streams) *cobra.Command {
	var fl whichFlags
	cmd := &cobra.Command{
		Use:   "which BINARY",
		Short: "Prove from the binary's bytes which copy of each native library is inside it",
		Long: `which finds the copies of each native static library the binary links (every build/*/out/
archive of that name in the Cargo target folder, and the rlibs that bundle one), or takes them from
--candidate, and says which copy's distinguishing content (strings, symbols, CUDA fatbinary entries,
code with relocations masked) is inside the binary.

Exit status: 0 answered, 2 error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runWhich(st, args[0], fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.lib, "lib", "", "only this library (link name groth16_cuda or file name libgroth16_cuda.a)")
	f.StringArrayVar(&fl.candidates, "candidate", nil, "a candidate copy (archive, rlib or object); repeat; skips the search in the target folder")
	f.StringVar(&fl.format, "format", "text", "output format: text or json")
	f.StringVar(&fl.targetDir, "target-dir", "", "the target folder (default: as Cargo finds it from the binary's folder)")
	f.StringVar(&fl.buildDir, "build-dir", "", "the build folder (Cargo's build.build-dir)")
	return cmd
}

// whichLibrary is one library's answer, for both outputs.
type whichLibrary struct {
	Name       string           `json:"name"`
	Outcome    evidence.Outcome `json:"outcome"`
	Confidence string           `json:"confidence"`
	Notes      []string         `json:"notes"`
	Candidates []whichCandidate `json:"candidates"`
	result     *evidence.Result `json:"-"`
	copies     []evidence.Copy  `json:"-"`
}

type whichCandidate struct {
	Path          string          `json:"path"`
	Size          int64           `json:"size"`
	MTimeNS       int64           `json:"mtime_ns"`
	MTime         string          `json:"mtime"`
	Configuration string          `json:"configuration"`
	Matched       bool            `json:"matched"`
	Evidence      []whichEvidence `json:"evidence"`
}

type whichEvidence struct {
	Kind     string `json:"kind"`
	Feature  string `json:"feature"`
	Member   string `json:"member,omitempty"`
	Presence string `json:"presence"`
}

type whichDoc struct {
	report.Envelope
	Binary    string         `json:"binary"`
	Libraries []whichLibrary `json:"libraries"`
}

func runWhich(st Streams, binary string, fl whichFlags) error {
	// Matching a large binary allocates many small fatbin entries; collect garbage less often.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	if fl.format != "text" && fl.format != "json" {
		return &ExitError{2, fmt.Errorf("--format %q: want text or json", fl.format)}
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return &ExitError{2, err}
	}
	if _, err := os.Stat(abs); err != nil {
		return &ExitError{2, err}
	}
	libs, err := whichLibraries(abs, fl)
	if err != nil {
		return &ExitError{2, err}
	}
	b, err := evidence.OpenBinary(abs)
	if err != nil {
		return &ExitError{2, err}
	}
	defer b.Close()
	var out []whichLibrary
	for _, lib := range libs {
		wl, err := answerLibrary(b, lib)
		if err != nil {
			return &ExitError{2, err}
		}
		out = append(out, wl)
	}
	if fl.format == "json" {
		doc := whichDoc{Envelope: report.Envelope{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "which"},
			Binary: abs, Libraries: out}
		if doc.Libraries == nil {
			doc.Libraries = []whichLibrary{}
		}
		if err := report.WriteJSON(st.Out, doc); err != nil {
			return &ExitError{2, err}
		}
		return nil
	}
	writeWhichText(st.Out, abs, out)
	return nil
}

// whichLibraries finds the libraries and their copies: from --candidate, else from the Cargo build
// folder found from the binary's folder.
func whichLibraries(binary string, fl whichFlags) ([]evidence.Library, error) {
	if len(fl.candidates) > 0 {
		name := fl.lib
		if name == "" {
			name = evidence.LibName(fl.candidates[0])
		}
		lib := evidence.Library{Name: evidence.LibName(name)}
		for _, c := range fl.candidates {
			p, _ := filepath.Abs(c)
			st, err := os.Stat(p)
			if err != nil {
				return nil, fmt.Errorf("candidate %s: %w", c, err)
			}
			lib.Copies = append(lib.Copies, evidence.Copy{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano()})
		}
		return []evidence.Library{lib}, nil
	}
	layout, err := cargo.Locate(filepath.Dir(binary), cargo.LocateOptions{TargetDir: fl.targetDir, BuildDir: fl.buildDir})
	if err != nil {
		return nil, fmt.Errorf("%w; give the copies with --candidate", err)
	}
	g, err := cargo.Read(layout, cargo.ReadOptions{SkipNative: true})
	if err != nil {
		return nil, err
	}
	libs := evidence.Libraries(g, evidence.FindRoot(g, binary), fl.lib)
	if len(libs) == 0 {
		return nil, fmt.Errorf("no native static library found for %s in %s; give --lib or --candidate", binary, layout.BuildDir)
	}
	for _, l := range libs {
		if len(l.Copies) == 0 {
			return nil, fmt.Errorf("no copy of lib%s.a in %s (build-script OUT_DIRs and rlibs); give --candidate", l.Name, layout.BuildDir)
		}
	}
	return libs, nil
}

func answerLibrary(b *evidence.Binary, lib evidence.Library) (whichLibrary, error) {
	wl := whichLibrary{Name: lib.Name, Notes: []string{}}
	var cands []*evidence.Candidate
	var copies []evidence.Copy
	for _, c := range lib.Copies {
		cd, err := evidence.ReadCandidate(c.Path)
		if err != nil {
			if c.Step == nil || !unreadableFile(err) {
				return wl, err // a copy given with --candidate, or corrupt content: no answer without it
			}
			// A copy found in the build folder that is no file one can read (a FIFO, a device, gone):
			// say so, and answer among the others.
			wl.Notes = append(wl.Notes, fmt.Sprintf("could not read the candidate %s (%s): %v; it is left out of this answer", c.Path, copyConfig(c), err))
			continue
		}
		cands = append(cands, cd)
		copies = append(copies, c)
	}
	if len(cands) == 0 {
		return wl, fmt.Errorf("no copy of lib%s.a could be read: %s", lib.Name, strings.Join(wl.Notes, "; "))
	}
	wl.copies = copies
	res, err := evidence.Match(b, cands)
	if err != nil {
		return wl, err
	}
	wl.result = res
	wl.Outcome, wl.Confidence = res.Outcome, res.Confidence
	wl.Notes = append(wl.Notes, res.Notes...)
	for i, c := range copies {
		cr := res.Candidates[i]
		wc := whichCandidate{Path: c.Path, Size: c.Size, MTimeNS: c.MTimeNS, MTime: time.Unix(0, c.MTimeNS).UTC().Format(time.RFC3339Nano),
			Configuration: copyConfig(c), Matched: cr.Matched, Evidence: []whichEvidence{}}
		for _, f := range cr.Distinct {
			wc.Evidence = append(wc.Evidence, whichEvidence{Kind: string(f.Kind), Feature: f.Label, Member: f.Member, Presence: string(f.Presence)})
		}
		wl.Candidates = append(wl.Candidates, wc)
	}
	return wl, nil
}

// unreadableFile reports whether a candidate's error is about the file itself (not a regular file, too
// large, not permitted, gone) rather than its content.
func unreadableFile(err error) bool {
	return errors.Is(err, safeio.ErrNotRegular) || errors.Is(err, safeio.ErrTooLarge) ||
		errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)
}

// copyConfig says which configuration made a copy.
func copyConfig(c evidence.Copy) string {
	if c.Step == nil {
		return "given with --candidate"
	}
	s := c.Step
	what := "build-script run " + s.Package + "-" + s.Hash
	if c.Bundled {
		what = "rlib of " + s.Package + "-" + s.Hash + " (bundles the archive's objects)"
	}
	return fmt.Sprintf("%s, profile %s, features %s%s", what, s.Config.ProfileDir, quoteList(s.Config.Features), rustflags(s.Config))
}

func rustflags(c graph.Config) string {
	if len(c.Rustflags) == 0 {
		return ""
	}
	return ", rustflags " + strings.Join(c.Rustflags, " ")
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func writeWhichText(w io.Writer, binary string, libs []whichLibrary) {
	p := func(format string, args ...any) { report.Line(w, format, args...) }
	p("%s", binary)
	p("  (← marks the copy inside; under each copy, the features that tell it apart from the others and whether the binary holds each)")
	for _, l := range libs {
		head := fmt.Sprintf("lib%s.a: %s", l.Name, l.Outcome)
		if l.Confidence != "" {
			head += " (" + l.Confidence + ")"
		}
		var inside []string
		for _, c := range l.Candidates {
			if c.Matched {
				inside = append(inside, c.Path)
			}
		}
		switch l.Outcome {
		case evidence.Matched:
			head += ": inside is " + inside[0]
			if len(inside) > 1 {
				head += fmt.Sprintf(" (and %d copies of the same content)", len(inside)-1)
			}
		case evidence.Identical:
			head += ": the copies do not differ in content; that content is inside"
		case evidence.NoneInside:
			head += ": no copy's content is inside"
		case evidence.Unprovable:
			head += ": what tells the copies apart is not in the binary"
		}
		p("  %s", head)
		for _, c := range l.Candidates {
			mark := " "
			if c.Matched {
				mark = "←"
			}
			p("  %s %s", mark, c.Path)
			p("      %d bytes, mtime %s; %s", c.Size, c.MTime, c.Configuration)
			shown := 0
			for _, e := range c.Evidence {
				if shown == 6 {
					p("      … %d more distinguishing features (--format json lists all)", len(c.Evidence)-shown)
					break
				}
				p("      %-7s %s", e.Presence, e.Feature)
				shown++
			}
			if len(c.Evidence) == 0 {
				p("      (nothing distinguishes this copy from the others)")
			}
		}
		for _, n := range l.Notes {
			p("  note: %s", n)
		}
	}
}
