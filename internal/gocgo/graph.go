package gocgo

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// System is the name of the Go adapter's steps (graph.Step.System) and of its entry in graph.Origins.
const System = "go"

// GraphOptions tune ReadGraph; the same two fields as the systems package's read options.
type GraphOptions struct {
	// StateDir is stalecheck's state folder: the Go content baselines (BaselinesFile) are kept there;
	// "" keeps none between calls.
	StateDir string
	// NoNative is --no-native. ReadGraph opens binaries only for their build info and build ID either
	// way; holdings of static libraries are judged by internal/content.Annotate, which honours it.
	NoNative bool
	// Go is the go command (default "go" on PATH).
	Go string
}

// StepOrigin is the Go adapter's record of one step (graph.Step.Origin): the binary it belongs to, and
// for a cgo package compile the package (nil for the link step). It supplies Go's words (graph.Worded).
type StepOrigin struct {
	Binary  *Binary
	Package *Package
	// Rebuild is the command that rebuilds the binary whatever Go's cache says, run in Module.
	Rebuild string
	Module  string
	// Records are the link step's neutral records: the environment variables its build info keeps
	// (Records.DeclaredEnvValues), which Go's build cache keys the binary on.
	Records graph.Records
}

// StepRecords makes a StepOrigin a graph.RecordKeeper.
func (o *StepOrigin) StepRecords() *graph.Records { return &o.Records }

// watchedSettings are the build settings a Go binary records from the environment of its build that
// go build keys its cache on: another value in the environment of the next build makes another binary.
var watchedSettings = []string{"CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS", "CGO_ENABLED", "GOOS", "GOARCH",
	"GOAMD64", "GOARM", "GOARM64", "GO386", "GOMIPS", "GOPPC64", "GORISCV64", "GOWASM"}

// envRecords returns the watched settings b records, and adds to env the value of each that is set in
// this environment. One that is unset here is left out of env: go build then takes it from the go env
// file or its default, which this reader does not ask.
func envRecords(b *Binary, env map[string]graph.EnvRead) []graph.EnvRead {
	var out []graph.EnvRead
	for _, k := range watchedSettings {
		v, ok := b.Setting(k)
		if !ok {
			continue
		}
		out = append(out, graph.EnvRead{Name: k, Value: v, Set: true})
		if now, set := os.LookupEnv(k); set {
			env[k] = graph.EnvRead{Name: k, Value: now, Set: true}
		}
	}
	return out
}

// What a StepOrigin answers of the adapter contract (internal/graph/origin.go).
var _ interface {
	graph.Worded
	graph.ContentComparer
} = (*StepOrigin)(nil)

// ComparesContent: Go's build cache keys a package by the content of its files (graph.ContentComparer).
func (o *StepOrigin) ComparesContent() bool { return true }

// Words are Go's words for rules (graph.Worded).
func (o *StepOrigin) Words() graph.Words {
	return graph.Words{
		Tool:       "Go",
		Watched:    "Go's build cache hashes it",
		NotWatched: "Go's build cache does not hash it",
		Reference:  "the Go binary, judged from when go build last wrote it (its birth time: a go build with nothing to relink only moves its mtime)",
		Rebuild:    o.Rebuild,
	}
}

// Tree is the Go adapter's record of the whole module (graph.Graph.Origins["go"]): the listing and one
// Check report per binary.
type Tree struct {
	Module  *Module
	Reports []*Report
}

