package cargo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stalecheck/stalecheck/internal/subproc"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/cmaketree"
	"github.com/stalecheck/stalecheck/internal/depfile"
	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/graph"
	"github.com/stalecheck/stalecheck/internal/safeio"
)

// readBuildDirs lists every build/<pkg>-<hash> folder of every profile with the bytes it holds, and
// gives each build-script run its OUT_DIR listing (needed for duplicates, live or not).
func (r *reader) readBuildDirs() {
	byKey := map[string][]*graph.Step{}
	for _, s := range r.g.Steps {
		if s.Kind != graph.Compile {
			k := unit.PathsOf(r.l.BuildDir, s).Folder
			byKey[k] = append(byKey[k], s)
		}
	}
	var dirs []*graph.BuildDir
	for _, prof := range r.g.ProfileDirs {
		dirs = append(dirs, r.newLayoutBuildDirs(prof, byKey)...)
		root := filepath.Join(r.l.BuildDir, prof, "build")
		ents, err := fsrec.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range ents {
			pkg, hash, ok := SplitUnitName(e.Name())
			if !ok || !e.IsDir() {
				continue
			}
			dirs = append(dirs, &graph.BuildDir{Path: filepath.Join(root, e.Name()), ProfileDir: prof, Package: pkg, Hash: hash,
				Steps: byKey[filepath.Join(root, e.Name())]})
		}
	}
	outs := make([][]graph.FileInfo, len(dirs))
	Parallel(len(dirs), func(i int) {
		d := dirs[i]
		outDir := filepath.Join(d.Path, "out")
		linked := map[[2]uint64]bool{} // hard-linked files (build-script-build) count once
		err := fsrec.WalkDirKept(d.Path, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				r.problem(p, err)
				if e != nil && e.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if e.IsDir() {
				return nil
			}
			st, err := e.Info() // lstat: a symlink counts as itself and is never followed
			if err != nil {
				return nil
			}
			if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
				k := [2]uint64{uint64(sys.Dev), sys.Ino}
				if linked[k] {
					return nil
				}
				linked[k] = true
			}
			d.Bytes += st.Size()
			if !strings.HasPrefix(p, outDir+string(filepath.Separator)) {
				return nil
			}
			if e.Type().IsRegular() {
				outs[i] = append(outs[i], graph.FileInfo{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true})
				return nil
			}
			// A FIFO, device or socket (or a symlink to one) where the script left a file: it is there (a
			// linker would open it), so it is an output, but nothing can read it.
			if err := safeio.Regular(p); err != nil && errors.Is(err, safeio.ErrNotRegular) {
				r.problem(p, err)
				outs[i] = append(outs[i], graph.FileInfo{Path: p, MTimeNS: st.ModTime().UnixNano(), Exists: true})
			}
			return nil
		})
		if err != nil {
			r.problem(d.Path, err)
		}
	})
	for i, d := range dirs {
		for _, s := range d.Steps {
			s.OwnScript().DirBytes = d.Bytes
			if s.Kind == graph.ScriptRun {
				p := unit.PathsOf(r.l.BuildDir, s)
				s.OwnScript().RunDir, s.OwnScript().OutDir = p.Run, p.Out
				s.Outputs = outs[i]
			}
		}
	}
	r.g.BuildDirs = dirs
}

// readDetails reads what each step needs for the checks: package roots and dep-info for compile units,
// `output`, `invoked.timestamp` and inputs for build-script runs. Inputs are gathered only for live steps.
func (r *reader) readDetails() {
	var compile, runs, rustc []*graph.Step
	for _, s := range r.g.Steps {
		switch s.Kind {
		case graph.ScriptCompile:
			compile = append(compile, s)
		case graph.ScriptRun:
			runs = append(runs, s)
		default:
			if s.Live() {
				rustc = append(rustc, s)
			}
		}
	}
	Parallel(len(compile), func(i int) { r.compileDetails(compile[i]) })
	// Package scans are shared by runs of one package: do them once, before the runs fan out.
	var roots []string
	for _, s := range runs {
		r.inheritFromCompile(s)
		if s.Live() && s.PackageRoot != "" && !r.opt.LinksOnly {
			if _, ok := r.pkgScan[s.PackageRoot]; !ok {
				r.pkgScan[s.PackageRoot] = nil
				roots = append(roots, s.PackageRoot)
			}
		}
	}
	scans := make([]*pkgScan, len(roots))
	Parallel(len(roots), func(i int) { scans[i] = r.scanPackage(roots[i]) })
	for i, root := range roots {
		r.pkgScan[root] = scans[i]
	}
	r.host = hostTriple(r.l)
	Parallel(len(runs), func(i int) { r.runDetails(runs[i]) })
	if !r.opt.LinksOnly {
		Parallel(len(rustc), func(i int) { r.rustcDetails(rustc[i]) })
		r.outsideWrites(runs)
	}
	r.g.LibFiles = libFiles(runs)
	// The environment a build would give the scripts now, for every variable a build script's tools
	// looked up: this one's, with what Cargo's [env] tables add (or force).
	r.g.Env = map[string]graph.EnvRead{}
	var cfgEnv map[string]configEnvVar
	for _, s := range runs {
		names := []string{}
		for _, e := range s.Script().EnvReads {
			names = append(names, e.Name)
		}
		for _, f := range s.Script().FlagsSeen {
			names = append(names, f.Names...)
		}
		for _, e := range unit.Of(s).DeclaredEnvValues {
			names = append(names, e.Name)
		}
		for _, n := range names {
			if _, ok := r.g.Env[n]; !ok {
				v, set := os.LookupEnv(n)
				if cfgEnv == nil {
					cfgEnv = r.configEnv()
				}
				from := ""
				if e, ok := cfgEnv[n]; ok && (!set || e.force) {
					v, set, from = e.value, true, e.file
				}
				r.g.Env[n] = graph.EnvRead{Name: n, Value: v, Set: set, From: from}
			}
		}
	}
}

func (r *reader) fingerprint(s *graph.Step) *Fingerprint { return r.fps[s] }

// reference sets s.Reference to the record at path (its mtime is when the unit was last built), and
// reports false when that record is there but unreadable as a file (recordInfo): then its mtime says
// nothing of the unit, which is judged as one without its record, and the record is reported.
func (r *reader) reference(s *graph.Step, path string) bool {
	fi, err := recordInfo(path)
	s.Reference = fi
	if err != nil {
		r.stepProblem(s, path, err)
		return false
	}
	return true
}

// stamp is the run folder's invoked.timestamp (Cargo writes it empty when the run starts: its mtime is
// the start), as not there when it is unreadable as a file (reported).
func (r *reader) stamp(s *graph.Step, path string) graph.FileInfo {
	fi, err := recordInfo(path)
	if err != nil {
		r.stepProblem(s, path, err)
	}
	return fi
}

