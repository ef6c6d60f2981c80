package content

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/cinclude"
	"github.com/stalecheck/stalecheck/internal/cmdargs"
	"github.com/stalecheck/stalecheck/internal/digest"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/kvfile"
)

// BaselinesFile is the content-baseline store in the state folder.
const BaselinesFile = "baselines.v1.kv"

// stepBaseline is one run of one step: the digest of each of its inputs while it was provably what the
// step used. Keyed by "<step ID>@<reference mtime ns>".
type stepBaseline struct {
	RecordedNS int64 `json:"recorded_ns"` // when the first input was recorded (ns since the epoch)
	// Inputs maps a path (relative to the workspace when inside it, else absolute) to "blake3:<hex>".
	Inputs map[string]string `json:"inputs"`
	// Files maps the same paths to the identity of the file they named when the digest was recorded
	// ("<device>:<inode>"): a path that names another file now (a symbolic link on the way switched to
	// another folder of older files) is hashed again though no mtime or ctime moved.
	Files map[string]string `json:"files,omitempty"`
	// Search is the run's header search order (each compile's own folder, then its -iquote, -I,
	// -isystem and -idirafter folders, the first sight of each kept), and Searched that it was recorded
	// (a run that compiles no C has none): after `cargo clean -p` removes the run's records, a header
	// that a folder earlier in it holds now would shadow the one the run read (gonelib.go).
	Search   []string `json:"search,omitempty"`
	Searched bool     `json:"searched,omitempty"`
	// Env, Flags and Archive: for a build-script run, what its tools read from the environment and
	// whether it made a static library, as its records showed (kept for after `cargo clean -p`
	// removes them: graph.RemovedRun).
	Env     []graph.EnvRead   `json:"env,omitempty"`
	Flags   []graph.FlagsSeen `json:"flags,omitempty"`
	Archive bool              `json:"archive,omitempty"`
	Record  string            `json:"record,omitempty"` // the run's stdout record (`output` or `stdout`), absolute
	// Members: for a build-script run that outputs static archives, "<archive file name>(<member>)" →
	// "blake3:<hex>" of the last member of that name as the run left the archive (members.go): it ties
	// a copy of a duplicated member (`ar q`) to the run that appended it.
	Members map[string]string `json:"members,omitempty"`
	// Linked: for a member duplicated in that archive (`ar q`), the digest of the copy the linker takes
	// when it differs from the run's own (Members): what binaries linked after this run hold.
	Linked map[string]string `json:"linked,omitempty"`
	// Hash is the unit's fingerprint hash for this run (its hash file, as dependents' `deps` entries
	// name it) and DepHashes those of the units its `deps` resolved to: after `cargo clean -p` they tie a
	// dependent's dangling entry to exactly the removed unit it was built against, and that unit to its
	// build-script run (removed.go), among the other configurations' runs the store keeps.
	Hash      string   `json:"hash,omitempty"`
	DepHashes []string `json:"dep_hashes,omitempty"`
	// Command is the digest of the step's command (graph.Step.Command) while the file defining it was not
	// newer than the run: the command the run ran. CommandText is that command (up to maxCommandText
	// bytes), so that a later check can say what differs.
	Command     string `json:"command,omitempty"`
	CommandText string `json:"command_text,omitempty"`
	// Tool is the program the step's command names without a folder, ToolPath the file a search of
	// PATH found for it and ToolDigest that file's digest, when the run was recorded (tool.go).
	Tool       string `json:"tool,omitempty"`
	ToolPath   string `json:"tool_path,omitempty"`
	ToolDigest string `json:"tool_digest,omitempty"`
}

// CodeDigestsFile maps a source's content digest to its code digest (code.go): content-addressed, a
// pure cache. Its name changes with what a code digest leaves out (v2: newlines at the end).
const CodeDigestsFile = "code-digests.v2.kv"

// Store holds content baselines. A Store with no folder keeps them in memory only.
type Store struct {
	c *kvfile.Cache[stepBaseline]
	// code maps "blake3:<hex>" of a source's bytes to its code digest (code.go).
	code *kvfile.Cache[string]
	now  func() time.Time
}