// ReadGraph reads the Go module at dir (its go.mod folder) and the Go binaries built from it into a
// graph. Errors: no go.mod in dir, go list failing (see Read). A binary that cannot be joined to the
// listing (built from files, or from a package the listing lacks) is a graph problem.
//
// Which binaries: the files `go build` writes for the module's main packages at their default names
// (cmd/go: the last element of the import path, the one before a /vN major-version suffix) in the
// module folder and in the package's own folder, and every ELF file with Go build info whose main
// module is this module in the module folder and its immediate subfolders (go build -o bin/x, -o
// build/x; files without an extension there, hidden folders, vendor and testdata left out). Binaries
// installed elsewhere (go install into GOBIN) are not looked for.
//
// Steps (System "go", Kind graph.Compile), per binary (Go's cache shares a package compile between
// binaries, but its reference is each binary's mtime):
//   - one per non-standard cgo package the binary contains: ID "go:<binary>:<import path>"; Inputs are
//     the files Go hashes (Watched, How Declared, WatchedBy naming the go list field) and the headers
//     its include scan reaches outside them (not Watched, How IncludeScan); Reference the binary.
//   - the link step: ID "go:<binary>", Key the Go build ID, Reference and Outputs the binary; Inputs are
//     the libraries and objects the packages' #cgo LDFLAGS name (absolute paths as GNU ld resolves
//     them, not Watched, How CommandLine with the flag and the LDFLAGS line); Deps its package steps.
//   - a Root per binary (Kind "bin", TiedBy "build-info").
//
// PathPackage is false on Go steps, so internal/content does not key their baselines by the
// reference's mtime (an up-to-date go build touches the binary); ReadGraph keeps Go's own baselines
// keyed by the binary's build ID instead and fills Input.Content (Build set to the build ID).
func ReadGraph(ctx context.Context, dir string, opt GraphOptions) (*graph.Graph, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("gocgo: %w", err)
	}
	modPath, err := modulePath(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	g := &graph.Graph{System: System, Workspace: dir, Origins: map[string]any{}}
	tree := &Tree{}
	g.Origins[System] = tree

	bins, probs := findBinaries(dir, modPath, nil)
	listings := map[string]*Module{}
	list := func(o Options) (*Module, error) {
		o.Go = opt.Go
		key := fmt.Sprintf("%q", o)
		if m := listings[key]; m != nil {
			return m, nil
		}
		m, err := Read(ctx, dir, o)
		if err != nil {
			return nil, err
		}
		listings[key] = m
		return m, nil
	}
	var first *Module
	if len(bins) > 0 {
		first, err = list(ListOptionsFor(bins[0]))
	} else {
		first, err = list(Options{})
	}
	if err != nil {
		return nil, err
	}
	tree.Module = first
	// Binaries at default names in package folders (go build run inside cmd/app).
	more, probs2 := findBinaries(dir, modPath, first)
	probs = append(probs, probs2...)
	seen := map[string]bool{}
	for _, b := range bins {
		seen[b.Path] = true
	}
	for _, b := range more {
		if !seen[b.Path] {
			seen[b.Path] = true
			bins = append(bins, b)
		}
	}
	for _, p := range probs {
		g.Problems = append(g.Problems, p)
	}
	if len(bins) == 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("no Go binary of module %s found in %s, its subfolders, or the bin, build and out folders of the two folders above it (default go build names and ELF files with its build info): nothing to judge", modPath, dir))
	}
	store := openBaselines(opt.StateDir)
	defer store.save()
	problemSeen := map[string]bool{}
	for _, b := range bins {
		m, err := list(ListOptionsFor(b))
		if err != nil {
			g.AddProblem(b.Path, fmt.Errorf("listing the module as the binary was built: %w", err))
			continue
		}
		for _, p := range m.Packages {
			for _, pr := range p.Problems {
				if !problemSeen[pr] {
					problemSeen[pr] = true
					g.Problems = append(g.Problems, graph.Problem{Path: p.Dir, Err: pr,
						Fix: "make the package's cgo flags name what exists (include folders, libraries, pkg-config packages): go build reads the same; the check went on without it"})
				}
			}
		}
		rep, err := Check(m, b, CheckOptions{})
		if err != nil {
			g.AddProblem(b.Path, err)
			continue
		}
		tree.Reports = append(tree.Reports, rep)
		for _, n := range rep.Notes {
			g.Notes = append(g.Notes, b.Path+": "+n)
		}
		link := addBinary(g, m, rep)
		store.judge(g, link, b)
	}
	g.MarkLive()
	return g, nil
}