// recordInfo stats a record Cargo writes as a regular file. Not there: a FileInfo without Exists and no
// error. There but not a regular file (a FIFO, a device, a folder: they have times of their own, which
// say nothing of the unit), or a symbolic link that cannot be followed (a loop, a link to nothing): a
// FileInfo without Exists and an error saying what the path is.
func recordInfo(path string) (graph.FileInfo, error) {
	st, err := fsrec.Stat(path)
	if err != nil {
		if _, lerr := fsrec.Lstat(path); lerr != nil {
			return graph.FileInfo{Path: path}, nil // not there
		}
		if target, rerr := os.Readlink(path); rerr == nil && errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("a symbolic link to %s, which does not exist", target)
		}
		return graph.FileInfo{Path: path}, err
	}
	if !st.Mode().IsRegular() {
		_, err := safeio.ReadFileKept(path, safeio.MaxRecord) // its error names what the path is
		if err == nil {
			err = safeio.ErrNotRegular
		}
		return graph.FileInfo{Path: path}, err
	}
	return graph.FileInfo{Path: path, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true}, nil
}

// checkDepInfo fills a compile unit's Reference (its fingerprint dep-info file) and returns the decoded
// dep-info, or nil.
func (r *reader) checkDepInfo(s *graph.Step) *DepInfo {
	fp := r.fingerprint(s)
	p := DepInfoFile(r.l.BuildDir, s, fp)
	if !r.reference(s, p) {
		return nil
	}
	if !s.Reference.Exists {
		if s.Failed == "" && fp != nil {
			r.stepProblem(s, p, fmt.Errorf("dep-info file named by the fingerprint is missing"))
		}
		return nil
	}
	data, err := safeio.ReadFileKept(p, safeio.MaxRecord)
	if err != nil {
		r.stepProblem(s, p, err)
		return nil
	}
	di, err := ParseDepInfo(data)
	if err != nil {
		r.stepProblem(s, p, err)
		return nil
	}
	for _, f := range di.Files {
		if f.PackageRelative {
			s.PathPackage = true
		}
	}
	return di
}

// DepInfoFile returns the absolute path of a compile unit's fingerprint dep-info file: the
// CheckDepInfo entry of its fingerprint (relative to the build folder), else the name Cargo gives it
// (`.fingerprint/<pkg>-<hash>/dep-<target>`). Its mtime is the reference Cargo compares inputs against.
func DepInfoFile(buildDir string, s *graph.Step, fp *Fingerprint) string {
	rel := ""
	if fp != nil {
		for _, l := range fp.Local {
			if l.CheckDepInfo != nil {
				rel = l.CheckDepInfo.DepInfo
			}
		}
	}
	if rel == "" {
		return filepath.Join(unit.PathsOf(buildDir, s).Fingerprint, "dep-"+unit.Of(s).Target)
	}
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(buildDir, rel)
}

