package cargo

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stalecheck/stalecheck/internal/fsrec"
	"github.com/stalecheck/stalecheck/internal/safeio"

	"github.com/BurntSushi/toml"

	"github.com/stalecheck/stalecheck/internal/cargo/unit"
	"github.com/stalecheck/stalecheck/internal/depfile"
	"github.com/stalecheck/stalecheck/internal/graph"
)

// Where Cargo takes each package from, read offline (no Cargo run):
//   - the package root of each unit: build-script units know it from rustc's `.d` of the script; live
//     rustc units from their rustc `.d` in deps/ (its first input is the crate root file);
//   - the version from the root's Cargo.toml;
//   - the source from where the root lies ($CARGO_HOME/registry, $CARGO_HOME/git) and Cargo.lock's
//     `source` of that name and version (absent: a path package; `registry+`: a registry, which a root
//     outside $CARGO_HOME means is replaced by a directory or vendored source; `git+`: a git checkout);
//   - the workspace's [patch] paths (Cargo.toml and .cargo/config.toml) and Cargo.lock's
//     [[patch.unused]] list.
// Then every folder a live package may be built from (and every [patch] path) is scanned for files
// modified after the package's live units were last built (graph.PackageCopy).

// lockFile is the part of Cargo.lock this reads.
type lockFile struct {
	Package []lockPackage `toml:"package"`
	Patch   struct {
		Unused []lockUnused `toml:"unused"`
	} `toml:"patch"`
}

type lockPackage struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	Source  string `toml:"source"`
}

type lockUnused struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
}

// readLockFile decodes the lock file at path, through a memo of the file (the TOML decode of a
// 600-package lock file is a few milliseconds of every check).
func readLockFile(path string) (lockFile, error) {
	var lock lockFile
	if !fsrec.Memoizing() {
		_, err := decodeTOMLMeta(path, &lock)
		return lock, err
	}
	name := "cargo.lock\x00" + path
	if b, ok := fsrec.Reuse(name); ok {
		if lock, ok := decodeLockMemo(b); ok {
			return lock, nil
		}
	}
	if _, err := decodeTOMLMeta(path, &lock); err != nil {
		return lock, err // what decoded before the error, as without memos
	}
	fsrec.Keep(name, path, encodeLockMemo(lock))
	return lock, nil
}

// encodeLockMemo is readLockFile's memo value: the packages' name, version and source, then the unused
// patches' name and version.
func encodeLockMemo(lock lockFile) []byte {
	pkgs := make([]string, 0, 3*len(lock.Package))
	for _, p := range lock.Package {
		pkgs = append(pkgs, p.Name, p.Version, p.Source)
	}
	unused := make([]string, 0, 2*len(lock.Patch.Unused))
	for _, u := range lock.Patch.Unused {
		unused = append(unused, u.Name, u.Version)
	}
	return fsrec.AppendStrings(fsrec.AppendStrings(nil, pkgs...), unused...)
}

// decodeLockMemo decodes encodeLockMemo's value (ok false for a damaged one).
func decodeLockMemo(b []byte) (lockFile, bool) {
	var lock lockFile
	pkgs, rest, err := fsrec.Strings(b)
	if err != nil || len(pkgs)%3 != 0 {
		return lock, false
	}
	unused, rest, err := fsrec.Strings(rest)
	if err != nil || len(rest) != 0 || len(unused)%2 != 0 {
		return lock, false
	}
	for i := 0; i < len(pkgs); i += 3 {
		lock.Package = append(lock.Package, lockPackage{Name: pkgs[i], Version: pkgs[i+1], Source: pkgs[i+2]})
	}
	for i := 0; i < len(unused); i += 2 {
		lock.Patch.Unused = append(lock.Patch.Unused, lockUnused{Name: unused[i], Version: unused[i+1]})
	}
	return lock, true
}

type patchPath struct {
	table string // "[patch.crates-io] in /ws/Cargo.toml"
	name  string // the package name (the `package` key when renamed, else the key)
	path  string
}