// OpenStore loads the baselines kept in the state folder dir ("" = in memory only). A missing, unreadable
// or corrupt file gives an empty store.
func OpenStore(dir string) *Store {
	return &Store{c: loadJSON[stepBaseline](dir, BaselinesFile), code: loadJSON[string](dir, CodeDigestsFile), now: time.Now}
}

// Save writes the store back when something was recorded (temporary file and rename); errors only cost
// the baselines of this call.
func (s *Store) Save() {
	s.c.Save()
	s.code.Save()
}

// keepCode records the code digest of the source at path while its bytes have the digest d (read
// once more, unless known).
func (s *Store) keepCode(path, d string) {
	if !codeFile(path) {
		return
	}
	if _, ok := s.code.Get(d); ok {
		return
	}
	if content, code, ok := codeDigests(path); ok && content == d {
		s.code.Put(d, code)
	}
}

// sameCode reports whether the source at path, now with content digest now, has the code of the
// content with digest base: only comments or blank runs differ.
func (s *Store) sameCode(path, base, now string) bool {
	if !codeFile(path) {
		return false
	}
	was, ok := s.code.Get(base)
	if !ok {
		return false
	}
	code, known := s.code.Get(now)
	if !known {
		content, c, ok := codeDigests(path)
		if !ok || content != now {
			return false
		}
		s.code.Put(now, c)
		code = c
	}
	return code == was
}

// keepMeaning records, for an input whose bytes are not reproducible (graph.Input.Meaning), the digest
// of the file written with it that states what it holds, while its bytes have the digest d.
func (s *Store) keepMeaning(in *graph.Input, d string, dig *digest.Cache) {
	if _, ok := s.code.Get(d); ok || in.Meaning == "" {
		return
	}
	if m, ok := meaningDigest(in, d, dig); ok {
		s.code.Put(d, m)
	}
}

// sameMeaning reports whether in, now with content digest now, holds what it held with digest base:
// the file written with it (in.Meaning) has the content it had beside the baseline.
func (s *Store) sameMeaning(in *graph.Input, base, now string, dig *digest.Cache) bool {
	was, ok := s.code.Get(base)
	if in.Meaning == "" || !ok || !strings.HasPrefix(was, meaningPrefix) {
		return false
	}
	m, ok := meaningDigest(in, now, dig)
	return ok && m == was
}

// meaningPrefix marks the digests meaningDigest gives in the code digest store (a content-addressed
// map like the code digests: the meaning of one version of a record is fixed).
const meaningPrefix = "meaning:"

// meaningDigest is the digest of in.Meaning while in's bytes have the digest d, when that file was
// written with in (not older than it): otherwise it may state an earlier or later version, and ok
// is false.
func meaningDigest(in *graph.Input, d string, dig *digest.Cache) (string, bool) {
	k, ok, err := digest.StatKey(in.File.Path)
	if err != nil || !ok {
		return "", false
	}
	mk, ok, err := digest.StatKey(in.Meaning)
	if err != nil || !ok || mk.MtimeNS < k.MtimeNS {
		return "", false
	}
	if cur, err := dig.File(in.File.Path); err != nil || cur.String() != d {
		return "", false
	}
	m, err := dig.File(in.Meaning)
	if err != nil {
		return "", false
	}
	return meaningPrefix + m.String(), true
}

// sameMeaningWhy is the reason a content verdict gives for a record rewritten with what it held.
func sameMeaningWhy(g *graph.Graph, in *graph.Input) string {
	return relTo(g.Workspace, in.Meaning) + ", which the build system writes with it, is the same as then: its own bytes are not reproducible (their order varies from run to run), the settings it holds are what that run used"
}

// sameCodeWhy is the reason a content verdict gives for an edit of comments only.
const sameCodeWhy = "only comments or blanks changed: its code, line numbers included, is what the step compiled"

// baselineKey identifies one run of a step: the step's identity within its build folder (profile folder,
// unit folder, fingerprint file) and its reference's mtime. A copy of the tree made with its mtimes
// (cp -a) keeps the key, so baselines recorded in the original answer for the copy.
func baselineKey(s *graph.Step) string { return fmt.Sprintf("%s@%d", s.ID, s.Reference.MTimeNS) }