// compileDetails finds the build script's source and its package root from rustc's `.d` file in the
// compile folder: its first input is the script; the package root is the nearest folder above it that
// holds a Cargo.toml.
func (r *reader) compileDetails(s *graph.Step) {
	di := r.checkDepInfo(s)
	dir := unit.PathsOf(r.l.BuildDir, s).ScriptArtifacts
	stem := strings.TrimPrefix(unit.Of(s).Target, "build-script-")
	d := filepath.Join(dir, strings.ReplaceAll(stem, "-", "_")+"-"+unit.Of(s).Hash+".d")
	ins, err := r.parseRustcDepfile(d)
	if err != nil {
		if !os.IsNotExist(err) {
			r.stepProblem(s, d, err)
		}
		ins = nil
	}
	if len(ins) == 0 {
		// No package root: the dep-info's absolute entries are still checked, and its package-relative
		// ones named as not checked.
		if s.Live() && di != nil {
			s.Inputs = r.depInfoInputs(s, di, d)
		}
		return
	}
	s.OwnScript().ScriptSource = ins[0]
	for dir := filepath.Dir(ins[0]); ; dir = filepath.Dir(dir) {
		if _, err := fsrec.Stat(filepath.Join(dir, "Cargo.toml")); err == nil {
			s.PackageRoot = dir
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if s.Live() && di != nil {
		s.Inputs = r.depInfoInputs(s, di, d)
	}
}

// inheritFromCompile copies the package root, script and configuration of a run's compile unit.
func (r *reader) inheritFromCompile(s *graph.Step) {
	for _, d := range s.Deps {
		if d.Kind == graph.ScriptCompile {
			s.PackageRoot, s.OwnScript().ScriptSource, s.PathPackage = d.PackageRoot, d.Script().ScriptSource, d.PathPackage
			unit.Of(s).Features = unit.Of(d).Features
			if unit.Of(s).Rustc == 0 {
				unit.Of(s).Rustc = unit.Of(d).Rustc
			}
			return
		}
	}
}

// depInfoInputs turns a unit's fingerprint dep-info into watched inputs.
// rustcD is the rustc .d file that gives the package root of package-relative entries: when it gave
// none, those entries are a problem named by it (they cannot be checked), not left out in silence;
// "" when the caller names the problem itself.
func (r *reader) depInfoInputs(s *graph.Step, di *DepInfo, rustcD string) []*graph.Input {
	var out []*graph.Input
	var unresolved []string
	for _, f := range di.Files {
		p := f.Path
		switch {
		case f.PackageRelative:
			if s.PackageRoot == "" {
				unresolved = append(unresolved, f.Path)
				continue
			}
			p = filepath.Join(s.PackageRoot, p)
		case !filepath.IsAbs(p):
			p = filepath.Join(r.l.BuildDir, p)
		}
		out = append(out, &graph.Input{File: fileInfo(p), How: []graph.How{graph.Declared},
			Detail: []string{"dep-info " + s.Reference.Path}, Watched: true, WatchedBy: "Cargo's dep-info " + s.Reference.Path})
	}
	if len(unresolved) > 0 {
		if rustcD == "" {
			return out // the caller says why
		}
		r.stepProblem(s, rustcD, fmt.Errorf("it is missing or names none of the package-relative files that Cargo's dep-info %s lists (%d, %s first), so the package root of %s is unknown and those files were not checked",
			s.Reference.Path, len(unresolved), unresolved[0], s.ID))
	}
	return out
}

// rustcDepfile is the rustc .d file of a rustc unit: the one its deps/ listing holds, else the name rustc
// gives it (for a message about its absence).
func (r *reader) rustcDepfile(s *graph.Step) string {
	for _, p := range r.depsListing(s.ProfileDir).byHash[unitKey(s)] {
		if strings.HasSuffix(p, ".d") {
			return p
		}
	}
	_, name, _ := strings.Cut(unit.Of(s).Target, "-")
	return filepath.Join(unit.PathsOf(r.l.BuildDir, s).Artifacts, strings.ReplaceAll(name, "-", "_")+"-"+unit.Of(s).Hash+".d")
}

// rustcDetails reads a live rustc unit's dep-info (Cargo's CheckDepInfo rule) and outputs.
func (r *reader) rustcDetails(s *graph.Step) {
	di := r.checkDepInfo(s)
	s.Outputs = r.unitOutputs(s)
	if di == nil {
		return
	}
	// The package root: rustc's .d lists the same files relative to the workspace root.
	for _, p := range r.depsListing(s.ProfileDir).byHash[unitKey(s)] {
		if !strings.HasSuffix(p, ".d") {
			continue
		}
		ins, err := r.parseRustcDepfile(p)
		if err != nil {
			r.stepProblem(s, p, err)
			continue
		}
		for _, f := range di.Files {
			if !f.PackageRelative {
				continue
			}
			for _, in := range ins {
				if strings.HasSuffix(in, string(filepath.Separator)+f.Path) {
					s.PackageRoot = strings.TrimSuffix(in, string(filepath.Separator)+f.Path)
					break
				}
			}
			if s.PackageRoot != "" {
				break
			}
		}
	}
	if s.PackageRoot != "" && s.PathPackage {
		// rustc's .d names a path package's files relative to the workspace root where the build ran,
		// which is this one only if the folder found holds this package: another workspace that shares
		// the target folder (CARGO_TARGET_DIR) has units here whose src/main.rs is not this src/main.rs.
		if name := r.manifestName(s.PackageRoot); name != "" && name != s.Package {
			m := filepath.Join(s.PackageRoot, "Cargo.toml")
			s.PackageRoot = ""
			s.Inputs = r.depInfoInputs(s, di, "")
			r.mu.Lock()
			r.g.Problems = append(r.g.Problems, graph.Problem{Path: r.rustcDepfile(s), Step: s,
				Err: fmt.Sprintf("it names the files of package %s relative to where its build ran, and here they lead to %s, which is package %s: %s was built in another workspace that shares this target folder, so its package-relative files were not checked",
					s.Package, m, name, s.ID),
				Fix: "check the workspace of package " + s.Package + " (stalecheck check DIR there): its build wrote this unit"})
			r.mu.Unlock()
			return
		}
	}
	s.Inputs = r.depInfoInputs(s, di, r.rustcDepfile(s))
	r.manifestEnv(s, di)
}

// manifestName is the package name root/Cargo.toml states ("" when it cannot be read or states
// none: a virtual manifest), read once per folder.
func (r *reader) manifestName(root string) string {
	if v, ok := r.names.Load(root); ok {
		return v.(string)
	}
	var doc struct {
		Package struct {
			Name string `toml:"name"`
		} `toml:"package"`
	}
	name := ""
	if _, err := decodeTOMLMeta(filepath.Join(root, "Cargo.toml"), &doc); err == nil {
		name = doc.Package.Name
	}
	r.names.Store(root, name)
	return name
}

// manifestEnv keeps the CARGO_PKG_* values rustc recorded as env-deps of a path package's unit (an
// env!("CARGO_PKG_DESCRIPTION") in its code) and the values its Cargo.toml gives them now.
func (r *reader) manifestEnv(s *graph.Step, di *DepInfo) {
	if !s.PathPackage || s.PackageRoot == "" {
		return
	}
	u := unit.Of(s)
	keep := func(k, v string) {
		if strings.HasPrefix(k, "CARGO_PKG_") {
			if u.CompiledEnv == nil {
				u.CompiledEnv = map[string]string{}
			}
			u.CompiledEnv[k] = v
		}
	}
	for k, v := range di.Env {
		if v != nil {
			keep(k, *v)
		}
	}
	// Cargo leaves the version out of its dep-info (a new version is a new unit); rustc's own .d of
	// the unit keeps it.
	for _, p := range r.depsListing(s.ProfileDir).byHash[unitKey(s)] {
		if strings.HasSuffix(p, ".d") {
			if f, err := depfile.ParseFile(p); err == nil {
				for k, v := range f.Env {
					if _, ok := u.CompiledEnv[k]; !ok {
						keep(k, v)
					}
				}
			}
		}
	}
	if len(unit.Of(s).CompiledEnv) == 0 {
		return
	}
	manifest := filepath.Join(s.PackageRoot, "Cargo.toml")
	now, err := r.manifests.env(manifest)
	if err != nil {
		r.problem(manifest, err)
		return
	}
	unit.Of(s).Manifest = fileInfo(manifest)
	unit.Of(s).ManifestEnv = now
}

// runDetails reads a build-script run folder: `output` (directives and logged compiler commands),
// `root-output`, `invoked.timestamp`; then, for a live run, its inputs.
func (r *reader) runDetails(s *graph.Step) {
	paths := unit.PathsOf(r.l.BuildDir, s)
	if s.Script().RunDir == "" {
		s.OwnScript().RunDir, s.OwnScript().OutDir = paths.Run, paths.Out
	}
	outFile := paths.Stdout
	if !r.reference(s, outFile) {
		return
	}
	inv := r.stamp(s, filepath.Join(s.Script().RunDir, "invoked.timestamp"))
	switch {
	case !s.Reference.Exists && inv.Exists:
		s.Failed = fmt.Sprintf("the build script started (%s) but never finished: the run folder has no %s file", inv.Path, filepath.Base(outFile))
	case !s.Reference.Exists:
		if isDir(s.Script().RunDir) {
			r.stepProblem(s, outFile, fmt.Errorf("the build-script run folder has no %s file", filepath.Base(outFile)))
		}
		return
	case inv.Exists && inv.MTimeNS > s.Reference.MTimeNS:
		s.Failed = fmt.Sprintf("invoked.timestamp (%s) is newer than %s (%s): the last run of the build script did not finish",
			fmtTime(inv.MTimeNS), filepath.Base(outFile), fmtTime(s.Reference.MTimeNS))
	}
	if !s.Reference.Exists {
		return
	}
	data, err := safeio.ReadFileKept(outFile, safeio.MaxRecord)
	if err != nil {
		r.stepProblem(s, outFile, err)
		return
	}
	rootOut, err := safeio.ReadFileKept(filepath.Join(s.Script().RunDir, "root-output"), safeio.MaxRecord)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.stepProblem(s, filepath.Join(s.Script().RunDir, "root-output"), err)
	}
	bo := ParseBuildOutput(data, strings.TrimSpace(string(rootOut)), s.Script().OutDir)
	bo.intern(&r.strs)
	unit.Of(s).MovedFrom, unit.Of(s).MovedTo = movedPrefix(strings.TrimSpace(string(rootOut)), s.Script().OutDir)

	declared := bo.RerunIfChanged
	if fp := r.fingerprint(s); fp != nil {
		declared = nil
		for _, l := range fp.Local {
			switch {
			case l.RerunIfChanged != nil:
				declared = append(declared, l.RerunIfChanged.Paths...)
			case l.RerunIfEnvChanged != nil:
				v := l.RerunIfEnvChanged
				unit.Of(s).DeclaredEnv = append(unit.Of(s).DeclaredEnv, v.Var)
				e := graph.EnvRead{Name: v.Var, Set: v.Val != nil}
				if v.Val != nil {
					e.Value = *v.Val
				}
				unit.Of(s).DeclaredEnvValues = append(unit.Of(s).DeclaredEnvValues, e)
			case l.Precalculated != nil:
				unit.Of(s).OwnScan().ScanKey = *l.Precalculated
				if ns, file, ok := PrecalculatedTime(unit.Of(s).Scan().ScanKey); ok {
					unit.Of(s).OwnScan().ScanNewestNS, unit.Of(s).OwnScan().ScanNewestFile = ns, file
				}
			}
		}
	} else {
		unit.Of(s).DeclaredEnv = bo.RerunIfEnvChanged
	}
	for _, p := range declared {
		if !filepath.IsAbs(p) && s.PackageRoot == "" {
			// Relative to a package root no record names (the run's fingerprint could not be read, so
			// its build-script compile is unknown): where it lies is unknown, so it is not judged.
			continue
		}
		unit.Of(s).DeclaredPaths = append(unit.Of(s).DeclaredPaths, r.pkgPath(s, p))
	}
	s.OwnScript().EnvReads = bo.EnvReads
	for _, f := range bo.CMakeFlags {
		f.Names = ccEnvNames(f.Var, r.host, s.ProfileDir)
		s.OwnScript().FlagsSeen = append(s.Script().FlagsSeen, f)
	}
	for _, ls := range bo.LinkSearch {
		if ls.Kind == "native" || ls.Kind == "all" || ls.Kind == "dependency" {
			s.OwnScript().LinkSearch = append(s.Script().LinkSearch, ls.Path)
		}
	}
	for _, ll := range bo.LinkLibs {
		s.OwnScript().Links = append(s.Script().Links, graph.Link{Kind: ll.Kind, Modifiers: ll.Modifiers, Name: ll.Name, Path: findLib(s.Script().LinkSearch, ll)})
	}
	s.OwnScript().PointsAt = r.pointsAt(s, bo)
	if s.Live() && !r.opt.LinksOnly {
		r.runInputs(s, bo)
		s.OwnScript().Written = runWritten(s, data, strings.TrimSpace(string(rootOut)), bo)
		r.otherTree(s, bo)
	}
}

// runWritten finds the OUT_DIR files the last run's records show it installed or rebuilt (see
// graph.Step.Script().Written): CMake's "-- Installing: P" and "-- Up-to-date: P" lines in `output`, the files
// an install_manifest.txt lists when the last run wrote it (mtime not before `output`), and the files
// under a folder where a running: line ran `cmake --build` or make. Paths recorded under root-output
// are mapped to where OUT_DIR is now.
func runWritten(s *graph.Step, output []byte, rootOut string, bo *BuildOutput) map[string]string {
	w := map[string]string{}
	mapOut := func(p string) string {
		p = filepath.Clean(strings.TrimSpace(p))
		if rootOut != "" && rootOut != s.Script().OutDir && (p == rootOut || strings.HasPrefix(p, rootOut+"/")) {
			return s.Script().OutDir + strings.TrimPrefix(p, rootOut)
		}
		return p
	}
	for _, line := range strings.Split(string(output), "\n") {
		line = strings.TrimRight(line, "\r")
		for _, pre := range []string{"-- Installing: ", "-- Up-to-date: "} {
			if p, ok := strings.CutPrefix(line, pre); ok {
				w[mapOut(p)] = "CMake's install step of the last run (" + strings.TrimSuffix(pre, " ") + " in " + s.Reference.Path + ")"
			}
		}
	}
	var trees []string
	for _, words := range bo.Commands {
		if len(words) < 4 || words[0] != "cd" || words[2] != "&&" {
			continue
		}
		if rest := strings.Join(words[3:], " "); strings.Contains(rest, "make") { // cmake (configure, --build) or make
			trees = append(trees, mapOut(words[1]))
		}
	}
	for _, o := range s.Outputs {
		if filepath.Base(o.Path) == "install_manifest.txt" && o.MTimeNS >= s.Reference.MTimeNS {
			if data, err := safeio.ReadFile(o.Path, safeio.MaxRecord); err == nil {
				for _, p := range strings.Split(string(data), "\n") {
					if strings.TrimSpace(p) != "" {
						if _, ok := w[mapOut(p)]; !ok {
							w[mapOut(p)] = "listed in " + o.Path + ", which the last run's install step wrote"
						}
					}
				}
			}
		}
		for _, t := range trees {
			if under(o.Path, t) {
				if _, ok := w[o.Path]; !ok {
					w[o.Path] = "in the CMake build tree " + t + ", which the last run rebuilt (cmake --build judges what is current there)"
				}
			}
		}
	}
	return w
}

// findLib returns the first link-search folder's lib<name>.a (static) or lib<name>.so (dylib).
func findLib(search []string, ll LinkLib) string {
	files := map[string]graph.FileInfo{}
	for _, p := range libCandidates(search, ll.Name) {
		if f, ok := statLib(p); ok {
			files[p] = f
		}
	}
	return graph.LinkerPick(search, ll.Name, ll.Kind, files)
}

// libCandidates are the files ld may take for -l<name> in dirs: lib<name>.so and lib<name>.a in each.
func libCandidates(dirs []string, name string) []string {
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Join(d, "lib"+name+".so"), filepath.Join(d, "lib"+name+".a"))
	}
	return out
}