// readSources fills Step.Version, Source and SourceID, Graph.CargoHome and Graph.Copies.
func (r *reader) readSources() {
	g := r.g
	unit.TreeOf(g).CargoHome = r.opt.CargoHome
	var lock lockFile
	if r.l.Workspace != "" {
		lp := filepath.Join(r.l.Workspace, "Cargo.lock")
		var err error
		if lock, err = readLockFile(lp); err != nil && !os.IsNotExist(err) {
			r.problem(lp, err)
		}
	}
	lockSrc := map[string]string{} // "name version" -> source
	for _, p := range lock.Package {
		lockSrc[p.Name+" "+p.Version] = p.Source
	}
	unused := map[string]bool{}
	for _, u := range lock.Patch.Unused {
		unused[u.Name+" "+u.Version] = true
	}

	// Package roots of live rustc units that their Cargo dep-info did not give (registry, git, directory).
	var need []*graph.Step
	for _, s := range g.Steps {
		if s.Kind == graph.Compile && s.PackageRoot == "" && s.Live() {
			need = append(need, s)
		}
	}
	Parallel(len(need), func(i int) { need[i].PackageRoot = r.rustcPackageRoot(need[i]) })

	versions := map[string]string{}
	version := func(root string) string {
		v, ok := versions[root]
		if !ok {
			var err error
			if v, err = r.native.manifestVersion(root, r.l.Workspace); err != nil {
				r.problem(filepath.Join(root, "Cargo.toml"), err)
			}
			versions[root] = v
		}
		return v
	}
	for _, s := range g.Steps {
		if s.PackageRoot == "" {
			continue
		}
		unit.Of(s).Version = version(s.PackageRoot)
		unit.Of(s).SourceID = lockSrc[s.Package+" "+unit.Of(s).Version]
		unit.Of(s).Source = classifySource(s.PackageRoot, unit.Of(s).SourceID, s.PathPackage, r.opt.CargoHome, r.l.Workspace)
		if unit.Of(s).Source == "path" {
			unit.Of(s).SourceID = ""
		}
	}

	// The copies: non-path roots of live units, then the [patch] paths.
	since := map[string]int64{} // package name -> earliest reference of its live units
	byRoot := map[string]*graph.PackageCopy{}
	usedRoots := map[string]bool{}
	for _, s := range g.Steps {
		if s.PackageRoot != "" {
			usedRoots[s.PackageRoot] = true
		}
		if !s.Live() || s.Failed != "" || !s.Reference.Exists {
			continue
		}
		if cur, ok := since[s.Package]; !ok || s.Reference.MTimeNS < cur {
			since[s.Package] = s.Reference.MTimeNS
		}
		if s.PackageRoot == "" || unit.Of(s).Source == "path" || unit.Of(s).Source == "" || byRoot[s.PackageRoot] != nil {
			continue
		}
		byRoot[s.PackageRoot] = &graph.PackageCopy{Name: s.Package, Version: unit.Of(s).Version, Root: s.PackageRoot,
			Source: unit.Of(s).Source, SourceID: unit.Of(s).SourceID, Used: true}
	}
	var copies []*graph.PackageCopy
	for _, c := range byRoot {
		copies = append(copies, c)
	}
	for _, p := range r.patchPaths() {
		c := &graph.PackageCopy{Name: p.name, Version: version(p.path), Root: p.path, Source: "patch", Patch: p.table,
			Used: usedRoots[p.path]}
		c.UnusedPatch = unused[c.Name+" "+c.Version]
		if prev := byRoot[p.path]; prev != nil {
			prev.Patch = p.table
			continue
		}
		copies = append(copies, c)
	}
	sort.Slice(copies, func(i, j int) bool { return copies[i].Root < copies[j].Root })
	// Packages with a live unit of a test, bench or example target: only then can a file of a copy's
	// tests/, benches/ or examples/ folder reach a build (Cargo builds those targets for a dependency
	// only when asked to, as `cargo test -p dep` does).
	extraTargets := map[string]bool{}
	for _, s := range g.Steps {
		if s.Kind == graph.Compile && s.Live() {
			if t := unit.Of(s).Target; strings.HasPrefix(t, "test-") || strings.HasPrefix(t, "bench-") || strings.HasPrefix(t, "example-") {
				extraTargets[s.Package] = true
			}
		}
	}
	Parallel(len(copies), func(i int) {
		c := copies[i]
		ns, ok := since[c.Name]
		if !ok {
			return
		}
		c.Since = ns
		c.Edited, c.EditedCount = editedFiles(c.Root, ns, []string{r.l.BuildDir, r.l.TargetDir}, !extraTargets[c.Name])
	})
	unit.TreeOf(g).Copies = copies
}