// annotateBaselines records missing baselines of untouched inputs and judges the touched ones. An input
// is untouched when neither its mtime nor its ctime is newer than the step's reference: that costs one
// stat, and a hash only the first time (through the digest cache). A touched input is hashed and compared
// with the baseline when there is one.
func annotateBaselines(g *graph.Graph, st *Store, dig *digest.Cache, path string) {
	headers := cinclude.NewCache() // the mention scans of command judgements (commanddiff.go)
	runs := st.runsByStep()
	pinned := pinnedRuns(g, st, runs) // members.go
	var unknown []string              // inputs whose ctime moved past the run with an older mtime, and no baseline
	defer func() {
		if len(unknown) == 0 {
			return
		}
		sort.Strings(unknown)
		n := len(unknown)
		if n > 5 {
			unknown = append(unknown[:5], fmt.Sprintf("and %d more", n-5))
		}
		g.Notes = append(g.Notes, fmt.Sprintf("%d input(s) changed status (ctime) after their step last ran while their mtimes are not newer, and no content baseline was recorded for that run: whether their content is what the step used is unknown (a copy of the tree made with its mtimes, chmod, or a cp -p/rsync -t/tar restore of other content): %s",
			n, strings.Join(unknown, ", ")))
	}()
	made := madeFiles(g)
	stamps := map[string]int64{} // depfile path -> mtime (0: unreadable)
	for _, s := range g.Steps {
		// A unit whose last attempt failed keeps its last success's reference: its baseline is that
		// success's content, and the retry after a fix is judged against it.
		if !s.Live() || !s.PathPackage || !s.Reference.Exists {
			continue
		}
		ref := s.Reference.MTimeNS
		key := baselineKey(s)
		b, _ := st.c.Get(key)
		recorded := false
		// A run made in another copy of the workspace (internal/cargo otherTree) read that copy's files:
		// the content of their counterparts here is no baseline of it.
		elsewhere := unit.Of(s).OtherTree().BuiltInTree != "" && unit.Of(s).OtherTree().BuiltInTreeRecord == ""
		compares := s.ComparesContent()
		for _, in := range s.Inputs {
			p := in.File.Path
			// A generated file is not compared, unless its build system states what it holds (Meaning):
			// then that is compared.
			if !in.File.Exists || made[p] || generated(g, p) && in.Meaning == "" || compares && !in.Watched {
				continue
			}
			if in.CompiledAs != "" || elsewhere {
				in.Content = &graph.InputContent{Verdict: graph.ContentUnknown,
					Why: "the run compiled another copy's file (" + orOther(in.CompiledAs, unit.Of(s).OtherTree().BuiltInTree) + "), so the content of this one says nothing of what went in"}
				continue
			}
			k, ok, err := digest.StatKey(p)
			if err != nil || !ok {
				continue
			}
			rel := relTo(g.Workspace, p)
			base, hasBase := b.Inputs[rel]
			// usedAt: when the step last read the file. A step that runs a build of its own (a build
			// script running CMake's make) recompiles only what that build finds out of date: an object
			// whose depfile is older than the run was compiled by an earlier run, from the content the
			// file had then, which that run's baseline holds.
			// Only a reference that marks the start of a run says so: an object's own mtime (a Make or
			// Ninja step) comes with its depfile, and an older run of that step compiled something else.
			usedAt := ref
			if t := compiledAt(in, stamps); t > 0 && t < usedAt && s.Kind == graph.ScriptRun {
				usedAt = t
				if !hasBase && (k.MtimeNS > usedAt || k.CtimeNS > usedAt) {
					if old, ok := earlierBaseline(st, runs[s.ID], usedAt, rel); ok {
						if b.Inputs == nil {
							b.Inputs = map[string]string{}
						}
						b.Inputs[rel] = old
						base, hasBase, recorded = old, true, true
					}
				}
			}
			id := fmt.Sprintf("%d:%d", k.Dev, k.Ino)
			moved := hasBase && b.Files[rel] != "" && b.Files[rel] != id // the path names another file now
			if k.MtimeNS <= usedAt && k.CtimeNS <= usedAt && !moved {
				if !hasBase {
					if d, err := dig.File(p); err == nil {
						if b.Inputs == nil {
							b.Inputs = map[string]string{}
						}
						b.Inputs[rel] = d.String()
						st.keepCode(p, d.String())
						st.keepMeaning(in, d.String(), dig)
						recorded = true
					}
				}
				if b.Files[rel] == "" {
					if b.Files == nil {
						b.Files = map[string]string{}
					}
					b.Files[rel] = id
					recorded = true
				}
				continue
			}
			ic := &graph.InputContent{Verdict: graph.ContentUnknown, CTimeNS: k.CtimeNS, Baseline: base, BaselineNS: b.RecordedNS}
			if moved {
				ic.Moved, ic.Was = true, b.Files[rel]
			}
			in.Content = ic
			if !hasBase {
				if k.MtimeNS <= ref {
					unknown = append(unknown, rel)
				}
				ic.Why = "no content baseline was recorded for this run of " + stepName(s) + " (stalecheck had not checked the build since it ran, before the file changed), so its content was not compared"
				continue
			}
			d, err := dig.File(p)
			if err != nil {
				ic.Why = "it could not be hashed: " + err.Error()
				continue
			}
			ic.Digest = d.String()
			switch {
			case ic.Digest == base:
				ic.Verdict = graph.ContentSame
			case st.sameCode(p, base, ic.Digest):
				ic.Verdict, ic.Why = graph.ContentSame, sameCodeWhy
			case st.sameMeaning(in, base, ic.Digest, dig):
				ic.Verdict, ic.Why, ic.Through = graph.ContentSame, sameMeaningWhy(g, in), []string{in.Meaning}
			default:
				ic.Verdict = graph.ContentDiffers
			}
		}
		if !b.Searched && len(b.Inputs) > 0 {
			b.Search, b.Searched = searchOrder(s), true
			recorded = true
		}
		if s.Command != "" && s.Cmd().CommandFrom != "" {
			if judgeCommand(s, &b, ref, headers, g.UserCommandReads(s)) {
				recorded = true
			}
		}
		if s.Program != "" && judgeTool(s, &b, path, dig) {
			recorded = true
		}
		if s.Kind == graph.ScriptRun && b.Env == nil && b.Flags == nil && (len(s.Script().EnvReads) > 0 || len(s.Script().FlagsSeen) > 0) {
			b.Env = make([]graph.EnvRead, len(s.Script().EnvReads))
			for i, e := range s.Script().EnvReads {
				b.Env[i] = e.Kept()
			}
			b.Flags = make([]graph.FlagsSeen, len(s.Script().FlagsSeen))
			for i, f := range s.Script().FlagsSeen {
				b.Flags[i] = f.Kept()
			}
			b.Record = s.Reference.Path
			for _, o := range s.Outputs {
				if n := filepath.Base(o.Path); strings.HasPrefix(n, "lib") && strings.HasSuffix(n, ".a") {
					b.Archive = true
				}
			}
			recorded = true
		}
		if s.Kind == graph.ScriptRun && b.Members == nil {
			if m := archiveMembers(s); len(m) > 0 {
				b.Members = m
				b.Linked = linkedCopies(g, s, m)
				if b.Record == "" {
					b.Record = s.Reference.Path
				}
				recorded = true
			}
		}
		if u := unit.Of(s); u != nil && u.FingerprintHash != "" && b.Hash == "" && (recorded || len(b.Inputs) > 0) {
			b.Hash = u.FingerprintHash
			b.DepHashes = nil
			for _, d := range s.Deps {
				if du := unit.Of(d); du != nil && du.FingerprintHash != "" {
					b.DepHashes = append(b.DepHashes, du.FingerprintHash)
				}
			}
			recorded = true
		}
		if recorded {
			if b.RecordedNS == 0 {
				b.RecordedNS = st.now().UnixNano()
			}
			st.c.Put(key, b)
			st.keepNewest(runs[s.ID], key, pinned)
		}
	}
}