// libFiles stats, for every link name a live run prints, its candidate files in every link-search
// folder of every live run: the final link of a binary searches all its build scripts' folders
// (Graph.LibFiles, for link-shadowed). Regular files only, through symlinks (libfoo.so is often one).
func libFiles(runs []*graph.Step) map[string]graph.FileInfo {
	var dirs, names []string
	seenD, seenN := map[string]bool{}, map[string]bool{}
	for _, s := range runs {
		if !s.Live() {
			continue
		}
		for _, d := range s.Script().LinkSearch {
			if !seenD[d] {
				seenD[d] = true
				dirs = append(dirs, d)
			}
		}
		for _, l := range s.Script().Links {
			if !seenN[l.Name] && l.Kind != "framework" {
				seenN[l.Name] = true
				names = append(names, l.Name)
			}
		}
	}
	// Each folder is listed once and its entries looked up among the names: stat'ing every name in
	// every folder was names × folders look-ups (8,000 × 8,000 on a 28,000-unit tree: hours, and
	// gigabytes of recorded misses); the listing is recorded by the folder's signature instead.
	want := make(map[string]bool, 2*len(names))
	for _, n := range names {
		want["lib"+n+".so"], want["lib"+n+".a"] = true, true
	}
	out := map[string]graph.FileInfo{}
	var mu sync.Mutex
	Parallel(len(dirs), func(i int) {
		ents, err := fsrec.ReadDir(dirs[i])
		if err != nil {
			return
		}
		for _, e := range ents {
			if !want[e.Name()] {
				continue
			}
			p := filepath.Join(dirs[i], e.Name())
			if f, ok := statLib(p); ok {
				mu.Lock()
				out[p] = f
				mu.Unlock()
			}
		}
	})
	return out
}

// statLib stats a library file through symlinks; only a regular file is one ld can take.
func statLib(p string) (graph.FileInfo, bool) {
	st, err := fsrec.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return graph.FileInfo{}, false
	}
	return graph.FileInfo{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true}, true
}

// pkgPath resolves a path a build script printed (relative to its package root).
func (r *reader) pkgPath(s *graph.Step, p string) string {
	if filepath.IsAbs(p) || s.PackageRoot == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(s.PackageRoot, p)
}