// addBinary adds one binary's steps and root.
func addBinary(g *graph.Graph, m *Module, rep *Report) *graph.Step {
	b := rep.Link.Binary
	bin := statFile(b.Path)
	// The steps' inputs are judged against when go build last wrote the binary, not its mtime (a
	// no-op go build moves that): Binary.WrittenNS. The reference stays the file as it is (its mtime
	// keys content baselines, kept by a copy made with its mtimes, which makes a new birth time).
	var written int64
	if bin.Exists && b.WrittenNS > 0 && b.WrittenNS < bin.MTimeNS {
		written = b.WrittenNS
	}
	ref := bin
	rebuild := fmt.Sprintf("go build -a%s -o %s %s", buildFlags(b), relOrAbs(m.Dir, b.Path), b.MainPackage)
	if v, _ := b.Setting("-trimpath"); v == "true" {
		if _, ok := b.Setting("-ldflags"); !ok {
			rebuild += " (and the -ldflags it was built with, if any: a -trimpath build does not record them)"
		}
	}
	cfg := graph.Config{}
	for _, k := range []string{"GOOS", "GOARCH", "CGO_ENABLED", "-tags"} {
		if v, ok := b.Setting(k); ok {
			cfg = append(cfg, graph.KV{Key: k, Value: v})
		}
	}
	link := &graph.Step{
		System: System, ID: "go:" + b.Path, Kind: graph.Compile, Package: b.MainPackage,
		Name: "go build " + relOrAbs(m.Dir, b.Path), Label: filepath.Base(b.Path), Config: cfg, Key: b.BuildID,
		PackageRoot: m.Dir, Reference: ref, WrittenNS: written, Outputs: []graph.FileInfo{bin},
		Origin: &StepOrigin{Binary: b, Rebuild: rebuild, Module: m.Dir},
	}
	if g.Env == nil {
		g.Env = map[string]graph.EnvRead{}
	}
	link.Origin.(*StepOrigin).Records.DeclaredEnvValues = envRecords(b, g.Env)
	for _, p := range rep.Link.Packages {
		s := &graph.Step{
			System: System, ID: "go:" + b.Path + ":" + p.ImportPath, Kind: graph.Compile, Package: p.ImportPath,
			Name: p.ImportPath, Label: packageLabel(p) + " of " + filepath.Base(b.Path), Config: cfg,
			PackageRoot: p.Dir, Reference: ref, WrittenNS: written,
			Origin: &StepOrigin{Binary: b, Package: p, Rebuild: rebuild, Module: m.Dir},
			// A package of the main module: its files are the project's own, and change.
			PathPackage: p.Dir == m.Dir || strings.HasPrefix(p.Dir, m.Dir+string(filepath.Separator)),
		}
		for _, x := range p.Declared {
			in := input(x, graph.Declared)
			in.Watched, in.WatchedBy = true, "Go's build cache hashes it ("+x.Clues[0].Detail+")"
			s.Inputs = append(s.Inputs, in)
		}
		for _, x := range p.Discovered {
			if x.Clues[0].How == HowIncludeScan {
				s.Inputs = append(s.Inputs, input(x, graph.IncludeScan))
			}
		}
		s.Dependents = []*graph.Step{link}
		link.Deps = append(link.Deps, s)
		g.Steps = append(g.Steps, s)
	}
	for _, x := range rep.Link.Libraries {
		in := input(x, graph.CommandLine)
		for i := range in.Detail {
			in.Detail[i] += ldflagsLine(rep, x.Clues[i].Detail)
		}
		link.Inputs = append(link.Inputs, in)
	}
	g.Steps = append(g.Steps, link)
	g.Roots = append(g.Roots, &graph.Root{File: bin, Kind: "bin", Step: link, TiedBy: "build-info"})
	return link
}

// packageLabel names a package step's package: "cgo package <path>" or "package <path>".
func packageLabel(p *Package) string {
	if p.Cgo {
		return "cgo package " + p.ImportPath
	}
	return "package " + p.ImportPath
}

// ldflagsLine returns "; #cgo LDFLAGS: …" of the package a library clue names ("" when none).
func ldflagsLine(rep *Report, detail string) string {
	for _, p := range rep.Link.Packages {
		marker := "#cgo LDFLAGS of " + p.ImportPath
		i := strings.Index(detail, marker)
		if i < 0 || len(p.Flags.LDFLAGS) == 0 {
			continue
		}
		if rest := detail[i+len(marker):]; rest == "" || !isPathByte(rest[0]) {
			return "; #cgo LDFLAGS: " + strings.Join(p.Flags.LDFLAGS, " ")
		}
	}
	return ""
}

func isPathByte(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c == '~' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func input(x Input, how graph.How) *graph.Input {
	in := &graph.Input{File: graph.FileInfo{Path: x.Path, Size: x.Size, MTimeNS: x.MTimeNS, Exists: x.Err == ""}}
	for _, c := range x.Clues {
		in.How = append(in.How, how)
		in.Detail = append(in.Detail, c.Detail)
	}
	return in
}

func statFile(p string) graph.FileInfo {
	st, err := fsrec.Stat(p)
	if err != nil {
		return graph.FileInfo{Path: p}
	}
	return graph.FileInfo{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true}
}

func relOrAbs(base, p string) string {
	if rel, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(rel, "..") {
		if !strings.Contains(rel, "/") {
			return "./" + rel
		}
		return rel
	}
	return p
}

// modulePath reads the module directive of go.mod (bounded read). Errors name the file.
func modulePath(gomod string) (string, error) {
	data, err := safeio.ReadFile(gomod, 1<<20)
	if err != nil {
		return "", fmt.Errorf("gocgo: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], "\"`"), nil
		}
	}
	return "", fmt.Errorf("gocgo: %s has no module directive", gomod)
}

var majorSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v[0-9]+$`) })

// listed returns up to maxScan entries of the folder d (none when it cannot be read).
func listed(d string) []fs.DirEntry {
	f, err := fsrec.Open(d)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, _ := f.ReadDir(maxScan)
	return fsrec.ListOpened(d, ents)
}

// DefaultBinaryName is the file name `go build` gives the binary of a main package (cmd/go's
// DefaultExecName: the last element of the import path, or the one before a /vN suffix).
func DefaultBinaryName(importPath string) string {
	parts := strings.Split(importPath, "/")
	name := parts[len(parts)-1]
	if len(parts) > 1 && majorSuffix().MatchString(name) {
		name = parts[len(parts)-2]
	}
	return name
}

// maxScan bounds the entries looked at in one folder when looking for binaries.
const maxScan = 10000

// maxSubfolders bounds the module's subfolders looked in for binaries.
const maxSubfolders = 64

// findBinaries returns the Go binaries of module modPath: with m nil, the ELF files with Go build info
// of that main module in dir and dir/bin; with m, the default-name files of m's main packages in their
// own folders and in dir. Unreadable candidates that look like ELF files are problems.
func findBinaries(dir, modPath string, m *Module) ([]*Binary, []graph.Problem) {
	var cands []string
	if m == nil {
		// The module folder, then its immediate subfolders (go build -o bin/app, -o build/app, -o
		// out/app): a file there without an extension is a candidate (Go writes none on Linux; sources
		// and data files have one, so a folder of data costs no open per file).
		dirs := []string{dir}
		// The output folders of the repository above a module in a subfolder (proj/app/go.mod built
		// with go build -o ../bin/app): bin, build and out of the two folders above; their files count
		// only when they carry this module's build info.
		var above []string
		for d, i := filepath.Dir(dir), 0; i < 2 && d != filepath.Dir(d); d, i = filepath.Dir(d), i+1 {
			for _, n := range []string{"bin", "build", "out"} {
				above = append(above, filepath.Join(d, n))
			}
		}
		for i := 0; i < len(dirs); i++ {
			d := dirs[i]
			for _, e := range listed(d) {
				name := e.Name()
				switch {
				case e.Type().IsRegular() && (i == 0 || filepath.Ext(name) == ""):
					cands = append(cands, filepath.Join(d, name))
				case i == 0 && e.IsDir() && !strings.HasPrefix(name, ".") && name != "vendor" && name != "testdata" && len(dirs) <= maxSubfolders:
					dirs = append(dirs, filepath.Join(d, name))
				}
			}
		}
		for _, d := range above {
			if st, err := fsrec.Stat(d); err != nil || !st.IsDir() {
				continue
			}
			for _, e := range listed(d) {
				if e.Type().IsRegular() && filepath.Ext(e.Name()) == "" {
					cands = append(cands, filepath.Join(d, e.Name()))
				}
			}
		}
	} else {
		for _, p := range m.Packages {
			if p.Name != "main" || p.Standard || p.Module != modPath {
				continue
			}
			n := DefaultBinaryName(p.ImportPath)
			cands = append(cands, filepath.Join(dir, n), filepath.Join(p.Dir, n))
		}
	}
	sort.Strings(cands)
	var out []*Binary
	var probs []graph.Problem
	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c] || !isELF(c) {
			continue
		}
		seen[c] = true
		b, err := ReadBinary(c)
		if err != nil {
			if m != nil {
				probs = append(probs, graph.Problem{Path: c, Err: err.Error()})
			}
			continue
		}
		if b.MainModule == modPath {
			out = append(out, b)
		}
	}
	return out, probs
}

// isELF reports whether p is a regular file starting with the ELF magic.
func isELF(p string) bool {
	f, err := safeio.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		return false
	}
	return bytes.Equal(magic[:], []byte("\x7fELF"))
}

// buildFlags are the go build flags the binary's build info records (-tags, -trimpath, -ldflags,
// -gcflags, -asmflags, -buildmode other than exe, -race, -msan, -asan, -cover, -pgo), as the fix must
// pass them again: without them it builds another program (one without the tag's files or the -X
// values). Each begins with a space; values are quoted for the shell where needed.
func buildFlags(b *Binary) string {
	var out strings.Builder
	for _, st := range b.Settings {
		switch st.Key {
		case "-tags", "-ldflags", "-gcflags", "-asmflags", "-pgo":
			if st.Value != "" {
				out.WriteString(" " + st.Key + "=" + shellWord(st.Value))
			}
		case "-buildmode":
			if st.Value != "" && st.Value != "exe" {
				out.WriteString(" -buildmode=" + shellWord(st.Value))
			}
		case "-trimpath", "-race", "-msan", "-asan", "-cover":
			if st.Value == "true" {
				out.WriteString(" " + st.Key)
			}
		}
	}
	return out.String()
}

// shellWord quotes s for a POSIX shell when it holds anything but letters, digits and _./=:,+-.
func shellWord(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_./=:,+-@%", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