// searchOrder is the header search order of s's compiles (stepBaseline.Search).
func searchOrder(s *graph.Step) []string {
	var out []string
	seen := map[string]bool{}
	add := func(ds ...string) {
		for _, d := range ds {
			if d != "" && filepath.IsAbs(d) && !seen[d] {
				seen[d] = true
				out = append(out, filepath.Clean(d))
			}
		}
	}
	for _, c := range s.Cmd().Compiles {
		add(filepath.Dir(c.Source))
		add(c.Quote...)
		add(c.Dirs...)
		add(c.System...)
		add(c.After...)
	}
	return out
}

// compiledAt is the mtime of the oldest depfile that lists the input (0 when none does): the time of
// the oldest compile that read it whose output is still in use.
func compiledAt(in *graph.Input, stamps map[string]int64) int64 {
	var at int64
	for i, h := range in.How {
		if h != graph.Depfile || i >= len(in.Detail) || !filepath.IsAbs(in.Detail[i]) {
			continue
		}
		d := in.Detail[i]
		t, ok := stamps[d]
		if !ok {
			if st, err := fsrec.Stat(d); err == nil && st.Mode().IsRegular() {
				t = st.ModTime().UnixNano()
			}
			stamps[d] = t
		}
		if t > 0 && (at == 0 || t < at) {
			at = t
		}
	}
	return at
}