// vanishedCopyPath maps a source that an OUT_DIR object's DWARF names in another copy of the run's
// package, X/<pkg>/<rest> where <pkg> is the package folder's path in this workspace, to this
// workspace's <pkg>/<rest>, when X/<pkg> no longer exists and the file exists here: the run was made in
// a copy of the workspace (a worktree sharing the target folder, removed since; cc compiles in the
// script's package folder, so its units' comp_dir is that folder), and what it compiled has its
// counterpart here, which the rules judge (a later edit here is one Cargo does not see). A copy that
// still exists is otherTree's. Not for a package folder that is the workspace root itself (any X/<rest>
// would do) or one outside it.
func (r *reader) vanishedCopyPath(s *graph.Step, p string) (string, bool) {
	ws := r.l.Workspace
	if ws == "" || s.PackageRoot == "" || !filepath.IsAbs(p) {
		return "", false
	}
	sep := string(filepath.Separator)
	pkg, err := filepath.Rel(ws, s.PackageRoot)
	if err != nil || pkg == "." || strings.HasPrefix(pkg, "..") || strings.HasPrefix(p, ws+sep) {
		return "", false
	}
	i := strings.Index(p, sep+pkg+sep)
	if i <= 0 {
		return "", false
	}
	other, rest := p[:i], p[i+len(sep+pkg+sep):]
	for _, d := range []string{r.l.TargetDir, r.l.BuildDir, r.opt.CargoHome} {
		if d != "" && (other == d || strings.HasPrefix(other, d+sep)) {
			return "", false
		}
	}
	if _, err := fsrec.Lstat(filepath.Join(other, pkg)); err == nil {
		return "", false
	}
	here := filepath.Join(s.PackageRoot, rest)
	if fi, err := fsrec.Stat(here); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return here, true
}

// runInputs gathers a live run's inputs from every record there is, then marks which Cargo watches.
func (r *reader) runInputs(s *graph.Step, bo *BuildOutput) {
	ins := map[string]*graph.Input{}
	var order []string
	compiledAs := map[string]string{} // here → the other copy's path (vanishedCopyPath)
	add := func(p string, how graph.How, detail string) {
		p = filepath.Clean(p)
		if unit.Of(s).MovedFrom != "" && (p == unit.Of(s).MovedFrom || strings.HasPrefix(p, unit.Of(s).MovedFrom+string(filepath.Separator))) {
			// Depfiles and DWARF keep the paths of where the tree was built; map them to where it is now.
			p = unit.Of(s).MovedTo + strings.TrimPrefix(p, unit.Of(s).MovedFrom)
		}
		in := ins[p]
		if in == nil {
			in = &graph.Input{File: graph.FileInfo{Path: p}}
			ins[p] = in
			order = append(order, p)
		}
		for i, h := range in.How {
			if h == how && in.Detail[i] == detail {
				return
			}
		}
		in.How = append(in.How, how)
		in.Detail = append(in.Detail, detail)
	}
	for _, p := range unit.Of(s).DeclaredPaths {
		add(p, graph.Declared, "rerun-if-changed in "+s.Reference.Path)
	}
	for _, cmd := range bo.Commands {
		for _, src := range CommandSources(cmd) {
			add(r.pkgPath(s, src), graph.CommandLine, "running: "+truncate(strings.Join(cmd, " "), 160))
		}
	}
	// The compiler cc-rs ran, when its running: lines name it without a folder: a search of PATH found
	// it, which Cargo does not watch (internal/content judges the search again).
	for _, cmd := range bo.Commands {
		if len(cmd) > 0 && cmd[0] != "cd" && len(CommandSources(cmd)) > 0 && graph.CommandProgram(cmd[0]) == cmd[0] {
			s.Program = cmd[0]
			break
		}
	}
	// Compiles whose headers the include scan resolves: cc-rs's running: lines, then the command lines
	// cmake leaves in OUT_DIR and DWARF compile units (below). Compiles with a depfile need no scan.
	var compiles []compileCmd
	if s.PackageRoot != "" {
		compiles = runningCompiles(bo.Commands, s.PackageRoot, s.Reference.Path)
	}
	type stemClue struct {
		where string // "archive(member)"
		m     memberInfo
	}
	stems := map[string][]stemClue{} // object stem -> members of that stem
	depfiled := map[string]bool{}    // files a compiler depfile lists: their compiles need no scan
	for _, o := range s.Outputs {
		switch {
		case filepath.Base(o.Path) == "compile_commands.json":
			cs, err := compileDBCompiles(o.Path)
			if err != nil {
				r.problem(o.Path, err)
			}
			compiles = append(compiles, cs...)
		case filepath.Base(o.Path) == "flags.make" && strings.HasSuffix(filepath.Dir(o.Path), ".dir") &&
			filepath.Base(filepath.Dir(filepath.Dir(o.Path))) == "CMakeFiles":
			cs, err := cmakeMakeCompiles(o.Path)
			if err != nil && !os.IsNotExist(err) {
				r.problem(o.Path, err)
			}
			compiles = append(compiles, cs...)
		case filepath.Base(o.Path) == "Makefile.cmake" && filepath.Base(filepath.Dir(o.Path)) == "CMakeFiles":
			// The files CMake's configure step read (CMAKE_MAKEFILE_DEPENDS: CMakeLists.txt, the
			// configure_file templates): what the run's build tree was generated from.
			deps, err := cmakeMakefileDepends(o.Path)
			if err != nil && !os.IsNotExist(err) {
				r.problem(o.Path, err)
			}
			for _, d := range deps {
				if strings.HasPrefix(d, s.PackageRoot+string(filepath.Separator)) && !r.generated(d) {
					add(d, graph.Depfile, o.Path+" (CMAKE_MAKEFILE_DEPENDS)")
				}
			}
		case strings.HasSuffix(o.Path, ".d"):
			f, err := depfile.ParseFile(o.Path)
			if err != nil {
				r.problem(o.Path, err)
				continue
			}
			for _, in := range f.Inputs() {
				add(r.pkgPath(s, in), graph.Depfile, o.Path)
				depfiled[movedPath(s, filepath.Clean(r.pkgPath(s, in)))] = true
			}
		case strings.HasSuffix(o.Path, ".a") && !r.opt.SkipNative:
			members, cus, err := r.native.evidence(o.Path)
			if err != nil {
				r.problem(o.Path, err)
				continue
			}
			for _, m := range members {
				st := objectStem(m.name)
				stems[st] = append(stems[st], stemClue{o.Path + "(" + m.name + ")", m})
			}
			for _, cu := range cus {
				for _, f := range cu.files {
					if here, ok := r.vanishedCopyPath(s, f); ok {
						add(here, graph.DWARF, o.Path+"("+cu.member+") names "+f+", in a copy of the package that no longer exists: the run was made there")
						compiledAs[filepath.Clean(here)] = f
						continue
					}
					add(f, graph.DWARF, o.Path+"("+cu.member+")")
				}
				for _, u := range cu.units {
					compiles = append(compiles, dwarfCompile(u.source, u.files, "DWARF compile unit in "+o.Path+"("+cu.member+")"))
				}
			}
		}
	}
	var script []byte
	var words *textWords
	if s.Script().ScriptSource != "" {
		script, words = r.text(s.Script().ScriptSource)
		unit.Of(s).SourceNames = envNames(script)
	}
	if scan := r.pkgScan[s.PackageRoot]; scan != nil {
		if scan.newest != "" {
			unit.Of(s).OwnScan().PackageNewest = graph.FileInfo{Path: scan.newest, MTimeNS: scan.newestNS, Exists: true}
		}
		if unit.Of(s).Scan().ScanNewestFile != "" {
			unit.Of(s).OwnScan().ScanNewestNow = fileInfo(r.pkgPath(s, unit.Of(s).Scan().ScanNewestFile))
		}
		for _, src := range scan.native {
			add(src, graph.PackageFolder, s.PackageRoot)
		}
		// A data file the build script names (include_str!, fs::read of "data/table.txt"): what the
		// script reads goes into its outputs as surely as a source it compiles.
		for _, p := range scan.data {
			if rel, err := filepath.Rel(s.PackageRoot, p); err == nil && script != nil && (strings.Contains(rel, "/") && words.mentions(rel) || words.mentions(`"`+filepath.Base(p)+`"`)) {
				add(p, unit.ScriptSource, s.Script().ScriptSource)
			}
		}
		// And for a file outside the package that the script names by a path from its package folder
		// (fs::read("../shared/cfg.txt"), concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/cfg.txt")):
		// a build script runs in its package folder, and Cargo's scan of that folder never sees it.
		for _, p := range r.outsideMentions(s, script) {
			add(p, unit.ScriptSource, s.Script().ScriptSource)
		}
		// The same for a file that a build description the script declares names (a CMakeLists.txt
		// that reads version.txt with file(STRINGS)): the tool it runs reads it at configure time, and
		// neither Cargo nor that tool's own regeneration rules watch it.
		for _, d := range declaredDescriptions(order, ins) {
			text, dw := r.text(d)
			if text == nil {
				continue
			}
			for _, p := range scan.data {
				if p != d && strings.HasPrefix(p, filepath.Dir(d)+string(filepath.Separator)) && dw.mentions(filepath.Base(p)) {
					add(p, unit.ScriptSource, d)
				}
			}
		}
	}
	// Second clues for every native input: an archive member of the same stem, the name in build.rs.
	// Sources of one stem in several folders (csrc/unix/io.c, csrc/win/io.c) of which build.rs names
	// one by its path: the stem's clues are that one's, not the others'.
	other := otherOfStem(s.PackageRoot, order, words)
	for _, p := range order {
		if !IsNativeSource(p) || other[p] {
			continue
		}
		base := filepath.Base(p)
		for _, c := range stems[strings.TrimSuffix(base, filepath.Ext(base))] {
			if isHeader(base) {
				break // objects are compiled from sources, not headers
			}
			// A .cu and a .c of one stem: only the object whose language matches is a clue.
			if c.m.sameLanguage(filepath.Ext(base)) {
				add(p, graph.ArchiveMember, c.where)
			}
		}
		if rel, err := filepath.Rel(s.PackageRoot, p); err == nil && script != nil && (words.mentions(rel) || words.mentions(base)) {
			add(p, unit.ScriptSource, s.Script().ScriptSource)
		}
		if !isHeader(base) {
			if o := outputOfStem(s, strings.TrimSuffix(base, filepath.Ext(base)), filepath.Ext(base)); o != "" {
				add(p, graph.OutputStem, o)
			}
		} else if o := outputNamed(s, base); o != "" {
			// A header copied into OUT_DIR (an include folder exported with cargo:include).
			add(p, graph.OutputStem, o)
		}
	}
	// A compiled source known only by its object or build.rs (cc-rs ≥ 1.0.80 logs no command line):
	// scanned with its own folder and the package folders the build script names (e.g. .include("native/include")).
	scanned := map[string]bool{}
	for _, c := range compiles {
		scanned[c.source] = true
	}
	var scriptDirs []string // the same for every such source of the run: found once
	dirsFound := false
	for _, p := range order {
		if in := ins[p]; IsNativeSource(p) && !isHeader(p) && !scanned[p] && (in.Has(graph.ArchiveMember) || in.Has(unit.ScriptSource)) {
			if !dirsFound {
				scriptDirs, dirsFound = r.scriptSearchDirs(s, script, words), true
			}
			compiles = append(compiles, scriptSourceCompile(s, p, scriptDirs))
		}
	}
	// A DWARF compile unit's search folders are those of the headers its line table lists, which
	// leaves out a header of macros only (-g without -g3): the folders the build script names are
	// searched after them.
	for i := range compiles {
		if !compiles[i].inferred || !strings.HasPrefix(compiles[i].from, "DWARF ") {
			continue
		}
		if !dirsFound {
			scriptDirs, dirsFound = r.scriptSearchDirs(s, script, words), true
		}
		for _, d := range scriptDirs {
			if !slices.Contains(compiles[i].Dirs, d) {
				compiles[i].Dirs = append(compiles[i].Dirs, d)
			}
		}
	}
	var scan []compileCmd
	recorded := map[string]bool{}
	for _, c := range r.movedCompiles(s, compiles) {
		if !depfiled[c.source] {
			scan = append(scan, c)
		}
		// A recorded command line's search order goes on the step, so that the header searches of
		// its compile are answered again like every other system's (internal/includes: a header that
		// now shadows the one a depfile says was read).
		k := c.source + "\x00" + strings.Join(c.SearchPath.All(), "\x00")
		if !c.inferred && !recorded[k] {
			recorded[k] = true
			s.OwnCmd().Compiles = append(s.OwnCmd().Compiles, graph.CompilerRun{Source: c.source, Dir: c.dir, Quote: c.Quote, Dirs: c.Dirs, System: c.System, After: c.After})
		}
	}
	r.includeScan(s, scan, add)
	watch := r.watching(s)
	for _, p := range order {
		in := ins[p]
		if r.generated(p) {
			continue // a file the build itself wrote (OUT_DIR): newer than the run by construction
		}
		in.File = statTree(p)
		in.WatchedBy = watch.WatchedBy(s, p)
		in.Watched = in.WatchedBy != ""
		in.CompiledAs = compiledAs[p]
		s.Inputs = append(s.Inputs, in)
	}
}

