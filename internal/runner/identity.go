package runner

import (
	"context"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/stalecheck/stalecheck/internal/binfmt"
	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/ledger"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// identity fills p.Identity: the binaries (the program and the binaries that matter), the native copies
// they link, the sources the graph knows for them, toolchain and environment; git state is gitIdentity's
// (asked on every run: the verdict cache cannot see what git status reads).
func (p *Plan) identity(ctx context.Context, getenv func(string) string) {
	id := &p.Identity
	id.Binaries = []ledger.Binary{}
	id.Natives = []ledger.Native{}
	id.Sources = []ledger.Source{}
	id.Toolchain = map[string]string{}
	id.Env = map[string]string{}

	// Binaries: the program first (a script or a system tool counts: it is what ran), then those that matter.
	seen := map[string]bool{}
	if fi, err := fsrec.Stat(p.Program); err == nil && fi.Mode().IsRegular() && !p.isMatterFile(fi) {
		p.addBinary(p.Program)
		seen[p.Program] = true
	}
	for _, m := range p.Matter {
		if !seen[m] {
			seen[m] = true
			p.addBinary(m)
		}
	}

	// Steps reached from the binaries that matter (every live step when the workspace has no binary).
	var steps []*graph.Step
	stepSeen := map[*graph.Step]bool{}
	for _, m := range p.Matter {
		if r := p.root(m); r != nil && r.Step != nil {
			for _, s := range r.Reach() {
				if !stepSeen[s] {
					stepSeen[s] = true
					steps = append(steps, s)
				}
			}
		}
	}
	if len(p.Matter) == 0 {
		for _, s := range p.Graph.Steps {
			if s.Live() {
				steps = append(steps, s)
			}
		}
	}

	// Native copies: every library a live build-script run links that was found on disk.
	natSeen := map[string]bool{}
	var rerunEnv []string
	for _, s := range steps {
		if s.Kind != graph.ScriptRun {
			continue
		}
		rerunEnv = append(rerunEnv, unit.Of(s).DeclaredEnv...)
		if s.Failed != "" {
			continue
		}
		for _, l := range s.Script().Links {
			if l.Path == "" || natSeen[l.Path] {
				continue
			}
			natSeen[l.Path] = true
			n := p.native(s, l)
			p.contentVerdict(&n, l)
			id.Natives = append(id.Natives, n)
		}
	}

	// Sources: every existing input of those steps outside the target and build folders; a declared
	// folder (rerun-if-changed=cuda) stands for the files in it.
	var srcs []string
	srcSeen := map[string]bool{}
	add := func(path string) {
		if !srcSeen[path] && !p.generated(path) {
			srcSeen[path] = true
			srcs = append(srcs, path)
		}
	}
	for _, s := range steps {
		for _, in := range s.Inputs {
			path := in.File.Path
			if !in.File.Exists || srcSeen[path] {
				continue
			}
			if fi, err := fsrec.Stat(path); err == nil && fi.IsDir() {
				p.folderSources(path, add)
				continue
			}
			add(path)
		}
	}
	sort.Strings(srcs)
	for _, path := range srcs {
		d, err := p.dig.File(path)
		if err != nil {
			p.note("source %s: %v", path, err)
			id.Sources = append(id.Sources, ledger.Source{Path: path})
			continue
		}
		id.Sources = append(id.Sources, ledger.Source{Path: path, Digest: d.String()})
	}

	p.toolchain(ctx, getenv)
	id.Env = buildEnv(p.Environ, rerunEnv)
}

// maxFolderFiles bounds the files one declared folder contributes to the sources.
const maxFolderFiles = 10000

// folderSources calls add for each regular file under dir (symbolic links and hidden entries skipped,
// at most maxFolderFiles).
func (p *Plan) folderSources(dir string, add func(string)) {
	n := 0
	fsrec.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() && p.generated(path) {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if n++; n > maxFolderFiles {
			p.note("folder %s: more than %d files; the sources list the first %d", dir, maxFolderFiles, maxFolderFiles)
			return filepath.SkipAll
		}
		add(path)
		return nil
	})
}

// isMatterFile reports whether fi is one of the binaries that matter (the same file).
func (p *Plan) isMatterFile(fi os.FileInfo) bool {
	for _, m := range p.Matter {
		if mi, err := fsrec.Stat(m); err == nil && fsrec.SameFile(fi, mi) {
			return true
		}
	}
	return false
}