// earlierBaseline is the input's digest in the newest kept run of the step that started no later than
// at (the run that compiled what is still in use).
func earlierBaseline(st *Store, keys []string, at int64, rel string) (string, bool) {
	best, bestNS := "", int64(-1)
	for _, k := range keys {
		ns := refOfKey(k)
		if ns > at || ns <= bestNS {
			continue
		}
		if b, ok := st.c.Get(k); ok {
			if d, ok := b.Inputs[rel]; ok {
				best, bestNS = d, ns
			}
		}
	}
	return best, bestNS >= 0
}

// refOfKey is the reference mtime a store key ends with.
func refOfKey(k string) int64 {
	var n int64
	fmt.Sscan(k[strings.LastIndexByte(k, '@')+1:], &n)
	return n
}

// keepRuns is how many runs of one step keep their baselines: a step's reference only moves forward, so
// older runs matter only to other clones of the workspace sharing the state folder (same step IDs,
// other reference mtimes) and to copies made with their mtimes.
const keepRuns = 4

// runsByStep indexes the store's keys by step ID.
func (st *Store) runsByStep() map[string][]string {
	out := map[string][]string{}
	for _, k := range st.c.Keys() {
		if i := strings.LastIndexByte(k, '@'); i > 0 {
			out[k[:i]] = append(out[k[:i]], k)
		}
	}
	return out
}

// keepNewest drops the baselines of all but the keepRuns newest runs (by reference mtime) among a step's
// keys and the one just recorded; pinned keys (runs that wrote the copy of a duplicated archive member a
// binary links) are kept besides.
func (st *Store) keepNewest(keys []string, added string, pinned map[string]bool) {
	all := append([]string{added}, keys...)
	sort.Slice(all, func(i, j int) bool { return refOfKey(all[i]) > refOfKey(all[j]) })
	seen := map[string]bool{}
	kept := 0
	for _, k := range all {
		if seen[k] {
			continue
		}
		seen[k] = true
		if pinned[k] {
			continue
		}
		if kept < keepRuns {
			kept++
			continue
		}
		st.c.Del(k)
	}
}

// madeFiles are the files some step of g wrote (its outputs and reference): generated, never compared.
func madeFiles(g *graph.Graph) map[string]bool {
	out := map[string]bool{}
	for _, s := range g.Steps {
		for _, o := range s.Outputs {
			out[o.Path] = true
		}
		if s.Reference.Path != "" {
			out[s.Reference.Path] = true
		}
	}
	return out
}