// generated reports whether a path lies in the build or target folder.
func (r *reader) generated(p string) bool {
	for _, d := range []string{r.l.BuildDir, r.l.TargetDir} {
		if d != "" && (p == d || strings.HasPrefix(p, d+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

// watching is the unit of run s as Cargo watches it: its WatchedBy says which declaration makes Cargo
// rerun the script when a path changes ("" when none does), without the rerun-if-changed paths under
// $CARGO_HOME/registry or /git, which Cargo skips. Made once per run: a script may declare thousands of
// paths, each also an input.
func (r *reader) watching(s *graph.Step) *unit.Unit {
	u := *unit.Of(s)
	if r.opt.CargoHome != "" {
		registry, git := filepath.Join(r.opt.CargoHome, "registry"), filepath.Join(r.opt.CargoHome, "git")
		u.DeclaredPaths = nil
		for _, d := range unit.Of(s).DeclaredPaths {
			if !under(d, registry) && !under(d, git) {
				u.DeclaredPaths = append(u.DeclaredPaths, d)
			}
		}
	}
	return &u
}

// under reports whether p lies below the folder dir.
func under(p, dir string) bool {
	return dir != "" && len(p) > len(dir) && p[len(dir)] == filepath.Separator && strings.HasPrefix(p, dir)
}

// mentions reports whether text names a path as a whole word (not as part of a longer name).
// descriptionNames are the file names of other build systems' descriptions, which name the files their
// configure step reads.
var descriptionNames = map[string]bool{"CMakeLists.txt": true, "meson.build": true, "meson_options.txt": true,
	"Makefile": true, "makefile": true, "GNUmakefile": true, "configure.ac": true, "Makefile.am": true}

// declaredDescriptions are the declared inputs of a run (rerun-if-changed) that are build descriptions.
func declaredDescriptions(order []string, ins map[string]*graph.Input) []string {
	var out []string
	for _, p := range order {
		b := filepath.Base(p)
		if in := ins[p]; in != nil && in.Has(graph.Declared) && (descriptionNames[b] || strings.HasSuffix(b, ".cmake") || strings.HasSuffix(b, ".mk")) {
			out = append(out, p)
		}
	}
	return out
}

// otherOfStem returns the non-header native sources of order that share their stem with another one
// the build script's text names by its path (relative to the package root, folders included) while
// naming none of them by its own path: the script compiles that one, so an archive member or output of
// the stem is not theirs.
func otherOfStem(root string, order []string, words *textWords) map[string]bool {
	if words == nil || root == "" {
		return nil
	}
	byStem := map[string][]string{}
	for _, p := range order {
		if base := filepath.Base(p); IsNativeSource(p) && !isHeader(base) {
			st := strings.TrimSuffix(base, filepath.Ext(base))
			byStem[st] = append(byStem[st], p)
		}
	}
	var out map[string]bool
	for _, ps := range byStem {
		if len(ps) < 2 {
			continue
		}
		var named []string
		for _, p := range ps {
			if rel, err := filepath.Rel(root, p); err == nil && strings.Contains(rel, "/") && words.mentions(rel) {
				named = append(named, p)
			}
		}
		if len(named) != 1 {
			continue // none or several named by path: the name alone cannot tell them apart
		}
		for _, p := range ps {
			if p != named[0] {
				if out == nil {
					out = map[string]bool{}
				}
				out[p] = true
			}
		}
	}
	return out
}

// textWords is a text with the set of its whole words (maximal runs of name bytes, isNameByte), so that
// a name it does not mention is ruled out by a map look-up instead of a scan of the text: a build script
// is searched for every file of its package. Wherever name occurs as a whole word, each maximal run of
// name bytes inside it is bounded by bytes that are not name bytes, so it is one of the text's words;
// a name with a run that is not a word is not mentioned.
type textWords struct {
	text  string
	words map[string]struct{}
}

// newTextWords indexes text; nil for a nil text (which mentions nothing).
func newTextWords(text []byte) *textWords {
	if text == nil {
		return nil
	}
	t := &textWords{text: string(text), words: map[string]struct{}{}}
	for i := 0; i < len(t.text); {
		if !isNameByte(t.text[i]) {
			i++
			continue
		}
		j := i
		for j < len(t.text) && isNameByte(t.text[j]) {
			j++
		}
		t.words[t.text[i:j]] = struct{}{}
		i = j
	}
	return t
}

// mentions says whether the text names name as a whole word (mentionAt).
func (t *textWords) mentions(name string) bool {
	if t == nil {
		return false
	}
	// The last run of name bytes in name.
	end := len(name)
	for end > 0 && !isNameByte(name[end-1]) {
		end--
	}
	start := end
	for start > 0 && isNameByte(name[start-1]) {
		start--
	}
	if start < end {
		if _, ok := t.words[name[start:end]]; !ok {
			return false
		}
	}
	return mentionAt(t.text, name) >= 0
}

// mentionAt is the offset of the first whole-word occurrence of name in s, or -1 (also for an empty name).
func mentionAt(s, name string) int {
	if name == "" {
		return -1
	}
	for i := 0; ; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			return -1
		}
		j += i
		before := j == 0 || !isNameByte(s[j-1])
		end := j + len(name)
		after := end == len(s) || !isNameByte(s[end])
		if before && after {
			return j
		}
		i = j + 1
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// objectStem turns an archive member name into the source stem it was compiled from: "kern.o" → "kern";
// cc-rs ≥ 1.0.80 prefixes a hash ("1a2b3c4d-kern.o") and keeps the source extension ("kern.c.o" in some
// versions).
func objectStem(m string) string {
	m = strings.TrimSuffix(m, ".o")
	m = strings.TrimSuffix(m, ".obj")
	if i := strings.IndexByte(m, '-'); i > 0 && isHex(m[:i]) {
		m = m[i+1:]
	}
	if IsNativeSource(m) {
		m = strings.TrimSuffix(m, filepath.Ext(m))
	}
	return m
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return len(s) >= 8
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// statTree stats a path; for a folder the mtime is the newest of its whole tree, as Cargo's
// `paths::mtime_recursive` computes for a rerun-if-changed folder.
func statTree(p string) graph.FileInfo {
	fi := fileInfo(p)
	if !fi.Exists || !isDir(p) {
		return fi
	}
	_ = fsrec.WalkDirKept(p, func(q string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if st, err := e.Info(); err == nil && st.ModTime().UnixNano() > fi.MTimeNS {
			fi.MTimeNS = st.ModTime().UnixNano()
		}
		return nil
	})
	return fi
}

// pkgScan is what lies in a package's own folder.
type pkgScan struct {
	native []string // native sources (README lists the extensions)
	// data are the package's other files a build script may read (not Rust sources, which rustc's
	// dep-info lists, nor Cargo's own files).
	data []string
	// newest is the newest file of the package and its mtime (for old-style Precalculated scripts).
	newest   string
	newestNS int64
}

// skipDirs are folders never scanned for a package's sources: build outputs, VCS data, vendored code.
var skipDirs = map[string]bool{"target": true, ".git": true, "vendor": true, "third_party": true, "node_modules": true}

func (r *reader) scanPackage(root string) *pkgScan {
	ps := &pkgScan{}
	var files []string
	_ = fsrec.WalkDirKept(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() {
			if p == root {
				return nil
			}
			n := e.Name()
			if skipDirs[n] || strings.HasPrefix(n, ".") || r.generated(p) {
				return fs.SkipDir
			}
			if _, err := fsrec.Stat(filepath.Join(p, "Cargo.toml")); err == nil {
				return fs.SkipDir // a nested package owns its own sources
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		if e.Name() == ".gitignore" {
			_, _ = fsrec.Stat(p) // its rules decide what the scan lists: a verdict cached on them records it
		}
		files = append(files, p)
		return nil
	})
	// Cargo lists a package in a git work tree through git: files git ignores are not the package's
	// (cargo's PathSource, list_files_git), neither for the package scan nor for the newest file.
	keep := gitListed(root)
	for _, p := range files {
		if keep != nil && !keep[p] {
			continue
		}
		switch b := filepath.Base(p); {
		case IsNativeSource(b):
			ps.native = append(ps.native, p)
		case filepath.Ext(b) != ".rs" && b != "Cargo.toml" && b != "Cargo.lock" && b != ".gitignore" && !strings.HasPrefix(b, "."):
			ps.data = append(ps.data, p)
		}
		if st, err := fsrec.Stat(p); err == nil && st.ModTime().UnixNano() > ps.newestNS {
			ps.newest, ps.newestNS = p, st.ModTime().UnixNano()
		}
	}
	sort.Strings(ps.native)
	return ps
}

// gitListed returns the files of root that git lists (tracked, and untracked ones no ignore rule names),
// absolute; nil when root is in no git work tree, or git cannot say. The ignore files above root that
// decide it are stat'ed through fsrec, so a verdict cached on the scan notices their change.
func gitListed(root string) map[string]bool {
	top := ""
	for d := root; ; d = filepath.Dir(d) {
		_, _ = fsrec.Stat(filepath.Join(d, ".gitignore"))
		if _, err := fsrec.Stat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if top == "" {
		return nil
	}
	_, _ = fsrec.Stat(filepath.Join(top, ".git", "info", "exclude"))
	// git reads HEAD and the index: a special file there (a FIFO) would block it, so only regular
	// files let it run, and it has a few seconds.
	for _, f := range []string{"HEAD", "index"} {
		if st, err := fsrec.Lstat(filepath.Join(top, ".git", f)); err == nil && !st.Mode().IsRegular() {
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := subproc.Query(exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--full-name", "--", "."))
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	keep := map[string]bool{}
	for _, rel := range strings.Split(string(out), "\x00") {
		if rel != "" {
			keep[filepath.Join(top, rel)] = true
		}
	}
	return keep
}

// PrecalculatedTime parses the "<secs>.<nanos>s (<file>)" form of a path package's Precalculated
// fingerprint into nanoseconds and the file; ok is false for a version string.
func PrecalculatedTime(s string) (ns int64, file string, ok bool) {
	num, rest, found := strings.Cut(s, "s (")
	if !found {
		return 0, "", false
	}
	secs, nanos, _ := strings.Cut(num, ".")
	sv, err1 := strconv.ParseInt(secs, 10, 64)
	nv, err2 := strconv.ParseInt(nanos, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, "", false
	}
	return sv*1e9 + nv, strings.TrimSuffix(rest, ")"), true
}

// isHeader reports whether a native file is a header (never compiled on its own).
func isHeader(name string) bool {
	switch filepath.Ext(name) {
	case ".h", ".hh", ".hpp", ".cuh":
		return true
	}
	return false
}

// movedPrefix compares the OUT_DIR a run wrote with (root-output) and where it is now: when the tree was
// copied or moved, it returns the old and new prefixes above their common tail (e.g. /tmp/base and
// /tmp/myp for …/target/release/build/x-…/out), as Cargo rewrites root-output paths in directives.
func movedPrefix(oldOut, newOut string) (from, to string) {
	if oldOut == "" || oldOut == newOut {
		return "", ""
	}
	a, b := strings.Split(oldOut, "/"), strings.Split(newOut, "/")
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	from, to = strings.Join(a, "/"), strings.Join(b, "/")
	if from == "" || to == "" {
		return "", ""
	}
	return from, to
}

// ccEnvNames returns the variables cc-rs (1.0.73, `getenv_with_target_prefixes`) looks up for base
// (e.g. "CFLAGS"), first set wins: base_<target>, base_<target with '_'>, HOST_base or TARGET_base
// (HOST_ when the target is the host), base. The target is the triple of a `<triple>/<profile>` folder,
// else the host; with the host unknown (no .rustc_info.json) the target-named ones are left out.
func ccEnvNames(base, host, profileDir string) []string {
	target, kind := host, "HOST"
	if t, _, ok := strings.Cut(profileDir, "/"); ok {
		target = t
		if t != host {
			kind = "TARGET"
		}
	}
	var out []string
	if target != "" {
		out = append(out, base+"_"+target, base+"_"+strings.ReplaceAll(target, "-", "_"))
	}
	return append(out, kind+"_"+base, base)
}

// hostTriple returns the host triple of the rustc that built the tree, from the `host:` line of
// `rustc -vV` that Cargo caches in .rustc_info.json (build folder, else target folder); "" when none.
func hostTriple(l *Layout) string {
	for _, dir := range []string{l.BuildDir, l.TargetDir} {
		data, err := safeio.ReadFile(filepath.Join(dir, ".rustc_info.json"), 1<<20)
		if err != nil {
			continue
		}
		var info struct {
			Outputs map[string]struct {
				Stdout string `json:"stdout"`
			} `json:"outputs"`
		}
		if json.Unmarshal(data, &info) != nil {
			continue
		}
		for _, o := range info.Outputs {
			for _, line := range strings.Split(o.Stdout, "\n") {
				if h, ok := strings.CutPrefix(line, "host: "); ok {
					return strings.TrimSpace(h)
				}
			}
		}
	}
	return ""
}

// compilerOutputs are the extensions of what a compiler makes from one source: objects, and CUDA's
// PTX, cubin and fatbinary files (nvcc -ptx / -cubin / -fatbin).
var compilerOutputs = map[string]bool{".o": true, ".obj": true, ".ptx": true, ".cubin": true, ".fatbin": true}

// outputOfStem returns an output of the run named after a source (stem plus a compiler output's
// extension, "scale.ptx" for scale.cu), "" when none is; PTX, cubin and fatbinary files only for a
// CUDA source.
func outputOfStem(s *graph.Step, stem, srcExt string) string {
	for _, o := range s.Outputs {
		b := filepath.Base(o.Path)
		ext := filepath.Ext(b)
		if !compilerOutputs[ext] || strings.TrimSuffix(b, ext) != stem || !o.Exists {
			continue
		}
		if ext != ".o" && ext != ".obj" && srcExt != ".cu" {
			continue
		}
		return o.Path
	}
	return ""
}

// outputNamed returns an output of the run with the file name base (a header the script copied into
// OUT_DIR, exported to dependents through cargo:include), "" when none is.
func outputNamed(s *graph.Step, base string) string {
	for _, o := range s.Outputs {
		if filepath.Base(o.Path) == base && o.Exists {
			return o.Path
		}
	}
	return ""
}

// cmakeMakefileDepends reads the CMAKE_MAKEFILE_DEPENDS list of a CMake build tree's
// CMakeFiles/Makefile.cmake (CMake 3.x's Unix Makefiles generator): the files its configure step read,
// absolute (relative ones are taken against the build tree, the folder above CMakeFiles).
func cmakeMakefileDepends(path string) ([]string, error) {
	b, err := safeio.ReadFile(path, safeio.MaxRecord)
	if err != nil {
		return nil, err
	}
	tree := filepath.Dir(filepath.Dir(path))
	var out []string
	for _, p := range cmaketree.List(string(b), "CMAKE_MAKEFILE_DEPENDS") {
		if !filepath.IsAbs(p) {
			p = filepath.Join(tree, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// envLiteral matches a string literal that spells an environment variable's name.
var envLiteral = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"([A-Z][A-Z0-9_]{1,63})"`) })

// envNames lists the distinct environment variable names a build script's source spells out as string
// literals, in order of first mention (at most 256).
// pathLiteral is a string literal that climbs out of the folder it is taken from: "../x", "/../x"
// (after CARGO_MANIFEST_DIR), without escapes or format placeholders.
var pathLiteral = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"/?(\.\./[^"\\{}\n]+)"`) })

// outsideMentions returns the regular files, in the workspace and outside s's package folder (and
// outside the target folder), that a string literal of the build script names by a path from the
// package folder: files the script may read, which neither Cargo's package scan nor the script's
// declarations cover unless it says so.
func (r *reader) outsideMentions(s *graph.Step, script []byte) []string {
	if script == nil || s.PackageRoot == "" || r.l.Workspace == "" {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range pathLiteral().FindAllSubmatch(script, 64) {
		p := filepath.Join(s.PackageRoot, string(m[1]))
		if seen[p] || !under(p, r.l.Workspace) || under(p, s.PackageRoot) || under(p, r.l.TargetDir) || r.l.BuildDir != "" && under(p, r.l.BuildDir) {
			continue
		}
		seen[p] = true
		if st, err := fsrec.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

func envNames(src []byte) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range envLiteral().FindAllSubmatch(src, -1) {
		n := string(m[1])
		if !seen[n] && len(out) < 256 {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