// rustcPackageRoot finds a rustc unit's package root from its rustc `.d` file in deps/: the first
// input is the crate root file; the package root is the nearest folder above it with a Cargo.toml.
func (r *reader) rustcPackageRoot(s *graph.Step) string {
	for _, p := range r.depsListing(s.ProfileDir).byHash[unitKey(s)] {
		if !strings.HasSuffix(p, ".d") {
			continue
		}
		if first := firstDepfileInput(p, r.l.Workspace); first != "" {
			if root := manifestDir(first); root != "" {
				return root
			}
		}
	}
	return ""
}

// firstDepfileInput returns the first input of a rustc `.d` file (the crate root file), reading only
// its first rule; relative paths are made absolute against the workspace root (rustc runs there).
func firstDepfileInput(path, workspace string) string {
	if !fsrec.Memoizing() {
		return readFirstDepfileInput(path, workspace)
	}
	name := "cargo.d-first\x00" + path + "\x00" + workspace
	if b, ok := fsrec.Reuse(name); ok {
		if ss, rest, err := fsrec.Strings(b); err == nil && len(ss) == 1 && len(rest) == 0 {
			return ss[0]
		}
	}
	in := readFirstDepfileInput(path, workspace)
	fsrec.Keep(name, path, fsrec.AppendStrings(nil, in))
	return in
}

func readFirstDepfileInput(path, workspace string) string {
	f, err := safeio.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var line []byte
	br := bufio.NewReader(f)
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		// A rule continues on the next line after a backslash-newline.
		if err != nil || !bytes.HasSuffix(bytes.TrimRight(line, "\r\n"), []byte("\\")) {
			break
		}
	}
	df, err := depfile.Parse(bytes.NewReader(line))
	if err != nil {
		return ""
	}
	ins := df.Inputs()
	if len(ins) == 0 {
		return ""
	}
	in := ins[0]
	if !filepath.IsAbs(in) && workspace != "" {
		in = filepath.Join(workspace, in)
	}
	return in
}

// UnitPackageRoot returns a unit's package root: the one the graph holds, else (for a unit that is not
// live, whose details were not read) the one its rustc `.d` file in deps/ gives. "" when unknown.
func UnitPackageRoot(g *graph.Graph, s *graph.Step) string {
	if s.PackageRoot != "" {
		return s.PackageRoot
	}
	if s.Kind != graph.Compile {
		return ""
	}
	paths := unit.PathsOf(g.BuildDir, s)
	dir := paths.Artifacts
	ents, err := fsrec.ReadDir(dir)
	if err != nil {
		return ""
	}
	r := &reader{g: g, l: &Layout{Workspace: g.Workspace, BuildDir: g.BuildDir, TargetDir: g.TargetDir}}
	for _, e := range ents {
		// New layout: the unit's own out/ folder, where a bin's .d has no hash in its name.
		if strings.HasSuffix(e.Name(), "-"+unit.Of(s).Hash+".d") || paths.New && strings.HasSuffix(e.Name(), ".d") {
			ins, err := r.parseRustcDepfile(filepath.Join(dir, e.Name()))
			if err == nil && len(ins) > 0 {
				return manifestDir(ins[0])
			}
		}
	}
	return ""
}

