package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/safeio"
	"github.com/stalecheck/stalecheck/internal/vcache"
)

type whichFlags struct {
	lib, format, targetDir, buildDir string
	candidates                       []string
	noCache                          bool
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

The search for the copies (the Cargo records) is kept in the verdict cache while every path it
consulted keeps its signature, as check's verdict is; the copies and the binary are read every time.

Exit status: 0 answered, 2 error, 3 the verdict cache disagreed with the search (under ` + vcache.EnvMode + `=verify).`,
		Args: exactArgs("BINARY"),
		RunE: func(cmd *cobra.Command, args []string) error { return runWhich(st, args[0], fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.lib, "lib", "", "only this library (link name groth16_cuda or file name libgroth16_cuda.a)")
	f.StringArrayVar(&fl.candidates, "candidate", nil, "a candidate copy (archive, rlib or object); repeat; skips the search in the target folder")
	f.StringVar(&fl.format, "format", "text", "output format: text or json")
	f.StringVar(&fl.targetDir, "target-dir", "", "the target folder (default: as Cargo finds it from the binary's folder)")
	f.StringVar(&fl.buildDir, "build-dir", "", "the build folder (Cargo's build.build-dir)")
	f.BoolVar(&fl.noCache, "no-cache", false, "always search the build folder for the copies (no verdict cache; also "+vcache.EnvMode+"=off)")
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
	NoNative      bool            `json:"no_native,omitempty"` // holds no native object: nothing to compare
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
	Notes     []string       `json:"notes"` // why libraries is empty (only shared libraries are linked)
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
	wc := openWhichCache(st, abs, fl)
	libs, notes, pending, err := wc.libraries()
	if err != nil {
		if _, ok := err.(*ExitError); ok {
			return err
		}
		return &ExitError{2, err}
	}
	b, err := evidence.OpenBinary(abs)
	if err != nil {
		if pending != nil {
			pending()
		}
		return &ExitError{2, err}
	}
	defer b.Close()
	out, err := answerLibraries(b, libs)
	if pending != nil && !pending() {
		// The stored search no longer holds (a path it consulted changed): search, answer again.
		if libs, notes, err = wc.search(); err != nil {
			return &ExitError{2, err}
		}
		b.Close()
		if b, err = evidence.OpenBinary(abs); err != nil {
			return &ExitError{2, err}
		}
		out, err = answerLibraries(b, libs)
	}
	if err != nil {
		return &ExitError{2, err}
	}
	if fl.format == "json" {
		doc := whichDoc{Envelope: report.Envelope{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "stalecheck", Version: Version}, Command: "which"},
			Binary: abs, Libraries: out, Notes: notes}
		if doc.Notes == nil {
			doc.Notes = []string{}
		}
		if doc.Libraries == nil {
			doc.Libraries = []whichLibrary{}
		}
		if err := report.WriteJSON(st.Out, doc); err != nil {
			return &ExitError{2, err}
		}
		return nil
	}
	writeWhichText(st.Out, abs, out, notes)
	return nil
}

// whichLibraries finds the libraries and their copies: from --candidate (grouped per library, see
// groupCandidates), else from the Cargo build folder found from the binary's folder. notes says why
// the list is empty for a binary whose build scripts link no static library (only shared system
// libraries); an error when no library can be found at all.
func whichLibraries(binary string, fl whichFlags) (libs []evidence.Library, notes []string, err error) {
	if len(fl.candidates) > 0 {
		libs, err := groupCandidates(fl.candidates, fl.lib)
		return libs, nil, err
	}
	layout, err := cargo.Locate(filepath.Dir(binary), cargo.LocateOptions{TargetDir: fl.targetDir, BuildDir: fl.buildDir})
	if err != nil {
		// Not in a Cargo build: a Go binary or a Make/Ninja program (which_joined.go).
		if libs, notes, ok, jerr := joinedWhichLibraries(binary, fl); ok {
			return libs, notes, jerr
		}
		return nil, nil, fmt.Errorf("%w; give the copies with --candidate", err)
	}
	g, err := cargo.Read(layout, cargo.ReadOptions{SkipNative: true, LinksOnly: true})
	if err != nil {
		if libs, notes, ok, jerr := joinedWhichLibraries(binary, fl); ok {
			return libs, notes, jerr
		}
		return nil, nil, err
	}
	root := evidence.FindRoot(g, binary)
	if root == nil && !within(binary, layout.TargetDir) && !within(binary, layout.BuildDir) {
		if libs, notes, ok, jerr := joinedWhichLibraries(binary, fl); ok {
			return libs, notes, jerr
		}
	}
	libs = evidence.Libraries(g, root, fl.lib)
	if len(libs) == 0 && fl.lib == "" && root != nil && root.Step != nil {
		var shared []string
		seen := map[string]bool{}
		for _, s := range root.Reach() {
			for _, l := range s.Script.Links {
				if !evidence.IsStaticLink(l) && !seen[l.Name] {
					seen[l.Name] = true
					shared = append(shared, l.Name)
				}
			}
		}
		sort.Strings(shared)
		n := "its build scripts link no native library"
		if len(shared) > 0 {
			n = "its build scripts link no native static library, only shared ones (" + strings.Join(shared, ", ") + "), of which no copy is in the build folder"
		}
		return nil, []string{n}, nil
	}
	if len(libs) == 0 {
		return nil, nil, fmt.Errorf("no native static library found for %s in %s; give --lib or --candidate", binary, layout.BuildDir)
	}
	for _, l := range libs {
		if len(l.Copies) == 0 {
			return nil, nil, fmt.Errorf("no copy of lib%s.a in %s (build-script OUT_DIRs and rlibs); give --candidate", l.Name, layout.BuildDir)
		}
	}
	return libs, nil, nil
}

// groupCandidates sorts the --candidate paths into libraries, in the order first given: an archive
// or object by its file name (libx.a and libx.o are library x); an rlib by the library whose archive
// members it bundles (every member of a given libx.a is among the rlib's native members), else the one
// library given when there is one, else its crate name. With lib (--lib), every candidate is a copy of
// that library. Errors name a candidate that cannot be read.
func groupCandidates(paths []string, lib string) ([]evidence.Library, error) {
	type cand struct {
		copy    evidence.Copy
		members map[string]bool // native member names (archives and rlibs)
		rlib    bool
	}
	var cs []cand
	for _, c := range paths {
		p, _ := filepath.Abs(c)
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("candidate %s: %w", c, err)
		}
		cd := cand{copy: evidence.Copy{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano()}}
		if st.Mode().IsRegular() {
			if isAr, err := binfmt.IsArchive(p); err == nil && isAr {
				if a, err := binfmt.OpenArchive(p); err == nil {
					cd.members = map[string]bool{}
					for _, m := range a.Members {
						if m.Name == "lib.rmeta" {
							cd.rlib = true
						}
						cd.members[m.Name] = true
					}
					cd.rlib = cd.rlib || strings.HasSuffix(p, ".rlib")
				}
			}
		}
		cs = append(cs, cd)
	}
	var libs []evidence.Library
	index := map[string]int{}
	add := func(name string, c evidence.Copy) {
		i, ok := index[name]
		if !ok {
			i = len(libs)
			index[name] = i
			libs = append(libs, evidence.Library{Name: name})
		}
		libs[i].Copies = append(libs[i].Copies, c)
	}
	if lib != "" {
		for _, c := range cs {
			add(evidence.LibName(lib), c.copy)
		}
		return libs, nil
	}
	archiveNames := map[string]bool{}
	var names []string
	for _, c := range cs {
		if !c.rlib && !archiveNames[evidence.LibName(c.copy.Path)] {
			archiveNames[evidence.LibName(c.copy.Path)] = true
			names = append(names, evidence.LibName(c.copy.Path))
		}
	}
	for _, c := range cs {
		if !c.rlib {
			add(evidence.LibName(c.copy.Path), c.copy)
			continue
		}
		name := ""
		for _, o := range cs {
			if o.rlib || len(o.members) == 0 {
				continue
			}
			all := true
			for m := range o.members {
				all = all && c.members[m]
			}
			if all {
				name = evidence.LibName(o.copy.Path)
				break
			}
		}
		if name == "" && len(names) == 1 {
			name = names[0]
		}
		if name == "" {
			name = rlibCrate(c.copy.Path)
		}
		add(name, c.copy)
	}
	return libs, nil
}

// rlibCrate returns the crate name of an rlib path: "libfoo_sys-0123abcd.rlib" → "foo_sys".
func rlibCrate(p string) string {
	n := evidence.LibName(p)
	if i := strings.LastIndexByte(n, '-'); i > 0 {
		n = n[:i]
	}
	return n
}

func answerLibrary(b *evidence.Binary, lib evidence.Library) (whichLibrary, error) {
	lc, err := readLibrary(lib, evidence.ReadCandidate)
	if err != nil {
		return lc.wl, err
	}
	return matchLibrary(b, lib, lc)
}

// readLibrary reads the copies of lib with read; a copy found in the build folder that cannot be
// read or parsed is left out with a note, a copy given with --candidate is an error.
func readLibrary(lib evidence.Library, read func(string) (*evidence.Candidate, error)) (libraryCopies, error) {
	wl := whichLibrary{Name: lib.Name, Notes: []string{}}
	var cands []*evidence.Candidate
	var copies []evidence.Copy
	for _, c := range lib.Copies {
		cd, err := read(c.Path)
		if err != nil {
			if c.Step == nil && c.Found == "" {
				return libraryCopies{wl: wl}, err // a copy given with --candidate: no answer without it
			}
			// A copy found in the build folder that cannot be read (a FIFO, a device, gone) or parsed
			// (truncated, corrupt): what it holds now is not what any binary linked, so say so and
			// answer among the others.
			what := "could not read"
			if !unreadableFile(err) {
				what = "could not parse"
			}
			wl.Notes = append(wl.Notes, fmt.Sprintf("%s the candidate %s (%s): %v; it is left out of this answer", what, c.Path, copyConfig(c), err))
			continue
		}
		cands = append(cands, cd)
		copies = append(copies, c)
	}
	if len(cands) == 0 {
		return libraryCopies{wl: wl}, fmt.Errorf("no copy of lib%s.a could be read: %s", lib.Name, strings.Join(wl.Notes, "; "))
	}
	return libraryCopies{wl: wl, cands: cands, copies: copies}, nil
}

// matchLibrary answers one library from its copies read by readLibrary.
func matchLibrary(b *evidence.Binary, lib evidence.Library, lc libraryCopies) (whichLibrary, error) {
	wl, cands, copies := lc.wl, lc.cands, lc.copies
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
			Configuration: copyConfig(c), Matched: cr.Matched, NoNative: cr.NoNative, Evidence: []whichEvidence{}}
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
	if c.Found != "" {
		return c.Found
	}
	if c.Step == nil {
		return "given with --candidate"
	}
	s := c.Step
	what := "build-script run " + s.Package + "-" + unit.Of(s).Hash
	if c.Bundled {
		what = "rlib of " + s.Package + "-" + unit.Of(s).Hash + " (bundles the archive's objects)"
	}
	return fmt.Sprintf("%s, profile %s, features %s%s", what, s.ProfileDir, quoteList(unit.Of(s).Features), rustflags(s))
}

func rustflags(s *graph.Step) string {
	c := unit.Of(s)
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

func writeWhichText(w io.Writer, binary string, libs []whichLibrary, notes []string) {
	p := func(format string, args ...any) { report.Line(w, format, args...) }
	p("%s", binary)
	if len(libs) == 0 {
		for _, n := range notes {
			p("  %s", n)
		}
		return
	}
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
			if len(l.Candidates) == 1 {
				head += ": cannot tell whether this copy is inside (see the notes)"
			} else {
				head += ": cannot tell, what tells the copies apart is not in the binary"
			}
		case evidence.CannotTell:
			head += ": cannot tell, nothing that decides can be checked in this binary"
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
			switch {
			case c.NoNative:
				p("      (holds no native object: nothing to compare)")
			case len(c.Evidence) == 0:
				p("      (nothing distinguishes this copy from the others)")
			}
		}
		for _, n := range l.Notes {
			p("  note: %s", n)
		}
	}
}