// generated reports whether a build wrote path: it lies in Cargo's target or build folder, or (for a
// Make, Ninja or Go build, whose build folder holds the sources too) a step lists it as an output.
func (p *Plan) generated(path string) bool {
	if p.Graph.System != unit.System && p.Graph.System != "" {
		if p.outputs == nil {
			p.outputs = map[string]bool{}
			for _, s := range p.Graph.Steps {
				for _, o := range s.Outputs {
					p.outputs[o.Path] = true
				}
			}
		}
		return p.outputs[path]
	}
	for _, d := range []string{p.Graph.TargetDir, p.Graph.BuildDir} {
		if d != "" && (path == d || strings.HasPrefix(path, d+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

func (p *Plan) note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

// addBinary records path with its size, digest and ELF build-id.
func (p *Plan) addBinary(path string) {
	b := ledger.Binary{Path: path}
	fi, err := fsrec.Stat(path)
	if err != nil {
		p.note("binary %s: %v", path, err)
		p.Identity.Binaries = append(p.Identity.Binaries, b)
		return
	}
	b.Size = fi.Size()
	if d, err := p.dig.File(path); err == nil {
		b.Digest = d.String()
	} else {
		p.note("binary %s: %v", path, err)
	}
	b.BuildID = buildID(path)
	p.Identity.Binaries = append(p.Identity.Binaries, b)
}

// buildID returns the GNU build-id of an ELF file in hex, "" for anything else.
func buildID(path string) string {
	if !hasMagic(path, "\x7fELF") {
		return ""
	}
	f, err := binfmt.OpenELF(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	id, err := f.BuildID()
	if err != nil {
		return ""
	}
	return hex.EncodeToString(id)
}

func hasMagic(path, magic string) bool {
	f, err := safeio.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(magic))
	n, _ := f.Read(b)
	return string(b[:n]) == magic
}

// native describes one library copy a build-script run links, with its content fingerprint.
func (p *Plan) native(s *graph.Step, l graph.Link) ledger.Native {
	n := ledger.Native{Library: filepath.Base(l.Path), Path: l.Path}
	n.Config.Features = append([]string{}, unit.Of(s).Features...)
	n.Config.Settings = map[string]string{"unit": s.Package + "-" + unit.Of(s).Hash, "profile": s.ProfileDir}
	if len(unit.Of(s).Rustflags) > 0 {
		n.Config.Settings["rustflags"] = strings.Join(unit.Of(s).Rustflags, " ")
	}
	if l.Kind != "" {
		n.Config.Settings["kind"] = l.Kind
	}
	d, err := p.dig.File(l.Path)
	if err != nil {
		p.note("native library %s: %v", l.Path, err)
		return n
	}
	if fp, ok := p.state.fingerprint(d.String()); ok {
		n.Fingerprint = fp
		return n
	}
	fp, err := Fingerprint(l.Path)
	if err != nil {
		// Not readable as an archive or ELF file: the whole-file digest is the best we have.
		p.note("native library %s: %v; its fingerprint is the file digest", l.Path, err)
		n.Fingerprint = d.String()
		return n
	}
	n.Fingerprint = fp
	p.state.setFingerprint(d.String(), fp)
	return n
}

// contentVerdict adds what the binaries' own bytes say about the copy, where internal/evidence compared
// competing copies for a binary that matters: Settings["content"] is the outcome and confidence
// ("matched certain"), and Settings["content_matched"] the copy found inside when it is another one.
func (p *Plan) contentVerdict(n *ledger.Native, l graph.Link) {
	for _, cm := range p.Graph.Content {
		if cm.Library != l.Name || !contains(p.Matter, cm.Root.File.Path) || !contains(cm.Copies, l.Path) {
			continue
		}
		n.Config.Settings["content"] = strings.TrimSpace(cm.Outcome + " " + cm.Confidence)
		if cm.Outcome == "matched" && len(cm.Matched) > 0 && !contains(cm.Matched, l.Path) {
			n.Config.Settings["content_matched"] = strings.Join(cm.Matched, " ")
		}
		return
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Environment variables recorded with every run, besides those build scripts declare with
// rerun-if-env-changed. Names that may hold credentials are never recorded.
var (
	envExact  = map[string]bool{"RUSTFLAGS": true, "RUSTDOCFLAGS": true, "RUSTC": true, "RUSTC_WRAPPER": true, "CUDA_VISIBLE_DEVICES": true, "CUDAARCHS": true, "NVCC_APPEND_FLAGS": true, "NVCC_PREPEND_FLAGS": true}
	envCUDA   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`CUDA.*ARCH|ARCH.*CUDA|^SM_?ARCH|^GPU_ARCH`) })
	envSecret = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_KEY$|^CARGO_REGISTR|^CARGO_HTTP_|^CARGO_NET_|^CARGO_TERM_`)
	})
)

// buildEnv returns the variables of env that change builds or runs: RUSTFLAGS and friends, every CARGO_*
// (except terminal, network, registry and credential settings), CUDA_VISIBLE_DEVICES, CUDA architecture
// variables, nvcc's flag variables, and the variables build scripts declared. Unset variables are absent;
// set but empty ones are recorded as "".
func buildEnv(env []string, declared []string) map[string]string {
	want := map[string]bool{}
	for _, d := range declared {
		want[d] = true
	}
	out := map[string]string{}
	for _, e := range env {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			continue
		}
		keep := want[k] || envExact[k] || strings.HasPrefix(k, "CARGO_") || envCUDA().MatchString(k)
		if keep && envSecret().MatchString(k) && !want[k] {
			keep = false
		}
		if keep && (strings.Contains(k, "TOKEN") || strings.Contains(k, "PASSWORD") || strings.Contains(k, "SECRET")) {
			keep = false // never, even when a build script declared it
		}
		if keep {
			out[k] = v
		}
	}
	return out
}

// gitIdentity fills p.Identity.Git (HEAD and dirty state of the repository holding dir, the workspace).
func (p *Plan) gitIdentity(ctx context.Context, dir string) {
	var gitNote string
	if p.Identity.Git, gitNote = gitState(ctx, dir, p.Environ); gitNote != "" {
		p.note("%s", gitNote)
	}
}