// generated reports whether p lies in the target or build folder (generated files are never compared).
// A build folder that is the source folder itself (a Makefile building in place) or holds it says
// nothing: there, what is generated is what a step wrote (madeFiles).
func generated(g *graph.Graph, p string) bool {
	for _, d := range []string{g.TargetDir, g.BuildDir} {
		if d == "" || g.Workspace != "" && (d == g.Workspace || strings.HasPrefix(g.Workspace, d+string(filepath.Separator))) {
			continue
		}
		if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// relTo returns p relative to base when inside it, else p, as a key of the store. JSON replaces bytes
// that are not UTF-8, so such a path (and one that starts with the prefix itself) is written as
// keyB64 + its bytes in base64 (pathOfKey reverses it), and finds its baseline again.
func relTo(base, p string) string {
	rel := p
	if base != "" {
		if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
	}
	if !utf8.ValidString(rel) || strings.HasPrefix(rel, keyB64) {
		return keyB64 + base64.StdEncoding.EncodeToString([]byte(rel))
	}
	return rel
}

const keyB64 = "b64:"

// pathOfKey is the path a store key names (see relTo), relative to the workspace unless absolute.
func pathOfKey(k string) string {
	if rest, ok := strings.CutPrefix(k, keyB64); ok {
		if b, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return string(b)
		}
	}
	return k
}

func orOther(a, b string) string {
	if a != "" {
		return a
	}
	return "in " + b
}

// maxCommandText bounds the command text a baseline keeps (a longer one keeps its digest only).
const maxCommandText = 16 << 10

// judgeCommand records the digest of the step's command while the file that defines it is not newer
// than the run (so it is the command the run ran, in the environment the check shares with the build),
// and judges the command now against it (graph.Step.CommandContent): once that file moved, or whenever
// a baseline is kept (the variables of the user's environment define a Make recipe too, and make reads
// them without tracking them). A command that differs only in -D/-U options of macros the compile never
// reads (internal/cinclude's mention scan) is judged the same, with the difference said in Why.
func judgeCommand(s *graph.Step, b *stepBaseline, ref int64, headers *cinclude.Cache, reads []string) bool {
	k, ok, err := digest.StatKey(s.Cmd().CommandFrom)
	if err != nil || !ok {
		return false
	}
	now := digest.Bytes([]byte(s.Command)).String()
	moved := k.MtimeNS > ref || k.CtimeNS > ref
	for _, r := range reads {
		// An included makefile edited since the run (a config.mk setting the flags): the command now is
		// not the one the run ran, so it is no baseline to record.
		if rk, ok, err := digest.StatKey(r); err == nil && ok && (rk.MtimeNS > ref || rk.CtimeNS > ref) {
			moved = true
			if rk.CtimeNS > k.CtimeNS {
				k = rk
			}
		}
	}
	if !moved && b.Command == "" {
		b.Command = now
		if len(s.Command) <= maxCommandText {
			b.CommandText = s.Command
		}
		return true
	}
	if !moved && b.Command == now {
		return false
	}
	c := &graph.InputContent{Verdict: graph.ContentUnknown, Digest: now, Baseline: b.Command, BaselineNS: b.RecordedNS, CTimeNS: k.CtimeNS,
		BaselineText: b.CommandText}
	switch {
	case b.Command == "":
		c.Why = "no command was recorded for this run (stalecheck had not checked the build since it ran, before " + s.Cmd().CommandFrom + " changed)"
	case b.Command == now:
		c.Verdict = graph.ContentSame
	default:
		c.Verdict = graph.ContentDiffers
		if b.CommandText != "" {
			if why, inert := inertCommandChange(headers, s, b.CommandText, s.Command); inert {
				c.Verdict, c.Why = graph.ContentSame, why
			} else if cmdargs.WithoutPrinting(b.CommandText) == cmdargs.WithoutPrinting(s.Command) {
				c.Verdict, c.Why = graph.ContentSame, "the command differs only in lines that print to the terminal (echo, CMake's progress lines), which write nothing the outputs hold"
			}
		}
	}
	s.OwnCmd().CommandContent = c
	return false
}

// stepName names a step for people: its package, else what it builds.
func stepName(s *graph.Step) string {
	if s.Package != "" {
		return s.Package
	}
	return s.Label
}
