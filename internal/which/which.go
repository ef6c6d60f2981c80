// Package which answers "which copy of each native static library is inside this binary": it finds the
// copies a binary may have linked (the build-script OUT_DIRs and bundling rlibs of a Cargo target
// folder, the archives a Make, Ninja or Go link step names, or copies given by hand), reads each copy's
// distinguishing content (internal/evidence: strings, symbols, CUDA fatbinary entries, code with
// relocations masked), and looks for it in the binary's bytes. The answer per library is an
// evidence.Outcome with its confidence and, per copy, the features that tell it apart and whether the
// binary holds each.
//
// Find is the search, Answer the matching; `stalecheck which` and `verify` (internal/cli) parse flags,
// keep the search in the verdict cache and choose the output (WriteText, or the JSON of Library).
package which

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/cargo"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/cmdargs"
	"github.com/stalecheck/stalecheck/internal/evidence"
	"github.com/stalecheck/stalecheck/internal/gocgo"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/report"
	"github.com/stalecheck/stalecheck/internal/safeio"
	"github.com/stalecheck/stalecheck/internal/systems"
)

// Options say where to look: Lib limits the answer to one library (link name or file name);
// Candidates are copies given by hand (no search); TargetDir and BuildDir override where Cargo's
// folders are found from the binary's.
type Options struct {
	Lib                 string
	Candidates          []string
	TargetDir, BuildDir string
	// OnLockWait is cargo.ReadOptions.OnLockWait.
	OnLockWait func(lock string)
}

// Library is one library's answer, for both outputs.
type Library struct {
	Name       string           `json:"name"`
	Outcome    evidence.Outcome `json:"outcome"`
	Confidence string           `json:"confidence"`
	Notes      []string         `json:"notes"`
	Candidates []Candidate      `json:"candidates"`
	Result     *evidence.Result `json:"-"`
	Copies     []evidence.Copy  `json:"-"`
	// LeftOut are the copies found in the build folder that could not be read or parsed (a note says
	// why for each): the answer is among the others.
	LeftOut []string `json:"-"`
}

type Candidate struct {
	Path          string     `json:"path"`
	Size          int64      `json:"size"`
	MTimeNS       int64      `json:"mtime_ns"`
	MTime         string     `json:"mtime"`
	Configuration string     `json:"configuration"`
	Matched       bool       `json:"matched"`
	NoNative      bool       `json:"no_native,omitempty"` // holds no native object: nothing to compare
	Evidence      []Evidence `json:"evidence"`
}

type Evidence struct {
	Kind     string `json:"kind"`
	Feature  string `json:"feature"`
	Member   string `json:"member,omitempty"`
	Presence string `json:"presence"`
}

