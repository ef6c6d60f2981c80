package cargo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/stalecheck/stalecheck/internal/cinclude"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/depfile"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// ErrNotBuilt says the build folder does not exist or holds no profile folder.
var ErrNotBuilt = errors.New("nothing has been built here yet")

// ReadOptions tune Read.
type ReadOptions struct {
	// CargoHome is $CARGO_HOME; rerun-if-changed paths under its registry/ and git/ are not watched by
	// Cargo. "" means $CARGO_HOME or ~/.cargo.
	CargoHome string
	// SkipNative skips opening archives and objects (members, DWARF) of live build-script runs.
	SkipNative bool
	// LivenessOnly reads units, roots, liveness and build folders only (what clean needs): no inputs,
	// build-script output, dep-info or sources.
	LivenessOnly bool
	// LiveRecords defers the fingerprint JSON of lib, bin, test and example units (their deps lists
	// and settings) until a root reaches them through deps edges (loadReached): a large tree's dead
	// copies are most of its units, and liveness needs only the records of the units it reaches. The
	// live units are the same as a full read's; a dead unit's settings are then unknown and a damaged
	// JSON of one is not read (check and run; clean, explain and which read every record).
	LiveRecords bool
	// LinksOnly reads what `which` needs: units, roots, liveness, build folders and what each
	// build-script run links (its output's rustc-link-lib and rustc-link-search directives), and none of
	// the inputs (no include scan, dep-info, rerun-if paths' package scans or sources).
	LinksOnly bool
	// StateDir is stalecheck's state folder, where what was read from OUT_DIR archives and package
	// manifests is cached (NativeCacheFile); "" reads every one.
	StateDir string
	// Profiles, when not empty, are the only profile folders read (folders as FindProfiles names them,
	// relative to the build folder: "release", "debug", "<triple>/release"; or profile names, which
	// ProfileDirName maps); a `<triple>/<profile>`
	// brings its host folder `<profile>` along (build scripts and proc macros are built there). A name
	// the build folder lacks is a *NoProfileError. The graph is then the build of those
	// profiles: roots, liveness, sources and the rules see nothing of the others.
	Profiles []string
	// NoLock: Read takes no `.cargo-lock`, because the caller holds them itself (clean, exclusively) or
	// decides what a running build means (run refuses to time a binary a build is replacing). Otherwise
	// Read takes them shared for as long as it reads, waiting for a running build (buildlock.go).
	NoLock bool
	// OnLockWait, when not nil, is told the lock a running cargo build holds, once, before Read waits for
	// the build to finish.
	OnLockWait func(lock string)
}

// NoProfileError is Read's error for a ReadOptions.Profiles name that is no profile folder of the
// build folder.
type NoProfileError struct {
	BuildDir, Folder string
	Have             []string // the profile folders there are
}

func (e *NoProfileError) Error() string {
	return fmt.Sprintf("%s has no profile folder %q (it has %s)", e.BuildDir, e.Folder, strings.Join(e.Have, ", "))
}

// ProfileDirName is the folder Cargo builds profile name into: `dev` and `test` build into `debug`,
// `bench` into `release`, any other profile into a folder of its own name (Cargo's
// CompileKind/Profiles::get_dir_name).
func ProfileDirName(name string) string {
	switch name {
	case "dev", "test":
		return "debug"
	case "bench":
		return "release"
	}
	return name
}