// ManifestVersion returns the version in a package folder's Cargo.toml ("" when unreadable);
// `version.workspace = true` is taken from the workspace's [workspace.package].
func ManifestVersion(root, workspace string) string {
	v, _ := ReadManifestVersion(root, workspace)
	return v
}

func manifestDir(file string) string {
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := fsrec.Stat(filepath.Join(dir, "Cargo.toml")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// ReadManifestVersion returns the version root/Cargo.toml states (`version.workspace = true` read from
// workspace/Cargo.toml; "0.0.0" when it states none, as Cargo 1.75+ does). Manifests are read through
// internal/safeio (regular files of at most safeio.MaxRecord bytes: a FIFO or /dev/zero there is an
// error, never a hang); an error names the manifest. "" with a nil error when the version field has a
// shape Cargo would refuse.
func ReadManifestVersion(root, workspace string) (string, error) {
	v, _, err := readManifestVersion(root, workspace)
	return v, err
}

// readManifestVersion is ReadManifestVersion; inherited says the version came from the workspace's
// manifest (version.workspace = true).
func readManifestVersion(root, workspace string) (version string, inherited bool, err error) {
	var doc struct {
		Package struct {
			Version any `toml:"version"`
		} `toml:"package"`
	}
	m := filepath.Join(root, "Cargo.toml")
	if _, err := decodeTOMLMeta(m, &doc); err != nil {
		return "", false, manifestError(m, err)
	}
	switch v := doc.Package.Version.(type) {
	case string:
		return v, false, nil
	case map[string]any:
		if v["workspace"] == true && workspace != "" {
			var ws struct {
				Workspace struct {
					Package struct {
						Version string `toml:"version"`
					} `toml:"package"`
				} `toml:"workspace"`
			}
			wm := filepath.Join(workspace, "Cargo.toml")
			if _, err := decodeTOMLMeta(wm, &ws); err != nil {
				return "", true, manifestError(wm, err)
			}
			return ws.Workspace.Package.Version, true, nil
		}
	case nil:
		return "0.0.0", false, nil // Cargo's default when a package states no version (1.75+)
	}
	return "", false, nil
}

// manifestError names the manifest in a parse error (safeio's errors name it already).
func manifestError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// RootSource says where Cargo takes a package folder from when no unit of it carries Step.Source (its
// units are not live, so their details were not read): "registry" or "git" under g.CargoHome, "path"
// for the workspace root or a folder inside it, else "" (a directory source and a path package outside
// the workspace differ only by Cargo.lock's source).
func RootSource(g *graph.Graph, root string) string {
	if unit.TreeOf(g).CargoHome == "" && g.Workspace == "" {
		return ""
	}
	if unit.TreeOf(g).CargoHome != "" && (under(root, filepath.Join(unit.TreeOf(g).CargoHome, "registry")) || under(root, filepath.Join(unit.TreeOf(g).CargoHome, "git"))) {
		return classifySource(root, "", false, unit.TreeOf(g).CargoHome, g.Workspace)
	}
	if g.Workspace != "" && (root == g.Workspace || under(root, g.Workspace)) {
		return "path"
	}
	return ""
}

// classifySource says where a package root lies for Cargo.
func classifySource(root, lockSource string, pathPackage bool, cargoHome, workspace string) string {
	if cargoHome != "" {
		switch {
		case under(root, filepath.Join(cargoHome, "registry")):
			return "registry"
		case under(root, filepath.Join(cargoHome, "git")):
			return "git"
		}
	}
	switch {
	case strings.HasPrefix(lockSource, "registry+"), strings.HasPrefix(lockSource, "sparse+"):
		return "directory" // a registry package taken from elsewhere: a directory or vendored source
	case strings.HasPrefix(lockSource, "git+"):
		return "directory" // a git package outside $CARGO_HOME/git: vendored
	case lockSource != "":
		return "directory"
	case pathPackage, workspace != "" && (root == workspace || under(root, workspace)):
		return "path"
	}
	if workspace != "" {
		return "path" // Cargo.lock has no source for it: a path package outside the workspace
	}
	return ""
}

// patchPaths reads the [patch.<registry>] path entries of the workspace manifest and of the
// workspace's .cargo/config.toml.
func (r *reader) patchPaths() []patchPath {
	ws := r.l.Workspace
	if ws == "" {
		return nil
	}
	var out []patchPath
	for _, f := range []struct{ file, base string }{
		{filepath.Join(ws, "Cargo.toml"), ws},
		{filepath.Join(ws, ".cargo", "config.toml"), ws},
	} {
		var doc struct {
			Patch map[string]map[string]any `toml:"patch"`
		}
		if _, err := decodeTOMLMeta(f.file, &doc); err != nil {
			continue
		}
		regs := make([]string, 0, len(doc.Patch))
		for reg := range doc.Patch {
			regs = append(regs, reg)
		}
		sort.Strings(regs)
		for _, reg := range regs {
			names := make([]string, 0, len(doc.Patch[reg]))
			for n := range doc.Patch[reg] {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				spec, ok := doc.Patch[reg][n].(map[string]any)
				if !ok {
					continue
				}
				p, ok := spec["path"].(string)
				if !ok {
					continue
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(f.base, p)
				}
				name := n
				if pk, ok := spec["package"].(string); ok {
					name = pk
				}
				out = append(out, patchPath{table: "[patch." + reg + "] in " + f.file, name: name, path: filepath.Clean(p)})
			}
		}
	}
	return out
}

// holdsManifest reports whether the folder dir, listed as ents, has a Cargo.toml (after symlinks, as a
// stat of dir/Cargo.toml would say).
func holdsManifest(dir string, ents []fs.DirEntry) bool {
	i, ok := slices.BinarySearchFunc(ents, "Cargo.toml", func(e fs.DirEntry, name string) int { return strings.Compare(e.Name(), name) })
	if !ok {
		return false
	}
	if ents[i].Type()&fs.ModeSymlink == 0 {
		return true
	}
	_, err := fsrec.Stat(filepath.Join(dir, "Cargo.toml"))
	return err == nil
}

// cargoMetaFiles are files Cargo itself writes into a package copy; they say nothing about edits.
var cargoMetaFiles = map[string]bool{".cargo-ok": true, ".cargo_vcs_info.json": true, ".cargo-checksum.json": true}

// unbuiltFolders are folders at a package root whose files no build of the package as a dependency
// reads: Cargo's target folders for integration tests, benches and examples (unbuilt unless a unit of
// such a target is live), and debian/, the packaging data of Debian's copies in
// /usr/share/cargo/registry (its patches are applied already) and of cargo-deb.
var unbuiltFolders = map[string]bool{"tests": true, "benches": true, "examples": true, "debian": true}

// editedFiles lists the files under root modified after ns, newest first (at most 20) and their count.
// Build outputs, hidden folders (.git, .github, …: VCS and CI data), nested packages and, when
// noExtraTargets, the unbuiltFolders at the root are skipped (debian/ always); symlinks are not
// followed. Leaving out what no build reads keeps an edit there from being reported as a lost edit,
// and spares a warm check and run their stats (a fifth of a Debian registry copy's files).
func editedFiles(root string, ns int64, skip []string, noExtraTargets bool) ([]graph.FileInfo, int) {
	// A walk of the whole package: the verdict cache's memos (internal/fsrec's memo.go) give the last
	// check's answer again when no path under root changed since.
	if !fsrec.Memoizing() {
		return walkEdited(root, ns, skip, noExtraTargets)
	}
	name := fmt.Sprintf("cargo.edited\x00%s\x00%d\x00%t\x00%s", root, ns, noExtraTargets, strings.Join(skip, "\x00"))
	if b, ok := fsrec.Reuse(name); ok {
		if out, n, err := decodeEdited(b); err == nil {
			return out, n
		}
	}
	out, n := walkEdited(root, ns, skip, noExtraTargets)
	fsrec.Keep(name, root, encodeEdited(out, n))
	return out, n
}

// encodeEdited is editedFiles' answer as a memo value: the count, then each file's path, size and
// mtime.
func encodeEdited(out []graph.FileInfo, n int) []byte {
	b := binary.AppendUvarint(nil, uint64(n))
	b = binary.AppendUvarint(b, uint64(len(out)))
	for _, f := range out {
		b = fsrec.AppendStrings(b, f.Path)
		b = binary.AppendVarint(b, f.Size)
		b = binary.AppendVarint(b, f.MTimeNS)
	}
	return b
}

func decodeEdited(b []byte) ([]graph.FileInfo, int, error) {
	bad := errors.New("damaged memo of edited files")
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, 0, bad
	}
	b = b[k:]
	cnt, k := binary.Uvarint(b)
	if k <= 0 || cnt > uint64(len(b)) {
		return nil, 0, bad
	}
	b = b[k:]
	var out []graph.FileInfo
	for i := uint64(0); i < cnt; i++ {
		ss, rest, err := fsrec.Strings(b)
		if err != nil || len(ss) != 1 {
			return nil, 0, bad
		}
		size, k1 := binary.Varint(rest)
		if k1 <= 0 {
			return nil, 0, bad
		}
		mt, k2 := binary.Varint(rest[k1:])
		if k2 <= 0 {
			return nil, 0, bad
		}
		b = rest[k1+k2:]
		out = append(out, graph.FileInfo{Path: ss[0], Size: size, MTimeNS: mt, Exists: true})
	}
	if len(b) != 0 {
		return nil, 0, bad
	}
	return out, int(n), nil
}

// walkEdited is editedFiles' walk.
func walkEdited(root string, ns int64, skip []string, noExtraTargets bool) ([]graph.FileInfo, int) {
	var out []graph.FileInfo
	// A folder is read once: its listing says whether it holds a Cargo.toml (a nested package, skipped)
	// before any of its entries is looked at, so no folder costs a stat of its Cargo.toml.
	var walk func(dir string, ents []fs.DirEntry)
	walk = func(dir string, ents []fs.DirEntry) {
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if e.IsDir() {
				n := e.Name()
				if n == "target" || strings.HasPrefix(n, ".") || slices.Contains(skip, p) {
					continue
				}
				if dir == root && unbuiltFolders[n] && (noExtraTargets || n == "debian") {
					continue
				}
				sub, err := fsrec.ReadDir(p)
				if err != nil || holdsManifest(p, sub) {
					continue
				}
				walk(p, sub)
				continue
			}
			if !e.Type().IsRegular() || cargoMetaFiles[e.Name()] {
				continue
			}
			st, err := e.Info()
			if err != nil || st.ModTime().UnixNano() <= ns {
				continue
			}
			out = append(out, graph.FileInfo{Path: p, Size: st.Size(), MTimeNS: st.ModTime().UnixNano(), Exists: true})
		}
	}
	if ents, err := fsrec.ReadDir(root); err == nil {
		walk(root, ents)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].MTimeNS != out[j].MTimeNS {
			return out[i].MTimeNS > out[j].MTimeNS
		}
		return out[i].Path < out[j].Path
	})
	n := len(out)
	if len(out) > 20 {
		out = out[:20]
	}
	return out, n
}

// decodeTOMLMeta is toml.DecodeFile over a bounded read of a regular file.
func decodeTOMLMeta(path string, v any) (toml.MetaData, error) {
	data, err := safeio.ReadFile(path, safeio.MaxRecord)
	if err != nil {
		return toml.MetaData{}, err
	}
	return toml.Decode(string(data), v)
}