// Find finds the libraries and their copies: from --candidate (grouped per library, see
// GroupCandidates), else from the Cargo build folder found from the binary's folder. notes says why
// the list is empty for a binary whose build scripts link no static library (only shared system
// libraries); an error when no library can be found at all.
func Find(binary string, opt Options) (libs []evidence.Library, notes []string, err error) {
	if len(opt.Candidates) > 0 {
		libs, err := GroupCandidates(opt.Candidates, opt.Lib)
		return libs, nil, err
	}
	// A link to the binary (~/bin/app -> target/release/app) is the binary: its build is found from
	// where the link leads.
	if real, err := filepath.EvalSymlinks(binary); err == nil {
		binary = real
	}
	layout, err := cargo.Locate(filepath.Dir(binary), cargo.LocateOptions{TargetDir: opt.TargetDir, BuildDir: opt.BuildDir})
	if err != nil {
		// A file that is no ELF executable (a script, a text file, a truncated binary) has no
		// library to find, whatever build lies around it: its own trouble is the answer, not Cargo's.
		ef, eerr := binfmt.OpenELF(binary)
		if eerr != nil {
			return nil, nil, eerr
		}
		ef.Close()
		// Not in a Cargo build: a Go binary or a Make/Ninja program (which_joined.go).
		if libs, notes, ok, jerr := joinedLibraries(binary, opt); ok {
			return libs, notes, jerr
		}
		if b, gerr := gocgo.ReadBinary(binary); gerr == nil && b.MainModule != "" {
			// A Go binary built outside its module's folder tree (go build -o ../bin/app): say so in
			// Go's words rather than Cargo's.
			return nil, nil, fmt.Errorf("%s is a Go binary of module %s, and no go.mod of that module lies at or above it (it was built elsewhere, e.g. go build -o ../bin/app): `stalecheck check MODULE_FOLDER` finds it from the module; give the copies of a library with --candidate", binary, b.MainModule)
		}
		return nil, nil, fmt.Errorf("%w; give the copies with --candidate", err)
	}
	g, err := cargo.Read(layout, cargo.ReadOptions{SkipNative: true, LinksOnly: true, OnLockWait: opt.OnLockWait})
	if err != nil {
		if libs, notes, ok, jerr := joinedLibraries(binary, opt); ok {
			return libs, notes, jerr
		}
		return nil, nil, err
	}
	root := evidence.FindRoot(g, binary)
	if root == nil && !within(binary, layout.TargetDir) && !within(binary, layout.BuildDir) {
		if libs, notes, ok, jerr := joinedLibraries(binary, opt); ok {
			return libs, notes, jerr
		}
	}
	libs = evidence.Libraries(g, root, opt.Lib)
	if len(libs) == 0 && opt.Lib == "" && root != nil && root.Step != nil {
		// The link directives are in the build-script runs' records, and the runs a binary reaches are
		// found through its units' fingerprints: a record of either that could not be read may hide the
		// run that names a library, so "none" would be a guess.
		for _, s := range root.Reach() {
			if s.Kind == graph.ScriptRun && !s.Reference.Exists {
				return nil, nil, fmt.Errorf("cannot tell which native libraries %s links: its build-script run %s has no output record %s", binary, s.ID, s.Reference.Path)
			}
			for _, p := range g.Problems {
				if p.Step == s || p.Path == s.Reference.Path || s.Script().RunDir != "" && within(p.Path, s.Script().RunDir) ||
					s.RecordDir != "" && within(p.Path, s.RecordDir) {
					return nil, nil, fmt.Errorf("cannot tell which native libraries %s links: the record %s of %s, which it is built from, could not be read (%s)", binary, p.Path, s.ID, p.Err)
				}
			}
		}
		var shared []string
		seen := map[string]bool{}
		for _, s := range root.Reach() {
			for _, l := range s.Script().Links {
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

// GroupCandidates sorts the --candidate paths into libraries, in the order first given: an archive
// or object by its file name (libx.a and libx.o are library x); an rlib by the library whose archive
// members it bundles (every member of a given libx.a is among the rlib's native members), else the one
// library given when there is one, else its crate name. With lib (--lib), every candidate is a copy of
// that library. Errors name a candidate that cannot be read.
func GroupCandidates(paths []string, lib string) ([]evidence.Library, error) {
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
			name = RlibCrate(c.copy.Path)
		}
		add(name, c.copy)
	}
	return libs, nil
}

// RlibCrate returns the crate name of an rlib path: "libfoo_sys-0123abcd.rlib" → "foo_sys".
func RlibCrate(p string) string {
	n := evidence.LibName(p)
	if i := strings.LastIndexByte(n, '-'); i > 0 {
		n = n[:i]
	}
	return n
}

// AnswerOne answers one library from its copies (verify: a binary against one build's copy).
func AnswerOne(b *evidence.Binary, lib evidence.Library) (Library, error) {
	lc, err := readLibrary(lib, evidence.ReadCandidate)
	if err != nil {
		return lc.wl, err
	}
	return matchLibrary(b, lib, lc)
}

// readLibrary reads the copies of lib with read; a copy found in the build folder that cannot be
// read or parsed is left out with a note, a copy given with --candidate is an error.
func readLibrary(lib evidence.Library, read func(string) (*evidence.Candidate, error)) (libraryCopies, error) {
	wl := Library{Name: lib.Name, Notes: []string{}}
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
			wl.Notes = append(wl.Notes, fmt.Sprintf("%s the candidate %s (%s): %v; it is left out of this answer", what, c.Path, CopyConfig(c), err))
			wl.LeftOut = append(wl.LeftOut, c.Path)
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
func matchLibrary(b *evidence.Binary, lib evidence.Library, lc libraryCopies) (Library, error) {
	wl, cands, copies := lc.wl, lc.cands, lc.copies
	wl.Copies = copies
	res, err := evidence.Match(b, cands)
	if err != nil {
		return wl, err
	}
	wl.Result = res
	wl.Outcome, wl.Confidence = res.Outcome, res.Confidence
	wl.Notes = append(wl.Notes, res.Notes...)
	if len(wl.LeftOut) > 0 && (res.Outcome == evidence.Matched || res.Outcome == evidence.Identical) && res.Confidence == "certain" {
		// What tells the copies read apart was found without the copies left out, which may share it
		// (two configurations' builds of one source mostly do): one of those may be the copy inside.
		wl.Confidence = "likely"
		wl.Notes = append(wl.Notes, fmt.Sprintf("likely, not certain: %d copy(ies) could not be read, and may hold what tells the others apart", len(wl.LeftOut)))
	}
	for i, c := range copies {
		cr := res.Candidates[i]
		wc := Candidate{Path: c.Path, Size: c.Size, MTimeNS: c.MTimeNS, MTime: time.Unix(0, c.MTimeNS).UTC().Format(time.RFC3339Nano),
			Configuration: CopyConfig(c), Matched: cr.Matched, NoNative: cr.NoNative, Evidence: []Evidence{}}
		for _, f := range cr.Distinct {
			wc.Evidence = append(wc.Evidence, Evidence{Kind: string(f.Kind), Feature: f.Label, Member: f.Member, Presence: string(f.Presence)})
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

// CopyConfig says which configuration made a copy.
func CopyConfig(c evidence.Copy) string {
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

// libraryCopies are one library's copies as readLibrary read them: the candidates and their copies
// (those that could be read), and the answer so far (notes on the copies left out).
type libraryCopies struct {
	wl     Library
	cands  []*evidence.Candidate
	copies []evidence.Copy
}

// Answer answers every library of a binary: each copy's file is read once (an rlib that
// bundles two libraries' archives is a copy of both) and the files are read side by side, then the
// features of all the copies are looked for in one pass over the binary (evidence.Binary.Prepare) and
// each library is matched from there. The answers are answerLibrary's, library by library.
func Answer(b *evidence.Binary, libs []evidence.Library) ([]Library, error) {
	read := readCandidatesOnce(libs)
	var all []libraryCopies
	var cands []*evidence.Candidate
	for _, lib := range libs {
		lc, err := readLibrary(lib, read)
		if err != nil {
			return nil, err
		}
		all = append(all, lc)
		cands = append(cands, lc.cands...)
	}
	b.Prepare(cands)
	var out []Library
	for i, lib := range libs {
		wl, err := matchLibrary(b, lib, all[i])
		if err != nil {
			return nil, err
		}
		out = append(out, wl)
	}
	return out, nil
}

// readCandidatesOnce reads every copy's file of libs with evidence.ReadCandidate, each path once, on
// all cores, and returns the lookup of the results (a path not among them is read when asked).
func readCandidatesOnce(libs []evidence.Library) func(string) (*evidence.Candidate, error) {
	type result struct {
		c   *evidence.Candidate
		err error
	}
	var paths []string
	seen := map[string]bool{}
	for _, l := range libs {
		for _, c := range l.Copies {
			if !seen[c.Path] {
				seen[c.Path] = true
				paths = append(paths, c.Path)
			}
		}
	}
	results := make(map[string]*result, len(paths))
	for _, p := range paths {
		results[p] = &result{}
	}
	var wg sync.WaitGroup
	next := make(chan string)
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				r := results[p]
				r.c, r.err = evidence.ReadCandidate(p)
			}
		}()
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
	return func(p string) (*evidence.Candidate, error) {
		if r, ok := results[p]; ok {
			return r.c, r.err
		}
		return evidence.ReadCandidate(p)
	}
}

// joinedLookUp is how many folders above a binary `which` and `run` look for the build that made it.
const joinedLookUp = 4

// joinedRoot reads the joined graph (systems.ReadAll, every system found; Cargo builds a Go binary
// links from are pulled in) of the nearest folder at or up to joinedLookUp folders above the binary's
// that holds a Make, Ninja or Go build itself (systems.BuildAbove), and returns it with the root of
// another system than Cargo that is the binary (same path, or same device and inode). nil, nil when
// there is no such build or it has no such root; the error is the reader's.
func joinedRoot(ctx context.Context, binary string, opt systems.Options) (*graph.Graph, *graph.Root, error) {
	d := systems.BuildAbove(filepath.Dir(binary), joinedLookUp)
	if d == "" {
		return nil, nil, nil
	}
	g, _, err := systems.ReadAll(ctx, d, nil, opt)
	if err != nil {
		return nil, nil, err
	}
	cmdargs.Annotate(g) // the libraries a link command takes by -l, not only those it names
	if r := evidence.FindRoot(g, binary); r != nil && r.Step != nil && r.Step.System != unit.System {
		return g, r, nil
	}
	return nil, nil, nil
}

// joinedLibraries answers `which` for a Go binary or a Make/Ninja program: the static libraries
// its link step links and every copy of each the joined graph knows (evidence.LinkedArchives). ok is
// false when no build of another system has the binary as a root (the caller then reports Cargo's
// error); with ok, err is the answer's own error (no static library, no readable copy).
func joinedLibraries(binary string, opt Options) (libs []evidence.Library, notes []string, ok bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g, root, _ := joinedRoot(ctx, binary, systems.Options{NoNative: true})
	if root == nil {
		return nil, nil, false, nil
	}
	libs = evidence.LinkedArchives(g, root, opt.Lib)
	w := root.Step.Words()
	if len(libs) == 0 {
		if opt.Lib != "" {
			return nil, nil, true, fmt.Errorf("%s (%s build) does not link lib%s.a; give --candidate", binary, w.Tool, evidence.LibName(opt.Lib))
		}
		var shared []string
		for _, in := range root.Step.Inputs {
			if b := filepath.Base(in.File.Path); strings.Contains(b, ".so") {
				shared = append(shared, b)
			}
		}
		n := fmt.Sprintf("its %s link step (%s) links no static library", w.Tool, root.Step.Name)
		if len(shared) > 0 {
			n += ", only shared ones (" + strings.Join(shared, ", ") + ")"
		}
		return nil, []string{n}, true, nil
	}
	for _, n := range g.Notes {
		if strings.Contains(n, "read as well") {
			notes = append(notes, n)
		}
	}
	return libs, notes, true, nil
}

// within reports whether p lies in dir (or is dir); false for an empty dir.
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	r, err := filepath.Rel(dir, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}
func WriteText(w io.Writer, binary string, libs []Library, notes []string) {
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
				head += fmt.Sprintf(" (and %d more %s of the same content)", len(inside)-1, map[bool]string{true: "copy", false: "copies"}[len(inside) == 2])
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