// scopeProfiles keeps the profiles of all that want names (and each `<triple>/<profile>`'s host
// folder); want empty keeps all.
func scopeProfiles(all, want []string, buildDir string) ([]string, error) {
	if len(want) == 0 {
		return all, nil
	}
	keep := map[string]bool{}
	for _, w := range want {
		w = filepath.ToSlash(filepath.Clean(w))
		if !strings.Contains(w, "/") {
			w = ProfileDirName(w)
		}
		if !slices.Contains(all, w) {
			return nil, &NoProfileError{buildDir, w, all}
		}
		keep[w] = true
		if hp := hostProfile(w); hp != "" && slices.Contains(all, hp) {
			keep[hp] = true
		}
	}
	var out []string
	for _, p := range all {
		if keep[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// Read builds the provenance graph of a Cargo build folder without running Cargo, following
// docs/cargo-target-dir.md (cargo 1.95, legacy layout): units from `.fingerprint/`,
// build-script runs from `build/<pkg>-<hash>/`, roots from the uplifted artifacts (tied to their
// units by inode, else by content), the `deps` chain by fingerprint hash. It returns an error only
// when the build folder itself cannot be read; a record that cannot be read becomes a graph.Problem.
func Read(l *Layout, opt ReadOptions) (*graph.Graph, error) {
	if opt.CargoHome == "" {
		opt.CargoHome = os.Getenv("CARGO_HOME")
		if opt.CargoHome == "" {
			if h, err := os.UserHomeDir(); err == nil {
				opt.CargoHome = filepath.Join(h, ".cargo")
			}
		}
	}
	g := &graph.Graph{System: unit.System, Workspace: l.Workspace, TargetDir: l.TargetDir, BuildDir: l.BuildDir,
		Origins: map[string]any{unit.System: &unit.Tree{}}}
	st, err := fsrec.Stat(l.BuildDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no build folder at %s (chosen by %s); run cargo build first", ErrNotBuilt, l.BuildDir, l.BuildDirSrc)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the build folder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("the build folder %s is not a folder", l.BuildDir)
	}
	profiles, err := FindProfiles(l.BuildDir)
	if err != nil {
		return nil, fmt.Errorf("cannot read the build folder: %w", err)
	}
	if len(profiles) == 0 {
		return nil, fmt.Errorf("%w: %s holds no profile folder with unit records (a .fingerprint folder, or build/<pkg>/<hash>/ in the new layout); run cargo build first", ErrNotBuilt, l.BuildDir)
	}
	if profiles, err = scopeProfiles(profiles, opt.Profiles, l.BuildDir); err != nil {
		return nil, err
	}
	g.ProfileDirs = profiles
	if !opt.NoLock {
		locks, err := shareLocks([]string{l.BuildDir, l.TargetDir}, profiles, opt.OnLockWait)
		if err != nil {
			return nil, err
		}
		defer locks.release()
	}
	r := &reader{g: g, l: l, opt: opt, index: map[string]map[string][]*graph.Step{}, deps: map[string]*depsDir{},
		pkgScan: map[string]*pkgScan{}, fps: map[*graph.Step]*Fingerprint{}}
	var nativeReady chan *nativeCache
	if !opt.LivenessOnly {
		// The cache file is decoded while the unit records are read: the build-script runs' details
		// ask it first (below), and the file is a few hundred kilobytes of JSON.
		nativeReady = make(chan *nativeCache, 1)
		go func() { nativeReady <- openNativeCache(opt.StateDir) }()
		defer func() { r.native.save() }()
		includes := cinclude.OpenStore(opt.StateDir)
		defer includes.Save()
		r.inc = newIncludeScanner(includes)
	} else {
		r.inc = newIncludeScanner(nil)
	}
	for _, p := range profiles {
		if err := r.readFingerprints(p); err != nil {
			// A profile folder whose unit records cannot be listed (a permission, an I/O error) leaves
			// every binary of it unjudged: that is no answer, not a pass.
			return nil, fmt.Errorf("cannot read the profile folder %s: %w", filepath.Join(l.BuildDir, p), err)
		}
	}
	deps := make([]*depsDir, len(profiles))
	Parallel(len(profiles), func(i int) { deps[i] = r.listDeps(profiles[i]) })
	for i, p := range profiles {
		r.deps[p] = deps[i]
	}
	// The roots first (they need the units, not their edges): the deferred records are read from them.
	// Their notes go after resolveDeps's, as when the edges came first.
	before := len(g.Notes)
	for _, p := range profiles {
		r.findRoots(p)
	}
	rootNotes := slices.Clone(g.Notes[before:])
	g.Notes = g.Notes[:before]
	r.loadReached()
	r.resolveDeps()
	g.Notes = append(g.Notes, rootNotes...)
	g.MarkLive()
	judge(g)
	// The edges are made: from here on the fingerprints are read for build scripts (their compiles and
	// runs, live or not) and for live units (their dep-info) only. A dead lib, bin or test unit's
	// fingerprint goes now: most units of a large tree are dead copies (28,000 of the synthetic tree's).
	for s := range r.fps {
		if !s.Live() && s.Kind != graph.ScriptCompile && s.Kind != graph.ScriptRun {
			delete(r.fps, s)
		}
	}
	r.readBuildDirs()
	if nativeReady != nil {
		r.native = <-nativeReady
	}
	switch {
	case opt.LinksOnly && !opt.LivenessOnly:
		r.readDetails()
	case !opt.LivenessOnly:
		r.readDetails()
		r.readSources()
		r.rootsOtherTree()
		r.judgeConfig()
	}
	built := defaultPackages(l.Workspace)
	var flags *string
	if l.TargetDirSrc == "--target-dir" {
		// Cargo does not know this target folder by itself: its fixes must name it.
		f := " --target-dir " + l.TargetDir
		flags = &f
	}
	Parallel(len(g.Steps), func(i int) {
		s := g.Steps[i]
		if flags != nil {
			unit.Of(s).BuildFlags = flags
		}
		s.Config = unit.Config(unit.Of(s), s.ProfileDir)
		if s.PathPackage && s.PackageRoot != "" && !built(s.PackageRoot) {
			unit.Of(s).NotBuiltByDefault = true
		}
	})
	sort.Slice(g.Problems, func(i, j int) bool {
		a, b := g.Problems[i], g.Problems[j]
		return a.Path < b.Path || a.Path == b.Path && a.Err < b.Err
	})
	// One problem per record: a file several readers tried is reported once.
	kept := g.Problems[:0]
	for i, p := range g.Problems {
		if i == 0 || p.Path != g.Problems[i-1].Path {
			kept = append(kept, p)
		}
	}
	g.Problems = kept
	return g, nil
}

// judge fills g.Unjudged once MarkLive has run: a profile folder is not judged when
//   - no root there is tied to a unit, and it is not the host folder of a `<triple>/<profile>` folder
//     that has one (e.g. only `cargo check` ran);
//   - a root there could not be tied to its unit;
//   - a record under its `.fingerprint` folder (or that of a `<triple>/<profile>` folder built on it)
//     could not be read: it may be the one that ties a folder to a root.
func judge(g *graph.Graph) {
	g.Unjudged = map[string]string{}
	mark := func(prof, why string) {
		if _, ok := g.Unjudged[prof]; !ok {
			g.Unjudged[prof] = why
		}
		if hp := hostProfile(prof); hp != "" {
			if _, ok := g.Unjudged[hp]; !ok {
				g.Unjudged[hp] = why
			}
		}
	}
	sep := string(filepath.Separator)
	for _, p := range g.Problems {
		for _, prof := range g.ProfileDirs {
			if isRecordPath(g.BuildDir, prof, p.Path) {
				mark(prof, fmt.Sprintf("the record %s could not be read (%s), so what it ties to a binary is unknown", p.Path, p.Err))
			}
		}
	}
	anchored := map[string]bool{}
	for _, r := range g.Roots {
		if r.Step == nil {
			if rel, err := filepath.Rel(g.TargetDir, filepath.Dir(r.File.Path)); err == nil {
				mark(strings.TrimSuffix(rel, sep+"examples"), fmt.Sprintf("root %s could not be tied to its unit", r.File.Path))
			}
			continue
		}
		anchored[r.Step.ProfileDir] = true
		if hp := hostProfile(r.Step.ProfileDir); hp != "" {
			anchored[hp] = true
		}
	}
	for _, prof := range g.ProfileDirs {
		if !anchored[prof] {
			if _, ok := g.Unjudged[prof]; !ok {
				g.Unjudged[prof] = "no binary or library there is tied to a unit (e.g. only cargo check ran), so liveness cannot be judged"
			}
		}
	}
}

type reader struct {
	g     *graph.Graph
	strs  interner // one copy of the words of every build script's output
	l     *Layout
	opt   ReadOptions
	mu    sync.Mutex
	index map[string]map[string][]*graph.Step // profile dir -> hash file content -> units
	fps   map[*graph.Step]*Fingerprint
	// pending are the units whose fingerprint JSON is not read yet (ReadOptions.LiveRecords).
	pending map[*graph.Step]string
	deps    map[string]*depsDir // profile dir -> deps/ listing
	// byDir maps "<profile>/<pkg>-<hash>" to its units.
	byDir   map[string][]*graph.Step
	pkgScan map[string]*pkgScan
	inc     *includeScanner // #include lines read once per check, shared by every run
	// neverBuilt are the rustc units whose first build failed: no hash file, only rustc's diagnostics.
	neverBuilt map[*graph.Step]bool
	// damagedHash are, by profile folder, the units whose hash file could not be read: a deps entry
	// that names no hash on disk may name one of them (depCandidates).
	damagedHash map[string][]*graph.Step
	native      *nativeCache // archiveEvidence answers by archive stat key (nil: none)
	host        string       // the host triple (.rustc_info.json), "" when unknown
	manifests   manifestCache
	probes      sync.Map // path -> error of fsrec.Stat: probe's answers, asked again per source
	names       sync.Map // package root -> the package name its Cargo.toml states (manifestName)
	texts       sync.Map // path -> *textWords (nil: unreadable): build scripts and descriptions
}

// text is the bytes of a build script or build description and its word set (nil, nil when it cannot
// be read), read once per read: every run of a package (one per profile and configuration) searches
// the same script.
func (r *reader) text(path string) ([]byte, *textWords) {
	if v, ok := r.texts.Load(path); ok {
		t := v.(*textWords)
		if t == nil {
			return nil, nil
		}
		return []byte(t.text), t
	}
	data, err := safeio.ReadFile(path, safeio.MaxRecord)
	if err != nil {
		data = nil
	}
	t := newTextWords(data)
	r.texts.Store(path, t)
	return data, t
}

// probe is fsrec.Stat(path)'s error, looked up once per read: the search for another copy of the
// workspace asks whether the same few names exist under it for every source of every binary (a
// read takes one snapshot of the file system; the first look-up is the one recorded).
func (r *reader) probe(path string) error {
	if v, ok := r.probes.Load(path); ok {
		err, _ := v.(error)
		return err
	}
	_, err := fsrec.Stat(path)
	r.probes.Store(path, err)
	return err
}

func (r *reader) problem(path string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.g.AddProblem(path, err)
}

// stepProblem is problem for a record of step s.
func (r *reader) stepProblem(s *graph.Step, path string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.g.AddStepProblem(s, path, err)
}

// FindProfiles returns the profile folders (relative to the build folder) that hold .fingerprint or
// new-layout unit folders (ProfileLayouts):
// `debug`, `release`, custom profiles, and `<triple>/<profile>`. Symlinked folders are not followed.
func FindProfiles(buildDir string) ([]string, error) {
	ents, err := fsrec.ReadDir(buildDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if isProfileDir(filepath.Join(buildDir, e.Name())) {
			out = append(out, e.Name())
			continue
		}
		subs, err := fsrec.ReadDir(filepath.Join(buildDir, e.Name()))
		if errors.Is(err, fs.ErrPermission) {
			// An unreadable folder may be a profile: keep it, so reading it reports the problem.
			out = append(out, e.Name())
			continue
		}
		if err != nil {
			continue
		}
		for _, s := range subs {
			if s.IsDir() && isProfileDir(filepath.Join(buildDir, e.Name(), s.Name())) {
				out = append(out, e.Name()+"/"+s.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// isRealDir reports whether p is a folder itself, not a symlink to one.
func isRealDir(p string) bool {
	st, err := fsrec.Lstat(p)
	return err == nil && st.IsDir()
}

// isProfileDir reports whether a folder is a profile folder in either layout (ProfileLayouts).
func isProfileDir(dir string) bool {
	return isRealDir(filepath.Join(dir, ".fingerprint")) || len(newLayoutUnits(dir, 1)) > 0
}

func isDir(p string) bool {
	st, err := fsrec.Stat(p)
	return err == nil && st.IsDir()
}

// SplitUnitName splits "<pkg>-<hash>" on the last '-' and checks the 16-hex hash.
func SplitUnitName(name string) (pkg, hash string, ok bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || len(name)-i-1 != 16 {
		return "", "", false
	}
	for _, c := range name[i+1:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", "", false
		}
	}
	return name[:i], name[i+1:], true
}

func stepKind(target string) graph.StepKind {
	switch {
	case strings.HasPrefix(target, "run-build-script-"):
		return graph.ScriptRun
	case strings.HasPrefix(target, "build-script-"):
		return graph.ScriptCompile
	}
	return graph.Compile
}

// readFingerprints creates one step per hash file in <profile>/.fingerprint/*/ (legacy layout) and
// <profile>/build/*/*/fingerprint/ (new layout).
func (r *reader) readFingerprints(prof string) error {
	dirs, root, err := fingerprintFolders(r.l.BuildDir, prof)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			r.problem(root, err)
			return nil
		}
		return err
	}
	legacy, _ := ProfileLayouts(r.l.BuildDir, prof)
	type result struct {
		steps   []*graph.Step
		fps     []*Fingerprint
		never   []int         // indexes of steps whose first build failed
		damaged []*graph.Step // steps whose hash file could not be read
		pending []string      // parallel to steps: the JSON left for loadReached ("": read)
	}
	results := make([]result, len(dirs))
	// The first step of each folder and its unit come from one array each: a large tree has tens of
	// thousands of them, alive until the check ends, and one allocation for all of them spares the
	// collector as many objects and the heap the partly filled spans they leave among short-lived ones.
	firstSteps, firstUnits := make([]graph.Step, len(dirs)), make([]unit.Unit, len(dirs))
	Parallel(len(dirs), func(i int) {
		d := dirs[i]
		pkg, hash, dir := d.pkg, d.hash, d.dir
		// IDs and names are <pkg>-<hash> in both layouts; a new-layout unit of a profile folder that
		// also holds legacy records (which may carry the same hash) gets its folder path in its ID.
		idName := pkg + "-" + hash
		if d.newLayout && legacy {
			idName = "build/" + pkg + "/" + hash
		}
		if !d.isDir {
			// Cargo makes a folder per unit; anything else in its place (a symlink, a file) is a record
			// that cannot be read: the profile is not judged, so clean leaves it alone.
			r.problem(dir, fmt.Errorf("not a folder (%s): Cargo keeps one folder per unit here", safeio.Kind(d.mode)))
			return
		}
		files, err := fsrec.ReadDirKept(dir)
		if err != nil {
			r.problem(dir, err)
			return
		}
		buf := recordBufs.Get().(*[]byte)
		defer recordBufs.Put(buf)
		if len(files) == 0 {
			r.problem(dir, fmt.Errorf("the unit's fingerprint folder is empty: its hash file and fingerprint are missing"))
			return
		}
		hasJSON := map[string]bool{}
		for _, f := range files {
			if t, ok := strings.CutSuffix(f.Name(), ".json"); ok {
				hasJSON[t] = true
			}
		}
		for _, f := range files {
			n := f.Name()
			if f.IsDir() && hasJSON[n] {
				// A folder where Cargo keeps the unit's hash file (beside its fingerprint JSON): a record
				// that cannot be read, not a unit that is gone.
				r.problem(filepath.Join(dir, n), fmt.Errorf("not a regular file (a folder): Cargo keeps the unit's hash file here"))
				continue
			}
			if f.IsDir() || strings.HasPrefix(n, "dep-") || strings.HasPrefix(n, "output-") ||
				strings.HasSuffix(n, ".json") || n == "invoked.timestamp" {
				continue
			}
			var s *graph.Step
			var u *unit.Unit
			if len(results[i].steps) == 0 {
				s, u = &firstSteps[i], &firstUnits[i]
			} else {
				s, u = new(graph.Step), new(unit.Unit)
			}
			*u = unit.Unit{Hash: hash, Target: n, FingerprintDir: dir}
			*s = graph.Step{
				System: unit.System, Origin: u,
				ID: prof + "/" + idName + "/" + n, Kind: stepKind(n), Package: pkg,
				Name: pkg + "-" + hash, Label: n, RecordDir: dir,
				ProfileDir: prof,
			}
			hf := filepath.Join(dir, n)
			h, err := readHashFile(hf, buf, f.Type().IsRegular())
			if err != nil {
				r.problem(hf, err)
				results[i].damaged = append(results[i].damaged, s)
			} else if h == "" {
				s.Failed = fmt.Sprintf("the hash file %s is empty: Cargo truncates it when the unit starts building and rewrites it only on success", hf)
			}
			unit.Of(s).FingerprintHash, s.Key = h, h
			var fp *Fingerprint
			jf := hf + ".json"
			if r.opt.LiveRecords && s.Kind == graph.Compile {
				unit.Of(s).FeaturesUnknown = true // until loadReached reads it
			} else {
				fp = r.readFingerprintJSON(s, jf, buf)
				jf = ""
			}
			results[i].steps = append(results[i].steps, s)
			results[i].fps = append(results[i].fps, fp)
			results[i].pending = append(results[i].pending, jf)
		}
		if len(results[i].steps) == 0 {
			// No hash file, but the cached diagnostics of a rustc unit: its first build in this folder
			// failed (Cargo writes the hash file and its JSON only on success, the output- file as
			// rustc reports). The unit is there to be built again; a dependant's deps entry can name it.
			for _, f := range files {
				if t, ok := strings.CutPrefix(f.Name(), "output-"); ok && t != "" && !f.IsDir() {
					results[i].steps = append(results[i].steps, &graph.Step{
						System: unit.System, Origin: &unit.Unit{Hash: hash, Target: t, FingerprintDir: dir},
						ID: prof + "/" + idName + "/" + t, Kind: stepKind(t), Package: pkg,
						Name: pkg + "-" + hash, Label: t, RecordDir: dir, ProfileDir: prof,
						Failed: fmt.Sprintf("%s has no hash file, only rustc's diagnostics (%s): the unit's first build here failed, and Cargo writes the hash file only on success",
							dir, f.Name()),
					})
					results[i].fps = append(results[i].fps, nil)
					results[i].pending = append(results[i].pending, "")
					results[i].never = append(results[i].never, len(results[i].steps)-1)
				}
			}
		}
	})
	idx := map[string][]*graph.Step{}
	for _, res := range results {
		if len(res.damaged) > 0 {
			if r.damagedHash == nil {
				r.damagedHash = map[string][]*graph.Step{}
			}
			r.damagedHash[prof] = append(r.damagedHash[prof], res.damaged...)
		}
		for _, j := range res.never {
			if r.neverBuilt == nil {
				r.neverBuilt = map[*graph.Step]bool{}
			}
			r.neverBuilt[res.steps[j]] = true
		}
		for j, s := range res.steps {
			r.g.Steps = append(r.g.Steps, s)
			r.fps[s] = res.fps[j]
			if res.pending[j] != "" {
				if r.pending == nil {
					r.pending = map[*graph.Step]string{}
				}
				r.pending[s] = res.pending[j]
			}
			if unit.Of(s).FingerprintHash != "" {
				idx[unit.Of(s).FingerprintHash] = append(idx[unit.Of(s).FingerprintHash], s)
			}
		}
	}
	r.index[prof] = idx
	return nil
}

// readFingerprintJSON reads and decodes unit s's fingerprint JSON and fills what the unit holds of it
// (features, flags, compile kind, rustc); nil when it cannot be read or decoded (reported).
func (r *reader) readFingerprintJSON(s *graph.Step, jf string, buf *[]byte) *Fingerprint {
	var fp *Fingerprint
	if data, err := safeio.ReadFileKeptInto(jf, safeio.MaxRecord, buf); err != nil {
		r.problem(jf, err)
	} else if fp, err = ParseFingerprint(data); err != nil {
		r.problem(jf, err)
		fp = nil
	}
	u := unit.Of(s)
	u.FeaturesUnknown = fp == nil
	if fp != nil {
		u.DeclarationsKnown = true
		u.Features = FeatureList(fp.Features)
		u.Rustflags = fp.Rustflags
		u.CompileKind = fp.CompileKind
		u.Rustc = fp.Rustc
	}
	return fp
}

// loadReached reads the fingerprint JSON that ReadOptions.LiveRecords deferred, of every unit the roots
// reach through deps edges (build-script units included, whose JSON is read already), level by level,
// each level's files on every core.
//
// The edges of the units it reaches are then what a full read makes of them, so liveness is the same,
// as long as resolving an edge needs nothing from the units left unread: the hash-file index is
// complete (every hash file is read), and so is the list of units whose hash file is damaged; what is
// not is the package ids learnt from every edge (resolveDeps breaks a tie between candidates by them,
// and names the folders a dangling entry keeps live by them). So an edge with no candidate, or with
// several candidates that are not build-script units of one profile folder (whose package ids come
// from their own records, read whole), reads every deferred JSON, as a full read does.
func (r *reader) loadReached() {
	if len(r.pending) == 0 {
		return
	}
	seen := map[*graph.Step]bool{}
	var level []*graph.Step
	visit := func(s *graph.Step) {
		if s != nil && !seen[s] {
			seen[s] = true
			level = append(level, s)
		}
	}
	for _, root := range r.g.Roots {
		visit(root.Step)
	}
	runsOf := map[string][]*graph.Step{}
	for _, s := range r.g.Steps {
		if s.Kind == graph.ScriptRun {
			runsOf[s.Package] = append(runsOf[s.Package], s)
		}
	}
	for len(level) > 0 {
		r.loadPending(level)
		cur := level
		level = nil
		for _, s := range cur {
			if r.neverBuilt[s] {
				// tieNeverBuilt ties it to one of its package's runs, found by time.
				for _, c := range runsOf[s.Package] {
					visit(c)
				}
			}
			fp := r.fps[s]
			if fp == nil {
				continue
			}
			for _, d := range fp.Deps {
				cands := r.depCandidates(s, d)
				if len(cands) == 0 || len(cands) > 1 && !oneFolderScripts(cands) {
					r.loadPending(nil) // every one: the edge may need what the others say
					return
				}
				for _, c := range cands {
					visit(c)
				}
			}
		}
	}
}

// loadPending reads the deferred JSON of the steps given (of every deferred one when nil), on every core.
func (r *reader) loadPending(steps []*graph.Step) {
	var todo []*graph.Step
	if steps == nil {
		for s := range r.pending {
			todo = append(todo, s)
		}
	} else {
		for _, s := range steps {
			if _, ok := r.pending[s]; ok {
				todo = append(todo, s)
			}
		}
	}
	fps := make([]*Fingerprint, len(todo))
	Parallel(len(todo), func(i int) {
		buf := recordBufs.Get().(*[]byte)
		defer recordBufs.Put(buf)
		fps[i] = r.readFingerprintJSON(todo[i], r.pending[todo[i]], buf)
	})
	for i, s := range todo {
		r.fps[s] = fps[i]
		delete(r.pending, s)
	}
}

// A unit left unread has no edges: the dead runs get no dead lib among their Dependents, which only
// which's list of the copies a library has (evidence.Libraries, from a full read) looks at.

// oneFolderScripts reports whether every candidate is a build-script unit of one profile folder.
func oneFolderScripts(cands []*graph.Step) bool {
	for _, c := range cands {
		if c.Kind != graph.ScriptRun && c.Kind != graph.ScriptCompile || c.ProfileDir != cands[0].ProfileDir {
			return false
		}
	}
	return true
}

// recordBufs are the buffers the fingerprint folders' hash files and JSON are read into, one per worker
// at a time: the parses copy what they keep, and a large tree has tens of thousands of each.
var recordBufs = sync.Pool{New: func() any { return new([]byte) }}

// hostProfile returns the host profile folder of a `<triple>/<profile>` folder ("" for a host one).
func hostProfile(prof string) string {
	if i := strings.IndexByte(prof, '/'); i >= 0 {
		return prof[i+1:]
	}
	return ""
}

// resolveDeps ties each unit to the units its fingerprint `deps` name, by hash file content, looking in
// its own profile folder and, for a target-triple folder, the host one (build scripts are host units).
func (r *reader) resolveDeps() {
	// Fingerprint hashes are not unique (two units can share one). Each deps entry also carries the
	// dependency's package-id hash: learn every unit's package id from the edges that name it without a
	// tie, and from a unit's edge to its own build script (same package), then break ties with it.
	pkgID := map[*graph.Step]uint64{}
	// Every deps entry's candidates, found once on every core (both passes below ask for them; the
	// index and the fingerprints are only read here).
	candsOf := make([][][]*graph.Step, len(r.g.Steps))
	Parallel(len(r.g.Steps), func(i int) {
		s := r.g.Steps[i]
		fp := r.fps[s]
		if fp == nil {
			return
		}
		c := make([][]*graph.Step, len(fp.Deps))
		for j, d := range fp.Deps {
			c[j] = r.depCandidates(s, d)
		}
		candsOf[i] = c
	})
	for i, s := range r.g.Steps {
		fp := r.fps[s]
		if fp == nil {
			continue
		}
		for j, d := range fp.Deps {
			cands := candsOf[i][j]
			if len(cands) == 1 {
				pkgID[cands[0]] = d.PkgID
			}
			if strings.HasPrefix(d.Name, "build_script_") && (s.Kind == graph.Compile || s.Kind == graph.ScriptRun && len(cands) > 0 && cands[0].Kind == graph.ScriptCompile) {
				pkgID[s] = d.PkgID
			}
		}
	}
	type danglingDep struct {
		s *graph.Step
		d DepFingerprint
	}
	var dangling []danglingDep
	for i, s := range r.g.Steps {
		fp := r.fps[s]
		if fp == nil {
			continue
		}
		for j, d := range fp.Deps {
			named := candsOf[i][j]
			if len(named) == 0 {
				switch dc := r.damagedCandidates(s, d); {
				case len(dc) == 1:
					named = dc // the one unit it can name: its hash file says nothing either way
				case len(dc) > 1:
					// Not known to be gone (a pending rebuild), nor which of them it names: an edge the
					// check cannot follow, said as such.
					var ids []string
					for _, c := range dc {
						ids = append(ids, c.ID)
					}
					r.stepProblem(s, s.RecordDir, fmt.Errorf("its dependency %s (fingerprint %s) may be any of %s, whose hash files could not be read", d.Name, HashHex(d.Hash), strings.Join(ids, ", ")))
					continue
				}
			}
			switch {
			case len(named) == 0:
				hx := HashHex(d.Hash)
				unit.Of(s).OwnRemoved().GoneDeps = append(unit.Of(s).OwnRemoved().GoneDeps, d.Name+" "+hx)
				dangling = append(dangling, danglingDep{s, d})
				if own, ok := pkgID[s]; ok && strings.HasPrefix(d.Name, "build_script_") && d.PkgID != own && !r.anyOfPackage(s, d.PkgID, pkgID) {
					unit.Of(s).OwnRemoved().RemovedOtherRuns = append(unit.Of(s).OwnRemoved().RemovedOtherRuns, d.Name+" "+hx)
				}
				continue
			case len(named) > 1:
				var same []*graph.Step
				for _, c := range named {
					if id, ok := pkgID[c]; ok && id == d.PkgID {
						same = append(same, c)
					}
				}
				if len(same) == 1 {
					named = same
					break
				}
				// Still tied: prefer the same package name (a unit's own build script), and say so.
				best := named[0]
				for _, c := range named {
					if c.Package == s.Package {
						best = c
						break
					}
				}
				if best.Package != s.Package {
					r.g.Notes = append(r.g.Notes, fmt.Sprintf("%s: dependency %s hash %s matches %d units; took %s", s.ID, d.Name, HashHex(d.Hash), len(named), best.ID))
				}
				named = []*graph.Step{best}
			}
			dep := named[0]
			s.Deps = append(s.Deps, dep)
			dep.Dependents = append(dep.Dependents, s)
		}
	}
	r.tieNeverBuilt()
	// Once every hash edge is known (reused looks at a candidate run's compile unit).
	for _, x := range dangling {
		// The units on disk that a GoneDeps entry can name by extern name, package and configuration
		// although their hash file no longer holds the recorded hash (the same unit rebuilt in place since,
		// or one whose last build failed or whose hash file is unreadable): Cargo builds this unit's
		// configuration into those folders again, so they are live; all of them when the records cannot
		// tell several apart.
		x.s.KeepsLive = append(x.s.KeepsLive, r.reused(x.s, x.d, pkgID)...)
	}
	// The dependency lists are the graph's edges now; the rest of the read asks the fingerprints for
	// their local entries only, so the lists (most of a parsed fingerprint) and the feature lists (the
	// units hold theirs) are dropped.
	for _, fp := range r.fps {
		if fp != nil {
			fp.Deps, fp.Features, fp.DeclaredFeatures, fp.Rustflags = nil, "", "", nil
		}
	}
}

// anyOfPackage reports whether a unit of s's profile folder (or its host one) has the package id id,
// as the edges naming it show.
func (r *reader) anyOfPackage(s *graph.Step, id uint64, pkgID map[*graph.Step]uint64) bool {
	hp := hostProfile(s.ProfileDir)
	for c, cid := range pkgID {
		if cid == id && (c.ProfileDir == s.ProfileDir || hp != "" && c.ProfileDir == hp) {
			return true
		}
	}
	return false
}

// tieNeverBuilt gives a rustc unit whose first build failed (no hash file, so no fingerprint and no
// deps) the one edge its records still show: its package's build-script run in the same build, the
// newest run of that package in the unit's profile folder (or its host one) whose output was written
// before the unit started (its invoked.timestamp). Without it the run Cargo reuses for the retry would be
// reached by no root.
func (r *reader) tieNeverBuilt() {
	for _, s := range r.g.Steps {
		if !r.neverBuilt[s] || s.Kind != graph.Compile || len(s.Deps) > 0 {
			continue
		}
		started, err := fsrec.Stat(filepath.Join(s.RecordDir, "invoked.timestamp"))
		if err != nil {
			continue
		}
		hp := hostProfile(s.ProfileDir)
		var best *graph.Step
		var bestNS int64
		for _, c := range r.g.Steps {
			if c.Kind != graph.ScriptRun || c.Package != s.Package || c.ProfileDir != s.ProfileDir && (hp == "" || c.ProfileDir != hp) {
				continue
			}
			out, err := fsrec.Stat(unit.PathsOf(r.l.BuildDir, c).Stdout)
			if err != nil || out.ModTime().After(started.ModTime()) {
				continue
			}
			if ns := out.ModTime().UnixNano(); best == nil || ns > bestNS {
				best, bestNS = c, ns
			}
		}
		if best != nil {
			s.Deps = append(s.Deps, best)
			best.Dependents = append(best.Dependents, s)
		}
	}
}

// reused returns the units a dangling deps entry of s names by extern name, package and configuration:
// the folders Cargo builds that dependency into again on the next build of s's configuration (a unit
// rebuilt in place has a new hash; one whose last build failed has an empty hash file; an unreadable
// hash file is unknown). Cargo names unit folders by the configuration, not by the fingerprint hash
// (docs/cargo-target-dir.md §0, §3.2), so these are the dependency's folders for s. Candidates are
// units of s's profile folder (and its host one) whose kind and target match the entry's name, whose
// package id (learned from the edges that name them) is the entry's when known, and, for a unit's own
// build script, whose build-script compile has the unit's features, and whose RUSTFLAGS are s's. When
// several remain and some of them failed, those; else all: keeping a folder too many is safe, deleting
// a live one is not.
func (r *reader) reused(s *graph.Step, d DepFingerprint, pkgID map[*graph.Step]uint64) []*graph.Step {
	hp := hostProfile(s.ProfileDir)
	var out []*graph.Step
	for _, c := range r.g.Steps {
		if c == s || c.ProfileDir != s.ProfileDir && (hp == "" || c.ProfileDir != hp) {
			continue
		}
		if !depNameMatches(d.Name, c) {
			continue
		}
		if id, ok := pkgID[c]; ok && id != d.PkgID {
			continue
		}
		if strings.HasPrefix(d.Name, "build_script_") && s.Kind != graph.ScriptRun {
			// A lib, bin or test unit's own build-script run: same package, and its compile was built
			// with the unit's features.
			if c.Kind != graph.ScriptRun || c.Package != s.Package {
				continue
			}
			if comp := scriptCompile(c); comp != nil && r.fps[comp] != nil && r.fps[s] != nil &&
				!slices.Equal(unit.Of(comp).Features, unit.Of(s).Features) {
				continue
			}
		}
		// RUSTFLAGS are part of every unit's hash in one build: a unit built with other flags is
		// another configuration's (e.g. before a RUSTFLAGS toggle), never the one Cargo reuses.
		flagsOf := c
		if c.Kind == graph.ScriptRun {
			flagsOf = scriptCompile(c)
		}
		if flagsOf != nil && r.fps[flagsOf] != nil && r.fps[s] != nil && s.Kind != graph.ScriptRun &&
			!slices.Equal(unit.Of(flagsOf).Rustflags, unit.Of(s).Rustflags) {
			continue
		}
		out = append(out, c)
	}
	// A dependency whose own last build failed (empty hash file) is the one this entry named: the
	// dependant started from it in the same build. Other candidates (another feature variant, whose
	// hash is intact and different) are another configuration's units.
	// A unit whose first build failed (no hash file at all) is another configuration's new folder: kept
	// live beside the others (Cargo builds it next), never in their place, for the binary on disk was
	// built against one of them.
	if len(out) > 1 {
		var failed, never []*graph.Step
		for _, c := range out {
			switch {
			case r.neverBuilt[c]:
				never = append(never, c)
			case unit.Of(c).FingerprintHash == "":
				failed = append(failed, c)
			}
		}
		if len(failed) > 0 {
			out = append(failed, never...)
		}
	}
	return out
}

// scriptCompile returns the build-script compile unit a run depends on (nil when unknown).
func scriptCompile(run *graph.Step) *graph.Step {
	for _, d := range run.Deps {
		if d.Kind == graph.ScriptCompile && d.Package == run.Package {
			return d
		}
	}
	return nil
}

// depCandidates returns the units a deps entry can name: the same hash in the unit's profile folder or,
// for a `<triple>/<profile>` folder, the host one (build scripts are host units), filtered by the
// entry's name (all of them when none matches: a renamed dependency's extern name differs).
func (r *reader) depCandidates(s *graph.Step, d DepFingerprint) []*graph.Step {
	hx := HashHex(d.Hash)
	cands := r.index[s.ProfileDir][hx]
	if hp := hostProfile(s.ProfileDir); hp != "" {
		if more := r.index[hp][hx]; len(more) > 0 {
			cands = append(cands[:len(cands):len(cands)], more...)
		}
	}
	all := true
	for _, c := range cands {
		all = all && depNameMatches(d.Name, c)
	}
	if all {
		return sameLayout(s, cands)
	}
	var named []*graph.Step
	for _, c := range cands {
		if depNameMatches(d.Name, c) {
			named = append(named, c)
		}
	}
	if len(named) == 0 {
		return sameLayout(s, cands)
	}
	return sameLayout(s, named)
}

// damagedCandidates are, for a deps entry that names no hash on disk, the units of its name whose hash
// file could not be read, in the profile folders depCandidates looks in: the entry may name one of them
// (it is not known to be gone), and when it is the only one, the edge is taken to it.
func (r *reader) damagedCandidates(s *graph.Step, d DepFingerprint) []*graph.Step {
	var named []*graph.Step
	for _, prof := range []string{s.ProfileDir, hostProfile(s.ProfileDir)} {
		for _, c := range r.damagedHash[prof] {
			if prof != "" && depNameMatches(d.Name, c) {
				named = append(named, c)
			}
		}
	}
	return sameLayout(s, named)
}

func depNameMatches(name string, c *graph.Step) bool {
	if strings.HasPrefix(name, "build_script_") {
		return c.Kind == graph.ScriptRun || c.Kind == graph.ScriptCompile
	}
	t := unit.Of(c).Target // ends with "-" + name
	return c.Kind == graph.Compile && len(t) > len(name) && t[len(t)-len(name)-1] == '-' && strings.HasSuffix(t, name)
}

// depsDir is one profile's deps/ (and examples/) listing, by unit hash; in the new layout, the files
// in each compile unit's out/ folder.
type depsDir struct {
	byHash map[string][]string // hash -> absolute paths of files carrying it
}

func (r *reader) depsListing(prof string) *depsDir {
	if d := r.deps[prof]; d != nil {
		return d
	}
	d := r.listDeps(prof)
	r.deps[prof] = d
	return d
}

// listDeps reads prof's depsDir; it only reads the graph, so the profiles' listings (tens of thousands
// of names each in a large tree) can be read at once.
func (r *reader) listDeps(prof string) *depsDir {
	var lists [2][]fs.DirEntry
	n := 0
	for i, sub := range []string{"deps", "examples"} {
		lists[i], _ = fsrec.ReadDir(filepath.Join(r.l.BuildDir, prof, sub))
		n += len(lists[i])
	}
	// A unit leaves about three files (.rlib, .rmeta, .d): a map sized for every file was three times
	// too large (8 MB of 28,952 files).
	d := &depsDir{byHash: make(map[string][]string, n/3)}
	r.newLayoutArtifacts(prof, d)
	for i, sub := range []string{"deps", "examples"} {
		dir := filepath.Join(r.l.BuildDir, prof, sub)
		ents := lists[i]
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			if h := nameHash(e.Name()); h != "" {
				p := filepath.Join(dir, e.Name())
				d.byHash[h] = append(d.byHash[h], p)
			}
		}
	}
	return d
}

// nameHash extracts the 16-hex unit hash from a deps/ file name: `<crate>-<hash>[.ext]`.
func nameHash(name string) string {
	base := name
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	_, h, ok := SplitUnitName(base)
	if !ok {
		return ""
	}
	return h
}

func fileInfo(path string) graph.FileInfo {
	st, err := fsrec.Stat(path)
	if err != nil {
		return graph.FileInfo{Path: path}
	}
	return graph.FileInfo{Path: path, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true}
}

// unitOutputs returns a rustc unit's files in deps/ or examples/ (not its .d), stat'ed.
func (r *reader) unitOutputs(s *graph.Step) []graph.FileInfo {
	var out []graph.FileInfo
	for _, p := range r.depsListing(s.ProfileDir).byHash[unitKey(s)] {
		if strings.HasSuffix(p, ".d") {
			continue
		}
		out = append(out, fileInfo(p))
	}
	return out
}

// findRoots lists the uplifted artifacts of a profile (in the target folder) and ties each to the
// unit whose deps/ file it is a hard link of (same device and inode), else a copy of (same bytes).
// Test binaries are roots too: the newest of each test target.
func (r *reader) findRoots(prof string) {
	steps := map[string][]*graph.Step{} // hash -> rustc units of this profile
	for _, s := range r.g.Steps {
		if s.ProfileDir == prof && s.Kind == graph.Compile {
			k := unitKey(s)
			steps[k] = append(steps[k], s)
		}
	}
	dl := r.depsListing(prof)
	// The deps file a root is a hard link of. Cargo uplifts `deps/<crate>-<hash>[.ext]` under the
	// target's own name, so the files of the root's name are stat'ed first; the inode index of every
	// deps file (tens of thousands of stats in a large tree) is built only for a root none of them is
	// linked to.
	var inodes map[[2]uint64]depsFile
	byInode := func(st os.FileInfo, name string) depsFile {
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok {
			return depsFile{}
		}
		id := [2]uint64{uint64(sys.Dev), sys.Ino}
		linkOf := func(p string) bool {
			fi, err := fsrec.Stat(p)
			if err != nil {
				return false
			}
			s, ok := fi.Sys().(*syscall.Stat_t)
			return ok && s.Nlink > 1 && [2]uint64{uint64(s.Dev), s.Ino} == id
		}
		for _, c := range dl.named(name) {
			if !strings.HasSuffix(c.path, ".d") && linkOf(c.path) {
				return c
			}
		}
		if inodes == nil {
			inodes = map[[2]uint64]depsFile{}
			for h, paths := range dl.byHash {
				for _, p := range paths {
					if strings.HasSuffix(p, ".d") {
						continue
					}
					if fi, err := fsrec.Stat(p); err == nil {
						if sys, ok := fi.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
							inodes[[2]uint64{uint64(sys.Dev), sys.Ino}] = depsFile{p, h}
						}
					}
				}
			}
		}
		return inodes[id]
	}
	for _, sub := range []string{"", "examples"} {
		dir := filepath.Join(r.l.TargetDir, prof, sub)
		ents, err := fsrec.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".d") || nameHash(n) != "" {
				continue
			}
			p := filepath.Join(dir, n)
			st, err := fsrec.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			kind := "bin"
			if sub == "examples" {
				kind = "example"
			} else if strings.HasPrefix(n, "lib") && (strings.HasSuffix(n, ".rlib") || strings.HasSuffix(n, ".a") || strings.Contains(n, ".so")) {
				kind = "lib"
			}
			root := &graph.Root{File: graph.FileInfo{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true}, Kind: kind}
			if src := byInode(st, n); src.path != "" {
				root.Step, root.TiedBy = pickUnit(steps[src.hash], kind), "inode"
			} else if src := sameContent(p, st.Size(), dl, n); src.path != "" {
				root.Step, root.TiedBy = pickUnit(steps[src.hash], kind), "content"
			} else if u := unhashedUnit(steps, r.g.Steps, prof, n); u != nil {
				root.Step, root.TiedBy = u, "name"
			} else if u := r.unitWithoutOutput(prof, kind, n); u != nil {
				// rustc deletes its output when a compile fails, so the uplifted copy is alone.
				root.Step, root.TiedBy = u, "name"
				r.g.Notes = append(r.g.Notes, fmt.Sprintf("%s is tied to %s by name: its deps/ file is gone (rustc deletes it when a compile fails)", p, u.ID))
			}
			r.g.Roots = append(r.g.Roots, root)
		}
	}
	// Test binaries: newest executable of each test target.
	newest := map[string]*graph.Root{}
	for _, list := range steps {
		for _, s := range list {
			if !strings.HasPrefix(unit.Of(s).Target, "test-") {
				continue
			}
			for _, o := range r.unitOutputs(s) {
				if filepath.Ext(o.Path) != "" || !o.Exists {
					continue
				}
				if cur := newest[unit.Of(s).Target]; cur == nil || o.MTimeNS > cur.File.MTimeNS {
					newest[unit.Of(s).Target] = &graph.Root{File: o, Kind: "test", Step: s, TiedBy: "name"}
				}
			}
		}
	}
	keys := make([]string, 0, len(newest))
	for k := range newest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.g.Roots = append(r.g.Roots, newest[k])
	}
}

// unitWithoutOutput returns the single bin (or example) unit of that name in a profile whose deps/ file
// no longer exists; nil when there is none or more than one.
func (r *reader) unitWithoutOutput(prof, kind, name string) *graph.Step {
	want := "bin-" + name
	if kind == "example" {
		want = "example-" + name
	}
	var found *graph.Step
	for _, s := range r.g.Steps {
		if s.ProfileDir != prof || unit.Of(s).Target != want {
			continue
		}
		alive := false
		for _, p := range r.depsListing(prof).byHash[unitKey(s)] {
			if !strings.HasSuffix(p, ".d") {
				alive = true
			}
		}
		if alive {
			continue
		}
		if found != nil {
			return nil
		}
		found = s
	}
	return found
}

func pickUnit(cands []*graph.Step, kind string) *graph.Step {
	for _, c := range cands {
		if strings.HasPrefix(unit.Of(c).Target, "test-") {
			continue
		}
		if kind == "lib" && strings.HasPrefix(unit.Of(c).Target, "lib-") || kind != "lib" && !strings.HasPrefix(unit.Of(c).Target, "lib-") {
			return c
		}
	}
	if len(cands) > 0 {
		return cands[0]
	}
	return nil
}

// sameContent finds a deps/ file with the same bytes as an uplifted copy (macOS, or a copy across
// file systems): candidates share the crate-name prefix and the size.
func sameContent(p string, size int64, dl *depsDir, name string) depsFile {
	var want []byte
	for _, c := range dl.named(name) {
		if filepath.Ext(c.path) != filepath.Ext(name) {
			continue
		}
		st, err := fsrec.Stat(c.path)
		if err != nil || st.Size() != size {
			continue
		}
		if want == nil {
			if want, err = safeio.ReadFile(p, 1<<40); err != nil {
				return depsFile{}
			}
		}
		if got, err := safeio.ReadFile(c.path, 1<<40); err == nil && bytes.Equal(got, want) {
			return c
		}
	}
	return depsFile{}
}

// depsFile is a file of a depsDir and the unit hash it carries.
type depsFile struct{ path, hash string }

// named returns the files of the listing that may be an uplifted file name's source, in path order:
// legacy deps/ names carry the crate name and the hash (`<crate>-<hash>[.ext]`, the crate name with
// `_` for `-`); new-layout bins, dylibs and cdylibs keep the uplifted name in their unit's out/
// folder. The stem is compared with `-` and `_` alike.
func (d *depsDir) named(name string) []depsFile {
	stem := strings.TrimSuffix(name, filepath.Ext(name))
	var out []depsFile
	for h, paths := range d.byHash {
		for _, c := range paths {
			cb := c[strings.LastIndexByte(c, filepath.Separator)+1:] // a file's path: never ends in a separator
			if cb == name || len(cb) > len(stem) && (cb[len(stem)] == '_' || cb[len(stem)] == '-') && sameStem(cb[:len(stem)], stem) {
				out = append(out, depsFile{c, h})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// sameStem compares two names of one length with `-` and `_` alike.
func sameStem(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == '-' {
			x = '_'
		}
		if y == '-' {
			y = '_'
		}
		if x != y {
			return false
		}
	}
	return true
}

// unhashedUnit ties a cdylib/dylib root (no hash in its deps/ name) to the single lib unit of that crate.
func unhashedUnit(steps map[string][]*graph.Step, all []*graph.Step, prof, name string) *graph.Step {
	crate := strings.TrimPrefix(name, "lib")
	if i := strings.IndexByte(crate, '.'); i >= 0 {
		crate = crate[:i]
	}
	var found *graph.Step
	for _, s := range all {
		if s.ProfileDir == prof && unit.Of(s).Target == "lib-"+crate {
			if found != nil {
				return nil
			}
			found = s
		}
	}
	return found
}

// Parallel runs f(0..n-1) on a few goroutines: the work it is used for is file-system calls. Each
// worker takes the next index from a shared counter: the items are small (one unit's records), and
// handing each over a channel cost more in goroutine wake-ups than the item itself.
func Parallel(n int, f func(i int)) {
	workers := min(8, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// parseRustcDepfile reads a rustc `.d` file and returns its inputs made absolute against the
// workspace root (rustc runs there for path packages).
func (r *reader) parseRustcDepfile(path string) ([]string, error) {
	if !fsrec.Memoizing() {
		return r.readRustcDepfile(path)
	}
	name := "cargo.rustc-d\x00" + path + "\x00" + r.l.Workspace
	if b, ok := fsrec.Reuse(name); ok {
		if ss, rest, err := fsrec.Strings(b); err == nil && len(rest) == 0 {
			if len(ss) == 0 {
				ss = nil // as the parse gives none
			}
			return ss, nil
		}
	}
	out, err := r.readRustcDepfile(path)
	if err == nil {
		fsrec.Keep(name, path, fsrec.AppendStrings(nil, out...))
	}
	return out, err
}

func (r *reader) readRustcDepfile(path string) ([]string, error) {
	f, err := depfile.ParseFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, in := range f.Inputs() {
		if !filepath.IsAbs(in) && r.l.Workspace != "" {
			in = filepath.Join(r.l.Workspace, in)
		}
		out = append(out, in)
	}
	return out, nil
}

// defaultPackages returns whether a plain `cargo build` at the workspace root ws builds the package in
// folder root (Cargo's package selection without -p or --workspace): the workspace's default-members
// when it names them (paths or globs from ws), else the root package alone when ws is a package,
// else (a virtual workspace) every member. Unknown (no manifest, one that does not decode): every one.
func defaultPackages(ws string) func(root string) bool {
	all := func(string) bool { return true }
	if ws == "" {
		return all
	}
	var doc struct {
		Package   map[string]any `toml:"package"`
		Workspace *struct {
			DefaultMembers []string `toml:"default-members"`
		} `toml:"workspace"`
	}
	if err := decodeTOML(filepath.Join(ws, "Cargo.toml"), &doc); err != nil || doc.Workspace == nil {
		return all
	}
	if pats := doc.Workspace.DefaultMembers; len(pats) > 0 {
		return func(root string) bool {
			rel, err := filepath.Rel(ws, root)
			if err != nil {
				return true
			}
			for _, p := range pats {
				if ok, _ := filepath.Match(filepath.Clean(p), rel); ok {
					return true
				}
			}
			return false
		}
	}
	if doc.Package != nil {
		return func(root string) bool { return root == ws }
	}
	return all
}
